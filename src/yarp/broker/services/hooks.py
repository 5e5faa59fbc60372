"""The broker's half of a hook event: one request in, one answer out, for any agent with command hooks.

`yarp hook <agent>` sends the event's bytes with a few fields of its own
(`hook`: the agent, the `yarp` launcher argv, the pruning switch and rule
packs from its configuration, the cap, the deadline). The request was decoded
and checked once, by `yarp.wire.validation.parse_request`; here the agent's
own `hooks` part translates the event, once (`yarp.agents.<agent>.hooks.parse_event`),
and the agent's `broker` part serves it (`Service.serve`): it builds generic
archive operations and submits them through the broker's ordinary path
(ordered per source, prepared, batched and committed by the writer). This
module names no agent: an agent's parts are loaded on its first event
(`yarp.agents.part`), and a broker that never hears from an agent never
loads them.

The reply is `{"ok": true}` plus `answer` (the JSON text the hook prints) and
`warning` (text the hook reports once per session); an archive failure is an
ordinary error reply, and the hook then leaves the tool untouched.

Request shape (validated strictly, with every other request, by
`yarp.wire.validation.parse_request`; unknown fields fail)::

    {"schema": "yarp.archive-broker.v1", "correlationId": …,
     "hook": {"agent": "<name>", "launcher": ["/abs/yarp"], "pruning": true, "rulePacks": [],
              "capBytes": 5120 (the agents whose record has CAPS_VIEW)},
     "deadlineMs": 2000, "event": {… the agent's event, exactly as it arrived …}}
"""

from __future__ import annotations

from yarp import agents
from yarp.errors import YarpError
from yarp.wire import protocol


class HookService:
    """Hook events, each handed to its agent's service (made on the agent's first event)."""

    def __init__(self, broker, warm) -> None:
        self.broker = broker
        self.warm = warm
        self._services: dict[str, object] = {}

    def service(self, agent: str):
        """The agent's `broker` part's `Service`, made on its first event."""
        found = self._services.get(agent)
        if found is None:
            found = self._services[agent] = agents.part(agent, "broker").Service(self.broker, self.warm)
        return found

    async def serve(self, request, hook: protocol.HookRequest) -> bytes:
        """Answer one validated hook request (the broker's dispatch calls this from its request path)."""
        try:
            event = agents.part(hook.agent, "hooks").parse_event(hook.event)
        except YarpError:
            event = None  # malformed: the tool runs untouched, nothing to archive
        if event is None:
            return protocol.reply_ok()
        return await self.service(hook.agent).serve(request, hook, event)

    def close(self) -> None:
        """Close what the agents' services hold open (a transcript watch), at the broker's shutdown."""
        for service in self._services.values():
            close = getattr(service, "close", None)
            if close is not None:
                close()
