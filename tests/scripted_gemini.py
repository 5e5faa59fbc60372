"""A scripted Gemini API server on 127.0.0.1 for driving the real Gemini CLI in tests.

It answers `POST /v1beta/models/<model>:streamGenerateContent?alt=sse` (server-sent
events, one `data:` line holding a `GenerateContentResponse`: `candidates[0].content`
with `functionCall` parts or a text part, `finishReason`, `usageMetadata`) from a
predetermined script in the format of `scripted_model.py`: a step is a `ToolCall`,
a list of them (one turn of parallel calls), or a final `Text`. The step is
chosen by the number of `functionCall` parts already in the request's
`contents`, so the server keeps no conversation state and a retried request
gets the same answer. `:generateContent` (the CLI's utility calls) gets a short
JSON text, `:countTokens` a count. Every streamed request body is recorded, so a
test reads exactly what the CLI sent back (`function_responses`).

Gemini CLI 0.61 reaches it with `GOOGLE_GEMINI_BASE_URL=<origin>` and any
`GEMINI_API_KEY` (plain HTTP is allowed for localhost). Standard library only;
it must never listen on anything but loopback.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from scripted_model import Text, ToolCall, step_after
from scripted_server import ERROR, ScriptedServer

__all__ = ["ScriptedGemini", "Text", "ToolCall", "function_responses"]


def function_responses(request: dict) -> list[tuple[str, dict]]:
    """(tool name, response) of every `functionResponse` part of one recorded request, in order."""
    out = []
    for content in request.get("contents", []):
        for part in content.get("parts", []) if isinstance(content, dict) else ():
            response = part.get("functionResponse") if isinstance(part, dict) else None
            if isinstance(response, dict):
                out.append((response.get("name", ""), response.get("response") or {}))
    return out


def _usage(total: int = 15) -> dict:
    return {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": total}


@dataclass
class ScriptedGemini(ScriptedServer):
    """Context manager running the scripted server; point the CLI at `origin`."""

    steps: list
    model: str = "gemini-2.5-flash"
    requests: list[dict] = field(default_factory=list)

    def answer(self, path: str, body: dict) -> tuple[int, str, bytes]:
        if path.endswith(":streamGenerateContent"):
            self.record(body, self.requests)
            data = json.dumps(self._response(self.step_for(body)))
            return 200, "text/event-stream", f"data: {data}\r\n\r\n".encode()
        if path.endswith(":generateContent"):
            text = json.dumps({"reasoning": "scripted", "next_speaker": "user"})
            return 200, "application/json", json.dumps({
                "candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP"}],
                "usageMetadata": _usage(2)}).encode()
        if path.endswith(":countTokens"):
            return 200, "application/json", b'{"totalTokens": 100}'
        return 404, "application/json", ERROR

    def step_for(self, body: dict) -> Any:
        """The first step whose calls are not all in the request's contents yet."""
        done = sum(1 for content in body.get("contents", []) if isinstance(content, dict)
                   and content.get("role") == "model"
                   for part in content.get("parts", []) if isinstance(part, dict) and "functionCall" in part)
        return step_after(self.steps, done)

    def _response(self, step: Any) -> dict:
        if isinstance(step, Text):
            parts = [{"text": step.text}]
        else:
            parts = [{"functionCall": {"name": call.name, "args": call.arguments}}
                     for call in (step if isinstance(step, list) else [step])]
        return {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
                "usageMetadata": _usage(), "modelVersion": self.model}
