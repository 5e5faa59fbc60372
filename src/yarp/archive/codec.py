"""Payload codec: canonical JSON, exact byte payloads, SHA-256 and compression.

Everything the archive stores goes through here before the SQLite write lock is
taken: tool inputs and structured results become RFC 8785 canonical JSON
(`application/json`); result text, source output, stdout and stderr keep their
exact bytes (`text/plain; charset=utf-8` when valid UTF-8, else
`application/octet-stream`). `sha256` is over the uncompressed bytes; the
compression decision lives in the payload kernel (`yarp.archive.payload_kernel`).

Canonical bytes come from `rfc8785`. For the common shape of tool data (no
floats, safe integers, keys below U+E000) orjson with sorted keys produces the
same bytes 40-80 times faster (bench/test_bench_payload.py); `canonical_fast` admits only values whose
output is proven byte-equal (tests/test_codec.py crosses both encoders; the
admission scan lives in the payload kernel), and
everything else goes to `rfc8785`.

This module never touches SQLite and never normalises bytes.
"""

from __future__ import annotations

import threading
from collections import namedtuple

import rfc8785
import zstandard

from yarp.archive.payload_kernel import canonical_fast, prepare_payload, same_json
from yarp.errors import ValidationError

MEDIA_JSON = "application/json"
MEDIA_TEXT = "text/plain; charset=utf-8"
MEDIA_BINARY = "application/octet-stream"


class Payload(namedtuple("Payload", ("sha256", "compression", "length", "body", "media_type"))):
    """One content-addressed payload, ready to insert: `sha256` (bytes), `compression`, `length`, `body`, `media_type`.

    A named tuple rather than a frozen dataclass: the broker builds one or more
    for every request, and a tuple is built in a third of the time.
    """

    __slots__ = ()


def _reference_canonical_json(value: object) -> bytes:
    try:
        return rfc8785.dumps(value)
    except rfc8785.IntegerDomainError:
        raise ValidationError(
            "JSON value holds an integer beyond ±(2^53−1), which canonical JSON cannot store exactly"
        ) from None
    except rfc8785.FloatDomainError:
        raise ValidationError("JSON value holds NaN or an infinity, which canonical JSON cannot store") from None
    except UnicodeError:
        raise ValidationError("JSON value holds a lone surrogate, which canonical JSON cannot store") from None
    except RecursionError:
        raise ValidationError("JSON value is nested too deeply to store as canonical JSON") from None
    except rfc8785.CanonicalizationError as exc:
        # rfc8785 reports lone surrogates only through this message.
        if "UTF-8" in str(exc):
            raise ValidationError("JSON value holds a lone surrogate, which canonical JSON cannot store") from None
        raise ValidationError("JSON value cannot be stored as canonical JSON") from None
    except (TypeError, ValueError):
        raise ValidationError("JSON value cannot be stored as canonical JSON") from None


def canonical_json(value: object) -> bytes:
    """Return the RFC 8785 canonical UTF-8 bytes of a JSON value.

    Values RFC 8785 cannot represent exactly (integers beyond ±(2^53−1), NaN,
    infinities, lone surrogates, non-string keys) are refused with a bounded
    `ValidationError`; see docs/design/archive.md ("Values RFC 8785 cannot represent").
    """
    fast = canonical_fast(value)  # None when not admitted, or refused by orjson (a lone surrogate)
    return fast if fast is not None else _reference_canonical_json(value)


def media_type_of(data: bytes) -> str:
    """`text/plain; charset=utf-8` for valid UTF-8, else `application/octet-stream`."""
    if data.isascii():
        return MEDIA_TEXT
    try:
        str(data, "utf-8")
    except UnicodeDecodeError:
        return MEDIA_BINARY
    return MEDIA_TEXT


def bytes_payload(data: bytes, media_type: str | None = None) -> Payload:
    """A payload of exact bytes; the media type follows UTF-8 validity unless given."""
    digest, compression, body = prepare_payload(data)
    return Payload(digest, compression, len(data), body, media_type or media_type_of(data))


def json_payload(value: object) -> Payload:
    """A payload of the canonical JSON bytes of `value`."""
    return bytes_payload(canonical_json(value), MEDIA_JSON)


def json_payload_pair(first: object, second: object) -> tuple[Payload, Payload]:
    """The payloads of two JSON values that are often the same (a tool input before and after a rewrite).

    Values of one type at every level and equal are encoded, hashed and
    compressed once (`same_json`); otherwise equal canonical bytes still share
    one payload.
    """
    first_bytes = canonical_json(first)
    payload = bytes_payload(first_bytes, MEDIA_JSON)
    if same_json(first, second):
        return payload, payload
    second_bytes = canonical_json(second)
    return payload, payload if second_bytes == first_bytes else bytes_payload(second_bytes, MEDIA_JSON)


_local = threading.local()


def _decompressor() -> zstandard.ZstdDecompressor:
    # Not thread-safe; one per thread avoids rebuilding a context per read.
    dec = getattr(_local, "decompressor", None)
    if dec is None:
        dec = _local.decompressor = zstandard.ZstdDecompressor()
    return dec


def decode_body(compression: str, body: bytes, length: int | None = None) -> bytes:
    """Return the uncompressed bytes of a stored payload body.

    When `length` is given the result must have exactly that many bytes; a body
    that cannot be decompressed or has the wrong length raises `ValidationError`.
    """
    if compression == "none":
        data = bytes(body)
    elif compression == "zstd":
        try:
            data = _decompressor().decompress(body, max_output_size=length or 0)
        except zstandard.ZstdError:
            raise ValidationError("stored zstd payload body cannot be decompressed") from None
    else:
        raise ValidationError("unknown payload compression")
    if length is not None and len(data) != length:
        raise ValidationError(f"stored payload body has {len(data)} bytes, expected {length}")
    return data
