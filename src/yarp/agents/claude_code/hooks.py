"""Claude Code's hook events and settings files (layer `hooks`).

Its events have the common shape (`yarp.hooks.events.parse_tool_event`):
`PreToolUse` before the tool, `PostToolUse` after it, `PostToolUseFailure`
after a tool that failed. Its hooks live in `settings.json` under
`~/.claude` for the user and, for a project, in `.claude/settings.local.json`,
the file Claude Code keeps for one machine's own settings and out of the
project's commits: an installed hook names this machine's `yarp` by its path,
which would be wrong on a teammate's machine. An older yarp wrote project
hooks into `.claude/settings.json`; installing and uninstalling clear ours
from there too (`OTHER_PROJECT_FILES`).
"""

from __future__ import annotations

import os

from yarp.hooks.events import FAILURE_EVENT as POST_FAILURE
from yarp.hooks.events import HookEvent, parse_tool_event

NAME = "claude-code"
PRE, POST = "PreToolUse", "PostToolUse"

#: Match every tool (Claude Code documents "*").
MATCHER = "*"
#: Events whose groups take a tool matcher.
MATCHED_EVENTS = frozenset({PRE, POST, POST_FAILURE})
#: What our entry holds beside its type and command: Claude Code's timeout, in seconds.
ENTRY_FIELDS = {"timeout": 30}
#: The project's file is this machine's own (not committed): its command names this yarp by path.
LOCAL_PROJECT_FILE = True
#: Files of the project scope where an older yarp put our hooks (relative to the project).
OTHER_PROJECT_FILES = (os.path.join(".claude", "settings.json"),)


def parse_event(payload) -> HookEvent | None:
    """The event to archive, or None for one this adapter does not handle (`ValidationError` if malformed)."""
    return parse_tool_event(NAME, payload, pre=PRE, post=POST, failure=True)


def rewrite_answer(tool_input: dict) -> dict:
    """The `PreToolUse` answer that hands the rewritten input on.

    No `permissionDecision`: the agent's own permission check still runs on the
    rewritten input (see docs/design/adapters.md, "Claude Code hooks").
    """
    return {"hookSpecificOutput": {"hookEventName": PRE, "updatedInput": tool_input}}


def settings_path(scope: str, environ=os.environ, cwd: str | None = None) -> str:
    """The file our hooks go in: `~/.claude/settings.json` (user), `./.claude/settings.local.json` (project)."""
    if scope == "project":
        return os.path.join(os.path.abspath(cwd or os.getcwd()), ".claude", "settings.local.json")
    home = environ.get("HOME") or os.path.expanduser("~")
    return os.path.join(os.path.abspath(home), ".claude", "settings.json")
