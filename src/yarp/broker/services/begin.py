"""The event before a tool runs, for every agent whose hook begins calls in the broker.

Claude Code's and Codex's `PreToolUse` (`yarp.broker.services.hooks`) and Gemini CLI's
`BeforeTool` (`yarp.broker.services.gemini`, with the call id it derives) all
begin a call the same way: plan the rewrite with the warm rule set, commit
one `begin_call`, remember the call's state for its finishing event, and
answer with the rewritten input shaped for the agent.
"""

from __future__ import annotations

import orjson

from yarp.broker.services.shared import CallState, now_ms
from yarp.errors import YarpError
from yarp.hooks import capture
from yarp.wire import operations as ops
from yarp.wire import protocol


async def begin_event(broker, warm, request, hook: protocol.HookRequest, event) -> bytes:
    """The event before the tool runs (any agent's): plan the rewrite, commit the `begin_call`,
    remember the call's state, and answer with the rewritten input (shaped for the agent)."""
    from yarp.hooks.events import rewrite_answer, rewritten_input
    from yarp.launcher import shell_join

    warning = None
    rewritten = None
    streams = False
    if hook.pruning:
        try:
            planned = capture.rewrite(event, warm.account, warm.rules(hook.rule_packs),
                                      shell_join(list(hook.launcher)))
        except (YarpError, ImportError, ValueError) as exc:
            reason = exc.message if isinstance(exc, YarpError) else type(exc).__name__
            warning = f"shell planning failed; running commands unchanged: {reason}"
        else:
            if planned is not None:
                rewritten, streams = planned
    input_after = rewritten_input(event.tool_input, rewritten) if rewritten else event.tool_input
    now = now_ms()
    operation = capture.begin(event, warm.account, input_after, rewritten=streams,
                              now_ms=now, deadline_at_ms=now + hook.deadline_ms)
    # Raises on failure: only a durable begin lets the wrapped command run.
    outcome = await broker.submit_operation(request, operation, hook.deadline_ms)
    flags = capture.wrapper_flags(event, warm.account) if streams else None
    warm.remember(ops.source_key(operation), CallState(streams, flags, outcome.archive_ref))
    extra = {}
    if rewritten:
        extra["answer"] = orjson.dumps(rewrite_answer(event.agent, input_after)).decode()
    if warning:
        extra["warning"] = warning
    return protocol.reply_ok(extra=extra)
