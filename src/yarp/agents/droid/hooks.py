"""Droid's hook events, the call identity live capture and import both derive, and its settings files.

Measured with the real Droid 0.225.2 (`droid exec`, docs/design/adapters.md,
"Droid: rewrite before the tool, no view after it"):

- `PreToolUse` and `PostToolUse` carry `session_id`, `transcript_path`,
  `cwd`, `permission_mode`, `hook_event_name`, `tool_name` and `tool_input`
  (`PostToolUse`'s after any rewrite), and `PostToolUse` the `tool_response`:
  the text the model gets (a shell call's output ends in `[Process exited
  with code N]`). `Stop` and `SessionEnd` name the session only.
- **No event names the call.** The session file keys it by the model's
  call id, which the hooks never see. So its identity is derived from what
  both hold: the tool's name, the SHA-256 of its arguments' canonical JSON,
  and how many earlier calls of the session have both (`call_prefix`,
  `call_id`). The session file keeps the model's own arguments, never a
  rewritten command, so import derives the same id from them.
- **A tool that fails gets no `PostToolUse`**: a command that exits non-zero,
  a read of a missing file. Its result is in the session file (a
  `tool_result` with `is_error`) before the next event, so the broker settles
  it from there at the session's next `PostToolUse`, `Stop` or `SessionEnd`.
- A `PreToolUse` answer `hookSpecificOutput.updatedInput` is merged into the
  input before the tool runs (`rewrite_answer`); no `permissionDecision`, so
  Droid's own permission check still runs. Our entry sets
  `preserveRiskLevel`, so the model's `riskLevel` of the command stays with
  its rewrite (Droid drops it from a changed command otherwise).
- No answer replaces a result after the tool: `PostToolUse`'s `continue:
  false` stops the whole run, `decision: "block"` changes nothing the model
  gets, `additionalContext` only adds a message.

Pure translation: no I/O, no broker, no archive.
"""

from __future__ import annotations

import os
import re
from typing import Any

from yarp.hooks.events import HookEvent
from yarp.limits import MAX_IDENTITY_CHARS, MAX_NAME_CHARS, MAX_WORKING_DIRECTORY_CHARS

NAME = "droid"
PRE, POST = "PreToolUse", "PostToolUse"
#: Events that name only the session: they settle its calls that got no `PostToolUse`.
SETTLE_ONLY = ("Stop", "SessionEnd")
SHELL_TOOL = "Execute"
#: The line Droid ends a shell call's text with, once the command ran.
_EXITED = re.compile(r"\[Process exited with code (-?\d+)\]\s*\Z")


class DroidEvent:
    """One Droid hook event, reduced to what the archive needs; `tool_name` is None for `SETTLE_ONLY`."""

    __slots__ = ("name", "session_id", "transcript_path", "cwd", "tool_name", "tool_input", "response")

    def __init__(self, name: str, session_id: str, transcript_path: str | None, cwd: str | None,
                 tool_name: str | None = None, tool_input: Any = None, response: Any = None) -> None:
        self.name = name
        self.session_id = session_id
        self.transcript_path = transcript_path
        self.cwd = cwd
        self.tool_name = tool_name
        self.tool_input = tool_input
        self.response = response

    def call(self, call_id: str) -> HookEvent:
        """The event as the common steps take it, for the call `call_id`."""
        return HookEvent(NAME, self.name, self.session_id, call_id, self.tool_name, self.tool_input, self.cwd,
                         None, self.response, self.transcript_path)

    def shell_command(self) -> str | None:
        """The command of a shell call (`Execute`'s `command`), else None."""
        if self.tool_name != SHELL_TOOL or not isinstance(self.tool_input, dict):
            return None
        command = self.tool_input.get("command")
        return command if isinstance(command, str) and command.strip() else None


def parse_event(payload: Any) -> DroidEvent | None:
    """The event to serve, or None for one not archived (`ValidationError` for a malformed tool event)."""
    from yarp.wire.validation import check_json, event_text

    if not isinstance(payload, dict):
        return None
    name = payload.get("hook_event_name")
    if name not in (PRE, POST, *SETTLE_ONLY):
        return None
    session_id = event_text(payload, "session_id", MAX_IDENTITY_CHARS)
    transcript, cwd = _absolute(payload.get("transcript_path")), _absolute(payload.get("cwd"))
    if name in SETTLE_ONLY:
        return DroidEvent(name, session_id, transcript, cwd)
    if "tool_input" not in payload:
        from yarp.errors import ValidationError

        raise ValidationError("hook event field tool_input is missing")
    response = check_json(payload.get("tool_response"), "hook event field tool_response") if name == POST else None
    return DroidEvent(name, session_id, transcript, cwd, event_text(payload, "tool_name", MAX_NAME_CHARS),
                      check_json(payload["tool_input"], "hook event field tool_input"), response)


def _absolute(path: object) -> str | None:
    return path if isinstance(path, str) and os.path.isabs(path) and len(path) <= MAX_WORKING_DIRECTORY_CHARS \
        and "\x00" not in path else None


# --- the call's identity --------------------------------------------------------------------


def call_prefix(tool_name: str, tool_input: Any) -> str:
    """`<tool>:<first 16 hex of the SHA-256 of the arguments' JSON, keys sorted>:`: the part of a call id
    both a hook event and the session file give; the occurrence number follows it."""
    import hashlib
    import json

    text = json.dumps(tool_input, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return f"{tool_name}:{hashlib.sha256(text.encode('utf-8', 'surrogatepass')).hexdigest()[:16]}:"


def call_id(prefix: str, occurrence: int) -> str:
    """The id of the `occurrence`-th call (from 0) of a session with that prefix."""
    return f"{prefix}{occurrence}"


def occurrence(call: str) -> int:
    """The occurrence number a derived id ends with (-1 for an id of another form)."""
    tail = call.rsplit(":", 1)[-1]
    return int(tail) if tail.isdigit() else -1


def wrapped_call(command: str | None, account: str, session_id: str, candidates) -> str | None:
    """The call among `candidates` whose `yarp run` rewrite `command` is (whole, or one wrapped part of a
    compound command), else None. A rewrite names its call in its archive flags, so the `PostToolUse`
    of a rewritten command finds its call without the model's arguments."""
    if not command or "--archive-agent" not in command:
        return None
    from yarp.view.plan import ArchiveIdentity, shell_quote

    for call in candidates:
        identity = ArchiveIdentity(NAME, account, session_id, call)
        whole = " ".join(f"{flag} {shell_quote(value)}" for flag, value in identity.flags()) + " -- "
        part = " ".join(f"{flag} {shell_quote(value)}" for flag, value in identity.parent_flags()) + " "
        if whole in command or part in command:
            return call
    return None


# --- what the tool did --------------------------------------------------------------------------


def ran_command(tool_name: str, result: Any) -> bool:
    """Whether a shell call's command ran: Droid ended its text with the exit code (True for other tools)."""
    if tool_name != SHELL_TOOL:
        return True
    return isinstance(result, str) and _EXITED.search(result) is not None


# --- answers and settings files ------------------------------------------------------------------


def rewrite_answer(tool_input: dict) -> dict:
    """The `PreToolUse` answer that hands Droid the rewritten input (merged into the model's own).

    No `permissionDecision`: Droid's own permission check still runs on it.
    """
    return {"hookSpecificOutput": {"hookEventName": PRE, "updatedInput": tool_input}}


#: Match every tool (Droid documents "*").
MATCHER = "*"
#: Events whose groups take a tool matcher.
MATCHED_EVENTS = frozenset({PRE, POST})
#: Our entry beside its type and command: Droid's timeout in seconds, and the model's risk level kept
#: for a rewritten command (Droid drops it from a changed command otherwise).
ENTRY_FIELDS = {"timeout": 30, "preserveRiskLevel": True}
#: Droid 0.225.2 reads no project `settings.local.json` (only the committed `.factory/settings.json`):
#: a project's entry runs the `yarp` on PATH.
LOCAL_PROJECT_FILE = False


def factory_home(environ=os.environ) -> str:
    """Droid's own folder: `.factory` in `$FACTORY_HOME_OVERRIDE` when set, else in the home folder."""
    base = environ.get("FACTORY_HOME_OVERRIDE") or environ.get("HOME") or os.path.expanduser("~")
    return os.path.join(os.path.abspath(base), ".factory")


def settings_path(scope: str, environ=os.environ, cwd: str | None = None) -> str:
    """The file our hooks go in: `~/.factory/settings.json` for the user, `./.factory/settings.json` for a
    project."""
    if scope == "project":
        return os.path.join(os.path.abspath(cwd or os.getcwd()), ".factory", "settings.json")
    return os.path.join(factory_home(environ), "settings.json")
