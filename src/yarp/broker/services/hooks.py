"""The broker's half of a hook event: one request in, one answer out.

`yarp hook <agent>` sends the event's bytes with a few fields of its own
(`hook`: the agent, the `yarp` launcher argv, the pruning switch and rule
packs from its configuration, the deadline). Here, in the warm broker, the
event is translated (`events`), the rewrite planned with the parser and rule
set kept loaded, the lifecycle's operations built (`capture`) and submitted
through the broker's ordinary path: ordered per source, prepared, batched and
committed by the writer. One request per event:

* `PreToolUse` is one `begin_call`. The call's state (whether it was
  rewritten, its wrapper flags, its reference) is remembered for its Post
  event (`yarp.broker.services.shared.Warm.calls`: bounded, oldest dropped first, and
  dropped when the call finishes).
* `PostToolUse` / `PostToolUseFailure` is one composite request: raw result,
  visible result and finish in one savepoint and one commit. A call the
  broker does not remember (it restarted, or the entry was dropped) has its
  state read from the archive read-only, as the hook process used to.

Codex events go to `yarp.broker.services.codex.service.CodexService`, which reads the call's
outcome from the session transcript the event names and commits every
operation of the event (this call's, and those of earlier calls that got no
post event) as one composite request; Codex's client adds `capBytes`, the
cap of the view that replaces a large output.

The reply is `{"ok": true}` plus `answer` (the JSON text the hook prints) and
`warning` (text the hook reports once per session); an archive failure is an
ordinary error reply, and the hook then leaves the tool untouched.

Request shape (validated strictly, with every other request, by
`yarp.wire.validation.parse_request`; unknown fields fail)::

    {"schema": "yarp.archive-broker.v1", "correlationId": …,
     "hook": {"agent": "claude-code", "launcher": ["/abs/yarp"], "pruning": true, "rulePacks": [],
              "capBytes": 5120 (codex only)},
     "deadlineMs": 2000, "event": {… the agent's event, exactly as it arrived …}}
"""

from __future__ import annotations

import orjson

from yarp.broker.services.begin import begin_event
from yarp.broker.services.shared import CallState, now_ms, prepare_composite
from yarp.errors import YarpError
from yarp.hooks import PRE, capture
from yarp.hooks.events import parse_event, session_of
from yarp.wire import operations as ops
from yarp.wire import protocol


class HookService:
    """Hook events: the Pre event's begin and the Post event's composite finish."""

    def __init__(self, broker, warm) -> None:
        self.broker = broker
        self.warm = warm
        self._codex = None
        self._gemini = None

    def _state(self, key: str, event) -> CallState | None:
        """The begun call's state: remembered, else read from the archive; None if never begun or finished."""
        state = self.warm.calls.get(key)
        if state is not None:
            return state
        stored = self.warm.stored_call(session_of(event, self.warm.account), event.call_id)
        if stored is None or stored[1] != "started":
            return None
        return CallState(stored[0], capture.wrapper_flags(event, self.warm.account), stored[2])

    def codex(self):
        """Codex events (`codex.service.CodexService`): made on the first one."""
        if self._codex is None:
            from yarp.broker.services.codex.service import CodexService

            self._codex = CodexService(self.broker, self.warm)
        return self._codex

    def gemini(self):
        """Gemini CLI events (`gemini.GeminiService`): made on the first one."""
        if self._gemini is None:
            from yarp.broker.services.gemini import GeminiService

            self._gemini = GeminiService(self.broker, self.warm)
        return self._gemini

    def close(self) -> None:
        """Stop what the Codex service watches, if it was ever made."""
        if self._codex is not None:
            self._codex.close()

    # --- one event -------------------------------------------------------------------

    async def serve(self, request, hook: protocol.HookRequest) -> bytes:
        """Answer one validated hook request (the broker's dispatch calls this from its request path)."""
        if hook.agent == "codex":
            return await self.codex().serve(request, hook)
        if hook.agent == "gemini":
            return await self.gemini().serve(request, hook)
        try:
            event = parse_event(hook.agent, hook.event)
        except YarpError:
            event = None  # malformed: the tool runs untouched, nothing to archive
        if event is None:
            return protocol.reply_ok()
        if event.event == PRE:
            return await self._pre(request, hook, event)
        return await self._post(request, hook, event)

    async def _pre(self, request, hook: protocol.HookRequest, event) -> bytes:
        return await begin_event(self.broker, self.warm, request, hook, event)

    async def _post(self, request, hook: protocol.HookRequest, event) -> bytes:
        account = self.warm.account
        key = ops.source_key(ops.ResultBefore(session_of(event, account), event.call_id, None, 0))
        state = self._state(key, event)
        if state is None:
            # Never begun (initial capture failed, hooks installed mid-call) or already finished.
            return protocol.reply_ok()
        flags = state.wrapper_flags or capture.wrapper_flags(event, account)
        operations = capture.finish(event, account, requires_streams=state.requires_streams, flags=flags,
                                    now_ms=now_ms())
        prepared = await prepare_composite(self.broker, request, operations)
        await self.broker.submit_prepared(request, operations, prepared, hook.deadline_ms)
        self.warm.forget(key)
        from yarp.hooks.events import post_tool_answer

        answer = post_tool_answer(event.agent, event)
        return protocol.reply_ok(extra={"answer": orjson.dumps(answer).decode()} if answer is not None else None)

