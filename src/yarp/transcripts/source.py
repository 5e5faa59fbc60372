"""Stable, bounded reading of one JSONL transcript from a checkpoint.

Agents append to their transcripts while they run, and some rewrite old files
in place when it migrates them. A read therefore takes the file's size once,
reads only complete lines that end at or before that size (a partial last line
waits for the next run), and proves that the bytes before its starting offset
are the ones read last time (SHA-256 of the prefix). Lines are streamed in
chunks: memory stays bounded by the longest line, never by the file.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from dataclasses import dataclass

from yarp.errors import UnsafePath, ValidationError
from yarp.limits import MAX_FRAME_BYTES

_CHUNK_BYTES = 1024 * 1024
#: Longest line parsed; a longer one is skipped and reported (the frame limit:
#: no single call read from it could reach the broker anyway).
MAX_LINE_BYTES = MAX_FRAME_BYTES


@dataclass(frozen=True, slots=True)
class FileIdentity:
    """What tells a transcript file unchanged since the last read: device, inode, size and mtime."""

    device: int
    inode: int
    size: int
    mtime_ns: int


def open_transcript(path: str) -> tuple[int, FileIdentity]:
    """Open a regular file read-only without following a final symlink."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnsafePath("transcript is a symbolic link") from None
        raise ValidationError(f"transcript cannot be opened: {exc.strerror}") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise UnsafePath("transcript is not a regular file")
    return fd, FileIdentity(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def hash_prefix(fd: int, length: int):
    """A SHA-256 object over the first `length` bytes, or None when the file is shorter."""
    h = hashlib.sha256()
    os.lseek(fd, 0, os.SEEK_SET)
    remaining = length
    while remaining:
        chunk = os.read(fd, min(_CHUNK_BYTES, remaining))
        if not chunk:
            return None
        h.update(chunk)
        remaining -= len(chunk)
    return h


class LineReader:
    """Complete lines from `start` up to `end`, each with its byte offset and line number.

    `offset` after iteration is the end of the last complete line consumed;
    `hasher` (if given) has been fed exactly those bytes. Lines longer than
    `MAX_LINE_BYTES` are consumed without being kept and reported in `oversized`.
    """

    def __init__(self, fd: int, start: int, end: int, first_line: int, hasher=None) -> None:
        self.fd = fd
        self.offset = start
        self.end = end
        self.line = first_line
        self.hasher = hasher
        self.oversized: list[int] = []

    def __iter__(self):
        fd, end = self.fd, self.end
        os.lseek(fd, self.offset, os.SEEK_SET)
        position = self.offset
        buffer = b""
        skipping = False
        while position < end:
            chunk = os.read(fd, min(_CHUNK_BYTES, end - position))
            if not chunk:
                break
            position += len(chunk)
            start = 0
            while True:
                newline = chunk.find(b"\n", start)
                if newline < 0:
                    rest = chunk[start:]
                    if skipping or len(buffer) + len(rest) > MAX_LINE_BYTES:
                        if not skipping:
                            skipping = True
                            self.oversized.append(self.line + 1)
                        self._consume(buffer + rest)
                        buffer = b""
                    else:
                        buffer += rest
                    break
                piece = chunk[start:newline + 1]
                start = newline + 1
                self.line += 1
                if skipping or len(buffer) + len(piece) - 1 > MAX_LINE_BYTES:
                    if not skipping:
                        self.oversized.append(self.line)
                    skipping = False
                    self._consume(buffer + piece)
                    buffer = b""
                    continue
                line = buffer + piece if buffer else piece
                buffer = b""
                line_offset = self.offset
                self._consume(line)
                yield line_offset, self.line, line
        # Whatever is left in `buffer` is a partial last line: it waits.

    def _consume(self, data: bytes) -> None:
        self.offset += len(data)
        if self.hasher is not None:
            self.hasher.update(data)
