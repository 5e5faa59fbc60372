"""Cline's hook events in the broker (layer `broker`): the call begun before the tool, finished after it.

`yarp hook cline` forwards each event; here (`yarp.agents.cline.hooks`
translated it):

* **`tool_call`** is one `begin_call` (`yarp.broker.services.begin.begin_event`):
  a `run_commands` call of one command that YARP would prune is rewritten to
  `yarp run` with the call's identity in its flags, and the answer hands
  Cline the rewritten input (`overrideInput`) once the begin is durable.
* **`tool_result`** is one composite request (`finish_event`): the raw result
  (`{"output", "error"?}`) as `result/before`, then the visible result and
  the finish. Cline lets no hook replace a result, so the visible result is
  the raw one: a wrapped command's output is `yarp run`'s capped view
  already, any other result is what the model got.

An archive failure is an error reply, and the hook leaves the tool as it was.
"""

from __future__ import annotations

from yarp.broker.services.begin import begin_event, begun_state, finish_event
from yarp.wire import protocol


class Service:
    """Cline's events: the begin (and rewrite) before the tool, the finish after it."""

    def __init__(self, broker, warm) -> None:
        self.broker = broker
        self.warm = warm

    async def serve(self, request, hook: protocol.HookRequest, event) -> bytes:
        """Answer one Cline event (`hooks.parse_event`'s)."""
        if event.before:
            return await begin_event(self.broker, self.warm, request, hook, event)
        found = begun_state(self.warm, event)
        if found is None:
            return protocol.reply_ok()  # never begun (initial capture failed), or finished already
        key, state = found
        await finish_event(self.broker, self.warm, request, hook, event, key, state)
        return protocol.reply_ok()
