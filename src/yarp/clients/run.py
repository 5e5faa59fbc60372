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


import os
import time

from yarp.clients.child import (
    RUNNER_SIGNALS,
    Deferred,
    LaunchError,
    Watcher,
    die_by,
    exit_status,
    launch,
    report_launch_error,
    signal,
    stderr_line,
)
from yarp.clients.pipes import FileRange, Stdio, Stream, emit_quietly, hand_over, pipe_read_in_pipeline, pump
from yarp.private_files import create_private
from yarp.runtime import temp_directory

#: Time allowed for every archive step after the child exits (the longest
#: relative deadline the broker accepts).
ARCHIVE_TIMEOUT_S = 30.0
#: Time a run that begins its own call waits for the begin before it runs the
#: command anyway: the broker start-up bound, so a cold start still gets archived.
BEGIN_TIMEOUT_S = 5.0
_SPOOL_SUFFIXES = (".stdout", ".stderr", ".stdout.view", ".stderr.view")
_SPOOL_FULL = (28, 122, 27)  # ENOSPC, EDQUOT, EFBIG: the spool cannot take more bytes


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


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


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
        #: Output the command writes straight into a regular file (pass-through only).
        self.ranges: list = []

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

    def _archive(self, spool: Spool, status: int, signum: int | None, spool_error=None) -> tuple[str, str]:
        """Capture the streams durably (the broker writes the view); return the files to emit. After a
        spool write failed, the spool's bytes are archived as the first ones, marked incomplete."""
        config = self.config
        viewing = not self.passing
        fields = {
            "step": "capture", "target": self.target, "argv": self.argv, "status": status, "signal": signum,
            # Pass-through: the streams were shown as they came, so the view is the exact streams.
            "pruning": config.pruning_enabled and viewing, "rulePacks": list(config.rule_packs),
            "capBytes": config.cap_bytes if viewing else 0,
            "spool": {"stdout": declared(spool.stdout_before), "stderr": declared(spool.stderr_before),
                      "stdoutAfter": spool.stdout_after, "stderrAfter": spool.stderr_after},
        }
        if spool_error is not None:
            fields["spoolError"] = spool_error.errno or 5  # EIO when the error has no number
        reply = self._ask(fields)
        warning = reply.get("warning")
        if isinstance(warning, str):
            stderr_line(f"yarp: {warning}\n")
        if spool_error is not None:
            stderr_line(_spool_failed_line(spool, spool_error, reply.get("archiveRef")))
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
            stderr_line(f"yarp: archive failed before command execution: cannot create spool files: "
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
        """The command's pipes: (file actions for the child, `Stream`s for us); the write ends,
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
            if self.passing and out_fd in stdio.files:
                # Into a regular file: the command writes it itself; the range is copied after.
                self.ranges.append(FileRange(out_fd, spool_fd))
                continue
            rfd, wfd = os.pipe2(os.O_CLOEXEC)
            streams.append(Stream(rfd, spool_fd, out_fd, self.passing))
            write_ends.append(wfd)
            # dup2 clears close-on-exec on the copies; the originals close at exec.
            actions += [(os.POSIX_SPAWN_DUP2, wfd, fd) for fd in child_fds]
        return actions, streams

    def _run(self, spool: Spool) -> int:
        begin_error = None
        begin_pending = False
        standalone = self.target is None and self.segment is None
        range_error = None
        if self.target is None:
            self.deadline = time.monotonic() + BEGIN_TIMEOUT_S
            try:
                begin_pending = self._begin_own()
            except Exception as exc:  # noqa: BLE001 - as in `_settle_begin`
                begin_error = _archive_error(exc, "archive unavailable")
        stdio = self.stdio
        wake_r, wake_w = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)
        old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, (signal.SIGCHLD, *RUNNER_SIGNALS))
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
                watcher = Watcher(pid, wake_w)
                self._move_output(streams, spool, wake_r, standalone)
                returncode = watcher.reap()
                for file_range in self.ranges:
                    try:
                        file_range.capture()
                    except OSError as exc:
                        range_error = exc
        finally:
            # Signals are noted from here on, not obeyed, until the output is archived and emitted;
            # handlers first, then the mask is lifted, so none slips through in between.
            deferred = Deferred().__enter__()
            if watcher is not None:
                watcher.stop()
                deferred.received += watcher.noted
            signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
            for fd in (wake_r, wake_w, *(s.rfd for s in streams if s.rfd >= 0)):
                os.close(fd)
        try:
            if launch_error is not None:
                status = report_launch_error(launch_error)
                self._finish_preflight(status, self._settle_begin(begin_pending, begin_error))
                return status
            status = exit_status(returncode)
            self.signum = -returncode if returncode < 0 else None
            # A spool that took only the first bytes: the output passed through (`_pass_from_here`).
            spool_error = next((s.error for s in streams if s.error is not None), range_error)
            begin_error = self._settle_begin(begin_pending, begin_error)
            if begin_error is not None:
                return self._fallback(spool, status, begin_error)
            self.deadline = time.monotonic() + ARCHIVE_TIMEOUT_S
            try:
                stdout_path, stderr_path = self._archive(spool, status, self.signum, spool_error)
            except Exception as exc:  # noqa: BLE001 - as in `_settle_begin`
                return self._fallback(spool, status, _archive_error(exc, "spool failed"))
            if not self.passing:
                emit_quietly(stdout_path, 1, stdio)
                emit_quietly(stderr_path, 2, stdio)
            return status
        finally:
            deferred.__exit__()

    def _move_output(self, streams: list, spool: Spool, wake_fd: int, standalone: bool) -> None:
        """Pump the command's pipes until they close, or hand what the command left behind
        holding them to a drainer; a standalone run also looks for its stdout's reader."""
        stdio = self.stdio
        check = None
        if standalone and not self.passing and 1 in stdio.watch:
            def check():
                self._reader_in_pipeline(streams, spool)
        left_behind = pump(streams, stdio, wake_fd, check, lambda: self._pass_from_here(streams))
        if left_behind:
            hand_over(left_behind, stdio)
            stderr_line("yarp: processes the command left running still write to its output; "
                        "what they write from now on is passed on as it comes, not archived\n")
        if check is not None and not self.passing and os.fstat(streams[0].spool_fd).st_size:
            # Quick output never reached the check: a view must still not reach a pipe's
            # reader in our own shell line (`x=$(yarp run -- …)`).
            check()

    def _reader_in_pipeline(self, streams: list, spool: Spool) -> None:
        """Pass through from here on when a process of our own pipeline reads our stdout.

        `yarp run -- yes | head -1` typed at a shell: `head` waits for bytes a
        view would give it only at the end, which never comes. A standalone
        run in view mode whose stdout is a pipe therefore looks, once
        (`pump`), for the pipe's reader inside the shell line that ran it
        (`pipe_read_in_pipeline`); a program that started `yarp run` and
        reads its output itself (an agent's host) is never one. If it finds
        one, what was spooled so far is written out exactly and the rest
        passes through as it comes: the reader gets the bytes it would get
        without YARP, and the streams are archived as they are.
        """
        if self.checked or self.passing:
            return
        self.checked = True
        if pipe_read_in_pipeline(1):
            self._pass_from_here(streams)

    def _pass_from_here(self, streams: list) -> None:
        """Pass the output through from here on, what was spooled first (`Stream.pass_through`):
        when a reader in our own pipeline waits for it, or when the spool cannot take more bytes,
        so the view of a partial spool never stands for the command's output."""
        if not self.passing:
            self.passing = True
            for stream in streams:
                stream.pass_through(self.stdio)

    def _finish_preflight(self, status: int, begin_error) -> None:
        """A call the run began itself whose command never started finishes as not executed."""
        if not self.own or begin_error is not None:
            return
        self.deadline = time.monotonic() + ARCHIVE_TIMEOUT_S
        try:
            self._ask({"step": "not_started", "target": self.target, "status": status})
        except Exception as exc:  # noqa: BLE001 - as in `_settle_begin`
            stderr_line(f"yarp: archive failed: {_archive_error(exc, 'archive unavailable').message}\n")

    def _fallback(self, spool: Spool, status: int, error) -> int:
        """Emit the exact raw bytes (unless they were passed through already), report the archive
        error once, keep the status."""
        if not self.passing:
            emit_quietly(spool.stdout_before, 1, self.stdio)
            emit_quietly(spool.stderr_before, 2, self.stdio)
        stderr_line(f"yarp: archive failed after command execution: {error.message}\n")
        return status


def _spool_failed_line(spool: Spool, error: OSError, ref) -> str:
    """The one line that says the spool could not take the whole output, and what is archived."""
    out, err = (os.stat(path).st_size for path in (spool.stdout_before, spool.stderr_before))
    return (f"yarp: the spool in {os.path.dirname(spool.stdout_before)} "
            f"{'was full' if error.errno in _SPOOL_FULL else 'failed'} ({error.strerror or 'I/O error'}): only the "
            f"first {out} bytes of stdout and {err} of stderr are archived{f' as {ref}' if isinstance(ref, str) else ''}"
            ", marked incomplete; the output passed through whole\n")


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
    old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, (signal.SIGCHLD, *RUNNER_SIGNALS))
    watcher = None
    try:
        try:
            pid = launch(argv, [], old_mask)
        except LaunchError as exc:
            return report_launch_error(exc), None
        watcher = Watcher(pid)
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

    `source` is the adapter's (agent, account, session, call) from the archive flags, `parent` the (agent,
    account, session, segment call id) of a segment call (`--archive-parent`), or both None for a standalone
    run; `archive` is the --archive flag: a usage error, before the command runs, when it names a directory
    or a file in a directory that does not exist (`yarp.paths.named_archive_problem`).
    """
    from yarp.config import load

    stdio = stdio or Stdio()
    config = load(environ)
    if not config.archive_enabled:
        # No archive means nothing could recover pruned text: run untouched.
        return run_untouched(argv)
    from yarp.paths import named_archive_problem, resolve_archive

    target = segment = None
    if source is not None:
        agent, account, session, call = source
        target = {"agent": agent, "account": account, "session": session, "call": call}
    elif parent is not None:
        agent, account, session, call = parent
        segment = {"agent": agent, "account": account, "session": session, "call": call, "own": True}

    location = resolve_archive(archive, environ, config.archive_path)
    if archive is not None and (problem := named_archive_problem(location)) is not None:
        raise _usage(f"--archive: {problem}")
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

    return UsageError(f"run: {message}")


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
