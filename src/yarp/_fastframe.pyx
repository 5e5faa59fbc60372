# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Compiled frame splitter and payload kernel; `yarp._fastframe_py` is its twin.

Frames are an 8-byte big-endian unsigned length followed by that many body bytes.
`FrameSplitter` works on the raw buffer of whatever it is fed (no Python-level
slicing) and writes a large body straight into the bytes object it will return,
allocated once when the header has passed the limit check. A declared length is
checked the moment its 8 header bytes are in, so an oversize or empty frame is
refused before any body byte is buffered or allocated.

`prepare_payload` hashes the exact bytes and decides whether Zstandard level 3 is
worth storing (rule and measurements: docs/decisions.md, "Payload compression").
hashlib and zstandard release the GIL on large inputs; this module calls them
with whole buffers so that stays true.

This module must behave byte for byte like the pure-Python twin.
"""

from cpython.buffer cimport (
    PyBUF_SIMPLE,
    PyBUF_WRITABLE,
    PyBuffer_FillInfo,
    PyBuffer_Release,
    PyObject_GetBuffer,
)
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from libc.string cimport memcpy

from . import limits
from ._digest import hash_in_background, joined_digest, payload_sha256
from .errors import FrameError, FrameTooLarge

IMPLEMENTATION = "c"

cdef enum:
    HEADER = 8

# Same rule as the twin, with the numbers from `limits`; see docs/decisions.md ("Payload compression").
cdef Py_ssize_t _MIN_COMPRESS = limits.MIN_COMPRESS_BYTES
cdef Py_ssize_t _MIN_SAVING_BYTES = limits.MIN_SAVING_BYTES
cdef double _MIN_SAVING_RATIO = limits.MIN_SAVING_RATIO
cdef Py_ssize_t _PROBE_THRESHOLD = limits.PROBE_THRESHOLD_BYTES
cdef Py_ssize_t _PROBE_SLICE = limits.PROBE_SLICE_BYTES
cdef double _PROBE_MIN_SAVING_RATIO = limits.PROBE_MIN_SAVING_RATIO

# Per-thread compressors, created on first use: importing threading (and
# hashlib, see yarp._digest) at load would cost every frame-only client.
cdef object _local = None


cdef object _compressor():
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

        comp = zstandard.ZstdCompressor(level=limits.COMPRESSION_LEVEL)
        _local.compressor = comp
    return comp


cdef inline bint _worth_it(Py_ssize_t size, Py_ssize_t stored, double ratio, Py_ssize_t min_bytes):
    cdef Py_ssize_t saved = size - stored
    return saved >= min_bytes and saved >= size * ratio


def prepare_payload(data):
    """Return (SHA-256 of `data`, "none" | "zstd", stored body).

    The digest is always over the uncompressed bytes; the stored body is `data`
    itself unless Zstandard level 3 saves enough to justify its overhead.
    """
    cdef bytes raw = data if type(data) is bytes else bytes(data)
    cdef Py_ssize_t size = len(raw)
    if size >= limits.PARALLEL_HASH_BYTES:
        thread, box = hash_in_background(raw)
        compression, body = _compress_decision(raw, size)
        return joined_digest(thread, box, raw), compression, body
    digest = payload_sha256(raw)
    compression, body = _compress_decision(raw, size)
    return digest, compression, body


cdef tuple _compress_decision(bytes raw, Py_ssize_t size):
    cdef Py_ssize_t mid
    if size < _MIN_COMPRESS:
        return "none", raw
    comp = _compressor()
    if size >= _PROBE_THRESHOLD:
        mid = (size - _PROBE_SLICE) // 2
        sample = raw[:_PROBE_SLICE] + raw[mid:mid + _PROBE_SLICE] + raw[size - _PROBE_SLICE:]
        if not _worth_it(len(sample), len(comp.compress(sample)), _PROBE_MIN_SAVING_RATIO, 0):
            return "none", raw
    cdef bytes packed = comp.compress(raw)
    if _worth_it(size, len(packed), _MIN_SAVING_RATIO, _MIN_SAVING_BYTES):
        return "zstd", packed
    return "none", raw



cdef object _length_error(unsigned long long declared, unsigned long long limit):
    if declared > limit:
        return FrameTooLarge(declared, limit)
    if declared == 0:
        return FrameError("frame of zero bytes: valid frame lengths start at 1")
    return None


def encode_frame(body, max_frame_bytes=limits.MAX_FRAME_BYTES):
    """Return the 8-byte big-endian length header followed by `body`."""
    cdef Py_buffer buf
    cdef unsigned long long size
    cdef int i
    cdef char *out
    PyObject_GetBuffer(body, &buf, PyBUF_SIMPLE)
    try:
        size = <unsigned long long>buf.len
        err = _length_error(size, max_frame_bytes)
        if err is not None:
            raise err
        result = PyBytes_FromStringAndSize(NULL, buf.len + HEADER)
        out = PyBytes_AS_STRING(result)
        for i in range(HEADER):
            out[i] = <char>((size >> (8 * (HEADER - 1 - i))) & 0xFF)
        memcpy(out + HEADER, buf.buf, buf.len)
        return result
    finally:
        PyBuffer_Release(&buf)


cdef class _BodyWindow:
    """A writable buffer over the unfilled part of the body in progress."""

    cdef object owner
    cdef char *ptr
    cdef Py_ssize_t length

    def __getbuffer__(self, Py_buffer *view, int flags):
        PyBuffer_FillInfo(view, self, self.ptr, self.length, 0, flags)

    def __releasebuffer__(self, Py_buffer *view):
        pass


cdef class FrameSplitter:
    """Turns a byte stream into whole frame bodies.

    `feed` returns nothing until a whole frame is buffered. After an error the
    splitter stays failed: every later `feed` raises the same error again.
    """

    cdef unsigned long long _limit
    cdef unsigned char _header[HEADER]
    cdef Py_ssize_t _hlen
    cdef object _body          # bytes object filled in place; sole reference until returned
    cdef char *_body_ptr
    cdef Py_ssize_t _need
    cdef Py_ssize_t _have
    cdef object _error
    cdef bytearray _scratch

    def __cinit__(self, max_frame_bytes=limits.MAX_FRAME_BYTES):
        if max_frame_bytes < 1:
            raise ValueError("max_frame_bytes must be at least 1")
        self._limit = max_frame_bytes
        self._hlen = 0
        self._body = None
        self._body_ptr = NULL
        self._need = 0
        self._have = 0
        self._error = None
        self._scratch = None

    @property
    def max_frame_bytes(self):
        return self._limit

    @property
    def buffered(self):
        """Bytes held for the frame in progress (header and body)."""
        if self._body is not None:
            return HEADER + self._have
        return self._hlen

    @property
    def at_boundary(self):
        """True when no partial frame is held (EOF here is a clean end)."""
        return self._body is None and self._hlen == 0

    cdef _raise_failed(self):
        exc = self._error
        if isinstance(exc, FrameTooLarge):
            raise FrameTooLarge(exc.declared, exc.limit)
        raise type(exc)(exc.message)

    cdef int _start_body(self, unsigned long long declared) except -1:
        err = _length_error(declared, self._limit)
        if err is not None:
            self._error = err
            self._hlen = 0
            self._body = None
            self._body_ptr = NULL
            raise err
        self._hlen = 0
        # The length passed the limit check, so one allocation of the final
        # size keeps large frames linear in the bytes fed.
        self._body = PyBytes_FromStringAndSize(NULL, <Py_ssize_t>declared)
        self._body_ptr = PyBytes_AS_STRING(self._body)
        self._need = <Py_ssize_t>declared
        self._have = 0
        return 0

    cdef object _finish_body(self):
        body = self._body
        self._body = None
        self._body_ptr = NULL
        return body

    cdef list _consume(self, const unsigned char *src, Py_ssize_t end):
        cdef Py_ssize_t pos = 0
        cdef Py_ssize_t take
        cdef unsigned long long declared
        cdef int i
        cdef list frames = []
        while pos < end:
            if self._body is None:
                if self._hlen == 0 and end - pos >= HEADER:
                    declared = 0
                    for i in range(HEADER):
                        declared = (declared << 8) | src[pos + i]
                    pos += HEADER
                    if 0 < declared <= self._limit and <unsigned long long>(end - pos) >= declared:
                        # Whole frame already here: one copy, no staging buffer.
                        frames.append(PyBytes_FromStringAndSize(<const char *>src + pos, <Py_ssize_t>declared))
                        pos += <Py_ssize_t>declared
                        continue
                    self._start_body(declared)
                    continue
                take = min(HEADER - self._hlen, end - pos)
                memcpy(self._header + self._hlen, src + pos, take)
                self._hlen += take
                pos += take
                if self._hlen == HEADER:
                    declared = 0
                    for i in range(HEADER):
                        declared = (declared << 8) | self._header[i]
                    self._start_body(declared)
                continue
            take = min(self._need - self._have, end - pos)
            memcpy(self._body_ptr + self._have, src + pos, take)
            self._have += take
            pos += take
            if self._have == self._need:
                frames.append(self._finish_body())
        return frames

    def feed(self, data):
        """Append bytes and return every frame body they complete (often none)."""
        cdef Py_buffer buf
        if self._error is not None:
            self._raise_failed()
        PyObject_GetBuffer(data, &buf, PyBUF_SIMPLE)
        try:
            return self._consume(<const unsigned char *>buf.buf, buf.len)
        finally:
            PyBuffer_Release(&buf)

    # -- asyncio.BufferedProtocol support ------------------------------------
    def get_buffer(self, Py_ssize_t sizehint=-1):
        """A writable buffer to receive into; pass the count to `buffer_updated`.

        While a body is in progress the view points straight into it, so large
        frames are read without an intermediate copy. The view is valid only
        until the next `buffer_updated` or `feed`.
        """
        cdef _BodyWindow window
        cdef Py_ssize_t size
        if self._error is not None:
            self._raise_failed()
        if self._body is not None:
            window = _BodyWindow.__new__(_BodyWindow)
            window.owner = self._body
            window.ptr = self._body_ptr + self._have
            window.length = self._need - self._have
            return memoryview(window)
        size = sizehint if sizehint > 65536 else 65536
        if self._scratch is None or len(self._scratch) < size:
            self._scratch = bytearray(size)
        return memoryview(self._scratch)[:size]

    def buffer_updated(self, Py_ssize_t nbytes):
        """Account for `nbytes` written into the last `get_buffer` view."""
        cdef Py_buffer buf
        if self._error is not None:
            self._raise_failed()
        if nbytes < 0:
            raise ValueError("nbytes must not be negative")
        if self._body is not None:
            if nbytes > self._need - self._have:
                raise ValueError("nbytes exceeds the buffer handed out")
            self._have += nbytes
            if self._have < self._need:
                return []
            return [self._finish_body()]
        if self._scratch is None or nbytes > len(self._scratch):
            raise ValueError("nbytes exceeds the buffer handed out")
        PyObject_GetBuffer(self._scratch, &buf, PyBUF_SIMPLE)
        try:
            return self._consume(<const unsigned char *>buf.buf, nbytes)
        finally:
            PyBuffer_Release(&buf)


# -- canonical JSON fast-path admission -----------------------------------------
# Same rule as `_fastframe_py.canonical_fast_path_ok`; the reasons live there.
from cpython.long cimport PyLong_AsLongLongAndOverflow

cdef long long _MAX_SAFE = limits.MAX_SAFE_INTEGER
cdef int _FAST_PATH_MAX_DEPTH = limits.FAST_PATH_MAX_DEPTH


cdef inline bint _safe_int(object value) except -1:
    cdef int overflow = 0
    cdef long long v = PyLong_AsLongLongAndOverflow(value, &overflow)
    return overflow == 0 and -_MAX_SAFE <= v <= _MAX_SAFE


cdef inline bint _safe_key(str key):
    cdef Py_UCS4 ch
    if key.isascii():
        return True
    for ch in key:
        if ch >= 0xE000:
            return False
    return True


cdef bint _scan(object value, int depth) except -1:
    cdef type kind = type(value)
    cdef type t
    if kind is dict:
        if depth >= _FAST_PATH_MAX_DEPTH:
            return False
        for key, item in (<dict>value).items():
            if type(key) is not str or not _safe_key(<str>key):
                return False
            t = type(item)
            if t is str or item is None or t is bool:
                continue
            if t is int:
                if _safe_int(item):
                    continue
                return False
            if not _scan(item, depth + 1):
                return False
        return True
    if kind is list:
        if depth >= _FAST_PATH_MAX_DEPTH:
            return False
        for item in <list>value:
            t = type(item)
            if t is str or item is None or t is bool:
                continue
            if t is int:
                if _safe_int(item):
                    continue
                return False
            if not _scan(item, depth + 1):
                return False
        return True
    if kind is str or value is None or kind is bool:
        return True
    if kind is int:
        return _safe_int(value)
    return False


def canonical_fast_path_ok(value):
    """True when orjson's sorted compact output equals RFC 8785 for `value`."""
    return _scan(value, 0)
