"""`yarp run`: run one command, archive its exact streams, then show a pruned view.

The child gets the runner's stdin and writes its stdout and stderr into two
pipes (one, when the runner's own stdout and stderr are the same file: the
caller wrote `2>&1`). The runner pumps them into two private spool files
(0600, exclusive names; `splice`, no copy through user space) until end of
file, that is until every process holding a pipe (the command, and anything
it left behind) has closed it, exactly as a shell pipe waits. The exact bytes
are kept at disk speed and in constant memory.

This process keeps only what must happen in it: the spool, spawning and
waiting for the child, signals, emitting the output and the exit status.
Everything else is asked of the warm broker (`yarp.broker.services.run`), where the
rule set is already loaded, through the thin client (`yarp.clients.broker.service_request`):

1. a run that begins its own call (standalone, or a segment call with
   `--archive-parent`) sends the begin before the child starts (with a broker
   running, its acknowledgement is read once the child has exited: the commit
   overlaps the command); an adapter's run names the call the adapter began;
2. after the child exits and its pipes are drained, one `capture` request names
   the spool files (never their bytes): the broker prunes and caps them into
   the "after" files, captures all four streams and, for a call the run began,
   records the result and finishes the call, in one commit, and says which
   files to show;
3. only after that durable acknowledgement is the visible form emitted, and
   we exit with the child's status; a child killed by signal N makes the
   runner die by N too, so the calling shell sees what it would have seen.

Pass-through (`--pass`, or a terminal on stdout): the bytes go to the runner's
own stdout and stderr as they come, and are archived exactly (no view).

If anything on the archive side fails after the child started, the exact raw
bytes are emitted on their original streams instead, the archive error is
reported once on stderr, and the child's status is kept: tool execution never
depends on the archive.

This module sits on the path of every shell command an agent runs. It must
never import an event loop, a worker pool, the shell parser, the rules or
SQLite, and with a broker running not even the full broker client: the child
is started with `os.posix_spawn` rather than `subprocess`, signals are taken
by a `_thread` thread with `sigwaitinfo`, and the pipes are multiplexed with
`select.poll`.
"""

import _thread
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
#: Time a run that begins its own call waits for the begin before it runs the
#: command anyway: the broker start-up bound, so a cold start still gets archived.
BEGIN_TIMEOUT_S = 5.0
#: Exit statuses of a command that could not be started (POSIX shells' values).
STATUS_NOT_FOUND = 127
STATUS_NOT_EXECUTABLE = 126
#: How long a signal sent with kill() to the runner waits before it is
#: forwarded, so that a copy the command got from a group signal shows first.
SETTLE_S = 0.02

# Signals the runner takes over while the child runs (see `_Watcher`).
_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)
_SI_KERNEL = 0x80
# Python ignores SIGPIPE and SIGXFSZ for itself; the child gets the defaults
# back, as a shell would give them (`yes | head` must end).
_CHILD_DEFAULTS = (signal.SIGPIPE, signal.SIGXFSZ)
# Signals whose default action dumps core: the runner dying by one of them must not.
_CORE_SIGNALS = (signal.SIGQUIT, signal.SIGILL, signal.SIGTRAP, signal.SIGABRT, signal.SIGBUS, signal.SIGFPE,
                 signal.SIGSEGV, signal.SIGXCPU, signal.SIGXFSZ, signal.SIGSYS)
_SPOOL_SUFFIXES = (".stdout", ".stderr", ".stdout.view", ".stderr.view")
_CHUNK = 1 << 20
_EPIPE, _EINVAL, _ENOENT, _EACCES, _ENOEXEC = 32, 22, 2, 13, 8
_S_IFMT, _S_IFIFO, _S_IFSOCK = 0o170000, 0o010000, 0o140000
_POLLIN, _POLLERR, _POLLHUP = 0x001, 0x008, 0x010


class Stdio:
    """What the runner's own standard descriptors are, found before anything is opened.

    A closed descriptor (`yarp run -- cmd <&- >&-`) is held by `/dev/null`,
    close-on-exec, so nothing the runner opens lands on it (a spool file on
    fd 1 would be archived as the wrong stream) and the command finds it
    closed, as it would under a shell.
    """

    __slots__ = ("closed", "merged", "terminal", "watch", "gone")

    def __init__(self) -> None:
        stats = {}
        closed = []
        for fd in (0, 1, 2):
            try:
                stats[fd] = os.fstat(fd)
            except OSError:
                closed.append(fd)
        for fd in closed:
            try:
                os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC)  # the lowest free number: `fd` itself
            except OSError:
                pass
        self.closed = closed
        out, err = stats.get(1), stats.get(2)
        self.terminal = out is not None and os.isatty(1)
        #: fd 1 and fd 2 are one file (`2>&1`), not a terminal: the command gets one pipe for both.
        self.merged = (out is not None and err is not None and not self.terminal
                       and out.st_dev == err.st_dev and out.st_ino == err.st_ino)
        #: Our output descriptors whose reader can go away (pipes and sockets).
        self.watch = tuple(fd for fd, st in ((1, out), (2, err))
                           if st is not None and (st.st_mode & _S_IFMT) in (_S_IFIFO, _S_IFSOCK)
                           and not (fd == 2 and self.merged))
        #: Output descriptors whose reader went away: nothing more is written to them.
        self.gone: set[int] = set()

    def open(self, fd: int) -> bool:
        """Whether `fd` (1 or 2) can still take output."""
        return fd not in self.closed and fd not in self.gone


class Spool:
    """The run's four spool files, side by side under the temporary directory.

    The two "before" files are created here, private (0600, `O_EXCL`, never
    following a link) under an unguessable name; the runner pumps the command's
    pipes into them. The two "after" files (the pruned and capped view) are
    created by the broker only when the view differs, with the same rules. No
    directory of our own: creating and removing one cost every run about half
    a millisecond on ext4, for nothing the exclusive names do not already give.
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
        return create_private(path, os.O_RDWR | os.O_CLOEXEC)

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


def _wait_writable(fd: int) -> None:
    """Wait until `fd` takes more (a descriptor someone made non-blocking) or its reader is gone."""
    import select

    poller = select.poll()
    poller.register(fd, 0x004)  # POLLOUT; POLLERR and POLLHUP come anyway
    poller.poll()


def _write_all(fd: int, data) -> None:
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view):]
        except BlockingIOError:  # EAGAIN: an O_NONBLOCK description shared with our caller
            _wait_writable(fd)


def emit_file(path: str, fd: int) -> None:
    """Copy a file to `fd` exactly (sendfile when possible, else read/write)."""
    src = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        size = os.fstat(src).st_size
        offset = 0
        try:
            while offset < size:
                try:
                    sent = os.sendfile(fd, src, offset, size - offset)
                except BlockingIOError:
                    _wait_writable(fd)
                    continue
                if sent == 0:
                    break
                offset += sent
            return
        except OSError as exc:
            if exc.errno == _EPIPE:  # the reader is gone; nothing else can be delivered
                raise
        os.lseek(src, offset, os.SEEK_SET)
        while True:
            chunk = os.read(src, _CHUNK)
            if not chunk:
                return
            _write_all(fd, chunk)
    finally:
        os.close(src)


def _emit_quietly(path: str, fd: int, stdio: "Stdio | None" = None) -> None:
    # A reader that went away (EPIPE) or a closed stream must not change the
    # exit status: the bytes are archived and the child's status stands.
    if stdio is not None and not stdio.open(fd):
        return
    try:
        emit_file(path, fd)
    except OSError:
        pass


def _stderr_line(text: str) -> None:
    try:
        os.write(2, text.encode("utf-8", "replace"))
    except OSError:
        pass


# --- launching the command --------------------------------------------------------------


class LaunchError(Exception):
    """The command could not be started: the shell's status (127 or 126) and its message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _search_path(name: str, executable: bool) -> str | None:
    """The first `PATH` entry holding `name` (a non-directory; executable when asked), as a shell searches."""
    for directory in os.environ.get("PATH", os.defpath).split(":"):
        candidate = os.path.join(directory or ".", name)
        if os.path.isfile(candidate) and (not executable or os.access(candidate, os.X_OK)):
            return candidate
    return None


def _is_binary(path: str) -> bool:
    """bash's test before it runs a file without `#!` as a script: a NUL in its first line (80 bytes)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        head = os.read(fd, 80)
    finally:
        os.close(fd)
    return b"\x00" in head.split(b"\n", 1)[0]


def launch(argv: list[str], actions: list, sigmask) -> int:
    """Start `argv` (`PATH` lookup as a shell does); return its pid, or raise `LaunchError` worded as bash's.

    A file the kernel refuses as an executable format (`ENOEXEC`: a script
    without `#!`) is run by a shell, as every POSIX shell does: by the shell
    that started us when it is one that runs such scripts itself (bash, dash,
    ksh), else by `/bin/sh` (zsh's choice too). A shell that replaced itself
    with `yarp run` (`bash -c 'yarp run -- ./s'`) is no longer there to ask:
    `/bin/sh` runs the script then.
    """
    name = argv[0]
    if not name:
        raise LaunchError(STATUS_NOT_FOUND, ": command not found")
    try:
        return os.posix_spawnp(name, argv, os.environ, file_actions=actions, setsigmask=sigmask,
                               setsigdef=_CHILD_DEFAULTS)
    except OSError as exc:
        error = exc
    slash = "/" in name
    if error.errno == _ENOEXEC:
        path = name if slash else _search_path(name, True)
        if path is not None:
            if _is_binary(path):
                raise LaunchError(STATUS_NOT_EXECUTABLE, f"{name}: cannot execute binary file: Exec format error")
            shell = _calling_shell()
            try:
                return os.posix_spawn(shell, [shell, path, *argv[1:]], os.environ, file_actions=actions,
                                      setsigmask=sigmask, setsigdef=_CHILD_DEFAULTS)
            except OSError as exc:
                error = exc
    if error.errno == _ENOENT:
        raise LaunchError(STATUS_NOT_FOUND, f"{name}: No such file or directory" if slash
                          else f"{name}: command not found")
    if error.errno == _EACCES:
        if slash and os.path.isdir(name):
            raise LaunchError(STATUS_NOT_EXECUTABLE, f"{name}: Is a directory")
        if not slash and _search_path(name, False) is None:  # only directories by that name
            raise LaunchError(STATUS_NOT_FOUND, f"{name}: command not found")
    raise LaunchError(STATUS_NOT_EXECUTABLE, f"{name}: {error.strerror or 'cannot execute'}")


#: Shells that run a script without `#!` themselves (zsh hands it to /bin/sh).
_SELF_RUNNING_SHELLS = frozenset({"bash", "dash", "ksh", "mksh", "ksh93"})


def _calling_shell() -> str:
    """The shell to run a script without `#!`: our parent's program if it is one of
    `_SELF_RUNNING_SHELLS`, else `/bin/sh`."""
    try:
        exe = os.readlink(f"/proc/{os.getppid()}/exe")
    except OSError:
        return "/bin/sh"
    return exe if os.path.basename(exe) in _SELF_RUNNING_SHELLS else "/bin/sh"


def _launch_error(exc: LaunchError) -> int:
    from yarp.errors import bounded_text

    _stderr_line(f"yarp: {bounded_text(exc.message, 400)}\n")
    return exc.status


def die_by(signum: int) -> None:
    """End this process by signal `signum`, as the command it ran did (never returns).

    The calling shell then sees a death by signal: a loop stops on Ctrl-C,
    "Killed" or "Segmentation fault" is reported as usual. No core file of
    ours: the command's own is the one that matters.
    """
    for stream in ("stdout", "stderr"):
        try:
            getattr(__import__("sys"), stream).flush()
        except (OSError, ValueError, AttributeError):
            pass
    if signum in _CORE_SIGNALS:
        try:
            import resource

            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        except (ImportError, OSError, ValueError):
            pass
    try:
        signal.signal(signum, signal.SIG_DFL)  # refused for SIGKILL and SIGSTOP, which need nothing
    except (OSError, ValueError):
        pass
    try:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, (signum,))
        os.kill(os.getpid(), signum)
    except (OSError, ValueError):
        pass
    os._exit(128 + signum)  # a signal whose default is not to end a process


# --- signals while the command runs -------------------------------------------------------


def _status_bits(pid: int, fields: tuple) -> int:
    """The union of hexadecimal signal masks `fields` (e.g. SigPnd) of /proc/PID/status; -1 for a zombie."""
    with open(f"/proc/{pid}/status", "rb") as handle:
        text = handle.read()
    bits = 0
    for line in text.split(b"\n"):
        key, _, value = line.partition(b":")
        if key == b"State" and value.strip().startswith(b"Z"):
            return -1
        if key.decode() in fields:
            bits |= int(value.strip(), 16)
    return bits


class _Watcher:
    """The thread that takes the runner's signals while the command runs, and reaps the command.

    Every thread of the runner blocks SIGCHLD, SIGINT, SIGTERM, SIGHUP and
    SIGQUIT; this one takes them with `sigwaitinfo`, which tells who sent a
    signal and how. The rule: a signal reaches the command once.

    * A terminal's signal (Ctrl-C, Ctrl-\\, a hang-up; `si_code` SI_KERNEL)
      already reached the command, which is in the same process group: not
      forwarded.
    * A signal sent with kill() is forwarded unless the command already got
      it: it has it pending (SigPnd/ShdPnd of /proc/PID/status) or is dying,
      right away or after `SETTLE_S`; the runner got it a second time
      meanwhile (the group's copy after a direct one); or its sender is in
      our process group and now ignores it, which is how `timeout` signals
      its group after signalling its child directly.
    * Once the command has ended, a signal for the runner ends the wait for
      processes it left behind holding its output; the archive and the
      command's status are kept.
    """

    def __init__(self, pid: int, wake_fd: int = -1) -> None:
        self.pid = pid
        self.wake_fd = wake_fd
        self.reaped = False
        self.done = False
        self.noted: list[int] = []
        self.lock = _thread.allocate_lock()  # reaping against forwarding: never signal a reaped pid
        self.ended = _thread.allocate_lock()
        self.ended.acquire()
        self.ident = _thread.start_new_thread(self._loop, ())

    def _loop(self) -> None:
        try:
            waited = (signal.SIGCHLD, *_SIGNALS)
            while True:
                info = signal.sigwaitinfo(waited)
                # `done` is read under the lock `stop` sets it and signals us under: the thread
                # never ends before that signal was sent, so it is never sent to an ended thread.
                with self.lock:
                    done = self.done
                if done:
                    if info.si_signo != signal.SIGCHLD:
                        self.noted.append(info.si_signo)
                    break
                if info.si_signo == signal.SIGCHLD:
                    continue
                try:
                    self._take(info)
                except Exception:  # noqa: BLE001 - a failed look at /proc must not end the watch
                    pass
        finally:
            self.ended.release()

    def _ended(self) -> bool:
        return self.reaped or os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None

    def _child_has(self, signum: int) -> bool:
        try:
            bits = _status_bits(self.pid, ("SigPnd", "ShdPnd"))
        except OSError:
            return True  # gone
        return bits == -1 or bool(bits >> (signum - 1) & 1)

    def _take(self, info) -> None:
        signum = info.si_signo
        with self.lock:
            if self._ended():
                self.noted.append(signum)
                if self.wake_fd >= 0:
                    try:
                        os.write(self.wake_fd, b"s")
                    except OSError:
                        pass
                return
        if info.si_code == _SI_KERNEL:
            return
        if info.si_code <= 0:  # sent by a process: kill(), sigqueue(), tkill()
            if self._child_has(signum):
                return
            if signal.sigtimedwait((signum,), SETTLE_S) is not None:
                return  # the runner got it twice: once directly, once with its process group
            if self._child_has(signum) or _ignores_as_group_sender(info.si_pid, signum):
                return
        with self.lock:
            if not self._ended():
                try:
                    os.kill(self.pid, signum)
                except ProcessLookupError:
                    pass

    def reap(self) -> int:
        """Wait for the command (signals are still taken meanwhile); return its returncode."""
        os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOWAIT)
        with self.lock:
            _, status = os.waitpid(self.pid, 0)
            self.reaped = True
        return os.waitstatus_to_exitcode(status)

    def stop(self) -> None:
        """End the thread; signals it takes meanwhile are noted."""
        with self.lock:
            self.done = True
            if self.ended.acquire(False):
                return  # it ended on an error of its own
            signal.pthread_kill(self.ident, signal.SIGCHLD)
        self.ended.acquire()


def _ignores_as_group_sender(sender: int, signum: int) -> bool:
    """Whether `sender` is in our process group and ignores `signum` (`timeout` before it signals the group)."""
    try:
        if sender <= 0 or os.getpgid(sender) != os.getpgrp():
            return False
        return bool(_status_bits(sender, ("SigIgn",)) >> (signum - 1) & 1)
    except (OSError, ValueError):
        return False


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


# --- pumping the command's pipes ----------------------------------------------------------------


class _Stream:
    """One pipe from the command: its read end, the spool file it fills, and our descriptor it
    passes through to (pass-through mode) or is emitted to later (view mode)."""

    __slots__ = ("rfd", "spool_fd", "out_fd", "tee", "splice", "error", "small")

    def __init__(self, rfd: int, spool_fd: int, out_fd: int, tee: bool) -> None:
        self.rfd = rfd
        self.spool_fd = spool_fd
        self.out_fd = out_fd
        self.tee = tee
        self.splice = not tee
        self.error: OSError | None = None  # a spool write that failed: the capture fails with it
        self.small = True  # the pipe still has its default size

    def _enlarge(self) -> None:
        # A full default pipe (64 KiB): large output. A 1 MiB pipe (the unprivileged limit)
        # takes 200 MB of `cat` into the spool in 90 ms instead of 245 ms; `fcntl` is
        # imported only then, so a quiet command does not pay for it.
        self.small = False
        try:
            import fcntl

            fcntl.fcntl(self.rfd, fcntl.F_SETPIPE_SZ, _CHUNK)
        except (ImportError, AttributeError, OSError):
            pass

    def move(self, stdio: Stdio) -> bool:
        """Move what the pipe holds; False at end of file."""
        if self.splice and self.error is None:
            try:
                moved = os.splice(self.rfd, self.spool_fd, _CHUNK)
            except OSError as exc:
                if exc.errno != _EINVAL:
                    self.error = exc
                self.splice = False  # a file system without splice, or a failed spool: copy instead
            else:
                if moved >= 65536 and self.small:
                    self._enlarge()
                return moved > 0
        # A pipe of the default size holds at most 64 KiB: a larger buffer would only be mapped and unmapped.
        data = os.read(self.rfd, 65536 if self.small else _CHUNK)
        if not data:
            return False
        if len(data) >= 65536 and self.small:
            self._enlarge()
        if self.error is None:
            try:
                _write_all(self.spool_fd, data)
            except OSError as exc:
                self.error = exc
        if self.tee and self.out_fd in stdio.gone:
            return False  # the reader left while we were not passing through: close, as below
        if self.tee and stdio.open(self.out_fd):
            try:
                _write_all(self.out_fd, data)
            except OSError:
                stdio.gone.add(self.out_fd)  # EPIPE: the reader is gone
                return False
        return True


#: A standalone view-mode run whose stdout is a pipe looks for its reader once, after this
#: much output or this long, whichever comes first (`Runner._reader_in_pipeline`).
READER_CHECK_BYTES = 1 << 20
READER_CHECK_MS = 1000


#: Programs whose reading of our stdout means `$(…)` (or `read <(…)`): a shell.
_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "yash", "busybox", "fish"})


def _pipe_read_in_pipeline(fd: int) -> bool:
    """Whether the pipe on `fd` is read inside the shell line that ran us: by a sibling of
    ours (`yarp run -- yes | head`: the shell started both) or by our parent when it is a
    shell (`x=$(yarp run -- …)`), in our own process group.

    A program that started us itself and reads our output (an agent's host, a test
    harness) is neither: its `yarp run` keeps its view.
    """
    try:
        st = os.fstat(fd)
        names = os.listdir("/proc")
    except OSError:
        return False
    if (st.st_mode & _S_IFMT) != _S_IFIFO:
        return False
    pipe = f"pipe:[{st.st_ino}]"
    group, me, parent = os.getpgrp(), os.getpid(), os.getppid()
    for name in names:
        if not name.isdigit() or int(name) == me:
            continue
        pid = int(name)
        try:
            if os.getpgid(pid) != group:
                continue
            if pid == parent:
                with open(f"/proc/{name}/comm", "rb") as comm:
                    if comm.read().strip().decode("ascii", "replace") not in _SHELLS:
                        continue
            else:
                with open(f"/proc/{name}/stat", "rb") as stat:
                    # pid (comm) state ppid ...: comm may hold spaces and parentheses
                    if int(stat.read().rsplit(b")", 1)[1].split()[1]) != parent:
                        continue
            folder = f"/proc/{name}/fd"
            for entry in os.listdir(folder):
                if os.readlink(f"{folder}/{entry}") == pipe and _reads(name, entry):
                    return True
        except (OSError, ValueError, IndexError):
            continue
    return False


def _reads(pid: str, fd: str) -> bool:
    """Whether descriptor `fd` of `pid` is open for reading (`/proc/PID/fdinfo`'s flags)."""
    with open(f"/proc/{pid}/fdinfo/{fd}", "rb") as info:
        for line in info:
            if line.startswith(b"flags:"):
                return int(line.split()[1], 8) & 3 in (0, 2)  # O_RDONLY or O_RDWR
    return False


def _copy_range(src: int, dst: int, size: int) -> None:
    """Write the first `size` bytes of file `src` to `dst`."""
    offset = 0
    while offset < size:
        data = os.pread(src, min(_CHUNK, size - offset), offset)
        if not data:
            return
        _write_all(dst, data)
        offset += len(data)


def pump(streams: list, stdio: Stdio, wake_fd: int, check=None) -> None:
    """Move the command's pipes into the spool (and through, in pass-through mode) until end of file.

    End of file comes once every process holding a pipe has closed it: the
    command and anything it left behind, as a shell pipe waits for them. A
    stream whose reader goes away (POLLERR/POLLHUP on our descriptor, EPIPE on
    a write) is closed, so the command gets SIGPIPE on its next write, as it
    would without us. A byte on `wake_fd` (a signal after the command ended)
    ends the wait. `check`, when given, is called once after
    `READER_CHECK_BYTES` of stdout or `READER_CHECK_MS`, whichever comes first.
    """
    import select

    deadline = time.monotonic() + READER_CHECK_MS / 1000 if check is not None else None
    poller = select.poll()
    live = {}
    for stream in streams:
        live[stream.rfd] = stream
        poller.register(stream.rfd, _POLLIN)
    poller.register(wake_fd, _POLLIN)
    watched = [fd for fd in stdio.watch if any(s.out_fd == fd for s in streams)]
    for fd in watched:
        poller.register(fd, 0)  # only POLLERR / POLLHUP: the reader went away

    def close(stream) -> None:
        poller.unregister(stream.rfd)
        del live[stream.rfd]
        os.close(stream.rfd)
        stream.rfd = -1

    while live:
        timeout = None
        if check is not None:
            spooled = os.fstat(streams[0].spool_fd).st_size
            left = deadline - time.monotonic()
            if spooled >= READER_CHECK_BYTES or left <= 0:
                check()
                check = None
            else:
                timeout = max(1, int(left * 1000))
        for fd, events in poller.poll(timeout):
            if fd == wake_fd:
                for stream in list(live.values()):
                    close(stream)
                return
            if fd in watched:
                if events & (_POLLERR | _POLLHUP):
                    stdio.gone.add(fd)
                    poller.unregister(fd)
                    watched.remove(fd)
                    for stream in list(live.values()):
                        if stream.out_fd == fd:
                            close(stream)
                continue
            stream = live.get(fd)
            if stream is not None and not stream.move(stdio):
                close(stream)
                if stream.out_fd in stdio.gone:
                    for other in list(live.values()):
                        if other.out_fd == stream.out_fd:
                            close(other)


class Runner:
    """One `yarp run`: the command, the call it archives under, and its client of the broker."""

    def __init__(self, argv: list[str], *, target: dict | None, config, location, environ=os.environ,
                 passing: bool = False, segment: dict | None = None, started_ms: int | None = None,
                 stdio: Stdio | None = None) -> None:
        self.argv = argv
        #: The call on the wire: the adapter's `{agent, account, session, call}`, a segment
        #: call's (the same with `own`), or a standalone run's `{session}` once it has begun its own.
        self.target = target
        #: The run begins its own call (standalone or segment) and so also finishes it.
        self.own = False
        self.segment = segment
        self.started_ms = started_ms
        self.config = config
        self.location = location
        self.environ = environ
        self.client = None
        self.deadline = 0.0
        self.stdio = stdio or Stdio()
        #: Output passes through as it comes (no view): `--pass`, or a person's terminal on stdout.
        self.passing = passing or self.stdio.terminal
        #: The signal that killed the command, if one did.
        self.signum: int | None = None
        #: `_reader_in_pipeline` has looked for our stdout's reader.
        self.checked = False

    # --- archive steps ------------------------------------------------------------

    def _client(self):
        if self.client is None:
            from yarp.clients.broker import BrokerClient

            self.client = BrokerClient(self.location, self.environ)
        return self.client

    def _ask(self, fields: dict) -> dict:
        from yarp.clients.broker import service_request

        return self._client().ask(service_request("run", fields), self.deadline)

    def _begin_own(self) -> bool:
        """Send the begin of the run's own call (standalone or segment) before the command starts.

        With a broker running, the command starts while the broker commits the
        begin, and its acknowledgement is read after the command exits
        (`_settle_begin`); True then. Otherwise the begin waits for a broker to
        start (at most `BEGIN_TIMEOUT_S`) before the command runs; False.
        """
        from yarp.clients.broker import service_request

        started = self.started_ms if self.started_ms is not None else _now_ms()
        self.own = True
        fields = {"step": "begin", "startedAtMs": started, "argv": self.argv, "cwd": os.getcwd()}
        if self.segment is not None:
            self.target = fields["target"] = self.segment
        else:
            session_id = f"run-{os.uname().nodename}-{os.getpid()}-{started}"
            self.target, fields["session"] = {"session": session_id}, session_id
        begin = service_request("run", fields)
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
        viewing = not self.passing
        reply = self._ask({
            "step": "capture", "target": self.target, "argv": self.argv, "status": status, "signal": signum,
            # Pass-through: the streams were shown as they came, so the view is the exact streams.
            "pruning": config.pruning_enabled and viewing, "rulePacks": list(config.rule_packs),
            "capBytes": config.cap_bytes if viewing else 0,
            "spool": {"stdout": declared(spool.stdout_before), "stderr": declared(spool.stderr_before),
                      "stdoutAfter": spool.stdout_after, "stderrAfter": spool.stderr_after},
        })
        warning = reply.get("warning")
        if isinstance(warning, str):
            _stderr_line(f"yarp: {warning}\n")
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
            status, self.signum = run_untouched(self.argv)
            return status
        try:
            return self._run(spool)
        finally:
            spool.close_fds()
            if self.client is not None:
                self.client.close()
            spool.remove()

    def _pipes(self, spool: Spool, write_ends: list) -> tuple[list, list]:
        """The command's pipes: (file actions for the child, `_Stream`s for us); the write ends,
        which the parent closes once the child has them, are appended to `write_ends`."""
        stdio = self.stdio
        if stdio.merged:
            # `2>&1` at the caller: one pipe for both, so the command's interleaving is kept.
            targets = (((1, 2), spool.stdout_fd, 1),)
        else:
            targets = tuple(((fd,), spool_fd, fd) for fd, spool_fd in ((1, spool.stdout_fd), (2, spool.stderr_fd))
                            if fd not in stdio.closed)
        actions = []
        streams = []
        for child_fds, spool_fd, out_fd in targets:
            rfd, wfd = os.pipe2(os.O_CLOEXEC)
            streams.append(_Stream(rfd, spool_fd, out_fd, self.passing))
            write_ends.append(wfd)
            # dup2 clears close-on-exec on the copies; the originals close at exec.
            actions += [(os.POSIX_SPAWN_DUP2, wfd, fd) for fd in child_fds]
        return actions, streams

    def _run(self, spool: Spool) -> int:
        begin_error = None
        begin_pending = False
        standalone = self.target is None and self.segment is None
        if self.target is None:
            self.deadline = time.monotonic() + BEGIN_TIMEOUT_S
            try:
                begin_pending = self._begin_own()
            except Exception as exc:  # noqa: BLE001 - as in `_settle_begin`
                begin_error = _archive_error(exc, "archive unavailable")
        stdio = self.stdio
        wake_r, wake_w = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)
        old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, (signal.SIGCHLD, *_SIGNALS))
        watcher = None
        streams: list = []
        write_ends: list[int] = []
        launch_error = None
        try:
            try:
                actions, streams = self._pipes(spool, write_ends)
                pid = launch(self.argv, actions, old_mask)
            except LaunchError as exc:
                launch_error = exc
            finally:
                for fd in write_ends:
                    os.close(fd)
            if launch_error is None:
                watcher = _Watcher(pid, wake_w)
                check = None
                if standalone and not self.passing and 1 in stdio.watch:
                    def check():
                        self._reader_in_pipeline(streams, spool)
                pump(streams, stdio, wake_r, check)
                if check is not None and not self.passing and os.fstat(streams[0].spool_fd).st_size:
                    # Quick output never reached the check: a view must still not reach a pipe's
                    # reader in our own shell line (`x=$(yarp run -- …)`).
                    check()
                returncode = watcher.reap()
        finally:
            # Signals are noted from here on, not obeyed, until the output is archived and emitted;
            # handlers first, then the mask is lifted, so none slips through in between.
            deferred = _Deferred().__enter__()
            if watcher is not None:
                watcher.stop()
                deferred.received += watcher.noted
            signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
            for fd in (wake_r, wake_w, *(s.rfd for s in streams if s.rfd >= 0)):
                os.close(fd)
        try:
            if launch_error is not None:
                status = _launch_error(launch_error)
                self._finish_preflight(status, self._settle_begin(begin_pending, begin_error))
                return status
            status = exit_status(returncode)
            self.signum = -returncode if returncode < 0 else None
            spool_error = next((s.error for s in streams if s.error is not None), None)
            begin_error = self._settle_begin(begin_pending, begin_error)
            if begin_error is None and spool_error is not None:
                begin_error = _archive_error(spool_error, "spool failed")
            if begin_error is not None:
                return self._fallback(spool, status, begin_error)
            self.deadline = time.monotonic() + ARCHIVE_TIMEOUT_S
            try:
                stdout_path, stderr_path = self._archive(spool, status, self.signum)
            except Exception as exc:  # noqa: BLE001 - as in `_settle_begin`
                return self._fallback(spool, status, _archive_error(exc, "spool failed"))
            if not self.passing:
                _emit_quietly(stdout_path, 1, stdio)
                _emit_quietly(stderr_path, 2, stdio)
            return status
        finally:
            deferred.__exit__()

    def _reader_in_pipeline(self, streams: list, spool: Spool) -> None:
        """Pass through from here on when a process of our own pipeline reads our stdout.

        `yarp run -- yes | head -1` typed at a shell: `head` waits for bytes a
        view would give it only at the end, which never comes. A standalone
        run in view mode whose stdout is a pipe therefore looks, once
        (`pump`), for the pipe's reader inside the shell line that ran it
        (`_pipe_read_in_pipeline`); a program that started `yarp run` and
        reads its output itself (an agent's host) is never one. If it finds
        one, what was spooled so far is written out exactly and the rest
        passes through as it comes: the reader gets the bytes it would get
        without YARP, and the streams are archived as they are.
        """
        if self.checked:
            return
        self.checked = True
        if not _pipe_read_in_pipeline(1):
            return
        self.passing = True
        stdio = self.stdio
        for stream in streams:
            emitted = os.lseek(stream.spool_fd, 0, os.SEEK_CUR)
            if stdio.open(stream.out_fd) and emitted:
                try:
                    _copy_range(stream.spool_fd, stream.out_fd, emitted)
                except OSError:
                    stdio.gone.add(stream.out_fd)
            stream.tee = True
            stream.splice = False

    def _finish_preflight(self, status: int, begin_error) -> None:
        """A call the run began itself whose command never started finishes as not executed."""
        if not self.own or begin_error is not None:
            return
        self.deadline = time.monotonic() + ARCHIVE_TIMEOUT_S
        try:
            self._ask({"step": "not_started", "target": self.target, "status": status})
        except Exception as exc:  # noqa: BLE001 - as in `_settle_begin`
            _stderr_line(f"yarp: archive failed: {_archive_error(exc, 'archive unavailable').message}\n")

    def _fallback(self, spool: Spool, status: int, error) -> int:
        """Emit the exact raw bytes (unless they were passed through already), report the archive
        error once, keep the status."""
        if not self.passing:
            _emit_quietly(spool.stdout_before, 1, self.stdio)
            _emit_quietly(spool.stderr_before, 2, self.stdio)
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


def run_untouched(argv: list[str]) -> tuple[int, int | None]:
    """Run `argv` with the runner's own streams: no spool, no pruning, no cap; (status, killing signal)."""
    old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, (signal.SIGCHLD, *_SIGNALS))
    watcher = None
    try:
        try:
            pid = launch(argv, [], old_mask)
        except LaunchError as exc:
            return _launch_error(exc), None
        watcher = _Watcher(pid)
        returncode = watcher.reap()
    finally:
        if watcher is not None:
            watcher.stop()
        signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
    return exit_status(returncode), (-returncode if returncode < 0 else None)


def run_command(argv: list[str], source: tuple[str, str, str, str] | None, archive: str | None = None,
                environ=os.environ, *, passing: bool = False, parent: tuple[str, str, str, str] | None = None,
                started_ms: int | None = None, stdio: Stdio | None = None) -> tuple[int, int | None]:
    """Entry point used by `yarp run`: (exit status, the signal that killed the command or None).

    `source` is the adapter's (agent, account, session, call) from the archive
    flags, `parent` the (agent, account, session, segment call id) of a segment
    call (`--archive-parent`), or both None for a standalone run; `archive` is
    the --archive flag.
    """
    from yarp.config import load

    stdio = stdio or Stdio()
    config = load(environ)
    if not config.archive_enabled:
        # No archive means nothing could recover pruned text: run untouched.
        return run_untouched(argv)
    from yarp.paths import resolve_archive

    target = segment = None
    if source is not None:
        agent, account, session, call = source
        target = {"agent": agent, "account": account, "session": session, "call": call}
    elif parent is not None:
        agent, account, session, call = parent
        segment = {"agent": agent, "account": account, "session": session, "call": call, "own": True}

    location = resolve_archive(archive, environ, config.archive_path)
    runner = Runner(argv, target=target, config=config, location=location, environ=environ, passing=passing,
                    segment=segment, started_ms=started_ms, stdio=stdio)
    status = runner.run()
    return status, runner.signum


#: `yarp run`'s archive flags, as argparse names them: all four or none.
ARCHIVE_FLAGS = ("archive_agent", "archive_account", "archive_session", "archive_call")
#: A segment call's flags: `--archive-parent` instead of `--archive-call`, with the other three.
SEGMENT_FLAGS = ("archive_agent", "archive_account", "archive_session", "archive_parent")
#: Every value flag `yarp run` takes, in argparse's spelling.
VALUE_FLAGS = ("archive_agent", "archive_account", "archive_session", "archive_call", "archive_parent")


def _usage(message: str):
    from yarp.errors import UsageError

    return UsageError(f"yarp run: {message}")


def start(command: list[str], given: dict, archive: str | None, *, passing: bool = False,
          whole_process: bool = False) -> int:
    """Run `command` under the value flags `given` (`VALUE_FLAGS` names, None when absent); `UsageError`
    for bad usage. A whole `yarp run` process (`whole_process`) whose command died by a signal dies by it."""
    if not command:
        raise _usage("expected -- followed by a command")
    stdio = Stdio()  # first, before anything is opened: a closed standard descriptor stays closed
    parent = given.get("archive_parent")
    call = given.get("archive_call")
    if parent is not None and call is not None:
        raise _usage("--archive-call and --archive-parent exclude each other")
    flags = SEGMENT_FLAGS if parent is not None else ARCHIVE_FLAGS
    values = [given.get(f) for f in flags]
    if any(v is not None for v in values) and not all(values):
        raise _usage("the archive flags go together: --archive-agent, --archive-account, "
                     "--archive-session and --archive-call (or --archive-parent)")
    source = segment = None
    started = None
    if all(values):
        if parent is None:
            source = tuple(values)
        else:
            from yarp.limits import MAX_IDENTITY_CHARS

            started = _now_ms()
            call_id = f"{parent}/{started}-{os.getpid()}"
            if len(call_id) > MAX_IDENTITY_CHARS:
                raise _usage(f"--archive-parent is too long for a segment call id ({MAX_IDENTITY_CHARS} "
                             "characters at most, with its suffix)")
            segment = (*values[:3], call_id)
    status, signum = run_command(command, source, archive, passing=passing, parent=segment, started_ms=started,
                                 stdio=stdio)
    if signum is not None and whole_process:
        die_by(signum)
    return status


def run_fast(argv: list[str], whole_process: bool = False) -> int | None:
    """Parse the common `yarp run [--archive P] [--pass] [--archive-* V]... -- CMD` without argparse.

    `yarp run` wraps every shell command an agent runs, so `yarp.cli` hands it
    here without importing the command table's module, and its start-up skips
    building a parser. Anything else (help, an unknown option, a missing value)
    returns None and takes the ordinary argparse path, with its messages.
    """
    names = {"--archive": "archive", **{"--" + f.replace("_", "-"): f for f in VALUE_FLAGS}}
    values: dict[str, str] = {}
    passing = False
    index = 0
    while index < len(argv):
        word = argv[index]
        if word == "--":
            archive = values.pop("archive", None)
            return start(argv[index + 1:], values, archive, passing=passing, whole_process=whole_process)
        if word == "--pass":
            if passing:
                return None
            passing = True
            index += 1
            continue
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
