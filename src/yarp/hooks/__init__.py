"""Agent hook adapters: Claude Code and Codex command hooks as archive clients.

Each agent runs `yarp hook <agent>` once per hook event with one JSON object on
stdin. That process is a thin client (`cli`): it forwards the event's bytes to
the archive's warm broker in one request and prints the answer. The broker's
half (`service`) keeps the shell parser, the rule set and the account loaded,
translates the event (`events`) into agent-neutral archive operations, plans
the rewrite, and runs the call lifecycle (`capture`: begin before the tool; the
raw result, the visible result and the finish after it, as one composite
request). `notice` reports archive failures once per session, `launcher` names
the running `yarp` for installed commands and rewritten shell commands, and
`install` edits the agents' settings files.

Nothing here may make a tool depend on the archive: any archive failure lets
the tool run untouched. Nothing here opens the archive for writing, keeps a
fallback store, or puts payloads in messages.
"""

AGENTS = ("claude-code", "codex")
#: The hook events the adapters archive (both agents' names). Here, not in
#: `events`, so the thin client can tell them apart without importing more.
PRE = "PreToolUse"
POST = "PostToolUse"
POST_FAILURE = "PostToolUseFailure"
EVENTS = (PRE, POST, POST_FAILURE)

__all__ = ["AGENTS", "EVENTS", "POST", "POST_FAILURE", "PRE"]
