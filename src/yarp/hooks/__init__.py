"""Agent-neutral hook machinery: what every agent's adapter shares, as the broker and the installer see it.

`events` is the event of one tool call (`HookEvent`) and the common JSON
shape several agents' hook events share; `capture` builds a call's lifecycle
from an event (begin before the tool; the raw result, the visible result and
the finish after it, as one composite request), both in the broker
(`yarp.broker.services`). `install` edits an agent's settings file of command
hooks and `extension_install` places an agent's TypeScript adapter. What is
one agent's own (its event names and fields, its files) is in its folder,
`yarp.agents.<agent>`. The hook process itself is `yarp.clients.hook`.

Nothing here may make a tool depend on the archive: any archive failure lets
the tool run untouched. Nothing here opens the archive for writing, keeps a
fallback store, or puts payloads in messages.
"""
