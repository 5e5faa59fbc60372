"""Payload codec: canonical JSON, exact byte payloads, SHA-256 and compression.

Everything the archive stores goes through here before the SQLite write lock is
taken: tool inputs and structured results become RFC 8785 canonical JSON
(`application/json`); result text, source output, stdout and stderr keep their
exact bytes (`text/plain; charset=utf-8` when valid UTF-8, else
`application/octet-stream`). `sha256` is over the uncompressed bytes; the
compression decision lives in the `fastframe` kernel.

This module never touches SQLite and never normalises bytes.
"""

from __future__ import annotations

from dataclasses import dataclass

import rfc8785

from .errors import ValidationError
from .fastframe import prepare_payload

MEDIA_JSON = "application/json"
MEDIA_TEXT = "text/plain; charset=utf-8"
MEDIA_BINARY = "application/octet-stream"

#: Largest integer magnitude RFC 8785 (I-JSON) represents exactly.
MAX_SAFE_INTEGER = 2**53 - 1


@dataclass(frozen=True, slots=True)
class Payload:
    """One content-addressed payload, ready to insert."""

    sha256: bytes
    compression: str
    length: int
    body: bytes
    media_type: str


def canonical_json(value: object) -> bytes:
    """Return the RFC 8785 canonical UTF-8 bytes of a JSON value.

    Values RFC 8785 cannot represent exactly (integers beyond ±(2^53−1), NaN,
    infinities, lone surrogates, non-string keys) are refused with a bounded
    `ValidationError`; see docs/decisions.md ("Values RFC 8785 cannot represent").
    """
    try:
        return rfc8785.dumps(value)
    except rfc8785.IntegerDomainError:
        raise ValidationError("JSON value holds an integer beyond ±(2^53−1), which canonical JSON cannot store exactly") from None
    except rfc8785.FloatDomainError:
        raise ValidationError("JSON value holds NaN or an infinity, which canonical JSON cannot store") from None
    except (rfc8785.CanonicalizationError, UnicodeError, TypeError, ValueError, RecursionError):
        raise ValidationError("JSON value cannot be stored as canonical JSON") from None


def media_type_of(data: bytes) -> str:
    try:
        data.decode("utf-8")
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


def decode_body(compression: str, body: bytes, length: int | None = None) -> bytes:
    """Return the uncompressed bytes of a stored payload body."""
    if compression == "none":
        return bytes(body)
    if compression == "zstd":
        import zstandard

        return zstandard.ZstdDecompressor().decompress(body, max_output_size=length or 0)
    raise ValidationError("unknown payload compression")
