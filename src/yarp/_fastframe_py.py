"""Pure-Python twin of `yarp._fastframe`: frame splitting and encoding.

Frames are an 8-byte big-endian unsigned length followed by that many body bytes.
`FrameSplitter` is a buffer plus a two-state machine (header, body): `feed` only
appends and returns the frames completed by the bytes it was given. A declared
length is checked the moment its 8 header bytes are in, so an oversize or empty
frame is refused before any body byte is buffered or allocated.

Every client of the broker loads this module (through `yarp.wire.frames`): the
bridge for every session, `yarp run` and the hooks when they start a broker.
So it holds frames only; payload hashing, compression and canonical-JSON
admission live in `yarp._payload_kernel_py`. This module must behave byte for
byte like the compiled extension and must never buffer a frame body before its
declared length has passed the limit check.
"""

from __future__ import annotations

from yarp import limits
from yarp.errors import FrameError, FrameTooLarge

IMPLEMENTATION = "py"

_HEADER = limits.FRAME_HEADER_BYTES
_MIN_RECEIVE = limits.MIN_RECEIVE_BUFFER_BYTES


def _check_length(declared: int, limit: int) -> None:
    if declared > limit:
        raise FrameTooLarge(declared, limit)
    if declared == 0:
        raise FrameError("frame of zero bytes: valid frame lengths start at 1")


def encode_frame(body, max_frame_bytes: int = limits.MAX_FRAME_BYTES) -> bytes:
    """Return the 8-byte big-endian length header followed by `body`."""
    size = len(body)
    _check_length(size, max_frame_bytes)
    return size.to_bytes(_HEADER, "big") + bytes(body)


class FrameSplitter:
    """Turns a byte stream into whole frame bodies.

    `feed` returns nothing until a whole frame is buffered. After an error the
    splitter stays failed: every later `feed` raises the same error again.
    """

    __slots__ = ("_limit", "_header", "_have", "_body", "_need", "_error", "_scratch")

    def __init__(self, max_frame_bytes: int = limits.MAX_FRAME_BYTES) -> None:
        if max_frame_bytes < 1:
            raise ValueError("max_frame_bytes must be at least 1")
        self._limit = max_frame_bytes
        self._header = bytearray()
        self._body: bytearray | None = None
        self._need = 0
        self._have = 0
        self._error: Exception | None = None
        self._scratch: bytearray | None = None

    @property
    def max_frame_bytes(self) -> int:
        """The largest frame body accepted; a longer declared length fails before any allocation."""
        return self._limit

    @property
    def buffered(self) -> int:
        """Bytes held for the frame in progress (header and body)."""
        if self._body is not None:
            return _HEADER + self._have
        return len(self._header)

    @property
    def at_boundary(self) -> bool:
        """True when no partial frame is held (EOF here is a clean end)."""
        return self._body is None and not self._header

    def _fail(self, exc: Exception) -> None:
        self._error = exc
        self._header = bytearray()
        self._body = None
        raise exc

    def _raise_failed(self):
        exc = self._error
        if isinstance(exc, FrameTooLarge):
            raise FrameTooLarge(exc.declared, exc.limit)
        raise type(exc)(exc.message)

    def _start_body(self, declared: int) -> None:
        try:
            _check_length(declared, self._limit)
        except FrameError as exc:
            self._fail(exc)
        self._header = bytearray()
        # The body grows as bytes arrive (bytearray appends are amortised
        # linear): zero-filling the declared size up front would make a peer
        # that sends only a header hold that much resident memory.
        self._body = bytearray()
        self._need = declared
        self._have = 0

    def feed(self, data) -> list[bytes]:
        """Append bytes and return every frame body they complete (often none)."""
        if self._error is not None:
            self._raise_failed()
        view = memoryview(data).cast("B")
        end = len(view)
        pos = 0
        frames: list[bytes] = []
        limit = self._limit
        while pos < end:
            body = self._body
            if body is None:
                header = self._header
                if not header and end - pos >= _HEADER:
                    declared = int.from_bytes(view[pos : pos + _HEADER], "big")
                    pos += _HEADER
                    if 0 < declared <= limit and end - pos >= declared:
                        # Whole frame already here: one copy, no staging buffer.
                        frames.append(bytes(view[pos : pos + declared]))
                        pos += declared
                        continue
                    self._start_body(declared)
                    continue
                take = min(_HEADER - len(header), end - pos)
                header += view[pos : pos + take]
                pos += take
                if len(header) == _HEADER:
                    self._start_body(int.from_bytes(header, "big"))
                continue
            take = min(self._need - self._have, end - pos)
            body += view[pos : pos + take]
            self._have += take
            pos += take
            if self._have == self._need:
                frames.append(bytes(body))
                self._body = None
        return frames

    # -- asyncio.BufferedProtocol support ------------------------------------
    def get_buffer(self, sizehint: int = -1) -> memoryview:
        """A writable buffer to receive into; pass the count to `buffer_updated`.

        The view is a reusable scratch buffer (the twin grows frame bodies as
        bytes arrive instead of preallocating them), valid only until the next
        `buffer_updated` or `feed`.
        """
        if self._error is not None:
            self._raise_failed()
        size = max(sizehint, _MIN_RECEIVE) if sizehint and sizehint > 0 else _MIN_RECEIVE
        if self._scratch is None or len(self._scratch) < size:
            self._scratch = bytearray(size)
        return memoryview(self._scratch)[:size]

    def buffer_updated(self, nbytes: int) -> list[bytes]:
        """Account for `nbytes` written into the last `get_buffer` view."""
        if self._error is not None:
            self._raise_failed()
        if nbytes < 0:
            raise ValueError("nbytes must not be negative")
        scratch = self._scratch
        if scratch is None or nbytes > len(scratch):
            raise ValueError("nbytes exceeds the buffer handed out")
        return self.feed(memoryview(scratch)[:nbytes])
