"""The agents' hook adapters as the broker and the installer see them.

`events` translates Claude Code's and Codex's hook JSON into agent-neutral
archive operations and `capture` runs a call's lifecycle from them (begin
before the tool; the raw result, the visible result and the finish after it,
as one composite request), both in the broker (`yarp.broker.services.hooks`).
`install` edits the agents' settings files and `extension_install` places the
Pi extension (its TypeScript in `pi/`). The hook process itself is
`yarp.clients.hook`, whose table of each agent's events this package reads.

Nothing here may make a tool depend on the archive: any archive failure lets
the tool run untouched. Nothing here opens the archive for writing, keeps a
fallback store, or puts payloads in messages.
"""

from yarp.clients.hook import HOOK_EVENTS

AGENTS = tuple(HOOK_EVENTS)
#: The Claude Code events the translation reads (`events`); Codex's first two have the same names.
PRE, POST, POST_FAILURE = HOOK_EVENTS["claude-code"]
EVENTS = (PRE, POST, POST_FAILURE)

__all__ = ["AGENTS", "EVENTS", "HOOK_EVENTS", "POST", "POST_FAILURE", "PRE"]
