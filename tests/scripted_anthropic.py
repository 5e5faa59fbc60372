"""A scripted Anthropic Messages server on 127.0.0.1 for driving the real Claude Code in tests.

It answers `POST /v1/messages` (with or without `?beta=true`) with the standard
server-sent events of a streaming message (`message_start`,
`content_block_start`/`_delta`/`_stop`, `message_delta`, `message_stop`), or
with one JSON message when the request does not ask for a stream. Step N of the
script is chosen by the number of assistant messages already in the request, so
the server keeps no conversation state and a retried request gets the same
answer. Requests that offer no tools (the agent's own side requests, such as a
title) get a short text and do not advance the script. Every main request body
is recorded, so a test can read exactly what the agent sent back (for instance
the tool results the model was shown).

Standard library only; it must never listen on anything but loopback.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from scripted_server import ERROR, ScriptedServer

__all__ = ["ScriptedAnthropic", "Text", "ToolUse", "tool_results"]


@dataclass(frozen=True)
class ToolUse:
    """One `tool_use` block the model emits; `input` is streamed as `input_json_delta`."""

    id: str
    name: str
    input: dict[str, Any]


@dataclass(frozen=True)
class Text:
    """A final assistant message that ends the agent's run."""

    text: str


def tool_results(request: dict) -> dict[str, Any]:
    """The `tool_result` blocks of one recorded request, by tool_use_id (content as sent)."""
    out: dict[str, Any] = {}
    for message in request.get("messages", []):
        content = message.get("content")
        if message.get("role") != "user" or not isinstance(content, list):
            continue
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                out[block.get("tool_use_id", "")] = block.get("content")
    return out


def _sse(event: str, data: dict) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


@dataclass
class ScriptedAnthropic(ScriptedServer):
    """Context manager running the scripted server; `base_url` has no `/v1` suffix."""

    steps: list
    requests: list[dict] = field(default_factory=list)
    side_requests: int = 0

    @property
    def base_url(self) -> str:
        return self.origin

    def answer(self, path: str, body: dict) -> tuple[int, str, bytes]:
        if path.endswith("/count_tokens"):
            return 200, "application/json", b'{"input_tokens": 10}'
        if not path.endswith("/v1/messages"):
            return 404, "application/json", ERROR
        blocks, stop, message_id = self._answer(body)
        model = str(body.get("model") or "scripted")
        if not body.get("stream"):
            return 200, "application/json", json.dumps(self._message(message_id, model, blocks, stop)).encode()
        return 200, "text/event-stream", self._stream(message_id, model, blocks, stop)

    # --- answers -------------------------------------------------------------
    def _answer(self, body: dict) -> tuple[list[dict], str, str]:
        if not body.get("tools"):
            with self._lock:
                self.side_requests += 1
            return [{"type": "text", "text": "Scripted session"}], "end_turn", "msg_scripted_side"
        self.record(body, self.requests)
        done = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
        step = self.steps[done] if done < len(self.steps) else Text("(script finished)")
        # The agent joins assistant messages that share an id: each step needs its own.
        message_id = f"msg_scripted_{done}"
        if isinstance(step, Text):
            return [{"type": "text", "text": step.text}], "end_turn", message_id
        uses = step if isinstance(step, list) else [step]
        blocks = [{"type": "tool_use", "id": u.id, "name": u.name, "input": u.input} for u in uses]
        return blocks, "tool_use", message_id

    @staticmethod
    def _message(message_id: str, model: str, blocks: list[dict], stop: str | None) -> dict:
        return {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": blocks,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }

    def _stream(self, message_id: str, model: str, blocks: list[dict], stop: str) -> bytes:
        start = self._message(message_id, model, [], None)
        start["usage"] = {"input_tokens": 10, "output_tokens": 1}
        out = [_sse("message_start", {"type": "message_start", "message": start})]
        for index, block in enumerate(blocks):
            if block["type"] == "text":
                out.append(_sse("content_block_start", {"type": "content_block_start", "index": index,
                                                        "content_block": {"type": "text", "text": ""}}))
                out.append(_sse("content_block_delta", {"type": "content_block_delta", "index": index,
                                                        "delta": {"type": "text_delta", "text": block["text"]}}))
            else:
                out.append(_sse("content_block_start", {
                    "type": "content_block_start", "index": index,
                    "content_block": {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}}))
                out.append(_sse("content_block_delta", {
                    "type": "content_block_delta", "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}}))
            out.append(_sse("content_block_stop", {"type": "content_block_stop", "index": index}))
        out.append(_sse("message_delta", {"type": "message_delta",
                                          "delta": {"stop_reason": stop, "stop_sequence": None},
                                          "usage": {"output_tokens": 5}}))
        out.append(_sse("message_stop", {"type": "message_stop"}))
        return b"".join(out)
