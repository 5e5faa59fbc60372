"""Payloads of large files: hashed, compressed and stored in chunks, in memory that does not grow with the file.

A stream or source-output file of at least `CHUNKED_FILE_BYTES` is never read
whole. `file_payload` reads it in `FILE_CHUNK_BYTES` chunks (`os.pread`, so a
retried batch reads it again from the start): SHA-256 and the UTF-8 check
(for the media type) run on a helper thread while the caller compresses the
chunk with a streaming Zstandard level 3 compressor, whose output goes to a
temporary file (in memory up to `SPILL_BYTES`, then an anonymous file beside
the source). The compression decision is `prepare_payload`'s rule (minimum
size, the three-slice probe, the saving ratio and bytes) applied to the
streamed output; a compression that can no longer save enough is abandoned
as soon as its output says so (and so is one whose temporary file has no
room: the bytes are then stored as they are). The payload's body is a `FileBody`: the source
file itself when stored as is, else the compressed temporary file. The writer
inserts the row with `zeroblob(length)` and copies the body into it through
SQLite's incremental blob I/O (`insert_file_payload`), so no copy of the body
is ever held in memory either.

The limit (`payload_limit`): a payload is one row, and SQLite refuses a row
longer than `SQLITE_LIMIT_LENGTH` (1,000,000,000 bytes unless the build
raises it), so a stored body holds at most that limit minus
`PAYLOAD_ROW_OVERHEAD_BYTES`. A file is stored whole when its body fits, as
it is or compressed (and it is at most `MAX_WHOLE_FILE_BYTES`, so its work
ends within a capture's deadline); a stream that does not fit keeps its first
`kept_length` bytes (the limit, less the at most three bytes of a UTF-8
character it would cut), and any other file is refused. A stream over the
limit is compressed until its output passes the limit, then prepared again
over its first bytes. docs/design/archive.md, "Large outputs are stored in
chunks from their file, up to one payload", has the reasons and the
measurements.

Internal settings, read once per process from the environment (tests force
the chunked path and a low limit with them): `YARP_BROKER_CHUNKED_BYTES`,
`YARP_BROKER_CHUNK_BYTES` and `YARP_BROKER_PAYLOAD_LIMIT` (which can only
lower the limit).
"""

from __future__ import annotations

import codecs
import os
import queue
import threading
import time

from yarp import limits
from yarp._digest import payload_hasher
from yarp.archive.codec import MEDIA_BINARY, MEDIA_TEXT, Payload
from yarp.errors import DeadlineExceeded, ValidationError

#: Files at least this large take the chunked path (default `limits.CHUNKED_FILE_BYTES`).
CHUNKED_ENV = "YARP_BROKER_CHUNKED_BYTES"
#: Bytes read per step (default `limits.FILE_CHUNK_BYTES`).
CHUNK_ENV = "YARP_BROKER_CHUNK_BYTES"
#: A lower payload limit than SQLite's (for tests of the over-limit path).
LIMIT_ENV = "YARP_BROKER_PAYLOAD_LIMIT"

_settings: tuple[int, int, int] | None = None


def _setting(name: str, default: int) -> int:
    """A positive integer from the environment; anything else leaves the default (an internal knob)."""
    try:
        value = int(os.environ.get(name) or default)
    except ValueError:
        return default
    return value if value > 0 else default


def _load_settings() -> tuple[int, int, int]:
    global _settings
    if _settings is None:
        import sqlite3

        conn = sqlite3.connect(":memory:")
        try:
            sqlite_limit = conn.getlimit(sqlite3.SQLITE_LIMIT_LENGTH)
        finally:
            conn.close()
        largest = sqlite_limit - limits.PAYLOAD_ROW_OVERHEAD_BYTES
        _settings = (_setting(CHUNKED_ENV, limits.CHUNKED_FILE_BYTES), _setting(CHUNK_ENV, limits.FILE_CHUNK_BYTES),
                     min(largest, _setting(LIMIT_ENV, largest)))
    return _settings


def chunked_bytes() -> int:
    """Files at least this large are prepared and stored in chunks."""
    return _load_settings()[0]


def chunk_bytes() -> int:
    """Bytes read from a file per step."""
    return _load_settings()[1]


def payload_limit() -> int:
    """The most bytes one payload stores (its body, compressed or not): SQLite's row limit
    (`SQLITE_LIMIT_LENGTH` of this build) less the row's other columns (`PAYLOAD_ROW_OVERHEAD_BYTES`)."""
    return _load_settings()[2]


def planned_length(fd: int, size: int) -> int:
    """How many bytes of a stream `file_payload(..., cut=True)` is bound to keep, or `size` when it
    may keep them all: a stream up to the payload limit is kept whole; one larger than
    `MAX_WHOLE_FILE_BYTES`, or whose three-slice probe says it will not shrink, keeps its first
    `kept_length` bytes. A stream between the two is kept whole unless its compressed body turns
    out not to fit, which only its whole compression tells."""
    if size <= payload_limit():
        return size
    if size > limits.MAX_WHOLE_FILE_BYTES or _probe_says_incompressible(fd, size, _compressor()):
        return kept_length(fd, size)
    return size


def kept_length(fd: int, size: int) -> int:
    """How many bytes of a stream of `size` bytes fit in one payload stored as they are: all of
    them up to the payload limit; beyond it, the limit less the bytes of a UTF-8 character it
    would cut (at most three)."""
    limit = payload_limit()
    if size <= limit or limit < 4:
        return min(size, limit)
    # The bytes at limit - 3 .. limit: when the first byte left out continues a character whose
    # lead byte is kept, the cut moves back to that lead byte.
    tail = os.pread(fd, 4, limit - 3)
    if len(tail) < 4 or tail[3] & 0xC0 != 0x80:
        return limit
    for back in (1, 2, 3):
        byte = tail[3 - back]
        if byte & 0xC0 != 0x80:
            return limit - back if byte >= 0xC0 else limit
    return limit


class FileBody:
    """A payload's stored body that stays in a file until the writer copies it into its row.

    The file is the source itself (stored as is: its first `length` bytes) or
    the compressed temporary file. It is closed when the body is dropped. The
    source's size and modification time are kept, so a source changed between
    preparation and the copy is refused instead of stored under a digest it no
    longer has.
    """

    __slots__ = ("_fd", "_spill", "_stamp", "deadline", "length")

    def __init__(self, length: int, *, fd: int = -1, spill=None) -> None:
        self.length = length
        self._fd = fd
        self._spill = spill
        self._stamp = _stamp(fd) if fd >= 0 else None
        #: `time.monotonic()` after which the copy stops (0: none): set for a body large enough to
        #: be written alone, so a request is never committed after its client stopped waiting.
        self.deadline = 0.0

    def __len__(self) -> int:
        return self.length

    def __reduce__(self):
        # Out of a process pool (a measurement setting) the body travels as its bytes.
        return bytes, (b"".join(self.chunks()),)

    def chunks(self):
        """The body's bytes, from its start, in chunks of at most `chunk_bytes()`."""
        step = chunk_bytes()
        done = 0
        if self._spill is not None:
            self._spill.seek(0)
        elif _stamp(self._fd) != self._stamp:
            raise ValidationError("file changed after it was prepared")
        while done < self.length:
            if self.deadline and time.monotonic() > self.deadline:
                raise DeadlineExceeded("request deadline expired while its output was stored; nothing was committed")
            want = min(step, self.length - done)
            data = self._spill.read(want) if self._spill is not None else os.pread(self._fd, want, done)
            if not data:
                raise ValidationError("file changed after it was prepared")
            done += len(data)
            yield data
        if self._spill is None and _stamp(self._fd) != self._stamp:
            raise ValidationError("file changed after it was prepared")

    def close(self) -> None:
        """Close the file now (also done when the body is dropped)."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        if self._spill is not None:
            self._spill.close()
            self._spill = None

    def __del__(self) -> None:
        self.close()


def _stamp(fd: int) -> tuple[int, int]:
    st = os.fstat(fd)
    return st.st_size, st.st_mtime_ns


def insert_file_payload(conn, payload: Payload) -> None:
    """Insert a payload whose body is a `FileBody` (inside the caller's transaction): the row with a
    zero-filled body of the stored length, then the body copied in chunks through a blob handle.
    A payload already stored (the same digest) is left as it is."""
    body = payload.body
    cur = conn.execute(
        "INSERT OR IGNORE INTO payloads (sha256, compression, uncompressed_byte_length, body)"
        " VALUES (?, ?, ?, zeroblob(?))",
        (payload.sha256, payload.compression, payload.length, len(body)),
    )
    if cur.rowcount != 1:
        return
    with conn.blobopen("payloads", "body", cur.lastrowid) as blob:
        for chunk in body.chunks():
            blob.write(chunk)


class _Digest:
    """SHA-256 and UTF-8 validity of the kept bytes, fed chunk by chunk on a helper thread."""

    def __init__(self) -> None:
        self.hasher = payload_hasher()
        self.decoder = codecs.getincrementaldecoder("utf-8")()
        self.utf8 = True
        self.jobs: queue.Queue = queue.Queue(maxsize=2)
        self.failed: BaseException | None = None
        self.thread = threading.Thread(target=self._work, name="yarp-file-digest", daemon=True)
        self.thread.start()

    def _work(self) -> None:
        while True:
            chunk = self.jobs.get()
            if chunk is None:
                return
            if self.failed is not None:
                continue
            try:
                self.hasher.update(chunk)
                if self.utf8 and not (chunk.isascii() and not self.decoder.getstate()[0]):
                    self.decoder.decode(chunk)
            except UnicodeDecodeError:
                self.utf8 = False
            except BaseException as exc:  # noqa: BLE001 - raised again on the caller's thread
                self.failed = exc

    def finish(self) -> tuple[bytes, bool]:
        """(digest, whether the bytes are UTF-8) once every chunk is in."""
        self.jobs.put(None)
        self.thread.join()
        if self.failed is not None:
            raise self.failed
        if self.utf8:
            try:
                self.decoder.decode(b"", final=True)
            except UnicodeDecodeError:
                self.utf8 = False
        return self.hasher.digest(), self.utf8

    def abandon(self) -> None:
        """Stop the thread without a result (the caller failed)."""
        self.jobs.put(None)
        self.thread.join()


def _worth_it(size: int, stored: int, ratio: float, min_bytes: int) -> bool:
    saved = size - stored
    return saved >= min_bytes and saved >= size * ratio


def _compressor():
    import zstandard

    return zstandard.ZstdCompressor(level=limits.COMPRESSION_LEVEL)


def _probe_says_incompressible(fd: int, keep: int, comp) -> bool:
    """The payload kernel's probe, on the kept bytes: three slices (start, middle, end)."""
    piece = limits.PROBE_SLICE_BYTES
    mid = (keep - piece) // 2
    sample = b"".join((_read_at(fd, 0, piece), _read_at(fd, mid, piece), _read_at(fd, keep - piece, piece)))
    return not _worth_it(len(sample), len(comp.compress(sample)), limits.PROBE_MIN_SAVING_RATIO, 0)


def _read_at(fd: int, offset: int, size: int) -> bytes:
    data = os.pread(fd, size, offset)
    if len(data) != size:
        raise ValidationError("file changed while it was read")
    return data


class _Compression:
    """Zstandard level 3 of the kept bytes, streamed into a spill file; given up as soon as its output
    can no longer save enough, or grows past `max_stored`."""

    def __init__(self, keep: int, spill_dir: str | None, max_stored: int) -> None:
        import tempfile

        self.keep = keep
        self.max_stored = max_stored
        self.stored = 0
        self.stream = _compressor().compressobj(size=keep)
        if spill_dir is not None and not os.access(spill_dir, os.W_OK | os.X_OK):
            spill_dir = None  # the default temporary directory
        self.spill = tempfile.SpooledTemporaryFile(max_size=limits.SPILL_BYTES, dir=spill_dir)  # noqa: SIM115

    def add(self, chunk: bytes) -> bool:
        """Compress one chunk; False (and the spill closed) once the output can no longer be kept."""
        return self._keep(self.stream.compress(chunk))

    def finish(self) -> FileBody | None:
        """The compressed body when it saves enough and fits, else None; the spill is the body's now."""
        if not self._keep(self.stream.flush()):
            return None
        body, self.spill = FileBody(self.stored, spill=self.spill), None
        return body

    def _keep(self, out: bytes) -> bool:
        self.stored += len(out)
        if self.stored > self.max_stored or not _worth_it(
                self.keep, self.stored, limits.MIN_SAVING_RATIO, limits.MIN_SAVING_BYTES):
            self.close()
            return False
        if out:
            try:
                self.spill.write(out)
            except OSError:
                # No room for the compressed copy: the bytes are stored as they are when they fit.
                self.close()
                return False
        return True

    def close(self) -> None:
        if self.spill is not None:
            self.spill.close()
            self.spill = None


def _prepare(fd: int, keep: int, spill_dir: str | None, max_stored: int, media_type: str | None) -> Payload | None:
    """The payload of the first `keep` bytes of `fd` (the body holds `fd` when stored as is), or None
    when its body would be larger than `max_stored`: only when `keep` is, and compression cannot
    bring it under (decided as soon as it is known, without reading on)."""
    must_shrink = keep > max_stored
    digest = comp = None
    try:
        if keep >= limits.MIN_COMPRESS_BYTES and not (
                keep >= limits.PROBE_THRESHOLD_BYTES and _probe_says_incompressible(fd, keep, _compressor())):
            comp = _Compression(keep, spill_dir, max_stored)
        if comp is None and must_shrink:
            return None
        digest = _Digest()
        step = chunk_bytes()
        done = 0
        while done < keep:
            chunk = _read_at(fd, done, min(step, keep - done))
            digest.jobs.put(chunk)
            if comp is not None and not comp.add(chunk):
                comp = None
                if must_shrink:
                    return None
            done += len(chunk)
        compressed = comp.finish() if comp is not None else None
        comp = None
        if compressed is None and must_shrink:
            return None
        sha256, utf8 = digest.finish()
        digest = None
    finally:
        if digest is not None:
            digest.abandon()
        if comp is not None:
            comp.close()
    body = compressed if compressed is not None else FileBody(keep, fd=fd)
    return Payload(sha256, "zstd" if compressed is not None else "none", keep, body,
                   media_type or (MEDIA_TEXT if utf8 else MEDIA_BINARY))


def file_payload(fd: int, size: int, *, cut: bool = False, label: str = "file", media_type: str | None = None,
                 spill_dir: str | None = None) -> Payload:
    """The payload of the open file `fd` of `size` bytes, prepared in chunks.

    The whole file when its stored body fits in one payload (`payload_limit`:
    as is, or compressed) and it is at most `MAX_WHOLE_FILE_BYTES`; else, when
    `cut`, its first `kept_length` bytes, and otherwise a `ValidationError`.
    Takes `fd` over: it is the body's file when the bytes are stored as is,
    and closed otherwise (also on failure). Same digest, compression decision
    and media type as `bytes_payload` of those bytes would give; the compressed
    body may differ from a one-shot compression's bytes (streaming Zstandard)
    and decompresses to the same bytes.
    """
    limit = payload_limit()
    try:
        whole = size <= limits.MAX_WHOLE_FILE_BYTES
        payload = _prepare(fd, size, spill_dir, limit, media_type) if whole else None
        if payload is None:
            if not cut:
                raise ValidationError(f"{label} does not fit in one archive payload ({limit} bytes stored at most"
                                      + ("" if whole else f", of a file of {limits.MAX_WHOLE_FILE_BYTES} at most") + ")")
            payload = _prepare(fd, kept_length(fd, size), spill_dir, limit, media_type)
    except BaseException:
        os.close(fd)
        raise
    if payload.compression != "none":
        os.close(fd)
    return payload
