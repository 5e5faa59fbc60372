"""The command `yarp run` starts: launching it as a shell would, and signals while it runs.

Launch errors read like bash's; a script without `#!` runs with the calling
shell; a signal sent to the runner reaches the command once; when the
command dies by a signal, the runner dies by it too. Like the rest of
`yarp run`'s path, this module imports only the C cores it needs
(`_signal`, `_thread`).
"""

import _thread
import os

try:
    # The C module under `signal`: the same functions, with plain-int signal
    # numbers, minus the enum wrappers whose import costs every wrapped command.
    import _signal as signal
except ImportError:  # pragma: no cover - CPython always has it
    import signal

#: Exit statuses of a command that could not be started (POSIX shells' values).
STATUS_NOT_FOUND = 127
STATUS_NOT_EXECUTABLE = 126
#: How long a signal sent with kill() to the runner waits before it is
#: forwarded, so that a copy the command got from a group signal shows first.
SETTLE_S = 0.02

# Signals the runner takes over while the child runs (see `Watcher`).
RUNNER_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)
_SI_KERNEL = 0x80
# Python ignores SIGPIPE and SIGXFSZ for itself; the child gets the defaults
# back, as a shell would give them (`yes | head` must end).
_CHILD_DEFAULTS = (signal.SIGPIPE, signal.SIGXFSZ)
# Signals whose default action dumps core: the runner dying by one of them must not.
_CORE_SIGNALS = (signal.SIGQUIT, signal.SIGILL, signal.SIGTRAP, signal.SIGABRT, signal.SIGBUS, signal.SIGFPE,
                 signal.SIGSEGV, signal.SIGXCPU, signal.SIGXFSZ, signal.SIGSYS)
_ENOENT, _EACCES, _ENOEXEC = 2, 13, 8
#: Bytes `Watcher` writes on the pump's wake descriptor: the command exited (the wait for what
#: it left behind starts), or a signal came for the runner after it did (the wait ends at once).
CHILD_ENDED, SIGNALLED = b"c", b"s"


def exit_status(returncode: int) -> int:
    """The child's status the way a shell reports it (128 + N for signal N)."""
    return 128 - returncode if returncode < 0 else returncode


def stderr_line(text: str) -> None:
    """Write one line of ours to stderr; a closed or broken stderr loses it, never the status."""
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
    """The first `PATH` entry holding `name` (a non-directory; executable when asked), as a shell searches.

    Only a launch that failed gets here: the quiet path never loads `yarp.launcher`.
    """
    from yarp.launcher import which

    return which(name, os.environ.get("PATH"), executable=executable)


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


def report_launch_error(exc: LaunchError) -> int:
    """Say why the command could not be started, as bash would; return its status (127 or 126)."""
    from yarp.errors import bounded_text

    stderr_line(f"yarp: {bounded_text(exc.message, 400)}\n")
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


class Watcher:
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
        self.told_end = False
        self.done = False
        self.noted: list[int] = []
        self.lock = _thread.allocate_lock()  # reaping against forwarding: never signal a reaped pid
        self.ended = _thread.allocate_lock()
        self.ended.acquire()
        self.ident = _thread.start_new_thread(self._loop, ())

    def _loop(self) -> None:
        try:
            waited = (signal.SIGCHLD, *RUNNER_SIGNALS)
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
                    self._note_end()
                    continue
                try:
                    self._take(info)
                except Exception:  # noqa: BLE001 - a failed look at /proc must not end the watch
                    pass
        finally:
            self.ended.release()

    def _note_end(self) -> None:
        """Tell the pump, once, that the command has exited (its wait for what it left behind starts)."""
        if self.wake_fd < 0 or self.told_end:
            return
        with self.lock:
            if not self._ended():
                return
        self.told_end = True
        self._wake(CHILD_ENDED)

    def _wake(self, what: bytes) -> None:
        """Tell the pump (`yarp.clients.pipes.pump`) `what` happened, on its wake descriptor."""
        try:
            os.write(self.wake_fd, what)
        except OSError:
            pass

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
                    self._wake(SIGNALLED)
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


class Deferred:
    """After the child exits: signals for the runner are noted, not obeyed, until the
    output is archived and emitted (bounded by the archive deadline). Handlers, not
    a blocked mask, so a broker started meanwhile does not inherit a blocked mask."""

    def __init__(self) -> None:
        self.saved: dict[int, object] = {}
        self.received: list[int] = []

    def _note(self, signum, _frame) -> None:
        self.received.append(signum)

    def __enter__(self) -> "Deferred":
        for signum in RUNNER_SIGNALS:
            self.saved[signum] = signal.signal(signum, self._note)
        return self

    def __exit__(self, *exc) -> None:
        for signum, handler in self.saved.items():
            signal.signal(signum, handler)
