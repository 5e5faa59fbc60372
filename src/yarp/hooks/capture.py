"""One hook event's share of the call lifecycle: which operations it becomes.

Decided in the broker, where the parser and the rule set are already loaded;
this module builds operations and never sends, reads or writes anything.

Before the tool: plan a shell rewrite and build the `begin_call` (input
before and after, the call record); the rewritten input is handed to the
agent only after that begin is durable. After it: the raw result, the visible
result and the finish, applied as one composite request (one savepoint, one
commit).

The visible result is the raw result unless the agent's service made a view
that replaces it (`finish_viewed`, for a host whose after-tool answer may
carry the replacement); a wrapped shell call was already pruned and capped by
`yarp run`, which kept the exact streams.

When the agent ignored the rewrite (the post event names the original command)
the call was begun as wrapped but no streams exist: it is finished with its
raw result as *not executed through the wrapper* (`executed = 0`), so verify
never expects streams that were never produced. See docs/design/adapters.md
("Rewrite ignored").
"""

from __future__ import annotations

from yarp.hooks.events import HookEvent, begin_operation, session_of
from yarp.wire import operations as ops


def identity(event: HookEvent, account: str):
    """The archive identity (`--archive-*` flags) of the event's call, as a `yarp run` rewrite names it."""
    from yarp.view.plan import ArchiveIdentity

    return ArchiveIdentity.from_flags(event.agent, account, event.session_id, event.call_id)


def wrapper_flags(event: HookEvent, account: str) -> str:
    """The flags text that only our `yarp run` rewrite of this very call contains."""
    from yarp.view.plan import rewrite_text

    return rewrite_text("", identity(event, account))[len("yarp"):]


def rewrite(event: HookEvent, account: str, rules, launcher: str, *, shell_names: frozenset = frozenset(),
            search_path: str | None = None) -> tuple[str, bool] | None:
    """The rewritten shell command and whether the call itself gets the streams, else None.

    Compound planning: a single simple command is wrapped whole (the call
    requires its four stream snapshots); in a compound command each wrapped
    command records its own call under this one, which then requires none.
    `launcher` is the quoted absolute command that runs `yarp` in the agent's
    environment (`launcher.shell_join(yarp_argv())` of the hook process).
    `shell_names` and `search_path`: the names the agent's shell defines before
    a command and its PATH, left to the shell (`plan_command`).
    """
    command = event.shell_command()
    if command is None:
        return None
    from yarp.view.plan import plan_command

    plan = plan_command(command, rules, identity(event, account), launcher=launcher, compound=True,
                        shell_names=shell_names, search_path=search_path, cwd=event.cwd)
    if plan.execution != "rewrite" or not plan.command:
        return None
    return plan.command, plan.requires_streams


def begin(event: HookEvent, account: str, input_after, *, rewritten: bool, now_ms: int,
          deadline_at_ms: int) -> ops.BeginCall:
    """The `begin_call` for a pre-tool event; a call whose command was rewritten requires its streams."""
    return begin_operation(event, account, input_after, requires_streams=rewritten, now_ms=now_ms,
                           deadline_at_ms=deadline_at_ms)


def ran_wrapped(event: HookEvent, flags: str) -> bool:
    """Whether the input the agent executed is our `yarp run` rewrite of this call."""
    command = event.shell_command()
    return command is not None and flags in command


def finish(event: HookEvent, account: str, *, requires_streams: bool, flags: str, now_ms: int
           ) -> tuple[ops.ArchiveOperation, ...]:
    """The post-tool operations, in order, for one composite request."""
    session = session_of(event, account)
    result, is_error = event.response, event.is_failure
    raw = ops.ResultBefore(session, event.call_id, result, now_ms)
    if requires_streams and not ran_wrapped(event, flags):
        # The agent ran the original input, not our wrapper: no streams exist.
        return raw, ops.FinishCall(session, event.call_id, result, is_error, False, now_ms)
    return (raw, ops.StageResult(session, event.call_id, result, is_error, now_ms),
            ops.FinishCall(session, event.call_id, result, is_error, True, now_ms))


def finish_viewed(event: HookEvent, account: str, shown, *, text: str | None, completeness: str, now_ms: int
                  ) -> tuple[ops.ArchiveOperation, ...]:
    """The post-tool operations of a call whose result the model is shown as a view (`shown`).

    The raw result first (the caller adds the complete output it read as
    `source_output/before` to this part), then `text` as `result_text/before`
    when the view was cut from it, then the view as the visible and final
    result. Only a successful tool's result is replaced.
    """
    session = session_of(event, account)
    operations: list = [ops.ResultBefore(session, event.call_id, event.response, now_ms)]
    if text is not None:
        operations.append(ops.ResultText(session, event.call_id, text, completeness, now_ms))
    operations += [ops.StageResult(session, event.call_id, shown, False, now_ms),
                   ops.FinishCall(session, event.call_id, shown, False, True, now_ms)]
    return tuple(operations)
