"""A scripted OpenAI-compatible model server on 127.0.0.1 for driving real agents in tests.

The server answers `POST /v1/chat/completions` (streaming, server-sent events) with
a predetermined script: step N is chosen by the number of assistant messages
already in the request, so the server keeps no conversation state and a retried
request gets the same answer. A step is either a list of tool calls or a final
text. Every request body is recorded, so a test can read exactly what the agent
sent back to the model (for instance the tool results the model was shown).

Standard library only; it must never listen on anything but loopback.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["ToolCall", "Text", "ScriptedModel", "tool_messages"]


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


@dataclass
class ScriptedModel:
    """Context manager running the scripted server; `base_url` ends with `/v1`."""

    steps: list
    model: str = "scripted-model"
    requests: list[dict] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle ---------------------------------------------------------
    def __enter__(self) -> "ScriptedModel":
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # keep test output quiet
                return

            def do_POST(self) -> None:  # noqa: N802 (http.server naming)
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except json.JSONDecodeError:
                    self.send_error(400)
                    return
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self.send_error(404)
                    return
                with owner._lock:
                    owner.requests.append(body)
                events = owner._events(body)
                payload = b"".join(f"data: {event}\n\n".encode() for event in events)
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

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
        return f"http://{host}:{port}/v1"

    # --- answers -------------------------------------------------------------
    def step_for(self, body: dict) -> Any:
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
