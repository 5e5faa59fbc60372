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
  event: at most `MAX_REMEMBERED_CALLS`, oldest dropped first, and dropped
  when the call finishes.
* `PostToolUse` / `PostToolUseFailure` is one composite request: raw result,
  visible result and finish in one savepoint and one commit. A call the
  broker does not remember (it restarted, or the entry was dropped) has its
  state read from the archive read-only, as the hook process used to.

The reply is `{"ok": true}` plus `answer` (the JSON text the hook prints) and
`warning` (text the hook reports once per session); an archive failure is an
ordinary error reply, and the hook then leaves the tool untouched.

Request shape (validated strictly; unknown fields fail)::

    {"schema": "yarp.archive-broker.v1", "correlationId": …,
     "hook": {"agent": "claude-code", "launcher": ["/abs/yarp"], "pruning": true, "rulePacks": []},
     "deadlineMs": 2000, "event": {… the agent's event, exactly as it arrived …}}
"""

from __future__ import annotations

import collections
import os
import time

import orjson

from .. import operations as ops
from .. import protocol
from ..errors import ValidationError, YarpError
from ..limits import MAX_DEADLINE_MS, MAX_SEQUENCE_CACHE_KEYS, MAX_WORKING_DIRECTORY_CHARS, MIN_DEADLINE_MS
from ..prepare import Prepared, prepare
from . import AGENTS, PRE
from . import capture
from .events import parse_event

#: Calls remembered between their Pre and Post events (the broker's sequence-cache bound).
MAX_REMEMBERED_CALLS = MAX_SEQUENCE_CACHE_KEYS
_HOOK_FIELDS = frozenset({"agent", "launcher", "pruning", "rulePacks"})
_REQUEST_FIELDS = frozenset({"schema", "correlationId", "hook", "deadlineMs", "event"})
_MAX_PACKS = 16


def is_hook_request(obj: object) -> bool:
    """Whether a decoded request frame is a hook event (the broker's dispatch test)."""
    return isinstance(obj, dict) and "hook" in obj


class HookRequest:
    __slots__ = ("agent", "launcher", "pruning", "rule_packs", "deadline_ms", "event")

    def __init__(self, agent, launcher, pruning, rule_packs, deadline_ms, event) -> None:
        self.agent = agent
        self.launcher = launcher
        self.pruning = pruning
        self.rule_packs = rule_packs
        self.deadline_ms = deadline_ms
        self.event = event


def _strings(value, *, most: int, at_least: int = 0) -> tuple[str, ...] | None:
    if not isinstance(value, list) or not at_least <= len(value) <= most:
        return None
    if not all(isinstance(v, str) and 0 < len(v) <= MAX_WORKING_DIRECTORY_CHARS and "\x00" not in v for v in value):
        return None
    return tuple(value)


def parse_request(obj: dict, correlation_id: str) -> HookRequest:
    """Structural validation of a hook request; bounded, payload-free errors."""
    if set(obj) != _REQUEST_FIELDS:
        raise ValidationError("hook request has unknown or missing fields")
    if obj["schema"] != protocol.SCHEMA:
        raise ValidationError("envelope schema is not supported")
    if obj["correlationId"] != correlation_id:
        raise ValidationError("envelope correlation id does not match the connection")
    hook = obj["hook"]
    if not isinstance(hook, dict) or set(hook) != _HOOK_FIELDS:
        raise ValidationError("hook request fields are not the expected set")
    if hook["agent"] not in AGENTS:
        raise ValidationError("hook request names an unknown agent")
    launcher = _strings(hook["launcher"], most=3, at_least=1)
    if launcher is None or not os.path.isabs(launcher[0]):
        raise ValidationError("hook request launcher must be 1 to 3 strings, the first an absolute path")
    if not isinstance(hook["pruning"], bool):
        raise ValidationError("hook request pruning must be a boolean")
    packs = _strings(hook["rulePacks"], most=_MAX_PACKS)
    if packs is None:
        raise ValidationError(f"hook request rulePacks must be at most {_MAX_PACKS} paths")
    deadline = obj["deadlineMs"]
    if type(deadline) is not int or not MIN_DEADLINE_MS <= deadline <= MAX_DEADLINE_MS:
        raise ValidationError(f"hook request deadline must be {MIN_DEADLINE_MS}..{MAX_DEADLINE_MS} ms")
    return HookRequest(hook["agent"], launcher, hook["pruning"], packs, deadline, obj["event"])


class PreparedParts:
    """Prepared operations of one call applied in order in one savepoint: one request, one commit.

    Stands where a `Prepared` does in the broker's queue and the store's batch.
    """

    __slots__ = ("parts",)

    def __init__(self, parts: tuple[Prepared, ...]) -> None:
        self.parts = parts

    @property
    def operation(self) -> ops.ArchiveOperation:
        return self.parts[-1].operation

    @property
    def payload_bytes(self) -> int:
        return sum(p.payload_bytes for p in self.parts)


def prepare_checked(operation: ops.ArchiveOperation) -> Prepared:
    """Validate an operation built here exactly as a client's would be, then prepare it."""
    return prepare(ops.parse_operation(ops.operation_to_json(operation)))


def prepare_parts(operations: tuple[ops.ArchiveOperation, ...]) -> PreparedParts:
    return PreparedParts(tuple(prepare_checked(op) for op in operations))


def envelope_for(operation: ops.ArchiveOperation, correlation_id: str, deadline_ms: int, *,
                 sequence: int | None = None, body: dict | None = None) -> protocol.Envelope:
    """The routing envelope of an operation built in the broker (identities derived, never sent).

    `body` is the operation's JSON, which the broker validates and prepares
    as a client's; a composite passes its parts already prepared instead.
    """
    return protocol.Envelope(correlation_id, ops.operation_id(operation), ops.source_key(operation),
                             operation.sequence if sequence is None else sequence, deadline_ms,
                             body if body is not None else {"operation": operation.kind}, operation.kind)


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def _stat_key(path: str):
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


class HookService:
    """Per-broker state for hook events: the account, the rule set, the calls between Pre and Post."""

    def __init__(self, broker) -> None:
        from .events import local_account

        self.broker = broker
        self.account = local_account()
        self.calls: collections.OrderedDict[str, capture.CallState] = collections.OrderedDict()
        self._rules = None
        self._rules_key = None
        self._reader = None

    # --- loaded once ---------------------------------------------------------------

    def rules(self, packs: tuple[str, ...]):
        """The rule set, loaded once and again only when a pack file changes."""
        key = (packs, tuple(_stat_key(os.path.expanduser(p)) for p in packs))
        if self._rules is None or key != self._rules_key:
            from ..shell.rules import load_rules

            self._rules = load_rules(packs)
            self._rules_key = key
        return self._rules

    def remember(self, key: str, state: capture.CallState) -> None:
        self.calls.pop(key, None)
        self.calls[key] = state
        while len(self.calls) > MAX_REMEMBERED_CALLS:
            self.calls.popitem(last=False)

    def _stored_state(self, event) -> capture.CallState | None:
        """A call's state from the archive (read-only) when it was not remembered; None if never begun
        or already finished."""
        from ..sqlite import map_error, open_readonly

        if self._reader is None:
            self._reader = open_readonly(self.broker.location)
        try:
            row = self._reader.execute(
                "SELECT c.requires_streams, c.status, c.archive_ref FROM tool_calls c"
                " JOIN sessions s ON s.id = c.session_id"
                " WHERE s.agent = ? AND s.account = ? AND s.source_session_id = ? AND c.source_call_id = ?",
                (event.agent, self.account, event.session_id, event.call_id),
            ).fetchone()
        except Exception as exc:  # sqlite3.Error
            raise map_error(exc, "reading a hook call's state") from None
        if row is None or row[1] != "started":
            return None
        return capture.CallState(bool(row[0]), capture.wrapper_flags(event, self.account), row[2])

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    # --- one event -------------------------------------------------------------------

    async def serve(self, request, obj: dict) -> bytes:
        """Answer one hook request (the broker's dispatch calls this from its request path)."""
        hook = parse_request(obj, request.conn.correlation_id)
        try:
            event = parse_event(hook.agent, hook.event)
        except YarpError:
            event = None  # malformed: the tool runs untouched, nothing to archive
        if event is None:
            return protocol.reply_ok()
        if event.event == PRE:
            return await self._pre(request, hook, event)
        return await self._post(request, hook, event)

    async def _pre(self, request, hook: HookRequest, event) -> bytes:
        from .events import rewritten_input, rewrite_answer
        from .launcher import shell_join

        warning = None
        rewritten = None
        if hook.pruning:
            try:
                rewritten = capture.rewrite(event, self.account, self.rules(hook.rule_packs),
                                            shell_join(list(hook.launcher)))
            except (YarpError, ImportError, ValueError) as exc:
                reason = exc.message if isinstance(exc, YarpError) else type(exc).__name__
                warning = f"shell planning failed; running commands unchanged: {reason}"
        input_after = rewritten_input(event.tool_input, rewritten) if rewritten else event.tool_input
        now = _now_ms()
        operation = capture.begin(event, self.account, input_after, rewritten=rewritten is not None,
                                  now_ms=now, deadline_at_ms=now + hook.deadline_ms)
        env = envelope_for(operation, request.conn.correlation_id, hook.deadline_ms,
                           body=ops.operation_to_json(operation))
        # Raises on failure: only a durable begin lets the wrapped command run.
        reply = orjson.loads(await self.broker.submit(request, env))
        flags = capture.wrapper_flags(event, self.account) if rewritten else None
        self.remember(env.source_key, capture.CallState(rewritten is not None, flags, reply.get("archiveRef")))
        extra = {}
        if rewritten:
            extra["answer"] = orjson.dumps(rewrite_answer(event.agent, input_after)).decode()
        if warning:
            extra["warning"] = warning
        return protocol.reply_ok(extra=extra)

    async def _post(self, request, hook: HookRequest, event) -> bytes:
        key = ops.source_key(ops.ResultBefore(ops.Session(event.agent, self.account, event.session_id),
                                              event.call_id, None, 0))
        state = self.calls.get(key)
        if state is None:
            state = self._stored_state(event)
            if state is None:
                # Never begun (initial capture failed, hooks installed mid-call) or already finished.
                return protocol.reply_ok()
        flags = state.wrapper_flags or capture.wrapper_flags(event, self.account)
        operations = capture.finish(event, self.account, requires_streams=state.requires_streams, flags=flags,
                                    now_ms=_now_ms())
        broker = self.broker
        if request.frame_bytes <= broker.inline_bytes:
            prepared = prepare_parts(operations)
        else:
            prepared = await broker.loop.run_in_executor(broker._pool, prepare_parts, operations)
        env = envelope_for(operations[-1], request.conn.correlation_id, hook.deadline_ms,
                           sequence=operations[0].sequence)
        reply = await broker.submit(request, env, prepared)
        self.calls.pop(key, None)
        return reply

