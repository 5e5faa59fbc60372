"""Agent hook adapters: Claude Code and Codex command hooks as archive clients.

Each agent runs `yarp hook <agent>` once per hook event with one JSON object on
stdin. `events` translates that object into agent-neutral archive operations,
`capture` runs the call lifecycle against the broker (begin before the tool,
result and finish after it), `notice` reports archive failures once per
session, `launcher` names the running `yarp` for installed commands and
rewritten shell commands, and `install` edits the agents' settings files.

Nothing here may make a tool depend on the archive: any archive failure lets
the tool run untouched. Nothing here opens the archive for writing, keeps a
fallback store, or puts payloads in messages.
"""

AGENTS = ("claude-code", "codex")

__all__ = ["AGENTS"]
