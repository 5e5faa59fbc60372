"""Qwen Code's hook events, the answer that replaces a result, and its settings files (layer `hooks`).

Qwen Code 0.24.4 sends the common command-hook event shape (`session_id`,
`transcript_path`, `cwd`, `hook_event_name`, `tool_name`, `tool_input`;
`tool_response` after the tool, `error` and `is_interrupt` after a failure)
with two ids: its own `tool_use_id` (`toolu_…`) and the model's
`tool_call_id`. The call is keyed by the model's id, the one its transcript
records, so live capture and `yarp import` name the same call; an event
without it falls back to Qwen Code's own.

After the tool, `tool_response` is `{"llmContent", "returnDisplay"}`:
`llmContent` is what the model would get, already cut by the shell tool when
it is over 30,000 characters (a note naming the file under `~/.qwen/tmp/`
that holds the whole of it, then its first and last lines), and
`returnDisplay` the text shown to the user (a shell call's whole output). A `PostToolUse` answer of
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
#: What comes before the part of the output a cut text shows, and what separates its head from its tail.
_SHOWN_PART = "\nTruncated part of the output:\n"
_CUT_MARK = "\n\n---\n... [CONTENT TRUNCATED] ...\n---\n\n"


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


def model_text(event: HookEvent) -> str | None:
    """The text the model would get: a `PostToolUse`'s `llmContent`, a failure's error text; else None."""
    if event.event == POST_FAILURE:
        error = event.response.get("error") if isinstance(event.response, dict) else None
        return error if isinstance(error, str) else None
    return response_text(event.response)


def shell_command(event: HookEvent) -> str | None:
    """The command of a shell call (`run_shell_command`'s `command`), else None."""
    if event.tool_name != SHELL_TOOL or not isinstance(event.tool_input, dict):
        return None
    command = event.tool_input.get("command")
    return command if isinstance(command, str) and command.strip() else None


def ran_recovery(event: HookEvent) -> bool:
    """Whether the call ran `yarp search` or `yarp read`, whose output is never capped again."""
    from yarp.view.plan import is_recovery_command

    return is_recovery_command(shell_command(event))


def saved_head(text: str | None) -> str:
    """The whole lines a cut text shows of the saved output's head (the file must begin with them), or ""."""
    if not isinstance(text, str) or _SHOWN_PART not in text:
        return ""
    shown = text.split(_SHOWN_PART, 1)[1]
    if _CUT_MARK not in shown:
        return ""
    lines = shown.split(_CUT_MARK, 1)[0].split("\n")
    if lines and lines[-1].endswith("..."):
        lines.pop()  # a line Qwen Code cut to fit its preview
    return "\n".join(lines)


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
    """The file our hooks go in: `$QWEN_HOME/settings.json` (else `~/.qwen/settings.json`) for the user,
    `./.qwen/settings.json` for the project."""
    if scope == "project":
        return os.path.join(os.path.abspath(cwd or os.getcwd()), ".qwen", "settings.json")
    return os.path.join(qwen_home(environ), "settings.json")


def qwen_home(environ=os.environ) -> str:
    """Qwen Code's own folder: `$QWEN_HOME` when set (relative to the working directory, as Qwen Code
    resolves it), else `~/.qwen`."""
    if environ.get("QWEN_HOME"):
        return os.path.abspath(os.path.expanduser(environ["QWEN_HOME"]))
    home = environ.get("HOME") or os.path.expanduser("~")
    return os.path.join(os.path.abspath(home), ".qwen")
