"""`yarp run`: run one command, archive its exact streams, then show a pruned view.

The child gets the runner's stdin and writes its stdout and stderr straight
into two private spool files (0600, exclusive names), so the exact bytes
are kept at disk speed and in constant memory.

This process keeps only what must happen in it: the spool, spawning and
waiting for the child, signals, emitting the output and the exit status.
Everything else is asked of the warm broker (`yarp.broker.services.run`), where the
rule set is already loaded, through the thin client (`yarp.clients.broker.service_request`):

1. a standalone run (no archive flags) sends the begin of its own call
   before the child starts (with a broker running, its acknowledgement is
   read once the child has exited: the commit overlaps the command); an
   adapter's run names the call the adapter began;
2. after the child exits, one `capture` request names the spool files (never
   their bytes): the broker prunes and caps them into the "after" files,
   captures all four streams and, for a standalone run, records the result
   and finishes the call, in one commit, and says which files to show;
3. only after that durable acknowledgement is the visible form emitted, and
   we exit with the child's status (128 + N for a death by signal N).

If anything on the archive side fails after the child started, the exact raw
bytes are emitted on their original streams instead, the archive error is
reported once on stderr, and the child's status is kept: tool execution never
depends on the archive.

This module sits on the path of every shell command an agent runs. It must
never import an event loop, a worker pool, the shell parser, the rules or
SQLite, and with a broker running not even the full broker client: the child
is started with `os.posix_spawnp` rather than `subprocess`.
"""

import os
import time

from yarp.private_files import create_private
from yarp.runtime import temp_directory

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
_SPOOL_SUFFIXES = (".stdout", ".stderr", ".stdout.view", ".stderr.view")


class Spool:
    """The run's four spool files, side by side under the temporary directory.

    The two "before" files are created here, private (0600, `O_EXCL`, never
    following a link) under an unguessable name; the command writes into them.
    The two "after" files (the pruned and capped view) are created by the
    broker only when the view differs, with the same rules. No directory of
    our own: creating and removing one cost every run about half a
    millisecond on ext4, for nothing the exclusive names do not already give.
    """

    __slots__ = ("stdout_before", "stderr_before", "stdout_after", "stderr_after", "stdout_fd", "stderr_fd")

    def __init__(self, prefix: str) -> None:
        self.stdout_before, self.stderr_before, self.stdout_after, self.stderr_after = (
            prefix + suffix for suffix in _SPOOL_SUFFIXES
        )
        self.stdout_fd = self.stderr_fd = -1

    @classmethod
    def create(cls, environ=os.environ) -> "Spool":
        """Create the two private "before" files under a fresh random name in the temporary directory.

        Raises `FileExistsError` if sixteen random names are all taken, or the `OSError` of the create.
        """
        base = temp_directory(environ)
        for _ in range(16):
            spool = cls(os.path.join(base, f"yarp-run-{os.urandom(8).hex()}"))
            try:
                spool.stdout_fd = spool.open_private(spool.stdout_before)
            except FileExistsError:
                continue
            try:
                spool.stderr_fd = spool.open_private(spool.stderr_before)
            except BaseException:
                spool.close_fds()
                spool.remove()
                raise
            return spool
        raise FileExistsError("no unused spool file name")

    @staticmethod
    def open_private(path: str) -> int:
        """Create `path` new, 0600, for reading and writing; raises `FileExistsError` if anything has the name."""
        return create_private(path, os.O_RDWR)

    def close_fds(self) -> None:
        """Close the two "before" descriptors, if still open."""
        for fd in (self.stdout_fd, self.stderr_fd):
            if fd >= 0:
                os.close(fd)
        self.stdout_fd = self.stderr_fd = -1

    def remove(self) -> None:
        """Remove all four spool files; those never created, or already gone, are skipped."""
        for path in (self.stdout_before, self.stderr_before, self.stdout_after, self.stderr_after):
            try:
                os.unlink(path)
            except OSError:
                pass


def declared(path: str) -> dict:
    """A spool file as the broker checks it: path, device, inode and size."""
    st = os.lstat(path)
    return {"path": path, "device": st.st_dev, "inode": st.st_ino, "size": st.st_size}


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
    from yarp.errors import bounded_text

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

    def __enter__(self) -> "_Deferred":
        for signum in _SIGNALS:
            self.saved[signum] = signal.signal(signum, self._note)
        return self

    def __exit__(self, *exc) -> None:
        for signum, handler in self.saved.items():
            signal.signal(signum, handler)


class Runner:
    """One `yarp run`: the command, the call it archives under, and its client of the broker."""

    def __init__(self, argv: list[str], *, target: dict | None, config, location, environ=os.environ) -> None:
        self.argv = argv
        #: The call on the wire: the adapter's `{agent, account, session, call}`, or a
        #: standalone run's `{session}` once it has begun its own.
        self.target = target
        self.standalone = False
        self.config = config
        self.location = location
        self.environ = environ
        self.client = None
        self.deadline = 0.0

    # --- archive steps ------------------------------------------------------------

    def _client(self):
        if self.client is None:
            from yarp.clients.broker import BrokerClient

            self.client = BrokerClient(self.location, self.environ)
        return self.client

    def _ask(self, fields: dict) -> dict:
        from yarp.clients.broker import service_request

        return self._client().ask(service_request("run", fields), self.deadline)

    def _begin_standalone(self) -> bool:
        """Send the run's own begin before the command starts.

        With a broker running, the command starts while the broker commits the
        begin, and its acknowledgement is read after the command exits
        (`_settle_begin`); True then. Otherwise the begin waits for a broker to
        start (at most `BEGIN_TIMEOUT_S`) before the command runs; False.
        """
        from yarp.clients.broker import service_request

        started = _now_ms()
        session_id = f"run-{os.uname().nodename}-{os.getpid()}-{started}"
        self.target, self.standalone = {"session": session_id}, True
        begin = service_request("run", {"step": "begin", "session": session_id, "startedAtMs": started,
                                        "argv": self.argv, "cwd": os.getcwd()})
        if self._client().submit(begin, self.deadline):
            return True
        self.client.ask(begin, self.deadline)
        return False

    def _settle_begin(self, pending: bool, error):
        """The begin's error, once its acknowledgement (if still pending) has been read."""
        if not pending:
            return error
        try:
            self.client.collect(time.monotonic() + ARCHIVE_TIMEOUT_S)
        except Exception as exc:  # noqa: BLE001 - `_archive_error` raises anything but a failure again
            return _archive_error(exc, "archive unavailable")
        return None

    def _archive(self, spool: Spool, status: int, signum: int | None) -> tuple[str, str]:
        """Capture the streams durably (the broker writes the view); return the files to emit."""
        config = self.config
        files = {p: declared(p) for p in (spool.stdout_before, spool.stderr_before)}
        reply = self._ask({
            "step": "capture", "target": self.target, "argv": self.argv, "status": status, "signal": signum,
            "pruning": config.pruning_enabled, "rulePacks": list(config.rule_packs), "capBytes": config.cap_bytes,
            "spool": {"stdout": files[spool.stdout_before], "stderr": files[spool.stderr_before],
                      "stdoutAfter": spool.stdout_after, "stderrAfter": spool.stderr_after},
        })
        warning = reply.get("warning")
        if isinstance(warning, str):
            _stderr_line(f"yarp: {warning}\n")
        # A process the child left behind may still hold the spool files: bytes
        # written after the broker's snapshot are in no archive, so the raw form
        # must be shown instead of a view that would hide them.
        for path, seen in files.items():
            if os.lstat(path).st_size != seen["size"]:
                from yarp.errors import ArchiveError

                raise ArchiveError("the command's output kept changing after it was captured")
        return (spool.stdout_after if reply.get("stdoutAfter") is True else spool.stdout_before,
                spool.stderr_after if reply.get("stderrAfter") is True else spool.stderr_before)

    # --- the run ------------------------------------------------------------------------

    def run(self) -> int:
        """Run the command, archive its streams, emit its output; return the child's exit status.

        Without spool files nothing can be captured, so the command then runs untouched.
        """
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
            spool.close_fds()
            if self.client is not None:
                self.client.close()
            spool.remove()

    def _run(self, spool: Spool) -> int:
        begin_error = None
        begin_pending = False
        if self.target is None:
            self.deadline = time.monotonic() + BEGIN_TIMEOUT_S
            try:
                begin_pending = self._begin_standalone()
            except Exception as exc:  # noqa: BLE001 - as in `_settle_begin`
                begin_error = _archive_error(exc, "archive unavailable")
        old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, (signal.SIGCHLD, *_SIGNALS))
        try:
            try:
                pid = spawn(self.argv, spool.stdout_fd, spool.stderr_fd, old_mask)
            except OSError as exc:
                status = _spawn_error(exc)
                self._finish_preflight(status, self._settle_begin(begin_pending, begin_error))
                return status
            finally:
                spool.close_fds()
            returncode = wait_forwarding(pid)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
        status = exit_status(returncode)
        signum = -returncode if returncode < 0 else None
        with _Deferred():
            begin_error = self._settle_begin(begin_pending, begin_error)
            if begin_error is not None:
                return self._fallback(spool, status, begin_error)
            self.deadline = time.monotonic() + ARCHIVE_TIMEOUT_S
            try:
                stdout_path, stderr_path = self._archive(spool, status, signum)
            except Exception as exc:  # noqa: BLE001 - as in `_settle_begin`
                return self._fallback(spool, status, _archive_error(exc, "spool failed"))
            _emit_quietly(stdout_path, 1)
            _emit_quietly(stderr_path, 2)
            return status

    def _finish_preflight(self, status: int, begin_error) -> None:
        """A standalone command that never started finishes as not executed."""
        if not self.standalone or begin_error is not None:
            return
        self.deadline = time.monotonic() + ARCHIVE_TIMEOUT_S
        try:
            self._ask({"step": "not_started", "target": self.target, "status": status})
        except Exception as exc:  # noqa: BLE001 - as in `_settle_begin`
            _stderr_line(f"yarp: archive failed: {_archive_error(exc, 'archive unavailable').message}\n")

    def _fallback(self, spool: Spool, status: int, error) -> int:
        """Emit the exact raw bytes, report the archive error once, keep the status."""
        _emit_quietly(spool.stdout_before, 1)
        _emit_quietly(spool.stderr_before, 2)
        _stderr_line(f"yarp: archive failed after command execution: {error.message}\n")
        return status


def _archive_error(exc: Exception, what: str):
    """The archive failure `exc` stands for: a `YarpError` as it is, an `OSError` as
    "WHAT: its reason"; anything else is raised again. The error classes are
    imported here, on a failure only: a run that succeeds never loads them
    (`yarp.cli.reported_errors`)."""
    from yarp.errors import YarpError

    if isinstance(exc, YarpError):
        return exc
    if isinstance(exc, OSError):
        return YarpError(f"{what}: {exc.strerror or 'I/O error'}")
    raise exc


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
    from yarp.config import load

    config = load(environ)
    if not config.archive_enabled:
        # No archive means nothing could recover pruned text: run untouched.
        return run_untouched(argv)
    from yarp.paths import resolve_archive

    target = None
    if source is not None:
        agent, account, session, call = source
        target = {"agent": agent, "account": account, "session": session, "call": call}

    location = resolve_archive(archive, environ, config.archive_path)
    return Runner(argv, target=target, config=config, location=location, environ=environ).run()


#: `yarp run`'s archive flags, as argparse names them: all four or none.
ARCHIVE_FLAGS = ("archive_agent", "archive_account", "archive_session", "archive_call")


def start(command: list[str], given: list[str | None], archive: str | None) -> int:
    """Run `command` under the archive flags `given` (in `ARCHIVE_FLAGS` order); `UsageError` for bad usage."""
    if not command:
        from yarp.errors import UsageError

        raise UsageError("yarp run: expected -- followed by a command")
    if any(v is not None for v in given) and not all(v for v in given):
        from yarp.errors import UsageError

        raise UsageError("yarp run: the archive flags go together: --archive-agent, --archive-account, "
                         "--archive-session and --archive-call")
    return run_command(command, tuple(given) if all(given) else None, archive)


def run_fast(argv: list[str]) -> int | None:
    """Parse the common `yarp run [--archive P] [--archive-* V]... -- CMD` without argparse.

    `yarp run` wraps every shell command an agent runs, so `yarp.cli` hands it
    here without importing the command table's module, and its start-up skips
    building a parser. Anything else (help, an unknown option, a missing value)
    returns None and takes the ordinary argparse path, with its messages.
    """
    names = {"--archive": "archive", **{"--" + f.replace("_", "-"): f for f in ARCHIVE_FLAGS}}
    values: dict[str, str] = {}
    index = 0
    while index < len(argv):
        word = argv[index]
        if word == "--":
            given = [values.get(f) for f in ARCHIVE_FLAGS]
            return start(argv[index + 1:], given, values.get("archive"))
        name, eq, inline = word.partition("=")
        key = names.get(name)
        if key is None or key in values:
            return None
        if eq:
            values[key] = inline
            index += 1
        elif index + 1 < len(argv):
            values[key] = argv[index + 1]
            index += 2
        else:
            return None
    return None
