"""`yarp run`: run one command, archive its exact streams, then show a pruned view.

The child gets the runner's stdin and writes its stdout and stderr straight
into two private spool files (0600 in a 0700 directory), so the exact bytes
are kept at disk speed and in constant memory. After the child exits:

1. the call is identified — the adapter's call (archive flags) or a call of
   our own, begun before the child started (standalone use);
2. each stream is pruned by the command-aware rules, then the global cap is
   applied across what remains, into two "after" files;
3. one stream-capture operation names the four files (never their bytes) and
   we wait for the broker's durable acknowledgement;
4. only then the after files are emitted and we exit with the child's status
   (128 + N for a death by signal N).

If anything on the archive side fails after the child started, the exact raw
bytes are emitted on their original streams instead, the archive error is
reported once on stderr, and the child's status is kept: tool execution never
depends on the archive.

This module sits on the path of every shell command an agent runs: it imports
only what that path needs (no event loop, no worker pool, no shell parser).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

from . import operations as ops
from .errors import NotFound, YarpError, bounded_text

#: Total time allowed for every archive step after the child exits.
ARCHIVE_TIMEOUT_S = 30.0
#: Agent name used for standalone runs (a person or script typing `yarp run`).
STANDALONE_AGENT = "yarp-run"
STANDALONE_TOOL = "shell"


@dataclass(frozen=True, slots=True)
class CallTarget:
    """The archive call a run belongs to."""

    session: ops.Session
    source_call_id: str
    standalone: bool


@dataclass(frozen=True, slots=True)
class Spool:
    directory: str
    stdout_before: str
    stderr_before: str
    stdout_after: str
    stderr_after: str

    @classmethod
    def create(cls) -> Spool:
        directory = tempfile.mkdtemp(prefix="yarp-run-")  # mode 0700
        paths = [os.path.join(directory, name) for name in ("stdout.before", "stderr.before",
                                                            "stdout.after", "stderr.after")]
        return cls(directory, *paths)

    def open_private(self, path: str) -> int:
        return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)

    def remove(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)


def stream_file(path: str) -> ops.StreamFile:
    st = os.lstat(path)
    return ops.StreamFile(path, st.st_dev, st.st_ino, st.st_size)


def exit_status(returncode: int) -> int:
    """The child's status the way a shell reports it (128 + N for signal N)."""
    return 128 - returncode if returncode < 0 else returncode


def _now_ms() -> int:
    return int(time.time() * 1000)


class _Signals:
    """While the child runs: terminal signals reach it directly (same process group),
    so we ignore them; SIGTERM/SIGHUP sent to us alone are forwarded to the child."""

    FORWARD = (signal.SIGTERM, signal.SIGHUP)
    IGNORE = (signal.SIGINT, signal.SIGQUIT)

    def __init__(self) -> None:
        self.child: subprocess.Popen | None = None
        self.saved: dict[int, object] = {}

    def _forward(self, signum, _frame) -> None:
        if self.child is not None and self.child.poll() is None:
            try:
                self.child.send_signal(signum)
            except OSError:
                pass

    def __enter__(self) -> _Signals:
        for signum in self.IGNORE:
            self.saved[signum] = signal.signal(signum, signal.SIG_IGN)
        for signum in self.FORWARD:
            self.saved[signum] = signal.signal(signum, self._forward)
        return self

    def __exit__(self, *exc) -> None:
        for signum, handler in self.saved.items():
            signal.signal(signum, handler)


def emit_file(path: str, fd: int) -> None:
    """Copy a file to `fd` exactly (sendfile when possible)."""
    with open(path, "rb") as src:
        size = os.fstat(src.fileno()).st_size
        offset = 0
        try:
            while offset < size:
                sent = os.sendfile(fd, src.fileno(), offset, size - offset)
                if sent == 0:
                    break
                offset += sent
            return
        except OSError:
            src.seek(offset)
        while True:
            chunk = src.read(1 << 20)
            if not chunk:
                return
            view = memoryview(chunk)
            while view:
                written = os.write(fd, view)
                view = view[written:]


def _lookup_ref(location, target: CallTarget) -> str:
    """The archive reference of a call the adapter already began (read-only)."""
    from .sqlite import open_readonly

    conn = open_readonly(location)
    try:
        row = conn.execute(
            "SELECT c.archive_ref FROM tool_calls c JOIN sessions s ON s.id = c.session_id"
            " WHERE s.agent = ? AND s.account = ? AND s.source_session_id = ? AND c.source_call_id = ?",
            (target.session.agent, target.session.account, target.session.source_session_id, target.source_call_id),
        ).fetchone()
    finally:
        conn.close()
    if row is None:
        raise NotFound("the call named by the archive flags has not been begun")
    return row[0]


class Runner:
    def __init__(self, argv: list[str], *, target: CallTarget | None, config, location, environ=os.environ) -> None:
        self.argv = argv
        self.target = target
        self.config = config
        self.location = location
        self.environ = environ
        self.client = None
        self.ref: str | None = None
        self.deadline = 0.0

    # --- archive steps ------------------------------------------------------------

    def _client(self):
        if self.client is None:
            from .client import BrokerClient

            self.client = BrokerClient(self.location, self.environ)
        return self.client

    def _send(self, operation) -> dict:
        return self._client().request(operation, self.deadline)

    def _begin_standalone(self) -> None:
        started = _now_ms()
        session_id = f"run-{os.uname().nodename}-{os.getpid()}-{started}"
        session = ops.Session(STANDALONE_AGENT, _account(), session_id, started)
        self.target = CallTarget(session, "1", standalone=True)
        cwd = os.getcwd()
        meta = ops.CallMeta("1", STANDALONE_TOOL, started, True, working_directory=cwd)
        payload = {"argv": self.argv, "cwd": cwd}
        reply = self._send(ops.BeginCall(session, meta, payload, payload, started))
        self.ref = reply["archiveRef"]

    def _prune_and_cap(self, spool: Spool, status: int) -> bool:
        """Write the after files; return whether they differ from the before files."""
        from .shell.reducers import reduce_stream

        rule = None
        if self.config.pruning_enabled:
            from .shell.rules import load_rules, select_rule

            rule = select_rule(self.argv, load_rules(self.config.rule_packs))
        changed = False
        for name, before, after in (("stdout", spool.stdout_before, spool.stdout_after),
                                    ("stderr", spool.stderr_before, spool.stderr_after)):
            stats = reduce_stream(rule, status, before, after, ref=self.ref, stream_name=name)
            changed = changed or stats.reduced
        if self.config.cap_bytes:
            from .shell.cap import cap_files

            head = self.config.cap_bytes // 2 - 128
            source = "stdout" if os.path.getsize(spool.stdout_after) > head else "stderr"
            capped = cap_files([spool.stdout_after, spool.stderr_after], cap=self.config.cap_bytes,
                               archive_ref=self.ref, source=source, completeness="complete")
            if capped is not None:
                for path, data in zip((spool.stdout_after, spool.stderr_after), capped):
                    with open(path, "wb") as handle:
                        handle.write(data)
                changed = True
        return changed

    def _archive(self, spool: Spool, status: int, signum: int | None) -> tuple[str, str]:
        """Capture the streams durably; return the (stdout, stderr) files to emit."""
        target = self.target
        if self.ref is None:
            self.ref = _lookup_ref(self.location, target)
        if self._prune_and_cap(spool, status):
            operation = ops.CaptureStreams(
                target.session, target.source_call_id, _now_ms(),
                *(stream_file(p) for p in (spool.stdout_before, spool.stderr_before,
                                           spool.stdout_after, spool.stderr_after)))
            emitted = (spool.stdout_after, spool.stderr_after)
        else:
            operation = ops.CapturePassthroughStreams(
                target.session, target.source_call_id, _now_ms(),
                stream_file(spool.stdout_before), stream_file(spool.stderr_before))
            emitted = (spool.stdout_before, spool.stderr_before)
        self._send(operation)
        if target.standalone:
            result = {"exitCode": status, "signal": signum}
            self._send(ops.ResultBefore(target.session, target.source_call_id, result, _now_ms()))
            self._send(ops.FinishCall(target.session, target.source_call_id, result, status != 0, True, _now_ms()))
        return emitted

    # --- the run ------------------------------------------------------------------------

    def run(self) -> int:
        spool = Spool.create()
        try:
            return self._run(spool)
        finally:
            if self.client is not None:
                self.client.close()
            spool.remove()

    def _run(self, spool: Spool) -> int:
        begin_error: YarpError | None = None
        if self.target is None:
            self.deadline = time.monotonic() + ARCHIVE_TIMEOUT_S
            try:
                self._begin_standalone()
            except YarpError as exc:
                begin_error = exc
        # All four spool files are created private up front; later writers
        # truncate them in place, so their 0600 mode never widens.
        for path in (spool.stdout_after, spool.stderr_after):
            os.close(spool.open_private(path))
        out_fd = spool.open_private(spool.stdout_before)
        err_fd = spool.open_private(spool.stderr_before)
        try:
            with _Signals() as signals:
                try:
                    child = subprocess.Popen(self.argv, stdout=out_fd, stderr=err_fd, close_fds=True)
                except OSError as exc:
                    sys.stderr.write(f"yarp: cannot run command: {bounded_text(exc.strerror or 'error', 200)}\n")
                    status = 127 if isinstance(exc, FileNotFoundError) else 126
                    self._finish_preflight(status, begin_error)
                    return status
                signals.child = child
                returncode = child.wait()
        finally:
            os.close(out_fd)
            os.close(err_fd)
        status = exit_status(returncode)
        signum = -returncode if returncode < 0 else None
        if begin_error is not None:
            return self._fallback(spool, status, begin_error)
        self.deadline = time.monotonic() + ARCHIVE_TIMEOUT_S
        try:
            stdout_path, stderr_path = self._archive(spool, status, signum)
        except YarpError as exc:
            return self._fallback(spool, status, exc)
        except OSError as exc:
            return self._fallback(spool, status, YarpError(f"spool failed: {exc.strerror or 'I/O error'}"))
        sys.stdout.flush()
        emit_file(stdout_path, 1)
        emit_file(stderr_path, 2)
        return status

    def _finish_preflight(self, status: int, begin_error: YarpError | None) -> None:
        """A standalone command that never started finishes as not executed."""
        if self.target is None or not self.target.standalone or begin_error is not None:
            return
        result = {"exitCode": status, "error": "command could not be started"}
        try:
            self._send(ops.FinishCall(self.target.session, self.target.source_call_id, result, True, False, _now_ms()))
        except YarpError as exc:
            sys.stderr.write(f"yarp: archive failed: {exc.message}\n")

    def _fallback(self, spool: Spool, status: int, error: YarpError) -> int:
        """Emit the exact raw bytes, report the archive error once, keep the status."""
        for path, fd in ((spool.stdout_before, 1), (spool.stderr_before, 2)):
            try:
                emit_file(path, fd)
            except OSError:
                pass
        try:
            sys.stderr.write(f"yarp: archive failed after command execution: {error.message}\n")
            sys.stderr.flush()
        except OSError:
            pass
        return status


def _account() -> str:
    try:
        import pwd

        return pwd.getpwuid(os.geteuid()).pw_name
    except (KeyError, ImportError):
        return str(os.geteuid())


def run_command(argv: list[str], target: CallTarget | None, archive: str | None = None, environ=os.environ) -> int:
    """Entry point used by `yarp run` (`archive` is the --archive flag, if any)."""
    from .config import load
    from .paths import resolve_archive

    config = load(environ)
    if not config.archive_enabled:
        # No archive means nothing could recover pruned text: run untouched.
        try:
            return exit_status(subprocess.call(argv))
        except OSError as exc:
            sys.stderr.write(f"yarp: cannot run command: {bounded_text(exc.strerror or 'error', 200)}\n")
            return 127 if isinstance(exc, FileNotFoundError) else 126
    location = resolve_archive(archive, environ, config.archive_path)
    return Runner(argv, target=target, config=config, location=location, environ=environ).run()
