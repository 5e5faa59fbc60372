"""Gemini CLI's hook events, and the call identity live capture and import both derive.

Measured with the real Gemini CLI 0.61.0 (docs/design/adapters.md, "Gemini
CLI: hooks that rewrite before the tool and replace the view after it"):

- `BeforeTool` and `AfterTool` carry `session_id`, `transcript_path`, `cwd`,
  `hook_event_name`, `timestamp`, `tool_name` and `tool_input` (the model's
  arguments; `AfterTool`'s after any rewrite), and `AfterTool` the
  `tool_response` (`llmContent`, `returnDisplay`, and `error` for a tool-level
  error). **No event names the call**: there is no tool-call id anywhere in
  a hook payload, and the session file records a call only once it
  completed, under an id the hook never sees.
- So the call's identity is derived from what both the hook and the session
  file hold: the tool's name, the SHA-256 of the arguments' canonical JSON,
  and the number of earlier calls of the session with the same two
  (`call_id`). A rewritten shell command also names its call in its
  `--archive-call` flag, so the session file, which keeps the rewritten
  arguments, holds it verbatim (`rewritten_call`).
- A shell command's exit code is only text in `llmContent`
  (`Exit Code: N`); `error` marks a tool-level failure.
- An `AfterTool` answer cannot replace the output except as an error
  (`decision: "deny"`) or by a tail call that replaces the result cleanly:
  `hookSpecificOutput.tailToolCallRequest` naming `read_file` on a file in
  Gemini's project temp folder (`~/.gemini/tmp/<project>/`). The tail call
  fires the hooks again with `original_request_name`: those events are ours
  and are not archived (`is_tail_call`).

Pure translation: no I/O, no broker, no archive.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any

from yarp.limits import MAX_IDENTITY_CHARS, MAX_NAME_CHARS, MAX_WORKING_DIRECTORY_CHARS

AGENT = "gemini"
BEFORE = "BeforeTool"
AFTER = "AfterTool"
SHELL_TOOL = "run_shell_command"
#: The folder in Gemini's project temp folder where the views a tail call reads are written.
VIEWS_FOLDER = "yarp-views"
_EXIT_CODE = re.compile(r"^Exit Code: (-?\d+)$", re.M)
#: `--archive-call 'ID'` (or a plain word) in our `yarp run` rewrite of a command.
_CALL_FLAG = re.compile(r"--archive-call (?:'((?:[^']|'\\'')*)'|(\S+))")
_QUOTED = r"'(?:[^']|'\\'')*'"
#: One wrapped command's prefix in a compound rewrite (`yarp.view.plan.segment_prefix`).
_SEGMENT_PREFIX = re.compile(
    rf"(?:{_QUOTED}|\S+) run --archive-agent '{AGENT}' --archive-account {_QUOTED} --archive-session {_QUOTED}"
    rf" --archive-parent ({_QUOTED})(?: --pass)? -- ")


@dataclass(frozen=True, slots=True)
class GeminiEvent:
    """One `BeforeTool` or `AfterTool` event, reduced to what the archive needs."""

    event: str
    session_id: str
    tool_name: str
    tool_input: Any
    cwd: str | None
    transcript_path: str | None
    #: `AfterTool`: the tool's response, exactly.
    response: Any = None
    #: A tail call (ours: the read of a view), not a call of the model's.
    is_tail_call: bool = False

    def shell_command(self) -> str | None:
        """The command text of a shell call, else None."""
        if self.tool_name != SHELL_TOOL or not isinstance(self.tool_input, dict):
            return None
        command = self.tool_input.get("command")
        return command if isinstance(command, str) and command.strip() else None


def parse_event(payload: Any) -> GeminiEvent | None:
    """The event to archive, or None for one this adapter does not handle (never an error).

    Text fields and JSON values go through the broker's compiled checks (bounded
    text, nesting depth); a malformed event raises `ValidationError`.
    """
    from yarp.wire.validation import check_json, event_text

    if not isinstance(payload, dict) or payload.get("hook_event_name") not in (BEFORE, AFTER):
        return None
    if "tool_input" not in payload:
        from yarp.errors import ValidationError

        raise ValidationError("hook event field tool_input is missing")
    cwd = payload.get("cwd")
    transcript = payload.get("transcript_path")
    return GeminiEvent(
        event=payload["hook_event_name"],
        session_id=event_text(payload, "session_id", MAX_IDENTITY_CHARS),
        tool_name=event_text(payload, "tool_name", MAX_NAME_CHARS),
        tool_input=check_json(payload["tool_input"], "hook event field tool_input"),
        cwd=cwd if _absolute(cwd) else None,
        transcript_path=transcript if _absolute(transcript) else None,
        response=check_json(payload.get("tool_response"), "hook event field tool_response"),
        is_tail_call="original_request_name" in payload,
    )


def _absolute(value) -> bool:
    return isinstance(value, str) and os.path.isabs(value) and len(value) <= MAX_WORKING_DIRECTORY_CHARS \
        and "\x00" not in value


# --- the call's identity --------------------------------------------------------------------


def call_prefix(tool_name: str, tool_input: Any) -> str:
    """`<tool>:<first 16 hex of the SHA-256 of the arguments' JSON, keys sorted>:`, the part of a call
    id both the hook and the session file can compute; the occurrence number follows it. (Any
    deterministic form of the same decoded value does: both sides decode the same JSON text.)"""
    import hashlib
    import json

    text = json.dumps(tool_input, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return f"{tool_name}:{hashlib.sha256(text.encode('utf-8', 'surrogatepass')).hexdigest()[:16]}:"


def call_id(prefix: str, occurrence: int) -> str:
    """The id of the `occurrence`-th call (from 0) of a session with that prefix."""
    return f"{prefix}{occurrence}"


def rewritten_call(tool_input: Any) -> tuple[str, dict] | None:
    """(call id, the model's own arguments) of a shell command our rewrite made, else None.

    Our rewrite is `<yarp> run --archive-agent … --archive-call ID -- <the command
    unchanged>` with every other argument kept, so both the id and the
    original command are in it; a compound rewrite puts `<yarp> run …
    --archive-parent ID [--pass] -- ` in front of each wrapped command, and
    removing those prefixes gives the command back.
    """
    if not isinstance(tool_input, dict) or not isinstance(tool_input.get("command"), str):
        return None
    command = tool_input["command"]
    parents = {match.group(1) for match in _SEGMENT_PREFIX.finditer(command)}
    if len(parents) == 1:
        # A compound rewrite: every wrapped command's prefix removed gives the command back.
        found = parents.pop()[1:-1].replace("'\\''", "'")
        return found, {**tool_input, "command": _SEGMENT_PREFIX.sub("", command)}
    head, sep, original = command.partition(" -- ")
    if not sep or " run " not in f" {head} " or f"--archive-agent '{AGENT}'" not in head:
        return None
    match = _CALL_FLAG.search(head)
    if match is None:
        return None
    found = match.group(1).replace("'\\''", "'") if match.group(1) is not None else match.group(2)
    return found, {**tool_input, "command": original}


# --- what the tool did and what the model is shown --------------------------------------------


def response_text(response: Any) -> str | None:
    """The text the model receives from a response, or None when it is not text alone.

    `llmContent` is a string, or one part or a list of parts, each a string
    or an object with `text` (`read_many_files` gives a list of strings, an
    MCP tool a list of `{text}` parts). Gemini joins the text of a list with
    a newline before the model gets it, and so does this. A response that
    holds anything but text (an image, a file, a function response) is None:
    a view read by a tail call would drop it.
    """
    if not isinstance(response, dict):
        return None
    content = response.get("llmContent")
    if isinstance(content, str):
        return content
    parts = [content] if isinstance(content, dict) else content
    if not isinstance(parts, list):
        return None
    texts = []
    for part in parts:
        text = part if isinstance(part, str) else part.get("text") if isinstance(part, dict) else None
        if not isinstance(text, str):
            return None
        texts.append(text)
    return "\n".join(texts)


def is_error(event: GeminiEvent) -> bool:
    """A tool-level `error`, or a shell command whose `Exit Code:` line is not 0."""
    response = event.response
    if isinstance(response, dict) and response.get("error"):
        return True
    return event.tool_name == SHELL_TOOL and failed_exit_code(response_text(response) or "")


def failed_exit_code(text: str) -> bool:
    """Whether a shell result's text states an exit code other than 0 (Gemini writes none for 0)."""
    match = _EXIT_CODE.search(text)
    return match is not None and int(match.group(1)) != 0


def view_folder(transcript_path: str | None) -> str | None:
    """Gemini's project temp folder's folder of views (`~/.gemini/tmp/<project>/yarp-views`), found
    from the session file the event names (`…/<project>/chats/session-….jsonl`), or None."""
    if transcript_path is None:
        return None
    chats = os.path.dirname(transcript_path)
    if os.path.basename(chats) != "chats":
        chats = os.path.dirname(chats)  # a subagent's file: chats/<parent session>/<agent>.jsonl
        if os.path.basename(chats) != "chats":
            return None
    return os.path.join(os.path.dirname(chats), VIEWS_FOLDER)


def before_answer(tool_input: dict) -> dict:
    """The `BeforeTool` answer that hands Gemini the rewritten arguments (a replacement: all of them)."""
    return {"hookSpecificOutput": {"hookEventName": BEFORE, "tool_input": tool_input}}


def view_answer(view_path: str) -> dict:
    """The `AfterTool` answer that replaces the model's view with the file at `view_path`, read by a tail call."""
    return {"hookSpecificOutput": {"hookEventName": AFTER,
                                   "tailToolCallRequest": {"name": "read_file", "args": {"file_path": view_path}}}}


# --- the settings files ----------------------------------------------------------------------

#: Gemini CLI matches a regular expression against the tool's name.
MATCHER = ".*"
MATCHED_EVENTS = frozenset({BEFORE, AFTER})
#: Our entry's name in Gemini's settings, and its timeout (Gemini CLI counts milliseconds).
ENTRY_FIELDS = {"name": "yarp", "timeout": 30_000}
#: Gemini CLI has no settings file of one machine's own: a project's entry runs the `yarp` on PATH.
LOCAL_PROJECT_FILE = False


def settings_path(scope: str, environ=os.environ, cwd: str | None = None) -> str:
    """`~/.gemini/settings.json` (under `$GEMINI_CLI_HOME` when set) for the user, `./.gemini/settings.json`
    for a project."""
    if scope == "project":
        base = cwd or os.getcwd()
    elif os.path.isabs(environ.get("GEMINI_CLI_HOME") or ""):
        # Gemini CLI takes $GEMINI_CLI_HOME, when set, as the home its ~/.gemini lives in.
        base = environ["GEMINI_CLI_HOME"]
    else:
        base = environ.get("HOME") or os.path.expanduser("~")
    return os.path.join(os.path.abspath(base), ".gemini", "settings.json")


def rewrite_answer(tool_input: dict) -> dict:
    """The `BeforeTool` answer that hands Gemini the rewritten arguments (`before_answer`)."""
    return before_answer(tool_input)
