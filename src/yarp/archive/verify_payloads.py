"""The payload check of `yarp archive verify`: every payload decompressed, measured and hashed once.

One thread does it all, in payload order (`rowid`), `PAYLOAD_BATCH_ROWS` rows
per statement so that no read snapshot is held for the whole pass. A body of
at most `VERIFY_INLINE_BYTES` stored bytes comes with its row and is
decompressed and hashed whole: zstandard and hashlib release the GIL on large
buffers and cost a few microseconds on small ones, so handing a payload to
another thread cost more than hashing it (55-90 µs a payload at 1,000,000
calls). A larger body streams from its row in `VERIFY_CHUNK_BYTES` chunks, so
memory stays bounded by one inline body or two chunks whatever the archive
holds.

Checked for each payload: a well-formed key, a known compression, a valid
recorded length, decompression (a zstd frame that declares more bytes than
recorded is refused before anything is allocated), the byte length and the
SHA-256 digest. UTF-8 validity matters only where a snapshot declares the
payload text: a payload that is ASCII (nearly every one) or decodes is valid,
and only one that does not is looked up among the snapshots. Problems name a
payload by a digest prefix, never by content.
"""

from __future__ import annotations

import codecs
import hashlib
import sqlite3
from collections.abc import Callable

import zstandard

from yarp.archive.recovery import iter_payload
from yarp.errors import ValidationError
from yarp.limits import PAYLOAD_BATCH_ROWS, VERIFY_CHUNK_BYTES, VERIFY_INLINE_BYTES

MEDIA_TEXT = "text/plain; charset=utf-8"
#: (payloads checked, payloads, bytes checked, bytes) after each payload.
Progress = Callable[[int, int, int, int], None]

_ROWS = ("SELECT rowid, sha256, compression, uncompressed_byte_length,"
         " CASE WHEN typeof(body) = 'blob' AND length(body) <= ?3 AND uncompressed_byte_length <= ?3 THEN body END"
         " FROM payloads WHERE rowid > ?1 ORDER BY rowid LIMIT ?2")
_DECLARED_TEXT = f"SELECT EXISTS (SELECT 1 FROM snapshots WHERE payload_sha256 = ? AND media_type = '{MEDIA_TEXT}')"


def _utf8_ok(data: bytes) -> bool:
    if data.isascii():
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _decodes(decoder, chunk: bytes, final: bool = False) -> bool:
    try:
        decoder.decode(chunk, final)
    except UnicodeDecodeError:
        return False
    return True


class PayloadCheck:
    """Counts and problems of one pass over the payload table."""

    def __init__(self, conn: sqlite3.Connection, add_problem: Callable[[str], None],
                 progress: Progress | None = None) -> None:
        self.conn = conn
        self.add_problem = add_problem
        self.progress = progress
        self.checked = 0
        self.checked_bytes = 0
        self._dctx = zstandard.ZstdDecompressor()

    def run(self) -> None:
        """Check every payload once, in rowid order."""
        total_rows, total_bytes = self.conn.execute(
            "SELECT count(*), total(CASE WHEN typeof(uncompressed_byte_length) = 'integer'"
            " THEN max(uncompressed_byte_length, 0) ELSE 0 END) FROM payloads").fetchone()
        total_bytes = int(total_bytes)
        progress = self.progress
        last = -1
        while True:
            previous = last
            # One row (one body) in memory at a time; each statement its own short read snapshot.
            for rowid, sha, compression, length, body in self.conn.execute(
                    _ROWS, (last, PAYLOAD_BATCH_ROWS, VERIFY_INLINE_BYTES)):
                last = rowid
                problem = self._check(rowid, sha, compression, length, body)
                if problem:
                    label = sha.hex()[:16] if isinstance(sha, bytes) else f"row {rowid}"
                    self.add_problem(f"payload {label} {problem}")
                self.checked += 1
                if progress is not None:
                    progress(self.checked, total_rows, self.checked_bytes, total_bytes)
            if last == previous:
                return

    def _check(self, rowid: int, sha, compression, length, body) -> str | None:
        if not isinstance(sha, bytes) or len(sha) != 32:
            return "has a malformed sha256 key"
        if compression not in ("none", "zstd"):
            return "has an unknown compression"
        if not isinstance(length, int) or length < 0:
            return "has an invalid uncompressed_byte_length"
        if body is None:  # large, or not a blob: streamed from the row
            return self._streamed(rowid, sha, compression, length)
        if compression == "zstd":
            declared = zstandard.frame_content_size(body) if len(body) >= 18 else -1
            if declared > length:
                self.checked_bytes += length
                return f"decompresses to more than its recorded {length} bytes"
            try:
                data = self._dctx.decompress(body, max_output_size=length)
            except zstandard.ZstdError:
                # A frame that does not say its size and holds more than recorded, or a damaged one:
                # the stream tells which.
                return self._streamed(rowid, sha, compression, length)
        else:
            data = body
        self.checked_bytes += len(data)
        if len(data) != length:
            return f"has {len(data)} bytes but records {length}"
        if hashlib.sha256(data).digest() != sha:
            return "does not match its SHA-256 digest"
        if not _utf8_ok(data) and self._declared_text(sha):
            return "is declared UTF-8 text but is not valid UTF-8"
        return None

    def _streamed(self, rowid: int, sha: bytes, compression: str, length: int) -> str | None:
        """The check of one payload read from its row in chunks (one chunk in memory at a time)."""
        digest = hashlib.sha256()
        decoder = None  # made at the first chunk that is not ASCII (the chunks before end on a boundary)
        utf8 = True
        seen = 0
        try:
            for chunk in iter_payload(self.conn, rowid, compression, chunk=VERIFY_CHUNK_BYTES):
                seen += len(chunk)
                self.checked_bytes += len(chunk)
                if seen > length:
                    return f"decompresses to more than its recorded {length} bytes"
                digest.update(chunk)
                if utf8 and (decoder is not None or not chunk.isascii()):
                    decoder = decoder or codecs.getincrementaldecoder("utf-8")()
                    utf8 = _decodes(decoder, chunk)
        except ValidationError:
            return "cannot be decompressed"
        if seen != length:
            return f"has {seen} bytes but records {length}"
        if digest.digest() != sha:
            return "does not match its SHA-256 digest"
        if utf8 and decoder is not None:
            utf8 = _decodes(decoder, b"", final=True)
        if not utf8 and self._declared_text(sha):
            return "is declared UTF-8 text but is not valid UTF-8"
        return None

    def _declared_text(self, sha: bytes) -> bool:
        return bool(self.conn.execute(_DECLARED_TEXT, (sha,)).fetchone()[0])
