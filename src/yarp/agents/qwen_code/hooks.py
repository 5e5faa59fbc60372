"""Qwen Code's hook events, the answer that replaces a result, and its settings files (layer `hooks`).

Qwen Code 0.24.4 sends Claude Code's event shape (`session_id`,
`transcript_path`, `cwd`, `hook_event_name`, `tool_name`, `tool_input`;
`tool_response` after the tool, `error` and `is_interrupt` after a failure)
with two ids: its own `tool_use_id` (`toolu_…`) and the model's
`tool_call_id`. The call is keyed by the model's id, the one its transcript
records, so live capture and `yarp import` name the same call; an event
without it falls back to Qwen Code's own.

After the tool, `tool_response` is `{"llmContent", "returnDisplay"}`:
`llmContent` is what the model would get, already cut by the shell tool when
the output is over 25,000 characters or 1,000 lines (a note naming the file
under `~/.qwen/tmp/` that holds the whole output, then its tail), and
`returnDisplay` the text shown to the user. A `PostToolUse` answer of
`{"continue": false, "stopReason": T}` makes T the tool's whole result (Qwen
Code records the call as an error and the turn goes on).
"""

from __future__ import annotations

import os
import re
from typing import Any

from yarp.errors import ValidationError
from yarp.hooks.events import HookEvent
from yarp.limits import MAX_IDENTITY_CHARS, MAX_NAME_CHARS, MAX_WORKING_DIRECTORY_CHARS
from yarp.wire.validation import check_json, event_text

NAME = "qwen-code"
PRE, POST, POST_FAILURE = "PreToolUse", "PostToolUse", "PostToolUseFailure"
SHELL_TOOL = "run_shell_command"

#: Match every tool (Qwen Code documents "" and "*").
MATCHER = ""
#: Events whose groups take a tool matcher.
MATCHED_EVENTS = frozenset({PRE, POST, POST_FAILURE})
#: What our entry holds beside its type and command: Qwen Code's timeout, in milliseconds.
ENTRY_FIELDS = {"name": "yarp", "timeout": 30_000}
#: The note Qwen Code's cut output starts with, naming the file that holds all of it.
_SAVED = re.compile(r"\ATool output was too large and has been truncated\.\nThe full output has been saved to: "
                    r"(/[^\n]+)\n")


def parse_event(payload: Any) -> HookEvent | None:
    """The event to archive, or None for one this adapter does not handle (`ValidationError` if malformed)."""
    if not isinstance(payload, dict):
        raise ValidationError("hook event is not a JSON object")
    name = payload.get("hook_event_name")
    if name not in (PRE, POST, POST_FAILURE):
        return None
    if "tool_input" not in payload:
        raise ValidationError("hook event field tool_input is missing")
    response = None
    if name == POST:
        response = payload.get("tool_response")
    elif name == POST_FAILURE:
        response = {"error": payload.get("error")}
        if "is_interrupt" in payload:
            response["isInterrupt"] = payload.get("is_interrupt")
    id_field = "tool_call_id" if isinstance(payload.get("tool_call_id"), str) and payload["tool_call_id"] \
        else "tool_use_id"
    return HookEvent(
        agent=NAME,
        event=name,
        session_id=event_text(payload, "session_id", MAX_IDENTITY_CHARS),
        call_id=event_text(payload, id_field, MAX_IDENTITY_CHARS),
        tool_name=event_text(payload, "tool_name", MAX_NAME_CHARS),
        tool_input=check_json(payload["tool_input"], "hook event field tool_input"),
        cwd=_absolute(payload.get("cwd")),
        model=None,
        response=check_json(response, "hook event field tool_response"),
        transcript_path=_absolute(payload.get("transcript_path")),
    )


def _absolute(path: object) -> str | None:
    return path if isinstance(path, str) and os.path.isabs(path) and len(path) <= MAX_WORKING_DIRECTORY_CHARS \
        and "\x00" not in path else None


def response_text(response: Any) -> str | None:
    """The text the model would get for a `PostToolUse` response (`llmContent`), or None if it is not text."""
    if isinstance(response, dict) and isinstance(response.get("llmContent"), str):
        return response["llmContent"]
    return None


def saved_output(text: str | None) -> str | None:
    """The file holding the whole output that Qwen Code cut `text` from (named on its first lines), else None."""
    found = _SAVED.match(text) if isinstance(text, str) else None
    return found.group(1) if found is not None else None


def is_error(event: HookEvent) -> bool:
    """Whether the call failed: a failure event, or a shell result whose exit code is not 0."""
    if event.event == POST_FAILURE:
        return True
    text = response_text(event.response)
    if event.tool_name != SHELL_TOOL or text is None:
        return False
    code = re.search(r"^Exit Code: (-?\d+)$", text, re.M)
    return code is not None and code.group(1) != "0"


def view_answer(view: str) -> dict:
    """The `PostToolUse` answer that hands the model `view` as the tool's whole result."""
    return {"continue": False, "stopReason": view}


def rewrite_answer(tool_input: dict) -> dict:
    """The `PreToolUse` answer for a rewritten input. Qwen Code 0.24.4 drops it, so the service never asks."""
    return {"hookSpecificOutput": {"hookEventName": PRE, "permissionDecision": "allow",
                                   "permissionDecisionReason": "yarp", "updatedInput": tool_input}}


def settings_path(scope: str, environ=os.environ, cwd: str | None = None) -> str:
    """The file our hooks go in: `~/.qwen/settings.json` (user), `./.qwen/settings.json` (project)."""
    if scope == "project":
        return os.path.join(os.path.abspath(cwd or os.getcwd()), ".qwen", "settings.json")
    home = environ.get("HOME") or os.path.expanduser("~")
    return os.path.join(os.path.abspath(home), ".qwen", "settings.json")
