"""Droid's hook events in the broker (layer `broker`): the derived id, the rewrite, the finish, the settling.

`yarp hook droid` forwards each event; here (`yarp.agents.droid.hooks`
translated it):

* **`PreToolUse`**: the call's id is derived (its tool, its arguments' digest,
  and how many calls of the session already have both, counted in the
  archive under a per-session lock, so two events of one session never count
  the same calls); one `begin_call` (`yarp.broker.services.begin.begin_event`),
  which rewrites an `Execute` command `yarp plan` wraps to `yarp run` and
  answers with it. Its streams are archived exactly by `yarp run`, and the
  model gets `yarp run`'s capped view.
* **`PostToolUse`** (only after a tool that succeeded) finishes its call: the
  one a rewritten command names in its archive flags, else the session's
  oldest open call with the arguments' digest. The raw result is the visible
  one: Droid lets no hook replace it (`finish_event`).
* **Settling**: Droid sends no event after a tool that failed (a command that
  exits non-zero, a read of a missing file), but writes its `tool_result` to
  the session file first. So `PostToolUse`, `Stop` and `SessionEnd` finish
  the session's other open calls that the session file now answers, with
  what `yarp import` would record for them (`transcripts.outcomes`). The file
  is read only when such a call is open.

An archive failure is an error reply; the hook then leaves the tool untouched.
"""

from __future__ import annotations

import os

from yarp.agents.droid import hooks as droid
from yarp.broker.services.begin import begin_event, begun_state, finish_event
from yarp.broker.services.shared import SessionLocks, now_ms, prepare_composite
from yarp.wire import operations as ops
from yarp.wire import protocol

#: Sessions whose lock is kept (an idle one beyond this is dropped).
MAX_SESSION_LOCKS = 512


class Service:
    """Droid's events: `PreToolUse`'s derived id, rewrite and begin; `PostToolUse`'s finish; the settling."""

    def __init__(self, broker, warm) -> None:
        self.broker = broker
        self.warm = warm
        self._lock = SessionLocks(MAX_SESSION_LOCKS)

    async def serve(self, request, hook: protocol.HookRequest, event: droid.DroidEvent) -> bytes:
        """Answer one Droid event (`hooks.parse_event`'s)."""
        async with self._lock(event.session_id):
            if event.name == droid.PRE:
                session = ops.Session(droid.NAME, self.warm.account, event.session_id)
                prefix = droid.call_prefix(event.tool_name, event.tool_input)
                call = event.call(droid.call_id(prefix, self.warm.calls_with_prefix(session, prefix)))
                return await begin_event(self.broker, self.warm, request, hook, call)
            open_calls = self._open_calls(event)
            if event.name == droid.POST:
                found = self._finishing(event, open_calls)
                if found is not None:
                    call, key, state = found
                    await finish_event(self.broker, self.warm, request, hook, call, key, state)
                    open_calls = [other for other in open_calls if other != call.call_id]
            await self._settle(request, hook, event, open_calls)
            return protocol.reply_ok()

    def _open_calls(self, event: droid.DroidEvent) -> list[str]:
        """The session's calls begun and not finished, oldest occurrence first."""
        session = ops.Session(droid.NAME, self.warm.account, event.session_id)
        found = self.warm.session_calls(session, None)
        return sorted((call for call, (status, _) in found.items() if status == "started"), key=droid.occurrence)

    def _finishing(self, event: droid.DroidEvent, open_calls: list[str]):
        """(the call as a `HookEvent`, its source key, its state) this `PostToolUse` finishes among the
        session's `open_calls`, or None."""
        named = droid.wrapped_call(event.shell_command(), self.warm.account, event.session_id, open_calls)
        if named is not None:
            candidates = [named]
        else:
            prefix = droid.call_prefix(event.tool_name, event.tool_input)
            candidates = [call for call in open_calls if call.startswith(prefix)]
        for call_id in candidates:
            call = event.call(call_id)
            found = begun_state(self.warm, call)
            if found is not None:
                return call, found[0], found[1]
        return None

    async def _settle(self, request, hook: protocol.HookRequest, event: droid.DroidEvent, waiting: list[str]
                      ) -> None:
        """Finish the calls of the session still `waiting` for a result that its session file answers."""
        if event.transcript_path is None or not waiting:
            return
        from yarp.agents.droid.transcripts import MAX_SESSION_FILE_BYTES, outcomes

        try:
            size = os.stat(event.transcript_path).st_size
        except OSError:
            return
        answered = await self.broker.work(min(size, MAX_SESSION_FILE_BYTES), outcomes, event.transcript_path,
                                          self.warm.account)
        session = ops.Session(droid.NAME, self.warm.account, event.session_id)
        for call_id in waiting:
            imported = answered.get(call_id)
            if imported is None or imported.session.source_session_id != event.session_id:
                continue  # not answered yet, or the file the event names is another session's
            stored = self.warm.stored_call(session, call_id)
            if stored is None or stored[1] != "started" or not imported.has_result:
                continue
            operations = settled_operations(session, call_id, imported, now_ms())
            prepared = await prepare_composite(self.broker, request, operations)
            await self.broker.submit_prepared(request, operations, prepared, hook.deadline_ms)
            self.warm.forget(ops.source_key(operations[0]))


def settled_operations(session: ops.Session, call_id: str, imported, now: int) -> tuple:
    """The operations that finish a live call with the outcome its session file records (`imported`).

    A call Droid answered without running it (a wrapped command that never
    ran has no streams) is finished as not executed, as
    `yarp.hooks.capture.finish` finishes a call whose rewrite was not run.
    """
    result, error = imported.result, imported.is_error
    raw = ops.ResultBefore(session, call_id, result, now)
    if not imported.executed:
        return raw, ops.FinishCall(session, call_id, result, error, False, now)
    return (raw, ops.StageResult(session, call_id, result, error, now),
            ops.FinishCall(session, call_id, result, error, True, now))
