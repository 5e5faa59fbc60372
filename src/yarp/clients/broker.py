"""The client every writer uses to reach the broker (ingest, `yarp run`, prune).

Blocking sockets on purpose: each client sends one request at a time and waits
for its acknowledgement, and `yarp run` must not import an event loop.

Start-up follows the spec: connect first; else take the startup lock, check
again, remove a stale socket only when no process holds the lifetime lock,
start the same binary as `archive broker` in its own session, and wait at most
5 s for its ready signal and a versioned handshake. A client never falls back
to writing the archive itself.

Replay (`ReplayPolicy`): after a transport failure a `SafeReplay` request is
re-sent, identical, on a new connection within its original deadline; an
`UnknownOnDisconnect` request (prune) is never re-sent once it may have
reached the broker, and a lost acknowledgement becomes `UnknownOutcome`. A
broker rejection is terminal and never transport-retried.
"""

from __future__ import annotations

import os
import sys
import time

# The C socket type itself: `socket` wraps it in conveniences a blocking Unix
# client never uses, and its import (selectors, enum) costs every wrapped command.
from _socket import AF_UNIX, SO_RCVTIMEO, SO_SNDTIMEO, SOCK_STREAM, SOL_SOCKET
from _socket import socket as _unix_socket

from yarp.wire import operations as ops
from yarp.wire import protocol
from yarp.errors import (
    BrokerError,
    BrokerUnavailable,
    DeadlineExceeded,
    FrameError,
    ShuttingDown,
    UnknownOutcome,
    YarpError,
    from_code,
)
from yarp.wire.frames import FrameSplitter, encode_frame
from yarp.limits import BROKER_START_TIMEOUT_S, MAX_DEADLINE_MS, MAX_FRAME_BYTES, MAX_HANDSHAKE_BYTES
from yarp.paths import ArchiveLocation
from yarp.runtime import (
    READY_FD_ENV,
    STARTUP_FD_ENV,
    RuntimePaths,
    check_socket_entry,
    lock_held_elsewhere,
    open_lock_file,
    remove_stale_socket,
    runtime_paths,
    try_lock,
)

_RECV_CHUNK = 256 * 1024
#: How often a blocked send or recv wakes to check its request's deadline.
#: An acknowledgement that arrives in time costs one recv; a deadline is
#: noticed at most one tick late (the broker enforces it before committing).
WAIT_TICK_S = 0.1
_WAIT_TICK = (0).to_bytes(8, sys.byteorder) + int(WAIT_TICK_S * 1_000_000).to_bytes(8, sys.byteorder)


class _Transport(Exception):
    """Internal: the connection failed (retry per policy)."""


def broker_command(location: ArchiveLocation) -> list[str]:
    """The same YARP binary, as `archive broker`, for this archive."""
    return [sys.executable, "-m", "yarp", "archive", "broker", "--archive", location.path]


class BrokerClient:
    """A connection to the archive's broker, started on demand."""

    def __init__(self, location: ArchiveLocation, environ=os.environ) -> None:
        self.location = location
        self.environ = environ
        self.paths: RuntimePaths = runtime_paths(location.path, environ)
        self.sock: _unix_socket | None = None
        self.correlation_id = ""
        self._splitter: FrameSplitter | None = None
        self._frames: list[bytes] = []

    # --- public ---------------------------------------------------------------

    def close(self) -> None:
        """Close the connection to the broker, if one is open."""
        if self.sock is not None:
            try:
                self.sock.close()
            finally:
                self.sock = None

    def __enter__(self) -> BrokerClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def connect(self, deadline: float) -> None:
        """Connect (starting a broker if needed) before `deadline` (time.monotonic())."""
        if self.sock is None:
            self._connect_or_start(deadline)

    def request(self, operation: ops.ArchiveOperation, deadline: float) -> dict:
        """Send one operation and return the broker's success reply.

        Raises the broker's typed rejection (terminal), `DeadlineExceeded`,
        `UnknownOutcome` (prune whose acknowledgement was lost) or
        `BrokerUnavailable`.
        """
        return self.send(protocol.outgoing(operation), deadline)

    def send(self, out: protocol.Outgoing, deadline: float) -> dict:
        """Send one encoded operation (`protocol.Outgoing`); replays re-send its exact bytes.

        The same contract as `request`: the operation is encoded once, and a
        replay after a transport failure rebuilds only the envelope header
        (new connection id, remaining deadline) around the unchanged bytes.
        """
        policy = out.policy
        sent = False
        while True:
            remaining_ms = int((deadline - time.monotonic()) * 1000)
            if remaining_ms < 1:
                raise DeadlineExceeded("request deadline expired before an acknowledgement")
            try:
                if self.sock is None:
                    try:
                        self._connect_or_start(deadline)
                    except BrokerUnavailable:
                        # A broker that died or vanished during the start-up we
                        # triggered: nothing was sent, so any capture may try
                        # the whole start-up path again within its deadline.
                        self.close()
                        if policy is not ops.ReplayPolicy.SAFE_REPLAY or time.monotonic() + 0.05 >= deadline:
                            raise
                        time.sleep(0.02)
                        continue
                frame = protocol.envelope_frame(out, self.correlation_id, min(remaining_ms, MAX_DEADLINE_MS))
                sent = True
                self._send_frame(frame, deadline)
                reply = protocol.parse_reply(self._recv_frame(deadline))
            except DeadlineExceeded:
                # The broker may still answer the abandoned request later; a
                # reused connection would hand that late reply to the next one.
                self.close()
                raise
            except _Transport:
                self.close()
                if sent and policy is ops.ReplayPolicy.UNKNOWN_ON_DISCONNECT:
                    raise UnknownOutcome(
                        "the broker connection was lost before the prune acknowledgement; its outcome is unknown: "
                        "inspect the archive with 'yarp archive stats' and 'yarp archive verify' before pruning again"
                    ) from None
                time.sleep(0.005)
                continue
            if reply["ok"]:
                return reply
            error = from_code(str(reply.get("code", "broker")), str(reply.get("error", "broker rejected the request")))
            if isinstance(error, ShuttingDown) and policy is ops.ReplayPolicy.SAFE_REPLAY:
                self.close()
                continue
            raise error

    def status(self, deadline: float) -> dict:
        """Ask a running broker for its status; never starts one."""
        if self.sock is None and not self._try_connect(deadline):
            raise BrokerUnavailable("no broker is running for this archive")
        try:
            self._send(protocol.control(self.correlation_id, "status"), deadline)
            reply = protocol.parse_reply(self._recv_frame(deadline))
        except _Transport:
            self.close()
            raise BrokerUnavailable("broker connection lost") from None
        return reply["status"]

    # --- connection -----------------------------------------------------------------

    def _try_connect(self, deadline: float) -> bool:
        if not check_socket_entry(self.paths.socket):
            return False
        sock = _unix_socket(AF_UNIX, SOCK_STREAM)
        sock.settimeout(max(0.001, deadline - time.monotonic()))
        try:
            sock.connect(self.paths.socket)
        except (ConnectionRefusedError, FileNotFoundError, TimeoutError):
            sock.close()
            return False
        except OSError:
            sock.close()
            return False
        # From here on the socket blocks, and the kernel wakes a waiting
        # send or recv every tick so the deadline is checked: set once per
        # connection, where a Python-level timeout would cost a poll() before
        # every call and an ioctl() for every change.
        sock.settimeout(None)
        sock.setsockopt(SOL_SOCKET, SO_RCVTIMEO, _WAIT_TICK)
        sock.setsockopt(SOL_SOCKET, SO_SNDTIMEO, _WAIT_TICK)
        self.sock = sock
        self._splitter = FrameSplitter(MAX_HANDSHAKE_BYTES)
        self._frames = []
        correlation = "c-" + os.urandom(8).hex()
        try:
            self._send(protocol.handshake(self.paths.archive_id, correlation), deadline)
            reply = self._recv_frame(deadline)
        except _Transport:
            self.close()
            return False
        try:
            protocol.check_handshake_reply(reply, self.paths.archive_id, correlation)
        except YarpError as exc:
            self.close()
            if "shutting down" in exc.message:
                return False
            raise
        self.correlation_id = correlation
        self._splitter = FrameSplitter(MAX_FRAME_BYTES)
        return True

    def _connect_or_start(self, deadline: float) -> None:
        if self._try_connect(deadline):
            return
        try:
            # The runtime directory may have been removed since we resolved it
            # (a cleaned /tmp, a finished session): check or recreate it first.
            self.paths = runtime_paths(self.location.path, self.environ)
            lock_fd = open_lock_file(self.paths.startup_lock)
        except OSError as exc:
            raise BrokerUnavailable(f"cannot use the broker runtime directory: {exc.strerror or 'I/O error'}") from None
        try:
            while not try_lock(lock_fd):
                if self._try_connect(deadline):
                    return
                if time.monotonic() >= deadline:
                    raise BrokerUnavailable("timed out waiting for the broker startup lock")
                time.sleep(0.005)
            if self._try_connect(deadline):
                return
            # A broker that is still draining holds the lifetime lock: let it finish.
            while lock_held_elsewhere(self.paths.lifetime_lock):
                if time.monotonic() >= deadline:
                    raise BrokerUnavailable("an unresponsive broker still owns the archive")
                time.sleep(0.005)
            remove_stale_socket(self.paths)
            self._start_broker(lock_fd, min(deadline, time.monotonic() + BROKER_START_TIMEOUT_S))
            if not self._try_connect(deadline):
                raise BrokerUnavailable("the broker started but did not answer")
        finally:
            os.close(lock_fd)

    def _start_broker(self, lock_fd: int, deadline: float) -> None:
        # Only the client that starts a broker needs these; `yarp run` against a
        # running broker never pays for importing them.
        import fcntl
        import select
        import subprocess

        read_fd, write_fd = os.pipe()
        env = dict(self.environ)
        env[STARTUP_FD_ENV] = str(lock_fd)
        env[READY_FD_ENV] = str(write_fd)
        flags = fcntl.fcntl(lock_fd, fcntl.F_GETFD)
        try:
            proc = subprocess.Popen(
                broker_command(self.location),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                pass_fds=(lock_fd, write_fd),
                start_new_session=True,
                env=env,
            )
        except OSError as exc:
            raise BrokerUnavailable(f"cannot start the broker: {exc.strerror}") from None
        finally:
            os.close(write_fd)
            fcntl.fcntl(lock_fd, fcntl.F_SETFD, flags)
        try:
            message = b""
            while not message.endswith(b"\n"):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise BrokerUnavailable("the broker did not become ready within 5 s")
                ready, _, _ = select.select([read_fd], [], [], remaining)
                if not ready:
                    continue
                chunk = os.read(read_fd, 4096)
                if not chunk:
                    if proc.poll() is not None:
                        from yarp.fault_log import client_hint

                        raise BrokerUnavailable("the broker exited during start-up; " + client_hint(self.environ))
                    raise BrokerUnavailable("the broker closed its ready pipe without a signal")
                message += chunk
        finally:
            os.close(read_fd)
        text = message.decode("utf-8", "replace").strip()
        if text != "ready":
            _, _, rest = text.partition(" ")
            code, _, detail = rest.partition(" ")
            raise from_code(code, detail or "the broker failed to start")

    # --- frames ------------------------------------------------------------------------

    def _send(self, body: bytes, deadline: float) -> None:
        self._send_frame(encode_frame(body), deadline)

    def _send_frame(self, data: bytes, deadline: float) -> None:
        """Write one whole frame: one `send` system call unless the socket buffer is full."""
        sock = self.sock
        if sock is None:
            raise _Transport()
        view = memoryview(data)
        while view:
            try:
                sent = sock.send(view)
            except BlockingIOError:
                # The kernel's send timeout (one wait tick) passed with the
                # buffer still full: look at the deadline, then keep waiting.
                if time.monotonic() >= deadline:
                    raise DeadlineExceeded("request deadline expired while sending") from None
                continue
            except InterruptedError:
                continue
            except OSError:
                raise _Transport() from None
            view = view[sent:]

    def _recv_frame(self, deadline: float) -> bytes:
        """Read until a whole frame is in: straight into the splitter's buffer, one `recv` a reply."""
        sock = self.sock
        splitter = self._splitter
        if sock is None or splitter is None:
            raise _Transport()
        frames = self._frames
        while not frames:
            try:
                count = sock.recv_into(splitter.get_buffer(_RECV_CHUNK))
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise DeadlineExceeded("request deadline expired waiting for the acknowledgement") from None
                continue
            except InterruptedError:
                continue
            except OSError:
                raise _Transport() from None
            if not count:
                raise _Transport()
            try:
                frames.extend(splitter.buffer_updated(count))
            except FrameError:
                raise _Transport() from None
        return frames.pop(0)


def send_operation(location: ArchiveLocation, operation: ops.ArchiveOperation, timeout_s: float) -> dict:
    """One-shot helper: connect (or start), send, return the reply, close."""
    with BrokerClient(location) as client:
        return client.request(operation, time.monotonic() + timeout_s)


__all__ = ["BrokerClient", "send_operation", "broker_command", "BrokerError"]
