# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Compiled frame splitter and encoder; `yarp._fastframe_py` is its twin.

Frames are an 8-byte big-endian unsigned length followed by that many body bytes.
`FrameSplitter` works on the raw buffer of whatever it is fed (no Python-level
slicing) and writes a large body straight into the bytes object it will return,
allocated once when the header has passed the limit check. A declared length is
checked the moment its 8 header bytes are in, so an oversize or empty frame is
refused before any body byte is buffered or allocated.

Every client of the broker loads this module (through `yarp.fastframe`): the
bridge for every session, `yarp run` and the hooks when they start a broker.
So it holds frames only; payload hashing, compression and canonical-JSON
admission live in `yarp._payload_kernel`. This module must behave byte for byte
like the pure-Python twin, and its numbers come from `yarp.limits`.
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
from .errors import FrameError, FrameTooLarge

IMPLEMENTATION = "c"

cdef enum:
    # A compile-time constant (it sizes the header array); checked against
    # `limits` at load so the wire format stays defined in one place.
    HEADER = 8

if HEADER != limits.FRAME_HEADER_BYTES:
    raise ImportError("yarp._fastframe was built for another frame header size")

cdef Py_ssize_t _MIN_RECEIVE = limits.MIN_RECEIVE_BUFFER_BYTES


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
        """The largest frame body accepted; a longer declared length fails before any allocation."""
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
        size = sizehint if sizehint > _MIN_RECEIVE else _MIN_RECEIVE
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
