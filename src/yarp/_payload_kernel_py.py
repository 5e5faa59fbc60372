"""Pure-Python twin of `yarp._payload_kernel`: payload preparation and canonical-JSON admission.

`prepare_payload` hashes the exact bytes and decides whether Zstandard level 3 is
worth storing (rule and measurements: docs/design/archive.md, "Payload compression").
`canonical_fast_path_ok` decides whether orjson's sorted compact output is the
RFC 8785 canonical form of a value, and `canonical_fast` returns that output
when it is (the admission and the encoding in one call); `same_json` tells
whether two values are bound to have the same canonical bytes, so a tool input
the agent did not rewrite is encoded once.

Only the broker and the commands that store payloads load this module; the
bridge, `yarp run` and the hooks relay frames (`yarp.wire.frames`) and must never
import it. It must behave byte for byte like the compiled extension, and every
number it uses comes from `yarp.limits`.
"""

from __future__ import annotations

from yarp import limits
from yarp._digest import hash_in_background, joined_digest, payload_sha256

IMPLEMENTATION = "py"

# Per-thread compressors, created on first use (see the compiled kernel).
_local = None


def _compressor():
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

        comp = _local.compressor = zstandard.ZstdCompressor(level=limits.COMPRESSION_LEVEL)
    return comp


def _worth_it(size: int, stored: int, ratio: float, min_bytes: int) -> bool:
    saved = size - stored
    return saved >= min_bytes and saved >= size * ratio


def _probe_says_incompressible(data, size: int, comp) -> bool:
    slice_bytes = limits.PROBE_SLICE_BYTES
    mid = (size - slice_bytes) // 2
    sample = b"".join((data[:slice_bytes], data[mid : mid + slice_bytes], data[size - slice_bytes :]))
    probe = comp.compress(sample)
    return not _worth_it(len(sample), len(probe), limits.PROBE_MIN_SAVING_RATIO, 0)


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
    if size < limits.MIN_COMPRESS_BYTES:
        return "none", data
    comp = _compressor()
    if size >= limits.PROBE_THRESHOLD_BYTES and _probe_says_incompressible(data, size, comp):
        return "none", data
    packed = comp.compress(data)
    if _worth_it(size, len(packed), limits.MIN_SAVING_RATIO, limits.MIN_SAVING_BYTES):
        return "zstd", packed
    return "none", data


# -- canonical JSON fast-path admission -----------------------------------------
# Largest integer magnitude RFC 8785 (I-JSON) represents exactly, and the nesting
# the scan follows before it hands the value to rfc8785: both from `limits`.
_MAX_SAFE = limits.MAX_SAFE_INTEGER
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
    if kind is dict or kind is list:
        if depth >= _FAST_PATH_MAX_DEPTH:
            return False
        if kind is dict:
            for key in value:
                if type(key) is not str or (not key.isascii() and max(key) >= _FIRST_UNSAFE_KEY_CHAR):
                    return False
            value = value.values()
        # Leaves are checked in line, not by recursion: most items of a tool call are strings.
        for item in value:
            t = type(item)
            if t is str or item is None or t is bool:
                continue
            if t is int:
                if -_MAX_SAFE <= item <= _MAX_SAFE:
                    continue
                return False
            if not canonical_fast_path_ok(item, depth + 1):
                return False
        return True
    if kind is str or value is None or kind is bool:
        return True
    if kind is int:
        return -_MAX_SAFE <= value <= _MAX_SAFE
    return False


_orjson = None


def canonical_fast(value: object) -> bytes | None:
    """orjson's sorted compact bytes of `value` when they are its RFC 8785 form; else None.

    None for a value `canonical_fast_path_ok` does not admit, and for one orjson
    refuses (a lone surrogate): the reference encoder decides those.
    """
    global _orjson
    if not canonical_fast_path_ok(value):
        return None
    if _orjson is None:
        import orjson

        _orjson = orjson
    try:
        return _orjson.dumps(value, option=_orjson.OPT_SORT_KEYS)
    except _orjson.JSONEncodeError:
        return None


_MISSING = object()


def same_json(a: object, b: object) -> bool:
    """Whether two JSON values are equal with the same type at every level.

    Then their canonical bytes are equal (or both refused). Python's own `==`
    is not enough: `1 == True == 1.0`, yet `1`, `true` and `1.0` are different
    JSON. Types other than JSON's are never the same (False), so the caller
    encodes both.
    """
    if a is b:
        return True
    kind = type(a)
    if kind is not type(b):
        return False
    if kind is dict:
        if len(a) != len(b):
            return False
        for key, value in a.items():
            other = b.get(key, _MISSING)
            if other is _MISSING or not same_json(value, other):
                return False
        return True
    if kind is list:
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b))
    if kind is str or kind is int or kind is float or kind is bool or a is None:
        return a == b
    return False
