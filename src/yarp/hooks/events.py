"""A tool call's hook event as the archive needs it, and the common JSON shape several agents send.

`HookEvent` is what an agent's `hooks` part (`yarp.agents.<agent>.hooks`)
makes of one event: the call, its tool input and the tool's response. Many
agents' command hooks send one JSON object per event with the same core
fields (`session_id`, `cwd`, `hook_event_name`, `tool_name`, `tool_input`,
`tool_use_id`, `tool_response`, `transcript_path`, optionally `model`);
`parse_tool_event` reads that shape, given the agent's own event names. The
before-tool event becomes a `begin_call`; the after-tool events the raw
result, the visible result and the finish (`yarp.hooks.capture`).

Runs in the broker, never in the hook process. Pure translation: no I/O, no
broker, no archive. The fields are checked by the broker's compiled
validator (`yarp.wire.validation`: bounded text, JSON nesting depth), so the
operations built from them are archived as they are, never encoded to JSON
and parsed back; malformed events raise `ValidationError` with fixed wording
(never payload text).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from yarp.errors import ValidationError
from yarp.limits import MAX_IDENTITY_CHARS, MAX_NAME_CHARS, MAX_WORKING_DIRECTORY_CHARS
from yarp.wire import operations as ops
from yarp.wire.validation import check_json, event_text

#: The common shape's event after a tool that failed: its response is `{"error", "isInterrupt"}`.
FAILURE_EVENT = "PostToolUseFailure"


@dataclass(frozen=True, slots=True)
class HookEvent:
    """One hook event of an agent, reduced to what the archive needs: the call, its tool input and response."""

    agent: str
    event: str
    session_id: str
    call_id: str
    tool_name: str
    tool_input: Any
    cwd: str | None
    model: str | None
    #: After the tool: the tool's response (for a failure event, the error object).
    response: Any = None
    #: The session transcript the agent names (an agent's service may read it).
    transcript_path: str | None = None

    @property
    def before(self) -> bool:
        """Whether this is the event before the tool runs (the agent's `BEFORE_TOOL`), else one after it."""
        from yarp.agents import record

        return self.event == record(self.agent).BEFORE_TOOL

    @property
    def is_failure(self) -> bool:
        """Whether this is the common shape's event of a tool that failed (its response is the error object)."""
        return self.event == FAILURE_EVENT

    def shell_command(self) -> str | None:
        """The command text of a shell call that could be rewritten (the agent's `SHELL_TOOLS`), else None."""
        from yarp.agents import record

        if self.tool_name not in record(self.agent).SHELL_TOOLS:
            return None
        if not isinstance(self.tool_input, dict):
            return None
        command = self.tool_input.get("command")
        return command if isinstance(command, str) and command.strip() else None

    def rewritten_input(self, command: str):
        """The tool input the agent is handed when its shell command becomes `command` (an agent whose
        input holds the command elsewhere says where, in its own event class)."""
        return rewritten_input(self.tool_input, command)


def parse_tool_event(agent: str, payload: Any, *, pre: str, post: str, failure: bool = False
                     ) -> HookEvent | None:
    """The event of the common shape to archive, or None for one of another name.

    `pre` and `post` are the agent's names of the event before the tool and
    after it; `failure`: it also sends `FAILURE_EVENT` after a tool that failed
    (whose response is built from `error` and `is_interrupt`).
    """
    failure = FAILURE_EVENT if failure else None
    if not isinstance(payload, dict):
        raise ValidationError("hook event is not a JSON object")
    name = payload.get("hook_event_name")
    if name not in (pre, post) and (failure is None or name != failure):
        return None
    if "tool_input" not in payload:
        raise ValidationError("hook event field tool_input is missing")
    response = None
    if name == post:
        response = payload.get("tool_response", payload.get("tool_output"))
    elif name == failure:
        response = {"error": payload.get("error")}
        if "is_interrupt" in payload:
            response["isInterrupt"] = payload.get("is_interrupt")
    cwd = payload.get("cwd")
    return HookEvent(
        agent=agent,
        event=name,
        session_id=event_text(payload, "session_id", MAX_IDENTITY_CHARS),
        call_id=event_text(payload, "tool_use_id", MAX_IDENTITY_CHARS),
        tool_name=event_text(payload, "tool_name", MAX_NAME_CHARS),
        tool_input=check_json(payload["tool_input"], "hook event field tool_input"),
        cwd=cwd if isinstance(cwd, str) and os.path.isabs(cwd) and len(cwd) <= MAX_WORKING_DIRECTORY_CHARS
        else None,
        model=event_text(payload, "model", MAX_NAME_CHARS, False) if isinstance(payload.get("model"), str)
        else None,
        response=check_json(response, "hook event field tool_response"),
        transcript_path=_absolute(payload.get("transcript_path")),
    )


def _absolute(path: object) -> str | None:
    return path if isinstance(path, str) and os.path.isabs(path) and len(path) <= MAX_WORKING_DIRECTORY_CHARS \
        and "\x00" not in path else None


def local_account() -> str:
    """The OS user that owns the agent's data."""
    try:
        import pwd

        return pwd.getpwuid(os.geteuid()).pw_name
    except (KeyError, ImportError):
        return str(os.geteuid())


def session_of(event: HookEvent, account: str) -> ops.Session:
    """The archive session of the event, under `account`."""
    return ops.Session(event.agent, account, event.session_id)


def begin_operation(event: HookEvent, account: str, input_after: Any, *, requires_streams: bool,
                    now_ms: int, deadline_at_ms: int | None = None) -> ops.BeginCall:
    """The `begin_call` recording the event's call: its metadata, the tool input and the input handed back."""
    meta = ops.CallMeta(
        source_call_id=event.call_id,
        tool_name=event.tool_name,
        started_at_ms=now_ms,
        requires_streams=requires_streams,
        model=event.model,
        working_directory=event.cwd,
    )
    return ops.BeginCall(session_of(event, account), meta, event.tool_input, input_after, now_ms, deadline_at_ms)


def rewritten_input(tool_input: dict, command: str) -> dict:
    """The whole input with only `command` replaced: the agent replaces the
    entire object, so every other field (timeout, description, ...) is kept."""
    updated = dict(tool_input)
    updated["command"] = command
    return updated
