"""What the broker's services for thin clients share, and keep loaded between requests.

The hook processes and `yarp run` (`yarp.clients.broker.service_request`) send the broker a
request that names a service instead of an archive operation: `"hook"`
(`yarp.broker.services.hooks`) or `"run"` (`yarp.broker.services.run`); `yarp.broker.services`
picks it. The service builds the operations and submits them through the
broker's ordinary path (order, preparation, batching, one commit per batch).
Doing that work there, once per broker, rather than in every short-lived
process is the point: the account, the rule set (`Warm.rules`), the shell
parser (`yarp.view.plan`'s own cache) and the calls between their first and
last request (`Warm.calls`) stay loaded. Composite requests (several
operations of one call, one savepoint) are `PreparedParts`.
"""

from __future__ import annotations

import collections
import os
import time

from yarp.archive.codec import Payload, bytes_payload
from yarp.archive.file_payload import payload_limit
from yarp.archive.prepare import Prepared, SnapshotSpec, prepare
from yarp.errors import ValidationError
from yarp.limits import MAX_SEQUENCE_CACHE_KEYS
from yarp.wire import operations as ops

#: Calls remembered between their first and last request (the broker's sequence-cache bound).
MAX_REMEMBERED_CALLS = MAX_SEQUENCE_CACHE_KEYS


class CallState:
    """What a later request for a begun call needs from its first.

    `requires_streams`: begun as a wrapped shell call. `wrapper_flags`: the
    archive-flag text of the `yarp run` form a hook rewrote it to (None when
    not rewritten by a hook). `archive_ref`: the reference the begin returned.
    """

    __slots__ = ("archive_ref", "requires_streams", "wrapper_flags")

    def __init__(self, requires_streams: bool, wrapper_flags: str | None, archive_ref: str | None) -> None:
        self.requires_streams = requires_streams
        self.wrapper_flags = wrapper_flags
        self.archive_ref = archive_ref


def _stat_key(path: str):
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


class Warm:
    """Per-broker state shared by the services."""

    def __init__(self, broker) -> None:
        from yarp.hooks.events import local_account

        self.broker = broker
        self.account = local_account()
        self.calls: collections.OrderedDict[str, CallState] = collections.OrderedDict()
        self._rules = None
        self._rules_key = None
        self._reader = None

    def rules(self, packs: tuple[str, ...]):
        """The rule set, loaded once and again only when a pack file changes (`UsageError` if broken)."""
        key = (packs, tuple(_stat_key(os.path.expanduser(p)) for p in packs))
        if self._rules is None or key != self._rules_key:
            from yarp.view.rules import load_rules

            self._rules = load_rules(packs)
            self._rules_key = key
        return self._rules

    def rule_for(self, command: str | None, packs: tuple[str, ...]):
        """The reduce rule for the argv of the simple command whose output reaches a shell command's
        result (`view.plan.result_argv`), or None; a broken rule pack costs the pruning, never the archive."""
        if command is None:
            return None
        from yarp.errors import YarpError
        from yarp.view.plan import result_argv
        from yarp.view.rules import select_rule

        argv = result_argv(command)
        if not argv:
            return None
        try:
            return select_rule(argv, self.rules(packs))
        except YarpError:
            return None

    # --- calls between requests ------------------------------------------------------

    def remember(self, key: str, state: CallState) -> None:
        """Keep a begun call's state for its later requests; the oldest is dropped beyond `MAX_REMEMBERED_CALLS`."""
        self.calls.pop(key, None)
        self.calls[key] = state
        while len(self.calls) > MAX_REMEMBERED_CALLS:
            self.calls.popitem(last=False)

    def forget(self, key: str) -> None:
        """Drop a call's state once it is finished."""
        self.calls.pop(key, None)

    def stored_call(self, session, source_call_id: str) -> tuple[bool, str, str] | None:
        """(requires_streams, status, archive_ref) of a call from the archive (read-only), or None.

        For calls begun before this broker started, or dropped from `calls`.
        """
        from yarp.archive.recovery.lookup import call_by_source

        call = call_by_source(self._reader_connection(), session.agent, session.account,
                              session.source_session_id, source_call_id)
        return (bool(call.requires_streams), call.status, call.archive_ref) if call is not None else None

    def session_calls(self, session, source_call_id: str | None) -> dict[str, tuple[str, str]]:
        """(status, archive_ref) of a session's unfinished calls and of `source_call_id`, read-only.

        For adapters whose calls may never get their last event: every
        event of the session finishes what the agent's own records now prove.
        """
        from yarp.archive.recovery.lookup import unfinished_calls

        calls = unfinished_calls(self._reader_connection(), session.agent, session.account,
                                 session.source_session_id, source_call_id)
        return {call_id: (call.status, call.archive_ref) for call_id, call in calls.items()}

    def calls_with_prefix(self, session, prefix: str) -> int:
        """How many calls of `session` have a source call id starting with `prefix`, read-only."""
        from yarp.archive.recovery.lookup import calls_with_prefix

        return calls_with_prefix(self._reader_connection(), session.agent, session.account,
                                 session.source_session_id, prefix)

    def _reader_connection(self):
        """The services' one read-only connection (queries fetch all rows: no read transaction stays open)."""
        if self._reader is None:
            from yarp.archive.sqlite import open_readonly

            self._reader = open_readonly(self.broker.location)
        return self._reader

    def close(self) -> None:
        """Close the read-only archive connection, if one was opened."""
        if self._reader is not None:
            self._reader.close()
            self._reader = None


class PreparedParts:
    """Prepared operations of one call applied in order in one savepoint: one request, one commit.

    Stands where a `Prepared` does in the broker's queue and the store's batch.
    """

    __slots__ = ("parts",)

    def __init__(self, parts: tuple[Prepared, ...]) -> None:
        self.parts = parts

    @property
    def operation(self) -> ops.ArchiveOperation:
        """The last part's operation, read wherever a single `Prepared` would stand."""
        return self.parts[-1].operation

    @property
    def payload_bytes(self) -> int:
        """The parts' payload bytes together, for the writer's batch budget."""
        return sum(p.payload_bytes for p in self.parts)


#: Operations whose one snapshot is their `result` as JSON (`result/after`).
_RESULT_AFTER = (ops.StageResult, ops.FinishCall, ops.UpdateFinalResult)


def prepare_part(operation: ops.ArchiveOperation, results: dict[int, tuple] | None = None) -> Prepared:
    """Prepare one operation a service built from validated parts (the record itself, never JSON).

    `results` (id of a `result` object -> (object, its payload)) is shared by
    the parts of one composite: a call's visible result is both staged and
    final, and unchanged it is the raw result too, so one object's canonical
    JSON is hashed and compressed once. A payload is only content, whatever
    subject and stage store it. Keeping the object pins its id.
    """
    result = getattr(operation, "result", None)
    if results is None or not isinstance(operation, (ops.ResultBefore, *_RESULT_AFTER)):
        return prepare(operation)
    seen = results.get(id(result))
    if seen is not None and isinstance(operation, _RESULT_AFTER):
        return Prepared(operation, (SnapshotSpec("result", "after", seen[1]),))
    if seen is not None and operation.full_output is None:
        return Prepared(operation, (SnapshotSpec("result", "before", seen[1]),))
    prepared = prepare(operation)
    results[id(result)] = (result, prepared.snapshots[0].payload)
    return prepared


def prepare_parts(operations: tuple[ops.ArchiveOperation, ...], sources: dict[int, bytes | Payload] | None = None,
                  results: dict[int, tuple] | None = None) -> PreparedParts:
    """`sources`: by part index, a complete output held in memory that the part (a
    `result_before`) stores as `source_output/before`, as it would from a file
    it names (an adapter that read it from the agent's own records), or
    its payload prepared already. `results`: payloads of result objects prepared
    already (see `prepare_part`; not changed here)."""
    parts = []
    results = dict(results) if results else {}
    for index, op in enumerate(operations):
        prepared = prepare_part(op, results)
        data = sources.get(index) if sources else None
        if data is not None:
            if not isinstance(op, ops.ResultBefore) or op.full_output is not None:
                raise ValidationError("a source output belongs to a result_before that names no file")
            payload = data if isinstance(data, Payload) else bytes_payload(data)
            if len(payload.body) > payload_limit():
                raise ValidationError(f"source output does not fit in one archive payload ({payload_limit()} bytes"
                                      " stored at most)")
            spec = SnapshotSpec("source_output", "before", payload)
            prepared = Prepared(op, prepared.snapshots + (spec,))
        parts.append(prepared)
    return PreparedParts(tuple(parts))


def now_ms() -> int:
    """Wall-clock time in Unix milliseconds."""
    return time.time_ns() // 1_000_000


async def prepare_composite(broker, request, operations: tuple, file_bytes: int = 0,
                            sources: dict[int, bytes] | None = None) -> PreparedParts:
    """Prepare a composite's parts where the broker decides (`Broker.work`): on the loop when the
    request, the files it snapshots (`file_bytes`) and the outputs it holds (`sources`) are small."""
    size = request.frame_bytes + file_bytes + sum(map(len, (sources or {}).values()))
    return await broker.work(size, prepare_parts, operations, sources)


def ran_recovery(event) -> bool:
    """Whether the event's call ran `yarp search` or `yarp read`, whose output is never capped again
    (any agent's event with `shell_command()`)."""
    from yarp.view.plan import is_recovery_command

    return is_recovery_command(event.shell_command())


class SessionLocks:
    """One `asyncio.Lock` per session, the most recently used `most` kept: an agent whose call ids are
    derived (a count per session) counts and begins one call of a session at a time. An idle lock
    beyond the bound is dropped; a held one never is."""

    def __init__(self, most: int = 512) -> None:
        self.most = most
        self._locks: collections.OrderedDict = collections.OrderedDict()

    def __call__(self, session_id: str):
        """The lock of `session_id`, made the most recently used."""
        import asyncio

        lock = self._locks.pop(session_id, None) or asyncio.Lock()
        self._locks[session_id] = lock
        while len(self._locks) > self.most:
            oldest, held = next(iter(self._locks.items()))
            if held.locked():
                break
            del self._locks[oldest]
        return lock

