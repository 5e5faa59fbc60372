"""A scripted OpenAI-compatible model server on 127.0.0.1 for driving real agents in tests.

The server answers `POST /v1/chat/completions` (streaming, server-sent events) with
a predetermined script: step N is chosen by the number of assistant messages
already in the request, so the server keeps no conversation state and a retried
request gets the same answer. A step is either a list of tool calls or a final
text. A request that offers no tools is not part of the conversation (opencode
asks the model for a session title that way): it gets a short text, `TITLE`,
and the script does not move. Every request body is recorded, so a test can
read exactly what the agent sent back to the model (for instance the tool
results the model was shown).

Standard library only; it must never listen on anything but loopback.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from scripted_server import ERROR, ScriptedServer

__all__ = ["ToolCall", "Text", "ScriptedModel", "tool_messages", "TITLE"]

#: The answer to a request without tools (a title, a summary): it never advances the script.
TITLE = "Scripted title"


@dataclass(frozen=True)
class ToolCall:
    """One tool call the model asks for; `arguments` is sent as a JSON string."""

    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Text:
    """A final assistant message that ends the agent's run."""

    text: str


Step = "list[ToolCall] | ToolCall | Text"


def tool_messages(request: dict) -> dict[str, str]:
    """The `role: tool` messages of one recorded request, by tool call id, as text."""
    out: dict[str, str] = {}
    for message in request.get("messages", []):
        if message.get("role") != "tool":
            continue
        content = message.get("content")
        if isinstance(content, list):
            content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
        out[message.get("tool_call_id", "")] = content or ""
    return out


def step_after(steps: list, done: int):
    """The first step whose tool calls are not all among the `done` calls the request already holds
    (a list of calls is one turn); the final `Text`, or a closing one after the script."""
    for step in steps:
        if isinstance(step, Text):
            return step
        calls = len(step) if isinstance(step, list) else 1
        if done < calls:
            return step
        done -= calls
    return Text("(script finished)")


@dataclass
class ScriptedModel(ScriptedServer):
    """Context manager running the scripted server; `base_url` ends with `/v1`."""

    steps: list
    model: str = "scripted-model"
    requests: list[dict] = field(default_factory=list)

    @property
    def base_url(self) -> str:
        return f"{self.origin}/v1"

    #: The path (suffix) of the API this server speaks.
    endpoint = "/chat/completions"

    def answer(self, path: str, body: dict) -> tuple[int, str, bytes]:
        if not path.endswith(self.endpoint):
            return 404, "application/json", ERROR
        self.record(body, self.requests)
        return 200, "text/event-stream", self.stream(body)

    def stream(self, body: dict) -> bytes:
        return b"".join(f"data: {event}\n\n".encode() for event in self._events(body))

    # --- answers -------------------------------------------------------------
    def step_for(self, body: dict) -> Any:
        if not body.get("tools"):
            return Text(TITLE)
        done = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
        if done >= len(self.steps):
            return Text("(script finished)")
        return self.steps[done]

    def _chunk(self, delta: dict, finish: str | None = None) -> str:
        return json.dumps(
            {
                "id": "chatcmpl-scripted",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": self.model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
        )

    def _events(self, body: dict) -> list[str]:
        step = self.step_for(body)
        events = [self._chunk({"role": "assistant", "content": ""})]
        if isinstance(step, Text):
            events.append(self._chunk({"content": step.text}))
            events.append(self._chunk({}, "stop"))
        else:
            calls = step if isinstance(step, list) else [step]
            for index, call in enumerate(calls):
                events.append(
                    self._chunk(
                        {
                            "tool_calls": [
                                {
                                    "index": index,
                                    "id": call.id,
                                    "type": "function",
                                    "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
                                }
                            ]
                        }
                    )
                )
            events.append(self._chunk({}, "tool_calls"))
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        events.append(
            json.dumps(
                {
                    "id": "chatcmpl-scripted",
                    "object": "chat.completion.chunk",
                    "created": 0,
                    "model": self.model,
                    "choices": [],
                    "usage": usage,
                }
            )
        )
        events.append("[DONE]")
        return events
