"""The broker's half of `yarp run`: begin a standalone call, compute the view, capture, finish.

`yarp run` keeps only what must happen in its own process: the spool files,
spawning and waiting for the child, signals, emitting the output and the exit
status. Everything else is asked of the warm broker, where the rule set is
already loaded, in at most two requests per run:

* `begin` (standalone runs only, before the child starts): the run's own call
  under agent `yarp-run`, session `session`, tool `shell`, input
  `{"argv", "cwd"}`, wrapped (`requires_streams`).
* `capture` (after the child exits): select the reduce rule for the argv,
  write the pruned and capped view into the runner's after files
  (`yarp.view.visible`), then one composite request: the stream capture and,
  for a standalone run, its result (`{"exitCode", "signal"}`) and finish
  (one savepoint, one commit). The reply says which after files to emit.
* `not_started` (standalone, the command could not be started): finish the
  call as not executed.

Request shape (validated strictly; unknown fields fail)::

    {"schema", "correlationId", "deadlineMs",
     "run": {"step": "begin", "session": S, "startedAtMs": T, "argv": [...], "cwd": D}}
    {…, "run": {"step": "capture", "target": TARGET, "argv": [...], "status": N, "signal": N|null,
                "pruning": bool, "rulePacks": [...], "capBytes": N,
                "spool": {"stdout": FILE, "stderr": FILE, "stdoutAfter": PATH, "stderrAfter": PATH}}}
    {…, "run": {"step": "not_started", "target": TARGET, "status": N}}

TARGET is `{"session": S}` for a standalone run or `{"agent", "account",
"session", "call"}` for an adapter's call (the `--archive-*` flags); FILE is
`{"path", "device", "inode", "size"}`.
"""

from __future__ import annotations

import os

import orjson

from yarp.wire import operations as ops
from yarp.wire import protocol
from yarp.errors import NotFound, UsageError, ValidationError
from yarp.limits import (
    MAX_DEADLINE_MS,
    MAX_IDENTITY_CHARS,
    MAX_NAME_CHARS,
    MAX_PACKS,
    MAX_WORKING_DIRECTORY_CHARS,
    MIN_DEADLINE_MS,
)
from yarp.broker.services.shared import CallState, envelope_for, now_ms, prepare_composite

#: Agent, tool and call id of standalone runs (a person or script typing `yarp run`).
STANDALONE_AGENT = "yarp-run"
STANDALONE_TOOL = "shell"
STANDALONE_CALL = "1"
_MAX_ARGV = 4096
_STEPS = {
    "begin": frozenset({"step", "session", "startedAtMs", "argv", "cwd"}),
    "capture": frozenset({"step", "target", "argv", "status", "signal", "pruning", "rulePacks", "capBytes",
                          "spool"}),
    "not_started": frozenset({"step", "target", "status"}),
}


def _text(value, limit: int, what: str) -> str:
    if not isinstance(value, str) or not 0 < len(value) <= limit or "\x00" in value:
        raise ValidationError(f"run request {what} must be 1 to {limit} characters without NUL")
    return value


def _int(value, what: str, low: int, high: int) -> int:
    if type(value) is not int or not low <= value <= high:
        raise ValidationError(f"run request {what} must be an integer in {low}..{high}")
    return value


def _argv(value) -> list[str]:
    if (not isinstance(value, list) or not 0 < len(value) <= _MAX_ARGV
            or not all(isinstance(w, str) and len(w) <= MAX_WORKING_DIRECTORY_CHARS and "\x00" not in w
                       for w in value)):
        raise ValidationError("run request argv must be a non-empty list of strings without NUL")
    return value


def _path(value, what: str) -> str:
    path = _text(value, MAX_WORKING_DIRECTORY_CHARS, what)
    if not os.path.isabs(path):
        raise ValidationError(f"run request {what} must be an absolute path")
    return path


def _stream_file(value, what: str) -> ops.StreamFile:
    if not isinstance(value, dict) or set(value) != {"path", "device", "inode", "size"}:
        raise ValidationError(f"run request {what} must be {{path, device, inode, size}}")
    return ops.StreamFile(_path(value["path"], what), *(_int(value[k], what, 0, 2**63 - 1)
                                                       for k in ("device", "inode", "size")))


class RunService:
    """The broker's side of `yarp run` requests, using the warm services' account and rules."""

    def __init__(self, broker, warm) -> None:
        self.broker = broker
        self.warm = warm

    # --- parsing ------------------------------------------------------------------

    def _target(self, value) -> tuple[ops.Session, str, bool]:
        """(session, source call id, standalone) of a run's call."""
        if isinstance(value, dict) and set(value) == {"session"}:
            session = _text(value["session"], MAX_IDENTITY_CHARS, "session")
            return ops.Session(STANDALONE_AGENT, self.warm.account, session), STANDALONE_CALL, True
        if not isinstance(value, dict) or set(value) != {"agent", "account", "session", "call"}:
            raise ValidationError("run request target must be {session} or {agent, account, session, call}")
        session = ops.Session(_text(value["agent"], MAX_NAME_CHARS, "agent"),
                              _text(value["account"], MAX_IDENTITY_CHARS, "account"),
                              _text(value["session"], MAX_IDENTITY_CHARS, "session"))
        return session, _text(value["call"], MAX_IDENTITY_CHARS, "call"), False

    async def serve(self, request, obj: dict) -> bytes:
        """Answer one `yarp run` request (`begin`, `capture` or `not_started`) with its reply frame.

        Raises `ValidationError` for unknown or missing fields, another schema or a foreign correlation id.
        """
        if set(obj) != {"schema", "correlationId", "deadlineMs", "run"}:
            raise ValidationError("run request has unknown or missing fields")
        if obj["schema"] != protocol.SCHEMA:
            raise ValidationError("envelope schema is not supported")
        if obj["correlationId"] != request.conn.correlation_id:
            raise ValidationError("envelope correlation id does not match the connection")
        deadline_ms = _int(obj["deadlineMs"], "deadlineMs", MIN_DEADLINE_MS, MAX_DEADLINE_MS)
        run = obj["run"]
        step = run.get("step") if isinstance(run, dict) else None
        if step not in _STEPS or set(run) != _STEPS[step]:
            raise ValidationError("run request step is unknown or its fields are not the expected set")
        if step == "begin":
            return await self._begin(request, run, deadline_ms)
        if step == "capture":
            return await self._capture(request, run, deadline_ms)
        return await self._not_started(request, run, deadline_ms)

    # --- steps ----------------------------------------------------------------------

    async def _begin(self, request, run: dict, deadline_ms: int) -> bytes:
        started = _int(run["startedAtMs"], "startedAtMs", 0, 2**63 - 1)
        session = ops.Session(STANDALONE_AGENT, self.warm.account,
                              _text(run["session"], MAX_IDENTITY_CHARS, "session"), started)
        cwd = _path(run["cwd"], "cwd")
        payload = {"argv": _argv(run["argv"]), "cwd": cwd}
        meta = ops.CallMeta(STANDALONE_CALL, STANDALONE_TOOL, started, True, working_directory=cwd)
        operation = ops.BeginCall(session, meta, payload, payload, started)
        env = envelope_for(operation, request.conn.correlation_id, deadline_ms, body=ops.operation_to_json(operation))
        reply = await self.broker.submit(request, env)
        self.warm.remember(env.source_key, CallState(True, None, orjson.loads(reply).get("archiveRef")))
        return reply

    def _reference(self, key: str, session: ops.Session, call_id: str) -> str:
        state = self.warm.calls.get(key)
        if state is not None and state.archive_ref:
            return state.archive_ref
        stored = self.warm.stored_call(session, call_id)
        if stored is None:
            raise NotFound("the call named by the archive flags has not been begun")
        return stored[2]

    async def _capture(self, request, run: dict, deadline_ms: int) -> bytes:
        from yarp.view.visible import SpoolFiles, check_spool, write_view

        session, call_id, standalone = self._target(run["target"])
        argv = _argv(run["argv"])
        status = _int(run["status"], "status", 0, 255)
        signum = None if run["signal"] is None else _int(run["signal"], "signal", 1, 255)
        cap = _int(run["capBytes"], "capBytes", 0, 2**31 - 1)
        if not isinstance(run["pruning"], bool):
            raise ValidationError("run request pruning must be a boolean")
        packs = run["rulePacks"]
        if not isinstance(packs, list) or not all(isinstance(p, str) for p in packs) or len(packs) > MAX_PACKS:
            raise ValidationError(f"run request rulePacks must be at most {MAX_PACKS} paths")
        spool = run["spool"]
        if not isinstance(spool, dict) or set(spool) != {"stdout", "stderr", "stdoutAfter", "stderrAfter"}:
            raise ValidationError("run request spool must be {stdout, stderr, stdoutAfter, stderrAfter}")
        files = SpoolFiles(_stream_file(spool["stdout"], "spool stdout"), _stream_file(spool["stderr"], "spool stderr"),
                           _path(spool["stdoutAfter"], "spool stdoutAfter"),
                           _path(spool["stderrAfter"], "spool stderrAfter"))
        check_spool(files)
        key = ops.source_key(ops.ResultBefore(session, call_id, None, 0))
        warning = None
        rule = None
        ref = None
        if files.stdout.size or files.stderr.size:
            ref = self._reference(key, session, call_id)
            if run["pruning"]:
                from yarp.view.rules import select_rule

                try:
                    rule = select_rule(argv, self.warm.rules(tuple(packs)))
                except UsageError as exc:
                    # A broken rule pack costs the pruning, never the archive.
                    warning = f"rules not applied: {exc.message}"
        broker = self.broker
        if files.stdout.size + files.stderr.size <= broker.inline_bytes:
            out_after, err_after = write_view(rule, status, cap, files, ref)
        else:
            out_after, err_after = await broker.loop.run_in_executor(
                broker._pool, write_view, rule, status, cap, files, ref)
        now = now_ms()
        # What preparation reads: the before files (sizes checked as declared) and any view file.
        snapshot_bytes = files.stdout.size + files.stderr.size
        if out_after or err_after:
            shown = [_declared(files.stdout_after) if out_after else files.stdout,
                     _declared(files.stderr_after) if err_after else files.stderr]
            snapshot_bytes += shown[0].size + shown[1].size
            capture = ops.CaptureStreams(session, call_id, now, files.stdout, files.stderr, *shown)
        else:
            capture = ops.CapturePassthroughStreams(session, call_id, now, files.stdout, files.stderr)
        operations: tuple = (capture,)
        if standalone:
            result = {"exitCode": status, "signal": signum}
            operations += (ops.ResultBefore(session, call_id, result, now),
                           ops.FinishCall(session, call_id, result, status != 0, True, now))
        prepared = await prepare_composite(broker, request, operations, snapshot_bytes)
        env = envelope_for(operations[-1], request.conn.correlation_id, deadline_ms,
                           sequence=operations[0].sequence)
        await broker.submit(request, env, prepared)
        if standalone:
            self.warm.forget(key)
        extra = {"stdoutAfter": out_after, "stderrAfter": err_after}
        if warning:
            extra["warning"] = warning
        return protocol.reply_ok(ref, extra=extra)

    async def _not_started(self, request, run: dict, deadline_ms: int) -> bytes:
        session, call_id, standalone = self._target(run["target"])
        if not standalone:
            raise ValidationError("run request not_started is for standalone runs only")
        result = {"exitCode": _int(run["status"], "status", 0, 255), "error": "command could not be started"}
        operation = ops.FinishCall(session, call_id, result, True, False, now_ms())
        env = envelope_for(operation, request.conn.correlation_id, deadline_ms, body=ops.operation_to_json(operation))
        reply = await self.broker.submit(request, env)
        self.warm.forget(env.source_key)
        return reply


def _declared(path: str) -> ops.StreamFile:
    st = os.lstat(path)
    return ops.StreamFile(path, st.st_dev, st.st_ino, st.st_size)


__all__ = ["RunService", "STANDALONE_AGENT", "STANDALONE_TOOL"]
