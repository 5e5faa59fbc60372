"""Pure-Python twin of `yarp._fastframe`: frame splitting and payload preparation.

Frames are an 8-byte big-endian unsigned length followed by that many body bytes.
`FrameSplitter` is a buffer plus a two-state machine (header, body): `feed` only
appends and returns the frames completed by the bytes it was given. A declared
length is checked the moment its 8 header bytes are in, so an oversize or empty
frame is refused before any body byte is buffered or allocated.

`prepare_payload` hashes the exact bytes and decides whether Zstandard level 3 is
worth storing (rule and measurements: docs/decisions.md, "Payload compression").

This module must behave byte for byte like the compiled extension and must never
buffer a frame body before its declared length has passed the limit check.
"""

from __future__ import annotations

from . import limits
from ._digest import hash_in_background, joined_digest, payload_sha256
from .errors import FrameError, FrameTooLarge

IMPLEMENTATION = "py"

_HEADER = limits.FRAME_HEADER_BYTES

# The compression rule's numbers live in `limits` (one place for both twins).
MIN_COMPRESS_BYTES = limits.MIN_COMPRESS_BYTES
MIN_SAVING_RATIO = limits.MIN_SAVING_RATIO
MIN_SAVING_BYTES = limits.MIN_SAVING_BYTES
PROBE_THRESHOLD_BYTES = limits.PROBE_THRESHOLD_BYTES
PROBE_SLICE_BYTES = limits.PROBE_SLICE_BYTES
PROBE_MIN_SAVING_RATIO = limits.PROBE_MIN_SAVING_RATIO
COMPRESSION_LEVEL = limits.COMPRESSION_LEVEL

# Per-thread compressors, created on first use (see the compiled kernel).
_local = None


def _compressor():
    # ZstdCompressor is not thread-safe, but reusing one per thread avoids
    # rebuilding its context on every payload (2-4x faster for small inputs).
    # zstandard is imported here, not at module load: frame-only users such as
    # `yarp run` never pay for it.
    global _local
    if _local is None:
        import threading

        _local = threading.local()
    comp = getattr(_local, "compressor", None)
    if comp is None:
        import zstandard

        comp = _local.compressor = zstandard.ZstdCompressor(level=COMPRESSION_LEVEL)
    return comp


def _worth_it(size: int, stored: int, ratio: float, min_bytes: int) -> bool:
    saved = size - stored
    return saved >= min_bytes and saved >= size * ratio


def _probe_says_incompressible(data, size: int, comp) -> bool:
    mid = (size - PROBE_SLICE_BYTES) // 2
    sample = b"".join(
        (
            data[:PROBE_SLICE_BYTES],
            data[mid : mid + PROBE_SLICE_BYTES],
            data[size - PROBE_SLICE_BYTES :],
        )
    )
    probe = comp.compress(sample)
    return not _worth_it(len(sample), len(probe), PROBE_MIN_SAVING_RATIO, 0)


def prepare_payload(data) -> tuple[bytes, str, bytes]:
    """Return (SHA-256 of `data`, "none" | "zstd", stored body).

    The digest is always over the uncompressed bytes; the stored body is `data`
    itself unless Zstandard level 3 saves enough to justify its overhead.
    """
    data = bytes(data) if not isinstance(data, bytes) else data
    size = len(data)
    if size >= limits.PARALLEL_HASH_BYTES:
        thread, box = hash_in_background(data)
        compression, body = _compress_decision(data, size)
        return joined_digest(thread, box, data), compression, body
    digest = payload_sha256(data)
    compression, body = _compress_decision(data, size)
    return digest, compression, body


def _compress_decision(data: bytes, size: int) -> tuple[str, bytes]:
    if size < MIN_COMPRESS_BYTES:
        return "none", data
    comp = _compressor()
    if size >= PROBE_THRESHOLD_BYTES and _probe_says_incompressible(data, size, comp):
        return "none", data
    packed = comp.compress(data)
    if _worth_it(size, len(packed), MIN_SAVING_RATIO, MIN_SAVING_BYTES):
        return "zstd", packed
    return "none", data



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
        size = max(sizehint, 65536) if sizehint and sizehint > 0 else 65536
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


# -- canonical JSON fast-path admission -----------------------------------------
#: Largest integer magnitude RFC 8785 (I-JSON) represents exactly.
MAX_SAFE_INTEGER = limits.MAX_SAFE_INTEGER
#: Nesting the fast-path scan follows before it hands the value to rfc8785.
_FAST_PATH_MAX_DEPTH = limits.FAST_PATH_MAX_DEPTH
# RFC 8785 sorts keys by UTF-16 code units, orjson by code points: the two
# orders disagree only when a key holds a character at or above U+E000
# (U+E000-U+FFFF sort after surrogate pairs in UTF-16, before them by code point).
_FIRST_UNSAFE_KEY_CHAR = "\ue000"


def canonical_fast_path_ok(value: object, depth: int = 0) -> bool:
    """True when orjson's sorted compact output equals RFC 8785 for `value`.

    Exact built-in types only (subclasses may serialise differently); no floats
    (ECMAScript number formatting differs); integers within ±(2^53−1); keys
    below U+E000. Strings need no check: both encoders escape exactly `"`, `\\`
    and U+0000-U+001F, with the same short forms, and orjson refuses lone
    surrogates, which sends the value to the reference encoder.
    """
    kind = type(value)
    if kind is dict:
        if depth >= _FAST_PATH_MAX_DEPTH:
            return False
        for key, item in value.items():
            if type(key) is not str:
                return False
            if not key.isascii() and max(key) >= _FIRST_UNSAFE_KEY_CHAR:
                return False
            t = type(item)
            if t is str or item is None or t is bool:
                continue
            if t is int:
                if -MAX_SAFE_INTEGER <= item <= MAX_SAFE_INTEGER:
                    continue
                return False
            if not canonical_fast_path_ok(item, depth + 1):
                return False
        return True
    if kind is list:
        if depth >= _FAST_PATH_MAX_DEPTH:
            return False
        for item in value:
            t = type(item)
            if t is str or item is None or t is bool:
                continue
            if t is int:
                if -MAX_SAFE_INTEGER <= item <= MAX_SAFE_INTEGER:
                    continue
                return False
            if not canonical_fast_path_ok(item, depth + 1):
                return False
        return True
    if kind is str or value is None or kind is bool:
        return True
    if kind is int:
        return -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER
    return False
