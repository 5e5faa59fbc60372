"""`yarp run`: run one command, archive its exact streams, then show a pruned view.

The child gets the runner's stdin and writes its stdout and stderr straight
into two private spool files (0600 in a 0700 directory), so the exact bytes
are kept at disk speed and in constant memory. After the child exits:

1. the call is identified — the adapter's call (archive flags) or a call of
   our own, begun before the child started (standalone use);
2. each stream is pruned by the command-aware rules, then the global cap is
   applied across what remains, into "after" files (an unchanged stream has
   no after file: its before file is named twice);
3. one stream-capture operation names the spool files (never their bytes) and
   we wait for the broker's durable acknowledgement;
4. only then the visible form is emitted and we exit with the child's status
   (128 + N for a death by signal N).

If anything on the archive side fails after the child started, the exact raw
bytes are emitted on their original streams instead, the archive error is
reported once on stderr, and the child's status is kept: tool execution never
depends on the archive.

This module sits on the path of every shell command an agent runs. It must
never import an event loop, a worker pool, the shell parser or SQLite on the
common path: the operation types, the broker client, the rules and the
reducers are imported only when the step that needs them runs, and the child
is started with `os.posix_spawnp` rather than `subprocess`.
"""

from __future__ import annotations

import os
import time

try:
    # The C module under `signal`: the same functions, with plain-int signal
    # numbers, minus the enum wrappers whose import costs every wrapped command.
    import _signal as signal
except ImportError:  # pragma: no cover - CPython always has it
    import signal

#: Time allowed for every archive step after the child exits (the longest
#: relative deadline the broker accepts).
ARCHIVE_TIMEOUT_S = 30.0
#: Time a standalone run waits to begin its call before it runs the command
#: anyway: the broker start-up bound, so a cold start still gets archived.
BEGIN_TIMEOUT_S = 5.0
#: Agent name used for standalone runs (a person or script typing `yarp run`).
STANDALONE_AGENT = "yarp-run"
STANDALONE_TOOL = "shell"
#: Exit statuses of a command that could not be started (POSIX shells' values).
STATUS_NOT_FOUND = 127
STATUS_NOT_EXECUTABLE = 126

# Signals the runner takes over while the child runs. Terminal-generated
# SIGINT/SIGQUIT already reach the child (same process group); anything sent
# to the runner alone is forwarded so the child decides how to die.
_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)
_SI_KERNEL = 0x80
# Python ignores SIGPIPE and SIGXFSZ for itself; the child gets the defaults
# back, as a shell would give them (`yes | head` must end).
_CHILD_DEFAULTS = (signal.SIGPIPE, signal.SIGXFSZ)
_SPOOL_NAMES = ("stdout.before", "stderr.before", "stdout.after", "stderr.after")


class CallTarget:
    """The archive call a run belongs to: a session, a source call id, and whether we began it."""

    __slots__ = ("session", "source_call_id", "standalone")

    def __init__(self, session, source_call_id: str, standalone: bool) -> None:
        self.session = session
        self.source_call_id = source_call_id
        self.standalone = standalone


def _temp_base(environ) -> str:
    for candidate in (environ.get("TMPDIR", ""), "/tmp", "/var/tmp"):
        if candidate and os.path.isabs(candidate) and os.path.isdir(candidate) and os.access(candidate, os.W_OK):
            return candidate
    return os.getcwd()


class Spool:
    """The private spool directory (0700) and its four files (created 0600, never widened)."""

    __slots__ = ("directory", "stdout_before", "stderr_before", "stdout_after", "stderr_after")

    def __init__(self, directory: str) -> None:
        self.directory = directory
        self.stdout_before, self.stderr_before, self.stdout_after, self.stderr_after = (
            os.path.join(directory, name) for name in _SPOOL_NAMES
        )

    @classmethod
    def create(cls, environ=os.environ) -> Spool:
        base = _temp_base(environ)
        for _ in range(16):
            directory = os.path.join(base, f"yarp-run-{os.urandom(8).hex()}")
            try:
                os.mkdir(directory, 0o700)
            except FileExistsError:
                continue
            return cls(directory)
        raise FileExistsError("no unused spool directory name")

    @staticmethod
    def open_private(path: str) -> int:
        return os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)

    @staticmethod
    def write_after(path: str, data: bytes) -> None:
        # The after files were created 0600 up front; truncating in place keeps that mode.
        fd = os.open(path, os.O_WRONLY | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)

    def remove(self) -> None:
        for name in _SPOOL_NAMES:
            try:
                os.unlink(os.path.join(self.directory, name))
            except FileNotFoundError:
                pass
            except OSError:
                pass
        try:
            os.rmdir(self.directory)
        except OSError:
            pass


def stream_file(path: str):
    from .operations import StreamFile

    st = os.lstat(path)
    return StreamFile(path, st.st_dev, st.st_ino, st.st_size)


def exit_status(returncode: int) -> int:
    """The child's status the way a shell reports it (128 + N for signal N)."""
    return 128 - returncode if returncode < 0 else returncode


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def emit_file(path: str, fd: int) -> None:
    """Copy a file to `fd` exactly (sendfile when possible, else read/write)."""
    src = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        size = os.fstat(src).st_size
        offset = 0
        try:
            while offset < size:
                sent = os.sendfile(fd, src, offset, size - offset)
                if sent == 0:
                    break
                offset += sent
            return
        except OSError as exc:
            if exc.errno == 32:  # EPIPE: the reader is gone; nothing else can be delivered
                raise
        os.lseek(src, offset, os.SEEK_SET)
        while True:
            chunk = os.read(src, 1 << 20)
            if not chunk:
                return
            view = memoryview(chunk)
            while view:
                view = view[os.write(fd, view):]
    finally:
        os.close(src)


def _emit_quietly(path: str, fd: int) -> None:
    # A reader that went away (EPIPE) or a closed stream must not change the
    # exit status: the bytes are archived and the child's status stands.
    try:
        emit_file(path, fd)
    except OSError:
        pass


def _stderr_line(text: str) -> None:
    try:
        os.write(2, text.encode("utf-8", "replace"))
    except OSError:
        pass


def _spawn_error(exc: OSError) -> int:
    from .errors import bounded_text

    _stderr_line(f"yarp: cannot run command: {bounded_text(exc.strerror or 'error', 200)}\n")
    return STATUS_NOT_FOUND if isinstance(exc, (FileNotFoundError, NotADirectoryError)) else STATUS_NOT_EXECUTABLE


def spawn(argv: list[str], stdout_fd: int | None, stderr_fd: int | None, sigmask) -> int:
    """Start `argv` (PATH lookup as a shell does) with inherited stdin; return its pid."""
    actions = []
    if stdout_fd is not None:
        actions.append((os.POSIX_SPAWN_DUP2, stdout_fd, 1))
    if stderr_fd is not None:
        actions.append((os.POSIX_SPAWN_DUP2, stderr_fd, 2))
    return os.posix_spawnp(argv[0], argv, os.environ, file_actions=actions,
                           setsigmask=sigmask, setsigdef=_CHILD_DEFAULTS)


def wait_forwarding(pid: int) -> int:
    """Wait for `pid` while forwarding signals sent to the runner; return its returncode.

    Must be called with SIGCHLD and `_SIGNALS` blocked: they are taken with
    `sigwaitinfo`, which tells a terminal's SIGINT (already delivered to the
    whole foreground group) from one sent to the runner alone.
    """
    waited = (signal.SIGCHLD, *_SIGNALS)
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        info = signal.sigwaitinfo(waited)
        if info.si_signo == signal.SIGCHLD:
            continue
        if info.si_signo in (signal.SIGINT, signal.SIGQUIT) and info.si_code == _SI_KERNEL:
            continue
        try:
            os.kill(pid, info.si_signo)
        except ProcessLookupError:
            pass


class _Deferred:
    """After the child exits: signals for the runner are noted, not obeyed, until the
    output is archived and emitted (bounded by the archive deadline). Handlers, not
    a blocked mask, so a broker started meanwhile does not inherit a blocked mask."""

    def __init__(self) -> None:
        self.saved: dict[int, object] = {}
        self.received: list[int] = []

    def _note(self, signum, _frame) -> None:
        self.received.append(signum)

    def __enter__(self) -> _Deferred:
        for signum in _SIGNALS:
            self.saved[signum] = signal.signal(signum, self._note)
        return self

    def __exit__(self, *exc) -> None:
        for signum, handler in self.saved.items():
            signal.signal(signum, handler)


def _lookup_ref(location, target: CallTarget) -> str:
    """The archive reference of a call the adapter already began (read-only)."""
    from .errors import NotFound
    from .sqlite import open_readonly

    conn = open_readonly(location)
    try:
        row = conn.execute(
            "SELECT c.archive_ref FROM tool_calls c JOIN sessions s ON s.id = c.session_id"
            " WHERE s.agent = ? AND s.account = ? AND s.source_session_id = ? AND c.source_call_id = ?",
            (target.session.agent, target.session.account, target.session.source_session_id, target.source_call_id),
        ).fetchone()
    except Exception as exc:  # sqlite3.Error, without importing sqlite3 here
        from .sqlite import map_error

        raise map_error(exc, "reading the call's reference") from None
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

    def _send(self, operation) -> dict:
        if self.client is None:
            from .client import BrokerClient

            self.client = BrokerClient(self.location, self.environ)
        return self.client.request(operation, self.deadline)

    def _begin_standalone(self) -> None:
        from . import operations as ops

        started = _now_ms()
        session_id = f"run-{os.uname().nodename}-{os.getpid()}-{started}"
        session = ops.Session(STANDALONE_AGENT, _account(), session_id, started)
        self.target = CallTarget(session, "1", standalone=True)
        cwd = os.getcwd()
        meta = ops.CallMeta("1", STANDALONE_TOOL, started, True, working_directory=cwd)
        payload = {"argv": self.argv, "cwd": cwd}
        reply = self._send(ops.BeginCall(session, meta, payload, payload, started))
        self.ref = reply["archiveRef"]

    def _archive_ref(self) -> str:
        if self.ref is None:
            self.ref = _lookup_ref(self.location, self.target)
        return self.ref

    def _visible(self, spool: Spool, status: int) -> tuple[str, str] | None:
        """Write the visible form; return its (stdout, stderr) files, or None when it is the raw form."""
        rule = None
        silent = os.path.getsize(spool.stdout_before) == 0 and os.path.getsize(spool.stderr_before) == 0
        if self.config.pruning_enabled and not silent:
            # Loading the rule set is the costliest step of a quiet command's
            # run; an empty output has nothing to prune.
            from .errors import UsageError
            from .shell.rules import load_rules, select_rule

            try:
                rule = select_rule(self.argv, load_rules(self.config.rule_packs, environ=self.environ))
            except UsageError as exc:
                # A broken rule pack costs the pruning, never the archive: the
                # streams are still captured and capped, and the problem is said once.
                _stderr_line(f"yarp: rules not applied: {exc.message}\n")
        out, err = spool.stdout_before, spool.stderr_before
        changed = False
        if rule is not None:
            from .shell.reducers import reduce_stream

            ref = self._archive_ref()
            if reduce_stream(rule, status, out, spool.stdout_after, ref=ref, stream_name="stdout").reduced:
                out, changed = spool.stdout_after, True
            if reduce_stream(rule, status, err, spool.stderr_after, ref=ref, stream_name="stderr").reduced:
                err, changed = spool.stderr_after, True
        cap = self.config.cap_bytes
        if cap:
            out_size, err_size = os.path.getsize(out), os.path.getsize(err)
            if out_size + err_size > cap:
                from .shell.cap import cap_files, marker

                ref = self._archive_ref()
                # The marker names the stream holding the first omitted byte; both
                # names have six letters, so the marker's length (and the cut) is
                # the same whichever is named.
                budget = cap - len(marker(out_size + err_size, cap, ref, "stdout", "complete").encode())
                source = "stdout" if budget // 2 < out_size else "stderr"
                capped = cap_files([out, err], cap=cap, archive_ref=ref, source=source, completeness="complete")
                if capped is not None:
                    targets = []
                    for after, data in zip((spool.stdout_after, spool.stderr_after), capped):
                        spool.write_after(after, data)
                        targets.append(after)
                    out, err = targets
                    changed = True
        return (out, err) if changed else None

    def _archive(self, spool: Spool, status: int, signum: int | None) -> tuple[str, str]:
        """Capture the streams durably; return the (stdout, stderr) files to emit."""
        from . import operations as ops

        target = self.target
        visible = self._visible(spool, status)
        declared = {p: stream_file(p) for p in (spool.stdout_before, spool.stderr_before)}
        if visible is not None:
            for path in visible:
                declared.setdefault(path, stream_file(path))
            operation = ops.CaptureStreams(
                target.session, target.source_call_id, _now_ms(),
                declared[spool.stdout_before], declared[spool.stderr_before],
                declared[visible[0]], declared[visible[1]])
            emitted = visible
        else:
            operation = ops.CapturePassthroughStreams(
                target.session, target.source_call_id, _now_ms(),
                declared[spool.stdout_before], declared[spool.stderr_before])
            emitted = (spool.stdout_before, spool.stderr_before)
        self._send(operation)
        # A process the child left behind may still hold the spool files: bytes
        # written after the broker's snapshot are in no archive, so the raw form
        # must be shown instead of a view that would hide them.
        for path in (spool.stdout_before, spool.stderr_before):
            if os.lstat(path).st_size != declared[path].size:
                from .errors import ArchiveError

                raise ArchiveError("the command's output kept changing after it was captured")
        if target.standalone:
            result = {"exitCode": status, "signal": signum}
            self._send(ops.ResultBefore(target.session, target.source_call_id, result, _now_ms()))
            self._send(ops.FinishCall(target.session, target.source_call_id, result, status != 0, True, _now_ms()))
        return emitted

    # --- the run ------------------------------------------------------------------------

    def run(self) -> int:
        try:
            spool = Spool.create(self.environ)
        except OSError as exc:
            # Without a spool nothing can be captured: run the command untouched.
            _stderr_line(f"yarp: archive failed before command execution: cannot create spool files: "
                         f"{exc.strerror or 'I/O error'}\n")
            return run_untouched(self.argv)
        try:
            return self._run(spool)
        finally:
            if self.client is not None:
                self.client.close()
            spool.remove()

    def _run(self, spool: Spool) -> int:
        from .errors import YarpError

        begin_error: YarpError | None = None
        if self.target is None:
            self.deadline = time.monotonic() + BEGIN_TIMEOUT_S
            try:
                self._begin_standalone()
            except YarpError as exc:
                begin_error = exc
            except OSError as exc:
                begin_error = YarpError(f"archive unavailable: {exc.strerror or 'I/O error'}")
        # All four spool files are created private up front; the reducers and
        # the cap truncate the after files in place, so 0600 never widens.
        for path in (spool.stdout_after, spool.stderr_after):
            os.close(spool.open_private(path))
        out_fd = spool.open_private(spool.stdout_before)
        err_fd = spool.open_private(spool.stderr_before)
        old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, (signal.SIGCHLD, *_SIGNALS))
        try:
            try:
                pid = spawn(self.argv, out_fd, err_fd, old_mask)
            except OSError as exc:
                status = _spawn_error(exc)
                self._finish_preflight(status, begin_error)
                return status
            finally:
                os.close(out_fd)
                os.close(err_fd)
            returncode = wait_forwarding(pid)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
        status = exit_status(returncode)
        signum = -returncode if returncode < 0 else None
        with _Deferred():
            if begin_error is not None:
                return self._fallback(spool, status, begin_error)
            self.deadline = time.monotonic() + ARCHIVE_TIMEOUT_S
            try:
                stdout_path, stderr_path = self._archive(spool, status, signum)
            except YarpError as exc:
                return self._fallback(spool, status, exc)
            except OSError as exc:
                return self._fallback(spool, status, YarpError(f"spool failed: {exc.strerror or 'I/O error'}"))
            _emit_quietly(stdout_path, 1)
            _emit_quietly(stderr_path, 2)
            return status

    def _finish_preflight(self, status: int, begin_error) -> None:
        """A standalone command that never started finishes as not executed."""
        if self.target is None or not self.target.standalone or begin_error is not None:
            return
        from . import operations as ops
        from .errors import YarpError

        result = {"exitCode": status, "error": "command could not be started"}
        self.deadline = time.monotonic() + ARCHIVE_TIMEOUT_S
        try:
            self._send(ops.FinishCall(self.target.session, self.target.source_call_id, result, True, False, _now_ms()))
        except YarpError as exc:
            _stderr_line(f"yarp: archive failed: {exc.message}\n")

    def _fallback(self, spool: Spool, status: int, error) -> int:
        """Emit the exact raw bytes, report the archive error once, keep the status."""
        _emit_quietly(spool.stdout_before, 1)
        _emit_quietly(spool.stderr_before, 2)
        _stderr_line(f"yarp: archive failed after command execution: {error.message}\n")
        return status


def _account() -> str:
    try:
        import pwd

        return pwd.getpwuid(os.geteuid()).pw_name
    except (KeyError, ImportError):
        return str(os.geteuid())


def run_untouched(argv: list[str]) -> int:
    """Run `argv` with the runner's own streams: no spool, no pruning, no cap."""
    old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, (signal.SIGCHLD, *_SIGNALS))
    try:
        try:
            pid = spawn(argv, None, None, old_mask)
        except OSError as exc:
            return _spawn_error(exc)
        return exit_status(wait_forwarding(pid))
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)


def run_command(argv: list[str], source: tuple[str, str, str, str] | None, archive: str | None = None,
                environ=os.environ) -> int:
    """Entry point used by `yarp run`.

    `source` is the adapter's (agent, account, session, call) from the archive
    flags, or None for a standalone run; `archive` is the --archive flag.
    """
    from .config import load

    config = load(environ)
    if not config.archive_enabled:
        # No archive means nothing could recover pruned text: run untouched.
        return run_untouched(argv)
    from .paths import resolve_archive

    target = None
    if source is not None:
        from .operations import Session

        agent, account, session, call = source
        target = CallTarget(Session(agent, account, session), call, standalone=False)

    location = resolve_archive(archive, environ, config.archive_path)
    return Runner(argv, target=target, config=config, location=location, environ=environ).run()
