"""The common steps of a call's hook events: the event before the tool, and the finish after it.

An agent's service (`yarp.agents.<agent>.broker`) begins a call the same way
whatever the agent (`begin_event`): plan the rewrite with the warm rule set,
commit one `begin_call`, remember the call's state for its finishing event,
and answer with the rewritten input shaped for the agent by its `hooks`
part (`rewrite_answer`). After the tool, `begun_state` finds the call's state
(remembered, else read from the archive) and `finish_event` commits the raw
result, the visible result and the finish as one composite request.
"""

from __future__ import annotations

import orjson

from yarp import agents
from yarp.broker.services.shared import CallState, now_ms, prepare_composite
from yarp.errors import YarpError
from yarp.hooks import capture
from yarp.hooks.events import session_of
from yarp.wire import operations as ops
from yarp.wire import protocol


async def begin_event(broker, warm, request, hook: protocol.HookRequest, event, *,
                      shell_names: frozenset = frozenset(), search_path: str | None = None) -> bytes:
    """The event before the tool runs (any agent's): plan the rewrite, commit the `begin_call`,
    remember the call's state, and answer with the rewritten input (shaped for the agent).

    `shell_names` and `search_path`: what the agent's shell defines before a
    command (aliases, functions) and its PATH, which the rewrite leaves alone.
    """
    from yarp.launcher import shell_join

    warning = None
    rewritten = None
    streams = False
    if hook.pruning:
        try:
            planned = capture.rewrite(event, warm.account, warm.rules(hook.rule_packs),
                                      shell_join(list(hook.launcher)), shell_names=shell_names,
                                      search_path=search_path)
        except (YarpError, ImportError, ValueError) as exc:
            reason = exc.message if isinstance(exc, YarpError) else type(exc).__name__
            warning = f"shell planning failed; running commands unchanged: {reason}"
        else:
            if planned is not None:
                rewritten, streams = planned
    input_after = event.rewritten_input(rewritten) if rewritten else event.tool_input
    now = now_ms()
    operation = capture.begin(event, warm.account, input_after, rewritten=streams,
                              now_ms=now, deadline_at_ms=now + hook.deadline_ms)
    # Raises on failure: only a durable begin lets the wrapped command run.
    outcome = await broker.submit_operation(request, operation, hook.deadline_ms)
    flags = capture.wrapper_flags(event, warm.account) if streams else None
    warm.remember(ops.source_key(operation), CallState(streams, flags, outcome.archive_ref))
    extra = {}
    if rewritten:
        answer = agents.part(event.agent, "hooks").rewrite_answer(input_after)
        extra["answer"] = orjson.dumps(answer).decode()
    if warning:
        extra["warning"] = warning
    return protocol.reply_ok(extra=extra)


def begun_state(warm, event) -> tuple[str, CallState] | None:
    """(source key, state) of the call `event` finishes: remembered, else read from the archive;
    None if it was never begun (initial capture failed, hooks installed mid-call) or is finished."""
    key = ops.source_key(ops.ResultBefore(session_of(event, warm.account), event.call_id, None, 0))
    state = warm.calls.get(key)
    if state is not None:
        return key, state
    stored = warm.stored_call(session_of(event, warm.account), event.call_id)
    if stored is None or stored[1] != "started":
        return None
    return key, CallState(stored[0], capture.wrapper_flags(event, warm.account), stored[2])


async def finish_event(broker, warm, request, hook: protocol.HookRequest, event, key: str, state: CallState, *,
                       view=None) -> None:
    """Commit the call's raw result, visible result and finish as one composite request, then forget it.

    `view`: None for the raw result as the visible one (a wrapped call's is
    `yarp run`'s view already), else what the service made of it: `shown` (the
    visible result), `text` (the exact host text a cap cut, as
    `result_text/before`) with its `completeness`, and `source` (a complete
    output the service read, as `source_output/before`).
    """
    if view is None:
        flags = state.wrapper_flags or capture.wrapper_flags(event, warm.account)
        operations = capture.finish(event, warm.account, requires_streams=state.requires_streams, flags=flags,
                                    now_ms=now_ms())
        sources = None
    else:
        operations = capture.finish_viewed(event, warm.account, view.shown, text=view.text,
                                           completeness=view.completeness, now_ms=now_ms())
        sources = {0: view.source} if view.source is not None else None
    prepared = await prepare_composite(broker, request, operations, sources=sources)
    await broker.submit_prepared(request, operations, prepared, hook.deadline_ms)
    warm.forget(key)
