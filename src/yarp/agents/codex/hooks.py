"""Codex's hook events and hooks files (layer `hooks`).

Its tool events have the common shape (`yarp.hooks.events.parse_tool_event`),
without a failure event: `PreToolUse` and `PostToolUse`. `Stop` and
`SessionEnd` name only the session; they settle its earlier calls
(`CodexEvent.call` is None). Its hooks live in `hooks.json` beside its
`config.toml`: `$CODEX_HOME` (else `~/.codex`) for the user, `./.codex` for a
project. Codex has no file of one machine's own, so a project's entry runs
the `yarp` found on PATH (`yarp hook codex`), the same on every machine.
"""

from __future__ import annotations

import os

from yarp.hooks.events import HookEvent, parse_tool_event

NAME = "codex"
PRE, POST = "PreToolUse", "PostToolUse"
#: Events that only settle the session's earlier calls.
SETTLE_ONLY = ("Stop", "SessionEnd")

#: Codex documents "" for all tools.
MATCHER = ""
#: Events whose groups take a tool matcher (Codex ignores matchers on Stop and SessionEnd).
MATCHED_EVENTS = frozenset({PRE, POST})
ENTRY_FIELDS = {"timeout": 30}
LOCAL_PROJECT_FILE = False


class CodexEvent:
    """One Codex hook event: its name, session, transcript, and the tool call (None for `Stop`/`SessionEnd`)."""

    __slots__ = ("name", "session_id", "transcript_path", "call")

    def __init__(self, name: str, session_id: str, transcript_path: str | None, call: HookEvent | None) -> None:
        self.name = name
        self.session_id = session_id
        self.transcript_path = transcript_path
        self.call = call


def parse_event(payload) -> CodexEvent | None:
    """The event to serve, or None (no session, another event, a malformed tool event: nothing to archive)."""
    from yarp.errors import YarpError
    from yarp.limits import MAX_IDENTITY_CHARS

    name = payload.get("hook_event_name") if isinstance(payload, dict) else None
    session_id = payload.get("session_id") if name in (PRE, POST, *SETTLE_ONLY) else None
    if not isinstance(session_id, str) or not 0 < len(session_id) <= MAX_IDENTITY_CHARS or "\x00" in session_id:
        return None
    call = None
    if name in (PRE, POST):
        try:
            call = parse_tool_event(NAME, payload, pre=PRE, post=POST)
        except YarpError:
            call = None
        if call is None:
            return None
    transcript = payload.get("transcript_path")
    transcript = transcript if isinstance(transcript, str) and os.path.isabs(transcript) else None
    return CodexEvent(name, session_id, transcript, call)


def settings_path(scope: str, environ=os.environ, cwd: str | None = None) -> str:
    """`$CODEX_HOME/hooks.json` (else `~/.codex/hooks.json`) for the user, `./.codex/hooks.json` for a project."""
    if scope == "project":
        return os.path.join(os.path.abspath(cwd or os.getcwd()), ".codex", "hooks.json")
    if os.path.isabs(environ.get("CODEX_HOME") or ""):
        # Codex's user layer is $CODEX_HOME (else ~/.codex): its hooks.json sits beside config.toml.
        return os.path.join(environ["CODEX_HOME"], "hooks.json")
    home = environ.get("HOME") or os.path.expanduser("~")
    return os.path.join(os.path.abspath(home), ".codex", "hooks.json")
