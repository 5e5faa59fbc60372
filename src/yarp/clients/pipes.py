"""The runner's descriptors and the command's pipes: what fd 0-2 are, and pumping the pipes.

The command writes into pipes; `pump` moves them into the private spool
files (and through to the runner's own stdout and stderr in pass-through
mode) until every process holding them has closed them. Only `os`, `time`,
`yarp.clients.child` (for its C signal module) and, at the first use,
`select` are imported.
"""

import os
import time

from yarp.clients.child import RUNNER_SIGNALS, SIGNALLED, signal

_CHUNK = 1 << 20
_EPIPE, _EINVAL = 32, 22
_S_IFMT, _S_IFIFO, _S_IFSOCK, _S_IFREG = 0o170000, 0o010000, 0o140000, 0o100000
_POLLIN, _POLLERR, _POLLHUP = 0x001, 0x008, 0x010


class Stdio:
    """What the runner's own standard descriptors are, found before anything is opened.

    A closed descriptor (`yarp run -- cmd <&- >&-`) is held by `/dev/null`,
    close-on-exec, so nothing the runner opens lands on it (a spool file on
    fd 1 would be archived as the wrong stream) and the command finds it
    closed, as it would under a shell.
    """

    __slots__ = ("closed", "merged", "terminal", "watch", "gone", "files")

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
        #: Output descriptors that are regular files (`> out.txt`).
        self.files = tuple(fd for fd, st in ((1, out), (2, err)) if st is not None and (st.st_mode & _S_IFMT) == _S_IFREG)

    def open(self, fd: int) -> bool:
        """Whether `fd` (1 or 2) can still take output."""
        return fd not in self.closed and fd not in self.gone


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


def emit_quietly(path: str, fd: int, stdio: "Stdio | None" = None) -> None:
    """`emit_file`, where a reader that went away or a closed stream changes nothing."""
    # A reader that went away (EPIPE) or a closed stream must not change the
    # exit status: the bytes are archived and the child's status stands.
    if stdio is not None and not stdio.open(fd):
        return
    try:
        emit_file(path, fd)
    except OSError:
        pass


# --- pumping the command's pipes ----------------------------------------------------------------


class Stream:
    """One pipe from the command: its read end, the spool file it fills, and our descriptor it
    passes through to (pass-through mode) or is emitted to later (view mode)."""

    __slots__ = ("rfd", "spool_fd", "out_fd", "tee", "splice", "error", "small", "unspooled")

    def __init__(self, rfd: int, spool_fd: int, out_fd: int, tee: bool) -> None:
        self.rfd = rfd
        self.spool_fd = spool_fd
        self.out_fd = out_fd
        self.tee = tee
        self.splice = not tee
        #: A spool write that failed (the spool is full): nothing more is spooled, the rest passes through.
        self.error: OSError | None = None
        self.small = True  # the pipe still has its default size
        #: What a failed spool write left unwritten, for `pass_through` to write out after the spooled bytes.
        self.unspooled = b""

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

    def pass_through(self, stdio: Stdio) -> None:
        """Pass the command's bytes through as they come from here on: first write out exactly
        what was spooled so far, and what a failed spool write left over, so the reader gets
        every byte once and in order."""
        if not self.tee and stdio.open(self.out_fd):
            spooled = os.lseek(self.spool_fd, 0, os.SEEK_CUR)
            try:
                copy_range(self.spool_fd, self.out_fd, 0, spooled)
                _write_all(self.out_fd, self.unspooled)
            except OSError:
                stdio.gone.add(self.out_fd)
        self.unspooled = b""
        self.tee = True
        self.splice = False

    def _spool(self, data: bytes) -> None:
        view = memoryview(data)
        done = 0
        try:
            while done < len(data):
                done += os.write(self.spool_fd, view[done:])
        except OSError as exc:
            self.error = exc
            if not self.tee:
                self.unspooled = data[done:]

    def move(self, stdio: Stdio) -> bool:
        """Move what the pipe holds; False at end of file. A spool write that fails sets `error`,
        and in view mode keeps what it left unwritten until the runner passes the stream through."""
        if self.splice:
            try:
                moved = os.splice(self.rfd, self.spool_fd, _CHUNK)
            except OSError as exc:
                self.splice = False  # a file system without splice, or a failed spool: copy instead
                if exc.errno != _EINVAL:
                    self.error = exc
                    return True  # nothing was taken from the pipe: read once the runner has decided
            else:
                if moved >= 65536 and self.small:
                    self._enlarge()
                return moved > 0
        # A pipe of the default size holds at most 64 KiB: a larger buffer would only be mapped and unmapped.
        data = os.read(self.rfd, 65536 if self.small else _CHUNK)
        if not data:
            return False
        if len(data) >= 65536 and self.small and not self.tee:
            # Passing through, the pipe keeps its size: a producer that outruns a reader which
            # stops early must block and meet SIGPIPE as it would (`seq 1 200000 | head -1`: 141),
            # not finish into a larger buffer.
            self._enlarge()
        if self.error is None:
            self._spool(data)
        elif not self.tee:
            self.unspooled += data  # the spool failed and nobody passed the stream through: keep it
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
#: How long, once the command has exited, the runner keeps reading what processes it left
#: behind write into its pipes before it hands them to a drainer (`hand_over`).
LEFT_BEHIND_S = 2.0
READER_CHECK_MS = 1000


#: Programs whose reading of our stdout means `$(…)` (or `read <(…)`): a shell.
_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "yash", "busybox", "fish"})


def pipe_read_in_pipeline(fd: int) -> bool:
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


def copy_range(src: int, dst: int, start: int, end: int) -> None:
    """Write bytes `start` to `end` (exclusive) of file `src` to `dst`; fewer if the file is shorter."""
    offset = start
    while offset < end:
        data = os.pread(src, min(_CHUNK, end - offset), offset)
        if not data:
            return
        _write_all(dst, data)
        offset += len(data)


def pump(streams: list, stdio: Stdio, wake_fd: int, check=None, spool_failed=None) -> list:
    """Move the command's pipes into the spool (and through, in pass-through mode) until end of file.

    End of file comes once every process holding a pipe has closed it: the
    command and anything it left behind, as a shell pipe waits for them. A
    stream whose reader goes away (POLLERR/POLLHUP on our descriptor, EPIPE on
    a write) is closed, so the command gets SIGPIPE on its next write, as it
    would without us. `SIGNALLED` on `wake_fd` (a signal after the command
    ended) ends the wait. `CHILD_ENDED` (`yarp.clients.child`) starts a wait of at most
    `LEFT_BEHIND_S` for processes the command left behind: the streams still
    open then are returned, for `hand_over`. `check`, when given, is called
    once after `READER_CHECK_BYTES` of stdout or `READER_CHECK_MS`, whichever
    comes first; `spool_failed` once, right after a spool write failed.
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

    ended_at = None
    while live:
        timeout = None
        if ended_at is not None:
            left = ended_at + LEFT_BEHIND_S - time.monotonic()
            if left <= 0:
                return list(live.values())
            timeout = max(1, int(left * 1000))
        if check is not None:
            spooled = os.fstat(streams[0].spool_fd).st_size
            left = deadline - time.monotonic()
            if spooled >= READER_CHECK_BYTES or left <= 0:
                check()
                check = None
            else:
                timeout = min(timeout or 1 << 30, max(1, int(left * 1000)))
        for fd, events in poller.poll(timeout):
            if fd == wake_fd:
                if SIGNALLED not in os.read(wake_fd, 64):
                    ended_at = ended_at or time.monotonic()
                    continue
                for stream in list(live.values()):
                    close(stream)
                return []
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
            if stream is None:
                continue
            moved = stream.move(stdio)
            if stream.error is not None and spool_failed is not None:
                spool_failed()
                spool_failed = None
            if not moved:
                close(stream)
                if stream.out_fd in stdio.gone:
                    for other in list(live.values()):
                        if other.out_fd == stream.out_fd:
                            close(other)
    return []


def hand_over(streams: list, stdio: Stdio) -> None:
    """Leave pipes that processes the command left behind still hold to a drainer process.

    The drainer passes what they write on to our stdout and stderr as it
    comes, as the agent's shell would have let them write there, until they
    close the pipes or the reader goes away (then they get SIGPIPE, as they
    would without us). Nothing it passes on is archived. Our read ends are
    closed here, so the runner can archive and exit.
    """
    try:
        pid = os.fork()
    except OSError:
        pid = -1
    if pid == 0:
        try:
            _drain(streams, stdio)
        finally:
            os._exit(0)
    for stream in streams:
        os.close(stream.rfd)
        stream.rfd = -1


def _drain(streams: list, stdio: Stdio) -> None:
    for signum in (*RUNNER_SIGNALS, signal.SIGPIPE):
        signal.signal(signum, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, ())
    live = [s for s in streams if stdio.open(s.out_fd)]
    for stream in streams:
        if stream not in live:
            os.close(stream.rfd)
    import select

    poller = select.poll()
    for stream in live:
        poller.register(stream.rfd, _POLLIN)
    by_fd = {s.rfd: s for s in live}
    while by_fd:
        for fd, _ in poller.poll():
            data = os.read(fd, 65536)
            if data:
                try:
                    _write_all(by_fd[fd].out_fd, data)
                    continue
                except OSError:
                    pass  # the reader is gone: close, so the writer gets SIGPIPE
            poller.unregister(fd)
            os.close(fd)
            del by_fd[fd]


class FileRange:
    """Output the command writes straight into a regular file of ours (`yarp run --pass -- cmd > f`).

    Passing through, the command keeps the file itself, as under a shell: a
    program that checks its output is not its input (`cat f >> f`) or seeks
    in it (`xxd -r`, a muxer) behaves as it would. Where our descriptor's
    offset was before and after the command tells what it wrote; `capture`
    copies that range into the spool.
    """

    __slots__ = ("fd", "spool_fd", "start")

    def __init__(self, fd: int, spool_fd: int) -> None:
        self.fd = fd
        self.spool_fd = spool_fd
        self.start = os.lseek(fd, 0, os.SEEK_CUR)

    def capture(self) -> None:
        """Copy what the file holds between the starting offset and the offset now into the spool."""
        end = os.lseek(self.fd, 0, os.SEEK_CUR)
        if end <= self.start:
            return
        src = os.open(f"/proc/self/fd/{self.fd}", os.O_RDONLY | os.O_CLOEXEC)
        try:
            copy_range(src, self.spool_fd, self.start, end)
        finally:
            os.close(src)

