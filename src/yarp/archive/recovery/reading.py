"""Read a recovery source's exact bytes: streamed, checked, bounded.

Payload bytes are streamed from SQLite one chunk at a time (`blobopen` plus a
streaming Zstandard reader) and checked against their stored length and
SHA-256 while they stream, so memory stays bounded by the chunk size and the
output caps, and a damaged payload is refused instead of shown. `yarp read`
takes line or byte ranges of them.

This module must never write to the archive and never put archived bytes into
an error message.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from yarp._digest import payload_hasher
from yarp._record import Record
from yarp.archive.recovery.lookup import Source
from yarp.archive.sqlite import map_error
from yarp.errors import DataError, UsageError, ValidationError
from yarp.limits import RECOVERY_CHUNK_BYTES as CHUNK_BYTES


def iter_payload(conn: sqlite3.Connection, rowid: int, compression: str, *, chunk: int = CHUNK_BYTES) -> Iterator[bytes]:
    """Yield the uncompressed bytes of one payload row, chunk by chunk (no checks)."""
    try:
        blob = conn.blobopen("payloads", "body", rowid, readonly=True)
    except sqlite3.Error as exc:
        raise map_error(exc, "reading archived payload") from None
    with blob:
        if compression == "none":
            reader = blob
        elif compression == "zstd":
            import zstandard

            reader = zstandard.ZstdDecompressor().stream_reader(blob, read_size=chunk, read_across_frames=True)
        else:
            raise ValidationError("archived payload has an unknown compression")
        while True:
            try:
                data = reader.read(chunk)
            except sqlite3.Error as exc:
                raise map_error(exc, "reading archived payload") from None
            except Exception as exc:  # zstandard.ZstdError and friends
                if type(exc).__module__.startswith("zstandard") or "zstd" in type(exc).__name__.lower():
                    raise ValidationError("archived payload cannot be decompressed") from None
                raise
            if not data:
                return
            yield data


def iter_verified(conn: sqlite3.Connection, source: Source, *, chunk: int = CHUNK_BYTES) -> Iterator[bytes]:
    """Yield a source's exact bytes; raise after the last chunk if length or digest differ."""
    digest = payload_hasher()
    total = 0
    for data in iter_payload(conn, source.payload_rowid, source.compression, chunk=chunk):
        total += len(data)
        if total > source.length:
            raise ValidationError("archived payload is longer than its recorded length; run yarp archive verify")
        digest.update(data)
        yield data
    if total != source.length or digest.digest() != source.sha256:
        raise ValidationError("archived payload does not match its length and SHA-256; run yarp archive verify")


def check_source(conn: sqlite3.Connection, source: Source) -> None:
    """Stream a source once to prove its length and digest before any byte is emitted."""
    for _ in iter_verified(conn, source):
        pass


def utf8_safe_end(data: bytes, end: int) -> int:
    """Largest index <= end that does not split a UTF-8 sequence of `data`."""
    end = min(end, len(data))
    start = end
    # Step back over continuation bytes to the lead byte of the last sequence.
    while start > 0 and end - start < 4 and (data[start - 1] & 0xC0) == 0x80:
        start -= 1
    if start == 0 or end - start >= 4:
        return end
    lead = data[start - 1]
    need = 2 if lead >> 5 == 0b110 else 3 if lead >> 4 == 0b1110 else 4 if lead >> 3 == 0b11110 else 1
    have = end - (start - 1)
    return start - 1 if have < need else end


class ReadResult(Record):
    """Exact bytes of a range, and where to continue when a cap cut it short."""

    __slots__ = ("data", "cut", "next_range", "mode")
    _defaults = {"cut": False, "next_range": None, "mode": "lines"}


def parse_range(text: str, *, minimum_start: int) -> tuple[int, int]:
    """Parse START:END (canonical unsigned integers, END >= START >= minimum_start)."""
    start, sep, end = text.partition(":")
    if not sep or not _canonical(start) or not _canonical(end):
        raise UsageError("range must be START:END with unsigned integers")
    first, last = int(start), int(end)
    if first < minimum_start or last < first:
        raise UsageError(f"range must satisfy {minimum_start} <= START <= END")
    return first, last


def _canonical(text: str) -> bool:
    return text.isascii() and text.isdigit() and (text == "0" or not text.startswith("0")) and len(text) <= 19


def read_lines(conn: sqlite3.Connection, source: Source, start: int, end: int, *, cap_bytes: int,
               cap_lines: int) -> ReadResult:
    """Lines START..END (1-based, inclusive), at most `cap_lines` lines and `cap_bytes` bytes.

    Whole lines are kept while they fit; when the first requested line alone is
    larger than the byte cap it is cut at a UTF-8 boundary and the rest is
    offered as a byte range. END past the last line reads to the last line;
    START past it is an error. Only the bytes that may be printed are held.
    """
    out = bytearray()
    current = bytearray()  # the current line, at most what could still be printed
    current_len = 0
    number = 1
    line_start = 0
    position = 0
    done = False
    cut: tuple[str, str] | None = None

    def decide() -> None:
        nonlocal done, cut
        if number - start >= cap_lines or (out and len(out) + current_len > cap_bytes):
            cut, done = (f"{number}:{end}", "lines"), True
        elif len(out) + current_len <= cap_bytes:
            out.extend(current)
        else:
            keep = utf8_safe_end(bytes(current), cap_bytes)
            out.extend(current[:keep])
            cut, done = (f"{line_start + keep}:{line_start + current_len}", "bytes"), True

    for data in iter_verified(conn, source):
        at = 0
        while at < len(data) and not done:
            newline = data.find(b"\n", at)
            stop = len(data) if newline < 0 else newline + 1
            if start <= number:
                room = cap_bytes + 4 - len(out) - len(current)
                if room > 0:
                    current += data[at:min(stop, at + room)]
                current_len += stop - at
            position += stop - at
            at = stop
            if newline >= 0:
                if start <= number:
                    decide()
                if not done:
                    number += 1
                    line_start = position
                    current.clear()
                    current_len = 0
                    done = number > end
    if not done and current_len and start <= number:
        decide()
    total = number if (done or position > line_start) else number - 1
    if start > total:
        raise DataError(f"line range {start}:{end} is past the end of {source.name} ({total} lines)")
    if cut is None:
        return ReadResult(bytes(out), False, None, "lines")
    return ReadResult(bytes(out), True, cut[0], cut[1])


def read_bytes(conn: sqlite3.Connection, source: Source, start: int, end: int, *, cap_bytes: int) -> ReadResult:
    """Bytes [START, END) of a source, at most `cap_bytes`, never cut inside a UTF-8 character."""
    if start > source.length:
        raise DataError(f"byte range {start}:{end} is past the end of {source.name} ({source.length} bytes)")
    end = min(end, source.length)
    want_end = end
    cut = False
    if end - start > cap_bytes:
        end, cut = start + cap_bytes, True
    out = bytearray()
    position = 0
    for data in iter_verified(conn, source):
        lo, hi = max(start, position), min(end + 4, position + len(data))
        if lo < hi:
            out += data[lo - position:hi - position]
        position += len(data)
    if cut:
        # `out` holds up to 4 bytes past the cap so a character that straddles it is detected.
        keep = utf8_safe_end(bytes(out), end - start)
        if keep == 0:
            keep = end - start  # not text: exact bytes win over an empty answer
        out = out[:keep]
        return ReadResult(bytes(out), True, f"{start + keep}:{want_end}", "bytes")
    return ReadResult(bytes(out[: end - start]), False, None, "bytes")

