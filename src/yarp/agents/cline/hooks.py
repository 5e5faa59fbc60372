"""Cline's hook events, the answer that rewrites a command, and its hooks folders (layer `hooks`).

Cline 3.0.65 runs every file of its hooks folders named for an event
(`PreToolUse`, `PostToolUse`, with no suffix or a script's) and writes the
event to its stdin as one JSON object: `hookName` (`tool_call` before the
tool, `tool_result` after it), `taskId` (the conversation),
`sessionContext.rootSessionId` (the session, the folder its messages are
kept in), `workspaceRoots`, and the call: `tool_call` is `{id, name, input}`,
`id` the model's call id, and `tool_result` adds `output` (what the model
gets: for `run_commands` and `read_files` one `{query, result, success}` per
command or file, `error` on a failed one), `error` (a tool that threw),
`durationMs`, `startedAt`, `endedAt`. The call is keyed by the model's id
in the session, as its messages file keeps it, so live capture and `yarp
import` name the same call.

The answer is read from the last line of stdout: `{"overrideInput": …}`
before the tool replaces its whole input; after it, Cline reads only
`cancel` and `contextModification`, so no result is replaced.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from yarp.errors import ValidationError
from yarp.hooks.events import HookEvent
from yarp.limits import MAX_IDENTITY_CHARS, MAX_NAME_CHARS, MAX_WORKING_DIRECTORY_CHARS
from yarp.wire.validation import check_json, event_text

NAME = "cline"
PRE, POST = "tool_call", "tool_result"
SHELL_TOOL = "run_commands"

#: The hook files `yarp hook install cline` writes, by event: Cline runs a file named for its event.
HOOK_FILES = {PRE: "PreToolUse", POST: "PostToolUse"}
#: The project's hooks folder is committed with the project: its hooks run `yarp hook cline` from PATH.
LOCAL_PROJECT_FILE = False


@dataclass(frozen=True, slots=True)
class ClineEvent(HookEvent):
    """A Cline event: `run_commands` holds its commands in a list, and a failure is in the output."""

    #: After the tool: it threw, or a command or file of its output failed.
    failed: bool = False

    @property
    def is_failure(self) -> bool:
        """Whether the tool failed (its output says so); Cline sends no failure event of its own."""
        return self.failed

    def shell_command(self) -> str | None:
        """The command of a `run_commands` call of exactly one command, else None (several run at once
        are left as they are)."""
        if self.tool_name != SHELL_TOOL or not isinstance(self.tool_input, dict):
            return None
        commands = self.tool_input.get("commands")
        if not isinstance(commands, list) or len(commands) != 1:
            return None
        command = commands[0]
        return command if isinstance(command, str) and command.strip() else None

    def rewritten_input(self, command: str) -> dict:
        """The whole input with its one command replaced by `command`."""
        return {**self.tool_input, "commands": [command]}


def parse_event(payload: Any) -> ClineEvent | None:
    """The event to archive, or None for one this adapter does not handle (`ValidationError` if malformed)."""
    if not isinstance(payload, dict):
        raise ValidationError("hook event is not a JSON object")
    name = payload.get("hookName")
    if name not in (PRE, POST):
        return None
    call = payload.get(name)
    if not isinstance(call, dict):
        raise ValidationError("hook event field tool_call is missing")
    if "input" not in call:
        raise ValidationError("hook event field tool_input is missing")
    context = payload.get("sessionContext")
    holder = context if isinstance(context, dict) and isinstance(context.get("rootSessionId"), str) else payload
    response = failed = None
    if name == POST:
        response = {"output": call.get("output")}
        if call.get("error") is not None:
            response["error"] = call.get("error")
        failed = is_error(response)
    return ClineEvent(
        agent=NAME,
        event=name,
        session_id=event_text(holder, "rootSessionId" if holder is context else "taskId", MAX_IDENTITY_CHARS),
        call_id=event_text(call, "id", MAX_IDENTITY_CHARS),
        tool_name=event_text(call, "name", MAX_NAME_CHARS),
        tool_input=check_json(call["input"], "hook event field tool_input"),
        cwd=_workspace(payload.get("workspaceRoots")),
        model=None,
        response=check_json(response, "hook event field tool_response"),
        failed=bool(failed),
    )


def _workspace(roots: object) -> str | None:
    """The session's working folder: the first workspace root, when it is an absolute path."""
    path = roots[0] if isinstance(roots, list) and roots else None
    return path if isinstance(path, str) and os.path.isabs(path) and len(path) <= MAX_WORKING_DIRECTORY_CHARS \
        and "\x00" not in path else None


def is_error(response: Any) -> bool:
    """Whether a result failed: the tool threw (`error`), or one of its commands or files did not succeed."""
    if not isinstance(response, dict):
        return False
    if response.get("error") is not None:
        return True
    output = response.get("output")
    return isinstance(output, list) and any(isinstance(item, dict) and item.get("success") is False
                                            for item in output)


def rewrite_answer(tool_input: dict) -> dict:
    """The `PreToolUse` answer that hands Cline a rewritten input (it replaces the whole input)."""
    return {"overrideInput": tool_input}


def settings_path(scope: str, environ=os.environ, cwd: str | None = None) -> str:
    """The folder our hook files go in: `$CLINE_DIR/hooks` (else `~/.cline/hooks`) for the user,
    `./.clinerules/hooks` for the project."""
    if scope == "project":
        return os.path.join(os.path.abspath(cwd or os.getcwd()), ".clinerules", "hooks")
    return os.path.join(cline_dir(environ), "hooks")


def cline_dir(environ=os.environ) -> str:
    """Cline's own folder: `$CLINE_DIR` when set, else `~/.cline`."""
    if environ.get("CLINE_DIR", "").strip():
        return os.path.abspath(os.path.expanduser(environ["CLINE_DIR"].strip()))
    home = environ.get("HOME") or os.path.expanduser("~")
    return os.path.join(os.path.abspath(home), ".cline")
