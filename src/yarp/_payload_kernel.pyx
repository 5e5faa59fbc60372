# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Compiled payload kernel; `yarp._payload_kernel_py` is its twin.

`prepare_payload` hashes the exact bytes and decides whether Zstandard level 3 is
worth storing (rule and measurements: docs/design/archive.md, "Payload compression").
hashlib and zstandard release the GIL on large inputs; this module calls them
with whole buffers so that stays true.

`canonical_fast_path_ok` decides whether orjson's sorted compact output is the
RFC 8785 canonical form of a value, `canonical_fast` returns that output when
it is, and `same_json` tells whether two values must have the same canonical
bytes (the reasons live in the twin).

Only the broker and the commands that store payloads load this module; the
bridge, `yarp run` and the hooks relay frames (`yarp._fastframe`) and must
never import it. It must behave byte for byte like the pure-Python twin, and
every number it uses comes from `yarp.limits`.
"""

from cpython.long cimport PyLong_AsLongLongAndOverflow

from . import limits
from ._digest import hash_in_background, joined_digest, payload_sha256_constructor

IMPLEMENTATION = "c"

# Same rule as the twin, with the numbers from `limits`; see docs/design/archive.md ("Payload compression").
cdef Py_ssize_t _MIN_COMPRESS = limits.MIN_COMPRESS_BYTES
cdef Py_ssize_t _MIN_SAVING_BYTES = limits.MIN_SAVING_BYTES
cdef double _MIN_SAVING_RATIO = limits.MIN_SAVING_RATIO
cdef Py_ssize_t _PROBE_THRESHOLD = limits.PROBE_THRESHOLD_BYTES
cdef Py_ssize_t _PROBE_SLICE = limits.PROBE_SLICE_BYTES
cdef double _PROBE_MIN_SAVING_RATIO = limits.PROBE_MIN_SAVING_RATIO
cdef Py_ssize_t _PARALLEL_HASH = limits.PARALLEL_HASH_BYTES

# Per-thread compressors, created on first use: importing threading (and
# hashlib, see yarp._digest) at load would cost every command that loads the
# codec without compressing anything.
cdef object _local = None
#: OpenSSL's SHA-256 constructor, looked up on the first payload (`yarp._digest`).
cdef object _sha256 = None


cdef object _compressor():
    # ZstdCompressor is not thread-safe, but reusing one per thread avoids
    # rebuilding its context on every payload (2-4x faster for small inputs).
    # zstandard is imported on first use, not at module load.
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
    global _sha256
    cdef bytes raw = data if type(data) is bytes else bytes(data)
    cdef Py_ssize_t size = len(raw)
    if size >= _PARALLEL_HASH:
        thread, box = hash_in_background(raw)
        compression, body = _compress_decision(raw, size)
        return joined_digest(thread, box, raw), compression, body
    if _sha256 is None:
        _sha256 = payload_sha256_constructor()
    digest = _sha256(raw).digest()
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


# -- canonical JSON fast-path admission -----------------------------------------
# Same rule as `_payload_kernel_py.canonical_fast_path_ok`; the reasons live there.

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
    # The dict and list loops stay apart here (the twin shares one): Cython
    # iterates a typed dict and a typed list directly, and one loop over a
    # dict's values view made a nested document four times slower.
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


cdef object _dumps = None
cdef object _sort_keys = None
cdef object _encode_error = None


def canonical_fast(value):
    """orjson's sorted compact bytes of `value` when they are its RFC 8785 form; else None."""
    global _dumps, _sort_keys, _encode_error
    if not _scan(value, 0):
        return None
    if _dumps is None:
        import orjson

        _dumps, _sort_keys, _encode_error = orjson.dumps, orjson.OPT_SORT_KEYS, orjson.JSONEncodeError
    try:
        return _dumps(value, option=_sort_keys)
    except _encode_error:
        return None


cdef bint _same(object a, object b) except -1:
    cdef type kind
    cdef Py_ssize_t i, n
    if a is b:
        return True
    kind = type(a)
    if kind is not type(b):
        return False
    if kind is dict:
        if len(<dict>a) != len(<dict>b):
            return False
        for key, value in (<dict>a).items():
            other = (<dict>b).get(key, _MISSING)
            if other is _MISSING or not _same(value, other):
                return False
        return True
    if kind is list:
        n = len(<list>a)
        if n != len(<list>b):
            return False
        for i in range(n):
            if not _same((<list>a)[i], (<list>b)[i]):
                return False
        return True
    if kind is str or kind is int or kind is float or kind is bool or a is None:
        return a == b
    return False


cdef object _MISSING = object()


def same_json(a, b):
    """Whether two JSON values are equal with the same type at every level (see the twin)."""
    return _same(a, b)
