"""A scripted OpenAI Responses-API server on 127.0.0.1 for driving the real Codex CLI in tests.

It answers `POST /v1/responses` (streaming, server-sent events: `response.created`,
one `response.output_item.added`/`.done` pair per item, `response.completed`)
with a predetermined script in the same format as `scripted_model.py`: a step is
a `ToolCall`, a list of them, or a final `Text`. The step is chosen by the
number of `function_call` items already in the request's `input`, so the server
keeps no conversation state and a retried request gets the same answer. Every
request body is recorded, so a test can read exactly what the agent sent back
(for instance the tool outputs the model was shown, `function_call_output`).

Standard library only; it must never listen on anything but loopback.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from scripted_model import ScriptedModel, Text, ToolCall, step_after

__all__ = ["ScriptedResponses", "Text", "ToolCall", "tool_outputs"]


def tool_outputs(request: dict) -> dict[str, str]:
    """The `function_call_output` items of one recorded request, by call id, as text."""
    out: dict[str, str] = {}
    for item in request.get("input", []):
        if not isinstance(item, dict) or item.get("type") != "function_call_output":
            continue
        output = item.get("output")
        if isinstance(output, list):  # content items
            output = "".join(part.get("text", "") for part in output if isinstance(part, dict))
        out[item.get("call_id", "")] = output if isinstance(output, str) else json.dumps(output)
    return out


def _sse(data: dict) -> bytes:
    return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode()


@dataclass
class ScriptedResponses(ScriptedModel):
    """Context manager running the scripted server; `base_url` ends with `/v1`."""

    endpoint = "/responses"

    # --- answers -------------------------------------------------------------
    def step_for(self, body: dict) -> Any:
        """The first step whose tool calls are not all in the request's input yet."""
        done = sum(1 for item in body.get("input", []) if isinstance(item, dict) and item.get("type") == "function_call")
        return step_after(self.steps, done)

    def _items(self, step: Any) -> list[dict]:
        if isinstance(step, Text):
            return [{"type": "message", "id": "msg_scripted", "role": "assistant", "status": "completed",
                     "content": [{"type": "output_text", "text": step.text, "annotations": []}]}]
        calls = step if isinstance(step, list) else [step]
        return [{"type": "function_call", "id": f"fc_{call.id}", "call_id": call.id, "name": call.name,
                 "arguments": json.dumps(call.arguments), "status": "completed"} for call in calls]

    def stream(self, body: dict) -> bytes:
        response = {"id": "resp_scripted", "object": "response", "model": self.model, "status": "in_progress",
                    "output": []}
        out = [_sse({"type": "response.created", "response": response})]
        items = self._items(self.step_for(body))
        for index, item in enumerate(items):
            out.append(_sse({"type": "response.output_item.added", "output_index": index, "item": item}))
            out.append(_sse({"type": "response.output_item.done", "output_index": index, "item": item}))
        usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
                 "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}
        out.append(_sse({"type": "response.completed",
                         "response": {**response, "status": "completed", "output": items, "usage": usage}}))
        return b"".join(out)
