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
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

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
class ScriptedAnthropic:
    """Context manager running the scripted server; `base_url` has no `/v1` suffix."""

    steps: list
    requests: list[dict] = field(default_factory=list)
    side_requests: int = 0

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Self:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # keep test output quiet
                return

            def _reply(self, status: int, content_type: str, payload: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_HEAD(self) -> None:
                self._reply(200, "text/plain", b"")

            def do_GET(self) -> None:
                self._reply(404, "application/json", b'{"type":"error"}')

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except json.JSONDecodeError:
                    self._reply(400, "application/json", b'{"type":"error"}')
                    return
                path = self.path.split("?", 1)[0].rstrip("/")
                if path.endswith("/count_tokens"):
                    self._reply(200, "application/json", b'{"input_tokens": 10}')
                    return
                if not path.endswith("/v1/messages"):
                    self._reply(404, "application/json", b'{"type":"error"}')
                    return
                blocks, stop, message_id = owner._answer(body)
                model = str(body.get("model") or "scripted")
                if not body.get("stream"):
                    message = owner._message(message_id, model, blocks, stop)
                    self._reply(200, "application/json", json.dumps(message).encode())
                    return
                self._reply(200, "text/event-stream", owner._stream(message_id, model, blocks, stop))

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    @property
    def base_url(self) -> str:
        assert self._server is not None, "server not started"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    # --- answers -------------------------------------------------------------
    def _answer(self, body: dict) -> tuple[list[dict], str, str]:
        if not body.get("tools"):
            with self._lock:
                self.side_requests += 1
            return [{"type": "text", "text": "Scripted session"}], "end_turn", "msg_scripted_side"
        with self._lock:
            self.requests.append(body)
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
