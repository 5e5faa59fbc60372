"""The broker's half of `yarp run`: begin a standalone call, compute the view, capture, finish.

`yarp run` keeps only what must happen in its own process: the spool files,
spawning and waiting for the child, signals, emitting the output and the exit
status. Everything else is asked of the warm broker, where the rule set is
already loaded, in at most two requests per run:

* `begin` (a run that begins its own call, before the child starts): a
  standalone run's call under agent `yarp-run`, session `session`, or a
  segment call's full identity (`--archive-parent`: agent, account and
  session of the adapter's call, a call id derived from it); tool `shell`,
  input `{"argv", "cwd"}`, wrapped (`requires_streams`).
* `capture` (after the child exits): select the reduce rule for the argv,
  write the pruned and capped view into the runner's after files
  (`yarp.view.visible`), then one composite request: the stream capture and,
  for a call the run began itself (standalone or segment), its result
  (`{"exitCode", "signal"}`, and `"incomplete"`, the reason, when the
  request's `spoolError` says the spool files hold only the streams' first
  bytes) and finish (one savepoint, one commit). The reply says which after
  files to emit.
* `not_started` (a call the run began itself, the command could not be
  started): finish the call as not executed.

Request shape (validated strictly; unknown fields fail)::

    {"schema", "correlationId", "deadlineMs",
     "run": {"step": "begin", "session": S, "startedAtMs": T, "argv": [...], "cwd": D}}
    {…, "run": {"step": "begin", "target": OWN_TARGET, "startedAtMs": T, "argv": [...], "cwd": D}}
    {…, "run": {"step": "capture", "target": TARGET, "argv": [...], "status": N, "signal": N|null,
                "pruning": bool, "rulePacks": [...], "capBytes": N,
                "spool": {"stdout": FILE, "stderr": FILE, "stdoutAfter": PATH, "stderrAfter": PATH},
                ["spoolError": ERRNO]}}
    {…, "run": {"step": "not_started", "target": TARGET, "status": N}}

TARGET is `{"session": S}` for a standalone run, `{"agent", "account",
"session", "call"}` for an adapter's call (the `--archive-*` flags), or
OWN_TARGET, `{"agent", "account", "session", "call", "own": true}`, for a
segment call the run began itself (`--archive-parent`); FILE is
`{"path", "device", "inode", "size"}`.
"""

from __future__ import annotations

import asyncio
import errno
import os

from yarp.archive.file_payload import FileBody, payload_limit
from yarp.archive.prepare import prepare_capture
from yarp.broker.services.shared import CallState, PreparedParts, now_ms, prepare_composite
from yarp.broker.services.stream_fit import StreamFit, exact_payloads, over_limit
from yarp.errors import NotFound, UsageError, ValidationError
from yarp.limits import COMMIT_MARGIN_S, MAX_BATCH_PAYLOAD_BYTES
from yarp.wire import operations as ops
from yarp.wire import protocol

#: A view file the spool directory has no room for: ENOSPC, EDQUOT, EFBIG.
_FULL = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
#: Agent, tool and call id of standalone runs (a person or script typing `yarp run`).
STANDALONE_AGENT = "yarp-run"
STANDALONE_TOOL = "shell"
STANDALONE_CALL = "1"


class RunService:
    """The broker's side of `yarp run` requests, using the warm services' account and rules."""

    def __init__(self, broker, warm) -> None:
        self.broker = broker
        self.warm = warm

    def _target(self, target: protocol.RunTarget, started_at_ms: int | None = None
                ) -> tuple[ops.Session, str, bool]:
        """(session, source call id, own) of a run's call: own when the run began it itself
        (standalone or segment) and so also records its result and finish."""
        if target.agent is None:
            return (ops.Session(STANDALONE_AGENT, self.warm.account, target.session, started_at_ms),
                    STANDALONE_CALL, True)
        return ops.Session(target.agent, target.account, target.session), target.call, target.own

    async def serve(self, request, run) -> bytes:
        """Answer one `yarp run` step (`RunBegin`, `RunCapture` or `RunNotStarted`, validated) with its reply."""
        if type(run) is protocol.RunCapture:
            return await self._capture(request, run)
        if type(run) is protocol.RunBegin:
            return await self._begin(request, run)
        return await self._not_started(request, run)

    # --- steps ----------------------------------------------------------------------

    async def _begin(self, request, run: protocol.RunBegin) -> bytes:
        # A segment call's session is the adapter's, already stored: no start time of ours.
        session, call_id, _own = self._target(run.target, run.started_at_ms)
        payload = {"argv": list(run.argv), "cwd": run.cwd}
        meta = ops.CallMeta(call_id, STANDALONE_TOOL, run.started_at_ms, True, working_directory=run.cwd)
        operation = ops.BeginCall(session, meta, payload, payload, run.started_at_ms)
        outcome = await self.broker.submit_operation(request, operation, run.deadline_ms)
        self.warm.remember(ops.source_key(operation), CallState(True, None, outcome.archive_ref))
        return protocol.reply_ok(outcome.archive_ref)

    def _reference(self, key: str, session: ops.Session, call_id: str) -> str:
        state = self.warm.calls.get(key)
        if state is not None and state.archive_ref:
            return state.archive_ref
        stored = self.warm.stored_call(session, call_id)
        if stored is None:
            raise NotFound("the call named by the archive flags has not been begun")
        return stored[2]

    async def _capture(self, request, run: protocol.RunCapture) -> bytes:
        from yarp.view.visible import check_spool

        session, call_id, own = self._target(run.target)
        files = run.spool
        check_spool(files)
        key = ops.source_key(ops.ResultBefore(session, call_id, None, 0))
        warning = None
        rule = None
        ref = None
        if files.stdout.size or files.stderr.size:
            ref = self._reference(key, session, call_id)
            if run.pruning:
                from yarp.view.rules import select_rule

                try:
                    rule = select_rule(run.argv, self.warm.rules(run.rule_packs))
                except UsageError as exc:
                    # A broken rule pack costs the pruning, never the archive.
                    warning = f"rules not applied: {exc.message}"
        broker = self.broker
        ready, out_after, err_after, cut, note = await self._view_and_payloads(files, rule, run, ref)
        warning = "; ".join(filter(None, (warning, note)))
        now = now_ms()
        # What preparation still reads: any view file.
        snapshot_bytes = 0
        if out_after or err_after:
            shown = [_declared(files.stdout_after) if out_after else files.stdout,
                     _declared(files.stderr_after) if err_after else files.stderr]
            snapshot_bytes += (shown[0].size if out_after else 0) + (shown[1].size if err_after else 0)
            capture = ops.CaptureStreams(session, call_id, now, files.stdout, files.stderr, *shown)
        else:
            capture = ops.CapturePassthroughStreams(session, call_id, now, files.stdout, files.stderr)
        operations: tuple = (capture,)
        if own:
            result = {"exitCode": run.status, "signal": run.signal}
            if run.spool_error is not None:
                result["incomplete"] = _incomplete(run.spool_error, files)
            if cut:
                reason = incomplete_reason(cut)
                result["incomplete"] = f"{result['incomplete']}; {reason}" if "incomplete" in result else reason
            operations += (ops.ResultBefore(session, call_id, result, now),
                           ops.FinishCall(session, call_id, result, run.status != 0, True, now))
        prepared = await self._prepared(request, operations, ready, snapshot_bytes, run.deadline_ms)
        await broker.submit_prepared(request, operations, prepared, run.deadline_ms)
        if own:
            self.warm.forget(key)
        extra = {"stdoutAfter": out_after, "stderrAfter": err_after}
        if cut:
            warning = "; ".join(filter(None, (warning, incomplete_reason(cut))))
        if warning:
            extra["warning"] = warning
        return protocol.reply_ok(ref, extra=extra)

    async def _view_and_payloads(self, files, rule, run: protocol.RunCapture, ref: str | None):
        """The exact streams' payloads and the view, made side by side: (payloads by `file_key`, whether
        stdout and stderr are shown from their view files, the streams cut, a warning or None).

        What each stream keeps is decided first: one that does not fit in one payload keeps its first
        bytes, and its view is made from them (`StreamFit`).
        """
        from yarp.view.visible import write_view

        broker = self.broker
        total = files.stdout.size + files.stderr.size
        fit = await asyncio.to_thread(StreamFit.plan, files) if over_limit(files) else StreamFit.plan(files)
        warning = view = None
        try:
            view = asyncio.ensure_future(broker.work(total, write_view, rule, run.status, run.cap_bytes,
                                                     fit.view_files(), ref, fit.completeness))
            ready = await broker.work(total, exact_payloads, files)
            try:
                out_after, err_after = await view
                if fit.replan(ready):  # fewer bytes kept than planned: the view is made from them
                    await asyncio.to_thread(fit.copy_heads)
                    out_after, err_after = await broker.work(total, write_view, rule, run.status, run.cap_bytes,
                                                             fit.view_files(), ref, fit.completeness)
            except OSError as exc:
                if exc.errno not in _FULL:
                    raise
                # The spool directory has no room for the view: the streams, whole, are the view.
                out_after = err_after = False
                warning = f"view not written ({exc.strerror}): the output is shown whole"
        finally:
            if view is not None:
                view.add_done_callback(_retrieved)
            fit.close()
        fit.replan(ready)
        return ready, out_after, err_after, fit.cut, warning

    async def _prepared(self, request, operations: tuple, ready: dict, file_bytes: int, deadline_ms: int
                        ) -> PreparedParts:
        """One composite: the capture (its exact streams prepared already, `ready`; any view file read
        now) and, for a call the run began itself, its result and finish. A body written alone (over
        the batch budget) stops being copied at the request's deadline (`FileBody.deadline`)."""
        broker = self.broker
        for payload in ready.values():
            if type(payload.body) is FileBody and len(payload.body) > MAX_BATCH_PAYLOAD_BYTES:
                payload.body.deadline = request.received + deadline_ms / 1000 - COMMIT_MARGIN_S
        parts = (await broker.work(file_bytes, prepare_capture, operations[0], ready),)
        if len(operations) > 1:
            parts += (await prepare_composite(broker, request, operations[1:])).parts
        return PreparedParts(parts)

    async def _not_started(self, request, run: protocol.RunNotStarted) -> bytes:
        session, call_id, own = self._target(run.target)
        if not own:
            raise ValidationError("run request not_started is for a call the run began itself only")
        result = {"exitCode": run.status, "error": "command could not be started"}
        operation = ops.FinishCall(session, call_id, result, True, False, now_ms())
        outcome = await self.broker.submit_operation(request, operation, run.deadline_ms)
        self.warm.forget(ops.source_key(operation))
        return protocol.reply_ok(outcome.archive_ref)


def _incomplete(errno: int, files) -> str:
    """A run's result when its spool could not take every byte: what is archived, and why."""
    return (f"the spool could not take the whole output ({os.strerror(errno)}): only the first "
            f"{files.stdout.size} bytes of stdout and {files.stderr.size} bytes of stderr are archived; "
            "the rest was passed through, not archived")


def _retrieved(task) -> None:
    """A view left running by a failed capture: its outcome is not wanted (and not reported as lost)."""
    if not task.cancelled():
        task.exception()


def incomplete_reason(cut: dict[str, tuple[int, int]]) -> str:
    """What the archive keeps of streams that do not fit in one payload, in one bounded sentence."""
    kept = " and ".join(f"the first {kept} of {size} bytes of {name}" for name, (size, kept) in cut.items())
    return f"the archive keeps {kept} (one payload holds {payload_limit()} bytes, stored, at most)"


def _declared(path: str) -> ops.StreamFile:
    st = os.lstat(path)
    return ops.StreamFile(path, st.st_dev, st.st_ino, st.st_size)


__all__ = ["RunService", "STANDALONE_AGENT", "STANDALONE_TOOL"]
