"""The one client of the broker: connect (starting a broker if none answers), send, replay.

Every process that writes the archive goes through `BrokerClient`: the ingest
bridge, `yarp run`, the hooks, prune, import, doctor. Blocking sockets on
purpose: each client has one request in flight and waits for its
acknowledgement, and a per-tool-call process must not import an event loop.
So is everything this module imports at its top (`_socket`, `_json` through
`yarp.json_text`, the version and limits): a hook event or `yarp run`
against a running broker loads nothing else. Starting a broker
(`yarp.clients.startup`), the operation types and their envelopes
(`yarp.wire.protocol`) and the error classes load only when they are needed.

A request is built by a function of the connection's correlation id and the
remaining deadline in milliseconds (`ask`), so a replay rebuilds only that
header around unchanged bytes: an operation's envelope (`send`, `request`)
or a service request of the per-tool-call processes (`service_request`).

Replay (`ReplayPolicy`): after a transport failure a replay-safe request is
sent again, identical, on a new connection within its original deadline; a
request that is not (prune) is never sent again once it may have reached the
broker, and a lost acknowledgement becomes `UnknownOutcome`. A broker
rejection is terminal and never transport-retried; a broker that is shutting
down is left for the next one, and one of another YARP version is replaced by
this version's (`yarp.clients.handover`).
"""

import os
import sys
import time

# The C socket type itself: `socket` wraps it in conveniences a blocking Unix
# client never uses, and its import (selectors, enum) costs every tool call.
from _socket import AF_UNIX, SO_RCVTIMEO, SO_SNDTIMEO, SOCK_STREAM, SOL_SOCKET
from _socket import socket as _unix_socket

from yarp import json_text
from yarp._version import SCHEMA, __version__
from yarp.limits import MAX_DEADLINE_MS, MAX_FRAME_BYTES, MAX_HANDSHAKE_BYTES, PRUNE_PROGRESS_WAIT_S

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from yarp.paths import ArchiveLocation
    from yarp.wire import operations as ops
    from yarp.wire.protocol import Outgoing

_LENGTH_BYTES = 8
_RECV_CHUNK = 64 * 1024
#: How often a blocked send or recv wakes to check its request's deadline.
#: An acknowledgement that arrives in time costs one recv; a deadline is
#: noticed at most one tick late (the broker enforces it before committing).
WAIT_TICK_S = 0.1
_WAIT_TICK = (0).to_bytes(8, sys.byteorder) + int(WAIT_TICK_S * 1_000_000).to_bytes(8, sys.byteorder)


class _Lost(Exception):
    """Internal: the connection failed; the request may be sent again per its policy."""


def frame(body: bytes) -> bytes:
    """`body` with its 8-byte big-endian length in front: a whole frame."""
    return len(body).to_bytes(_LENGTH_BYTES, "big") + body


def service_request(name: str, fields: dict, tail: bytes = b""):
    """The frame builder of one service request of the per-tool-call processes, for `BrokerClient.ask`.

    A hook event or a `yarp run` step: the broker's envelope header, the
    service's members (`"hook": {…}` or `"run": {…}` from `fields`, written by
    `json_text.members`) and `tail` (empty, or `,"event":<JSON bytes>`: a hook
    splices the agent's event in as the exact bytes it arrived as)::

        {"schema", "correlationId", "hook": {…}, "deadlineMs": N, "event": <bytes>}

    Each attempt rebuilds only the header; every such request is replay-safe
    (the broker's operations are idempotent by their stable identities).
    """
    head = json_text.members(name, fields)

    def build(correlation_id: str, deadline_ms: int) -> bytes:
        return frame(f'{{"schema":"{SCHEMA}","correlationId":"{correlation_id}",{head},'
                     f'"deadlineMs":{deadline_ms}'.encode() + tail + b"}")

    return build


def _deadline_error(what: str):
    from yarp.errors import DeadlineExceeded

    return DeadlineExceeded(f"request deadline expired {what}")


class BrokerClient:
    """A connection to the archive's broker, started on demand."""

    def __init__(self, location: "ArchiveLocation", environ=os.environ) -> None:
        from yarp.runtime import runtime_paths

        self.location = location
        self.environ = environ
        self.paths = runtime_paths(location.path, environ)
        self.sock = None
        self.correlation_id = ""
        self._buffer = bytearray()
        #: The request `submit` sent and `collect` has not read the reply of.
        self._pending = None
        #: When the frame in flight was sent, and (during a handshake) when the handshake began
        #: and whether the archive's lifetime lock was looked at: what `_waited` reports.
        self._since = 0.0
        self._greeting: float | None = None
        self._owner_seen = False
        #: The `BrokerVersionMismatch` of a broker of another version this client replaced, if it did.
        self.replaced = None

    # --- public ------------------------------------------------------------------------

    def close(self) -> None:
        """Close the connection to the broker, if one is open."""
        if self.sock is not None:
            try:
                self.sock.close()
            finally:
                self.sock = None
                self._buffer.clear()

    def __enter__(self) -> "BrokerClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def connect(self, deadline: float) -> None:
        """Connect before `deadline` (`time.monotonic()`), starting a broker if none answers.

        A broker of another YARP version is replaced: asked to drain and exit, then this
        version's started (`yarp.clients.startup`). Raises `BrokerUnavailable`,
        `HandshakeMismatch` or `UnsafePath`.
        """
        if self.sock is not None:
            return
        try:
            if self.try_connect(deadline):
                return
        except _version_mismatch():  # evaluated only when connecting raised
            pass
        from yarp.clients.startup import connect_or_start

        connect_or_start(self, deadline)

    def request(self, operation: "ops.ArchiveOperation", deadline: float) -> dict:
        """Send one operation and return the broker's success reply (see `send`)."""
        from yarp.wire import protocol

        return self.send(protocol.outgoing(operation), deadline)

    def send(self, out: "Outgoing", deadline: float, on_progress=None) -> dict:
        """Send one encoded operation (`protocol.Outgoing`); a replay re-sends its exact bytes.

        Raises the broker's typed rejection (terminal), `DeadlineExceeded`,
        `UnknownOutcome` (a prune whose acknowledgement was lost, or that went
        silent) or `BrokerUnavailable`. A prune's progress goes to `on_progress`.
        """
        from yarp.wire import operations as ops
        from yarp.wire import protocol

        def build(correlation_id: str, deadline_ms: int) -> bytes:
            return protocol.envelope_frame(out, correlation_id, deadline_ms)

        return self.ask(build, deadline, replay=out.policy is ops.ReplayPolicy.SAFE_REPLAY, on_progress=on_progress)

    def ask(self, build: "Callable[[str, int], bytes]", deadline: float, *, replay: bool = True,
            on_progress=None) -> dict:
        """Send the frame `build(correlation id, remaining ms)` makes and return the success reply.

        The one replay loop: on a lost connection a replay-safe request is
        built and sent again on a new connection, within the same deadline.
        A request that is not replay-safe (a prune) runs in the broker for as
        long as it takes: its progress frames each renew the wait for its
        reply by `PRUNE_PROGRESS_WAIT_S` and go to `on_progress`.
        """
        sent = False
        while True:
            remaining_ms = int((deadline - time.monotonic()) * 1000)
            if remaining_ms < 1:
                raise _deadline_error("before an acknowledgement")
            try:
                if self.sock is None and not self._connect_for(replay, deadline):
                    continue
                data = build(self.correlation_id, min(remaining_ms, MAX_DEADLINE_MS))
                sent = True
                self._write(data, deadline)
                reply = self._read_reply(deadline, None if replay else on_progress or _ignore)
            except _Lost:
                self.close()
                if sent and not replay:
                    raise _unknown_outcome(_PRUNE_LOST) from None
                time.sleep(0.005)
                continue
            except _deadline_exceeded():  # evaluated only when something else was raised
                self.close()
                if sent and not replay:
                    raise _unknown_outcome(_PRUNE_SILENT) from None
                raise
            except BaseException:
                # The broker may still answer an abandoned request later; a
                # reused connection would hand that late reply to the next one.
                self.close()
                raise
            if reply["ok"]:
                return reply
            error = _rejection(reply)
            if _is_shutting_down(error):
                # Only a request the broker never admitted is answered so:
                # sending it again is safe whatever its replay policy.
                self.close()
                continue
            raise error

    def submit(self, build: "Callable[[str, int], bytes]", deadline: float) -> bool:
        """Send a replay-safe request to a broker that is already running, without waiting for its reply.

        False, with nothing sent, when no broker answers (`ask` would start
        one); `collect` reads the reply of what was sent.
        """
        try:
            if self.sock is None and not self.try_connect(deadline):
                return False
            remaining_ms = int((deadline - time.monotonic()) * 1000)
            if remaining_ms < 1:
                return False
            self._write(build(self.correlation_id, min(remaining_ms, MAX_DEADLINE_MS)), deadline)
        except _Lost:
            self.close()
            return False
        except _version_mismatch():  # `ask` replaces that broker
            return False
        self._pending = build
        return True

    def collect(self, deadline: float) -> dict:
        """The success reply to the request `submit` sent; sent again through `ask` if the
        connection failed or the broker was shutting down (it is replay-safe)."""
        build, self._pending = self._pending, None
        try:
            reply = self._read_reply(deadline)
        except _Lost:
            self.close()
            return self.ask(build, deadline)
        except BaseException:
            self.close()
            raise
        if reply["ok"]:
            return reply
        error = _rejection(reply)
        if _is_shutting_down(error):
            self.close()
            return self.ask(build, deadline)
        raise error

    def status(self, deadline: float) -> dict:
        """Ask a running broker for its status; never starts one. Raises `BrokerUnavailable`."""
        from yarp.errors import BrokerUnavailable

        if self.sock is None and not self.try_connect(deadline):
            raise BrokerUnavailable("no broker is running for this archive")
        body = json_text.dumps({"schema": SCHEMA, "correlationId": self.correlation_id, "control": "status"})
        try:
            self._write(frame(body), deadline)
            reply = self._read_reply(deadline)
        except _Lost:
            self.close()
            raise BrokerUnavailable("broker connection lost") from None
        return reply["status"]

    # --- connection --------------------------------------------------------------------

    def _connect_for(self, replay: bool, deadline: float) -> bool:
        """Connect (or start) for `ask`; False to go round again after a broker vanished at start-up."""
        try:
            self.connect(deadline)
        except _broker_unavailable():  # evaluated only when connecting failed: no import on success
            # A broker that died or vanished during the start-up we triggered:
            # nothing was sent, so a replay-safe request may try the whole
            # start-up path again within its deadline.
            self.close()
            if not replay or time.monotonic() + 0.05 >= deadline:
                raise
            time.sleep(0.02)
            return False
        return True

    def try_connect(self, deadline: float) -> bool:
        """Connect to a broker that is running and complete the handshake; False when none answers
        (no socket, refused, shutting down). Raises `BrokerVersionMismatch` for a broker of another
        YARP version, `HandshakeMismatch` for one that refuses us otherwise, `UnsafePath` for an
        unsafe socket entry."""
        from yarp.runtime import check_socket_entry

        if not check_socket_entry(self.paths.socket):
            return False
        sock = _unix_socket(AF_UNIX, SOCK_STREAM)
        sock.settimeout(max(0.001, deadline - time.monotonic()))
        try:
            sock.connect(self.paths.socket)
        except OSError:
            sock.close()
            return False
        # From here on the socket blocks, and the kernel wakes a waiting send or
        # recv every tick so the deadline is checked: set once per connection,
        # where a Python-level timeout would cost a poll() before every call.
        sock.settimeout(None)
        sock.setsockopt(SOL_SOCKET, SO_RCVTIMEO, _WAIT_TICK)
        sock.setsockopt(SOL_SOCKET, SO_SNDTIMEO, _WAIT_TICK)
        self.sock = sock
        correlation = "c-" + os.urandom(8).hex()
        hello = json_text.dumps({"schema": SCHEMA, "binaryVersion": __version__,
                                 "archiveId": self.paths.archive_id, "correlationId": correlation})
        self._greeting, self._owner_seen = time.monotonic(), False
        try:
            self._write(frame(hello), deadline)
            answer = self._read_object(MAX_HANDSHAKE_BYTES, deadline)
        except _Lost:
            self.close()
            return False
        except BaseException:
            self.close()
            raise
        finally:
            self._greeting = None
        problem = _handshake_problem(answer, self.paths.archive_id, correlation)
        if problem is not None:
            version = None if "shutting down" in problem else _other_version(answer, self.paths.archive_id)
            pid = None
            if version is not None:
                from yarp.clients.handover import peer_pid

                pid = peer_pid(sock)
            self.close()
            if version is not None:
                from yarp.errors import BrokerVersionMismatch

                raise BrokerVersionMismatch.of(version, pid)
            if "shutting down" in problem:
                return False
            from yarp.errors import HandshakeMismatch

            raise HandshakeMismatch(problem)
        self.correlation_id = correlation
        return True

    def _waited(self, what: str, now: float, deadline: float) -> None:
        """A wait tick passed with the broker silent. In a handshake: a listener whose archive no
        process holds the lifetime lock of is no broker (`_Lost`: the start-up path replaces it),
        and a broker that owns it gets `BROKER_START_TIMEOUT_S` to answer, then is named
        (`BrokerUnresponsive`). At the deadline, the expiry names the broker too."""
        greeting = self._greeting
        if greeting is not None:
            if not self._owner_seen:
                self._owner_seen = True
                from yarp.runtime import lock_held_elsewhere

                try:
                    owned = lock_held_elsewhere(self.paths.lifetime_lock)
                except Exception:  # noqa: BLE001 - cannot tell: wait for the answer as for a broker
                    owned = True
                if not owned:
                    raise _Lost()
            from yarp.limits import BROKER_START_TIMEOUT_S

            bound = min(BROKER_START_TIMEOUT_S, deadline - greeting)
            if now - greeting >= bound:
                from yarp.errors import BrokerUnresponsive
                from yarp.runtime import silent_broker

                raise BrokerUnresponsive(silent_broker(self.paths, bound))
        if now >= deadline:
            from yarp.runtime import silent_broker

            raise _deadline_error(f"{what}: {silent_broker(self.paths, deadline - self._since)}")

    # --- frames ------------------------------------------------------------------------

    def _write(self, data: bytes, deadline: float) -> None:
        """Write one whole frame: one `send` system call unless the socket buffer is full."""
        sock = self.sock
        if sock is None:
            raise _Lost()
        view = memoryview(data)
        self._since = time.monotonic()
        while view:
            view = view[_waiting(sock.send, view, deadline, "while sending", self):]

    def _read_frame(self, limit: int, deadline: float) -> bytes:
        """Read one whole frame's body (at most `limit` bytes): one `recv` for a reply that fits a chunk."""
        buffer = self._buffer
        while True:
            if len(buffer) >= _LENGTH_BYTES:
                size = int.from_bytes(buffer[:_LENGTH_BYTES], "big")
                if not 0 < size <= limit:
                    raise _Lost()
                end = _LENGTH_BYTES + size
                if len(buffer) >= end:
                    body = bytes(buffer[_LENGTH_BYTES:end])
                    del buffer[:end]
                    return body
            if self.sock is None:
                raise _Lost()
            chunk = _waiting(self.sock.recv, _RECV_CHUNK, deadline, "waiting for the acknowledgement", self)
            if not chunk:
                raise _Lost()
            buffer += chunk

    def _read_object(self, limit: int, deadline: float) -> dict:
        value = json_text.object_or_none(self._read_frame(limit, deadline))
        if value is None:
            raise _Lost()  # not a broker of ours: the next attempt (or start-up) decides
        return value

    def _read_reply(self, deadline: float, on_progress=None) -> dict:
        """The reply to the request in flight; before it, a prune's progress frames (`{"progress": {…}}`)
        when `on_progress` takes them, each renewing the wait."""
        while True:
            reply = self._read_object(MAX_FRAME_BYTES, deadline)
            if isinstance(reply.get("ok"), bool):
                return reply
            progress = reply.get("progress")
            if on_progress is None or not isinstance(progress, dict):
                raise _Lost()
            deadline = max(deadline, time.monotonic() + PRUNE_PROGRESS_WAIT_S)
            on_progress(progress)


def _waiting(call, argument, deadline: float, what: str, client: "BrokerClient"):
    """`call(argument)` on the blocking socket, again each time the kernel's wait tick passes (the
    send or receive timeout set at connect), until `deadline`; `_Lost` when the connection failed."""
    while True:
        try:
            return call(argument)
        except BlockingIOError:
            # A wait tick passed with nothing sent or received: look at the deadline, then wait on.
            client._waited(what, time.monotonic(), deadline)
        except InterruptedError:
            continue
        except OSError:
            raise _Lost() from None


#: What a prune's client is told when its answer cannot come: the broker goes on with a prune
#: it began (each step commits), so only the archive can say how far it got.
_PRUNE_LOST = ("the broker connection was lost before the prune acknowledgement; its outcome is unknown: a broker "
               "still running goes on with the prune and commits it step by step; inspect the archive with "
               "'yarp archive stats' and 'yarp archive verify' before pruning again")
_PRUNE_SILENT = (f"the broker sent no word of the prune for {PRUNE_PROGRESS_WAIT_S:.0f} s; its outcome is unknown: "
                 "the broker may still be pruning, and commits each step; inspect the archive with "
                 "'yarp archive stats' and 'yarp archive verify' before pruning again")


def _ignore(_progress: dict) -> None:
    """Progress nobody shows (the ingest bridge: its adapter gets the one acknowledgement)."""


def _unknown_outcome(text: str):
    from yarp.errors import UnknownOutcome

    return UnknownOutcome(text)


def _deadline_exceeded():
    from yarp.errors import DeadlineExceeded

    return DeadlineExceeded


def _broker_unavailable():
    from yarp.errors import BrokerUnavailable

    return BrokerUnavailable


def _version_mismatch():
    from yarp.errors import BrokerVersionMismatch

    return BrokerVersionMismatch


def _rejection(reply: dict):
    """The broker's typed rejection in a reply that is not ok (the error classes load here, on a failure)."""
    from yarp.errors import from_code

    return from_code(str(reply.get("code", "broker")), str(reply.get("error", "broker rejected the request")))


def _is_shutting_down(error) -> bool:
    """Whether a rejection only says this broker is shutting down: the next one serves the request."""
    from yarp.errors import ShuttingDown

    return isinstance(error, ShuttingDown)


def _handshake_problem(answer: dict, archive_id: str, correlation_id: str) -> str | None:
    """Why the broker's handshake answer is not ours to use, or None."""
    if answer.get("ok") is not True:
        from yarp.errors import bounded_text

        return bounded_text(str(answer.get("error") or "broker refused the handshake"))
    if answer.get("schema") != SCHEMA or answer.get("binaryVersion") != __version__:
        return "broker speaks another protocol or binary version"
    if answer.get("archiveId") != archive_id or answer.get("correlationId") != correlation_id:
        return "broker answered for another archive or connection"
    return None


def _other_version(answer: dict, archive_id: str) -> str | None:
    """The YARP version a broker of this archive answered as, when it is not ours; else None."""
    version = answer.get("binaryVersion")
    if isinstance(version, str) and version and version != __version__ and answer.get("archiveId") == archive_id:
        return version
    return None


def send_operation(location: "ArchiveLocation", operation: "ops.ArchiveOperation", timeout_s: float) -> dict:
    """One-shot helper: connect (or start), send, return the reply, close."""
    with BrokerClient(location) as client:
        return client.request(operation, time.monotonic() + timeout_s)


__all__ = ["BrokerClient", "WAIT_TICK_S", "frame", "send_operation", "service_request"]
