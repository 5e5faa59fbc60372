"""One client connection: its state, its frames, its replies.

`ClientConnection` is an `asyncio.BufferedProtocol`: the event loop reads
straight into the frame splitter's buffer (a reused scratch buffer, or the
body of a large frame in progress, so a big request is never staged and
copied), and whole frames are handed to the broker. Where the connection
stands is one explicit `State`, not a set of flags:

    HANDSHAKE ──handshake ok──▶ OPEN ◀──resume──▶ PAUSED
        │                        │  ▲                │
        │                  pause_writing  resume_writing (→ PAUSED, then OPEN
        │                        ▼  │                 once nothing waits)
        │                      STALLED
        └───────── any failure, peer gone, shutdown ─────────▶ CLOSED

PAUSED: reading stopped because its next frame waits for admission.
STALLED: reading and answering stopped because the client does not read its
replies (the transport passed its high-water mark).
"""

from __future__ import annotations

import asyncio
import collections
import enum
import os
import socket
import struct
import time

from yarp.errors import FrameError, ShuttingDown, YarpError
from yarp.limits import MAX_FRAME_BYTES, MAX_HANDSHAKE_BYTES
from yarp.wire import protocol
from yarp.wire.frames import FrameSplitter, encode_frame

_PEERCRED = struct.Struct("3i")


class State(enum.Enum):
    """Where a connection stands in its life.

    PAUSED: reading stopped by admission; STALLED: reading stopped because the
    client leaves its replies unread (the transport's write buffer is full).
    """

    HANDSHAKE = "handshake"
    OPEN = "open"
    PAUSED = "paused"
    STALLED = "stalled"
    CLOSED = "closed"


class ClientConnection(asyncio.BufferedProtocol):
    """Feeds the splitter, hands whole frames to the broker, sends replies."""

    def __init__(self, broker) -> None:
        self.broker = broker
        self.transport: asyncio.Transport | None = None
        self.state = State.HANDSHAKE
        self.splitter = FrameSplitter(MAX_HANDSHAKE_BYTES)
        self.correlation_id: str | None = None
        #: Whole frames read but not yet admitted, with their arrival time: a
        #: request's deadline runs from arrival, not from admission.
        self.pending: collections.deque[tuple[bytes, float]] = collections.deque()
        #: (frame, what admission decoded of it): the head frame is decoded once however often it waits.
        self.decoded: tuple | None = None
        #: The one admitted request of this connection, if any.
        self.admitted = None

    @property
    def closed(self) -> bool:
        """Whether the connection is closed; nothing more is read from or sent to it."""
        return self.state is State.CLOSED

    @property
    def stalled(self) -> bool:
        """Whether the client has stopped reading its replies; admission holds its next frame until it drains."""
        return self.state is State.STALLED

    # asyncio callbacks ---------------------------------------------------------

    def connection_made(self, transport) -> None:  # type: ignore[override]
        """Accept the peer only if it runs as our own user (SO_PEERCRED), else log and abort.

        The socket is 0600 already; the check also refuses a peer whose credentials cannot be read.
        """
        self.transport = transport
        sock = transport.get_extra_info("socket")
        try:
            _pid, uid, _gid = _PEERCRED.unpack(sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _PEERCRED.size))
        except (OSError, AttributeError, struct.error):
            uid = -1
        if uid != os.geteuid():
            self.broker.log("peer_rejected", reason="peer uid differs")
            self.state = State.CLOSED
            transport.abort()
            return
        self.broker.client_connected(self)

    def get_buffer(self, sizehint: int):
        """The splitter's buffer for the transport to read into (no copy per read)."""
        return self.splitter.get_buffer(sizehint)

    def buffer_updated(self, nbytes: int) -> None:
        """Take the whole frames just completed; a malformed or oversized frame fails the connection."""
        try:
            frames = self.splitter.buffer_updated(nbytes)
        except FrameError as exc:
            self.broker.log("frame_rejected", code=exc.code)
            self.fail(exc)
            return
        if frames:
            self._frames(frames)

    def eof_received(self):
        """Return False so the transport closes: a client that stops writing has no more requests."""
        return False

    def connection_lost(self, exc) -> None:
        """Mark the connection closed, drop its unadmitted frames and tell the broker it left."""
        self.state = State.CLOSED
        self.pending.clear()
        self.broker.client_disconnected(self)

    # frames --------------------------------------------------------------------

    def _frames(self, frames: list[bytes]) -> None:
        arrived = None
        for frame in frames:
            if self.state is State.CLOSED:
                return
            if self.state is State.HANDSHAKE:
                self._handshake(frame)
            else:
                if arrived is None:
                    arrived = time.monotonic()
                self.pending.append((frame, arrived))
        if self.pending:
            self.broker.admission.admit(self)

    def _handshake(self, frame: bytes) -> None:
        broker = self.broker
        try:
            if broker.closing:
                raise ShuttingDown("broker is shutting down; start a new one")
            correlation_id = protocol.check_handshake(frame, broker.archive_id)
        except YarpError as exc:
            self.send(protocol.handshake_reply(broker.archive_id, None, exc))
            self.close()
            return
        if self.splitter.buffered:
            self.correlation_id = correlation_id
            self.fail(FrameError("request sent before the handshake reply"))
            return
        self.correlation_id = correlation_id
        self.state = State.OPEN
        self.splitter = FrameSplitter(MAX_FRAME_BYTES)
        broker.client_opened(self)
        self.send(protocol.handshake_reply(broker.archive_id, correlation_id))

    # replies and closing ----------------------------------------------------------

    def send(self, body: bytes) -> None:
        """Write one framed reply; a closed connection silently gets nothing."""
        if self.state is not State.CLOSED and self.transport is not None:
            self.transport.write(encode_frame(body))

    def fail(self, error: YarpError) -> None:
        """Answer a connection-level failure (after the handshake) and close."""
        if self.correlation_id is not None:
            self.send(protocol.reply_error(error))
        self.close()

    def close(self) -> None:
        """Close the transport once; replies already written are still flushed."""
        if self.state is not State.CLOSED and self.transport is not None:
            self.state = State.CLOSED
            self.transport.close()

    # reading: admission backpressure ----------------------------------------------

    def pause(self) -> None:
        """Stop reading from an open client until admission has room for its next frame."""
        if self.state is State.OPEN and self.transport is not None:
            self.state = State.PAUSED
            self.transport.pause_reading()

    def resume(self) -> None:
        """Read again from a client that admission paused."""
        if self.state is State.PAUSED and self.transport is not None:
            self.state = State.OPEN
            self.transport.resume_reading()

    # writing: the transport passed its high-water mark, the client is not
    # reading its replies. Stop admitting and reading until it drains.

    def pause_writing(self) -> None:
        """The transport's write buffer is full: stop reading from this client until it drains its replies,
        so an unread reply stream cannot grow the broker's memory.
        """
        if self.state not in (State.OPEN, State.PAUSED):
            return
        if self.state is State.OPEN and self.transport is not None:
            self.transport.pause_reading()
        self.state = State.STALLED

    def resume_writing(self) -> None:
        """The client drained its replies: admit its waiting frames, and read again once none are left."""
        if self.state is not State.STALLED:
            return
        self.state = State.PAUSED
        if self.pending:
            self.broker.admission.admit(self)
        if not self.pending:
            self.resume()
