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

Request shape (validated strictly; unknown fields fail)::

    {"schema": "yarp.archive-broker.v1", "correlationId": …,
     "hook": {"agent": "claude-code", "launcher": ["/abs/yarp"], "pruning": true, "rulePacks": [],
              "capBytes": 5120 (codex only)},
     "deadlineMs": 2000, "event": {… the agent's event, exactly as it arrived …}}
"""

from __future__ import annotations

import os

import orjson

from yarp.wire import operations as ops
from yarp.wire import protocol
from yarp._record import Record
from yarp.errors import ValidationError, YarpError
from yarp.limits import MAX_CAP_BYTES, MAX_DEADLINE_MS, MAX_PACKS, MAX_WORKING_DIRECTORY_CHARS, MIN_DEADLINE_MS
from yarp.broker.services.shared import CallState, envelope_for, now_ms, prepare_composite
from yarp.hooks import AGENTS, PRE, capture
from yarp.hooks.events import parse_event, session_of

_HOOK_FIELDS = frozenset({"agent", "launcher", "pruning", "rulePacks"})
#: Sent by the agents whose view the broker caps itself (Codex): the configured cap.
_CAP_FIELD = "capBytes"
_REQUEST_FIELDS = frozenset({"schema", "correlationId", "hook", "deadlineMs", "event"})


class HookRequest(Record):
    """A hook request relayed to the broker: the agent, how to launch `yarp`, the rules, the deadline and the event."""

    __slots__ = ("agent", "launcher", "pruning", "rule_packs", "deadline_ms", "event", "cap_bytes")
    _defaults = {"cap_bytes": None}
    agent: str
    launcher: tuple[str, ...]
    pruning: bool
    rule_packs: tuple[str, ...]
    deadline_ms: int
    event: object
    cap_bytes: int | None


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
    if not isinstance(hook, dict) or set(hook) - {_CAP_FIELD} != _HOOK_FIELDS:
        raise ValidationError("hook request fields are not the expected set")
    if hook["agent"] not in AGENTS:
        raise ValidationError("hook request names an unknown agent")
    cap = hook.get(_CAP_FIELD)
    if hook["agent"] == "codex" and (type(cap) is not int or not 0 <= cap <= MAX_CAP_BYTES):
        raise ValidationError(f"hook request capBytes must be 0..{MAX_CAP_BYTES} for codex")
    launcher = _strings(hook["launcher"], most=3, at_least=1)
    if launcher is None or not os.path.isabs(launcher[0]):
        raise ValidationError("hook request launcher must be 1 to 3 strings, the first an absolute path")
    if not isinstance(hook["pruning"], bool):
        raise ValidationError("hook request pruning must be a boolean")
    packs = _strings(hook["rulePacks"], most=MAX_PACKS)
    if packs is None:
        raise ValidationError(f"hook request rulePacks must be at most {MAX_PACKS} paths")
    deadline = obj["deadlineMs"]
    if type(deadline) is not int or not MIN_DEADLINE_MS <= deadline <= MAX_DEADLINE_MS:
        raise ValidationError(f"hook request deadline must be {MIN_DEADLINE_MS}..{MAX_DEADLINE_MS} ms")
    return HookRequest(hook["agent"], launcher, hook["pruning"], packs, deadline, obj["event"], cap)


class HookService:
    """Hook events: the Pre event's begin and the Post event's composite finish."""

    def __init__(self, broker, warm) -> None:
        self.broker = broker
        self.warm = warm
        self._codex = None

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

    def close(self) -> None:
        """Stop what the Codex service watches, if it was ever made."""
        if self._codex is not None:
            self._codex.close()

    # --- one event -------------------------------------------------------------------

    async def serve(self, request, obj: dict) -> bytes:
        """Answer one hook request (the broker's dispatch calls this from its request path)."""
        hook = parse_request(obj, request.conn.correlation_id)
        if hook.agent == "codex":
            return await self.codex().serve(request, hook)
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
        from yarp.hooks.events import rewritten_input, rewrite_answer
        from yarp.hooks.launcher import shell_join

        warning = None
        rewritten = None
        if hook.pruning:
            try:
                rewritten = capture.rewrite(event, self.warm.account, self.warm.rules(hook.rule_packs),
                                            shell_join(list(hook.launcher)))
            except (YarpError, ImportError, ValueError) as exc:
                reason = exc.message if isinstance(exc, YarpError) else type(exc).__name__
                warning = f"shell planning failed; running commands unchanged: {reason}"
        input_after = rewritten_input(event.tool_input, rewritten) if rewritten else event.tool_input
        now = now_ms()
        operation = capture.begin(event, self.warm.account, input_after, rewritten=rewritten is not None,
                                  now_ms=now, deadline_at_ms=now + hook.deadline_ms)
        env = envelope_for(operation, request.conn.correlation_id, hook.deadline_ms,
                           body=ops.operation_to_json(operation))
        # Raises on failure: only a durable begin lets the wrapped command run.
        reply = orjson.loads(await self.broker.submit(request, env))
        flags = capture.wrapper_flags(event, self.warm.account) if rewritten else None
        self.warm.remember(env.source_key, CallState(rewritten is not None, flags, reply.get("archiveRef")))
        extra = {}
        if rewritten:
            extra["answer"] = orjson.dumps(rewrite_answer(event.agent, input_after)).decode()
        if warning:
            extra["warning"] = warning
        return protocol.reply_ok(extra=extra)

    async def _post(self, request, hook: HookRequest, event) -> bytes:
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
        env = envelope_for(operations[-1], request.conn.correlation_id, hook.deadline_ms,
                           sequence=operations[0].sequence)
        await self.broker.submit(request, env, prepared)
        self.warm.forget(key)
        from yarp.hooks.events import post_tool_answer

        answer = post_tool_answer(event.agent, event)
        return protocol.reply_ok(extra={"answer": orjson.dumps(answer).decode()} if answer is not None else None)
