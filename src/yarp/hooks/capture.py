"""One hook event's share of the call lifecycle, against the broker.

`PreToolUse`: plan a shell rewrite, commit `begin_call` (input before and after,
the call record) within `BEGIN_TIMEOUT_S`, and only then hand the rewritten
input to the agent. `PostToolUse` / `PostToolUseFailure`: commit the raw
result, stage the visible result and finish the call.

The agent shows its built-in tools' results to the model itself; a hook cannot
replace them, so the visible result is the raw result (a wrapped shell call was
already pruned and capped by `yarp run`, which kept the exact streams).

When the agent ignored the rewrite (the post event names the original command)
the call was begun as wrapped but no streams exist: it is finished with its
raw result as *not executed through the wrapper* (`executed = 0`), so verify
never expects streams that were never produced. See docs/decisions.md.

Any archive failure leaves the tool untouched (no answer on stdout) and is
reported once per session on stderr. This module never writes anything but
broker requests and the warning marker, and never blocks a tool for longer than
its deadlines.
"""

from __future__ import annotations

import os
import time
from typing import Any

from .. import operations as ops
from ..errors import ArchiveMissing, YarpError
from .events import POST, POST_FAILURE, PRE, HookEvent, local_account, session_of
from .notice import warn_once

#: Initial capture must be durable before the tool runs; like the Pi adapter, wait at most 2 s.
BEGIN_TIMEOUT_S = 2.0
#: Every post-tool request shares this deadline; the installed hook timeout is larger.
RESULT_TIMEOUT_S = 20.0


def _now_ms() -> int:
    return int(time.time() * 1000)


class HookCapture:
    def __init__(self, event: HookEvent, *, config, location, environ=os.environ, account: str | None = None) -> None:
        self.event = event
        self.config = config
        self.location = location
        self.environ = environ
        self.account = account or local_account()

    def warn(self, text: str) -> None:
        warn_once(self.event.agent, self.event.session_id, text, self.environ)

    def identity(self):
        from ..shell.plan import ArchiveIdentity

        e = self.event
        return ArchiveIdentity.from_flags(e.agent, self.account, e.session_id, e.call_id)

    # --- PreToolUse ---------------------------------------------------------------

    def rewrite(self) -> str | None:
        """The `yarp run` form of a shell command the plan says to wrap, else None."""
        command = self.event.shell_command()
        if command is None or not self.config.pruning_enabled:
            return None
        from ..shell.plan import plan_command
        from ..shell.rules import load_rules
        from .launcher import shell_join, yarp_argv

        plan = plan_command(command, load_rules(list(self.config.rule_packs)), self.identity())
        if plan.execution != "rewrite" or not plan.command or not plan.command.startswith("yarp "):
            return None
        return shell_join(yarp_argv(self.environ)) + plan.command[len("yarp"):]

    def pre_tool(self) -> dict | None:
        from ..client import BrokerClient
        from .events import begin_operation, pre_tool_answer, rewritten_input

        deadline = time.monotonic() + BEGIN_TIMEOUT_S
        rewritten = None
        try:
            rewritten = self.rewrite()
        except (YarpError, ImportError, ValueError) as exc:
            self.warn(f"shell planning failed; running commands unchanged: {_reason(exc)}")
        event = self.event
        input_after = rewritten_input(event.tool_input, rewritten) if rewritten else event.tool_input
        now = _now_ms()
        remaining_ms = max(1, int((deadline - time.monotonic()) * 1000))
        operation = begin_operation(event, self.account, input_after, requires_streams=rewritten is not None,
                                    now_ms=now, deadline_at_ms=now + remaining_ms)
        try:
            with BrokerClient(self.location, self.environ) as client:
                client.request(operation, deadline)
        except YarpError as exc:
            self.warn("archive capture failed; this session's tool calls run without capture or rewriting "
                      f"until the archive answers again: {exc.message}")
            return None
        # Only a durable begin_call lets the wrapped command run.
        return pre_tool_answer(input_after) if rewritten else None

    # --- PostToolUse / PostToolUseFailure -------------------------------------------------

    def call_state(self) -> tuple[bool, str] | None:
        """(requires_streams, status) of the begun call, read-only; None when it was never begun."""
        from ..sqlite import open_readonly

        e = self.event
        conn = open_readonly(self.location)
        try:
            row = conn.execute(
                "SELECT c.requires_streams, c.status FROM tool_calls c JOIN sessions s ON s.id = c.session_id"
                " WHERE s.agent = ? AND s.account = ? AND s.source_session_id = ? AND c.source_call_id = ?",
                (e.agent, self.account, e.session_id, e.call_id),
            ).fetchone()
        finally:
            conn.close()
        return None if row is None else (bool(row[0]), row[1])

    def ran_wrapped(self) -> bool:
        """Whether the input the agent executed is our `yarp run` rewrite of this call."""
        from ..shell.plan import rewrite_text

        command = self.event.shell_command()
        flags = rewrite_text("", self.identity())[len("yarp"):]
        return command is not None and flags in command

    def post_tool(self) -> None:
        try:
            state = self.call_state()
        except ArchiveMissing:
            return
        except YarpError as exc:
            self.warn(f"result archive failed; the call stays incomplete: {exc.message}")
            return
        if state is None or state[1] != "started":
            # Never begun (initial capture failed, or hooks were installed mid-call) or already finished.
            return
        requires_streams = state[0]
        event = self.event
        session = session_of(event, self.account)
        result: Any = event.response
        is_error = event.is_failure
        from ..client import BrokerClient

        deadline = time.monotonic() + RESULT_TIMEOUT_S
        try:
            with BrokerClient(self.location, self.environ) as client:
                client.request(ops.ResultBefore(session, event.call_id, result, _now_ms()), deadline)
                if requires_streams and not self.ran_wrapped():
                    # The agent ran the original input, not our wrapper: no streams exist.
                    client.request(ops.FinishCall(session, event.call_id, result, is_error, False, _now_ms()),
                                   deadline)
                    return
                client.request(ops.StageResult(session, event.call_id, result, is_error, _now_ms()), deadline)
                client.request(ops.FinishCall(session, event.call_id, result, is_error, True, _now_ms()), deadline)
        except YarpError as exc:
            self.warn(f"result archive failed; the call stays incomplete: {exc.message}")


def _reason(exc: BaseException) -> str:
    return exc.message if isinstance(exc, YarpError) else type(exc).__name__


def handle(agent: str, raw: bytes, *, archive: str | None = None, environ=os.environ) -> dict | None:
    """Process one hook event; return the JSON answer to print, or None for no answer.

    Never raises for archive trouble: the tool always runs.
    """
    import json

    from .events import parse_event

    if agent == "codex":
        from .codex import handle as handle_codex

        try:
            return handle_codex(json.loads(raw), archive=archive, environ=environ)
        except ValueError:
            return None
    try:
        event = parse_event(agent, json.loads(raw))
    except (ValueError, YarpError):
        # Without a readable event there is no session to report to; the tool runs untouched.
        return None
    if event is None:
        return None
    from ..config import load
    from ..paths import resolve_archive

    try:
        config = load(environ)
        if not config.archive_enabled:
            return None
        location = resolve_archive(archive, environ, config.archive_path)
    except YarpError as exc:
        warn_once(agent, event.session_id, f"archive capture is off for this session: {exc.message}", environ)
        return None
    capture = HookCapture(event, config=config, location=location, environ=environ)
    if event.event == PRE:
        return capture.pre_tool()
    if event.event in (POST, POST_FAILURE):
        capture.post_tool()
    return None
