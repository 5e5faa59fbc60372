"""Safe reads of source evidence: no-follow opens, regular files only, bounded sizes.

JSONL journals are read under a shared `flock` (the recorders append under an
exclusive one), so a cooperating writer is never caught mid-record; only whole
lines are parsed. Everything here opens files read-only: this module must never
write, truncate, lock exclusively, chmod or otherwise touch source evidence.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os

from yarp import private_files

from .errors import RecordInvalid, UnsafeSource
from .limits import MAX_LINE_BYTES


def _open_source(path: str, relative: str) -> tuple[int, os.stat_result]:
    """Open a regular file of this user's without following a final symlink (any mode: evidence is shared)."""
    try:
        return private_files.open_for_reading(path, private=False)
    except private_files.PrivatePathProblem as exc:
        raise UnsafeSource(f"{relative}: {exc.problem}") from None
    except OSError as exc:
        raise UnsafeSource(f"{relative}: cannot open ({exc.strerror})") from None


def read_source(path: str, relative: str, limit: int, *, shared_lock: bool = False) -> tuple[bytes, os.stat_result]:
    """Read a whole regular file without following a final symlink.

    Raises `UnsafeSource` for a symlink, a non-regular or foreign-owned file, or
    one larger than `limit`. The returned stat is taken from the open descriptor.
    """
    fd, st = _open_source(path, relative)
    try:
        if st.st_size > limit:
            raise UnsafeSource(f"{relative}: larger than {limit} bytes")
        if shared_lock:
            fcntl.flock(fd, fcntl.LOCK_SH)
        try:
            data = private_files.read_bounded(fd, limit)
            if shared_lock:
                st = os.fstat(fd)
        finally:
            if shared_lock:
                fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
    if len(data) > limit:
        raise UnsafeSource(f"{relative}: larger than {limit} bytes")
    return data, st


def sha256_hex(data: bytes) -> str:
    """Lowercase hex SHA-256 of `data`."""
    return hashlib.sha256(data).hexdigest()


def record_sha256(record: object) -> str:
    """Digest of a parsed record: sorted keys, compact separators, ASCII escaping."""
    return hashlib.sha256(
        json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("ascii")
    ).hexdigest()


def text_sha256(text: str) -> str:
    """Lowercase hex SHA-256 of `text` as UTF-8 (lone surrogates kept, as JSON allows them)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _loads(data: bytes):
    import orjson

    return orjson.loads(data)


def parse_json_object(data: bytes, relative: str) -> dict:
    """Parse one JSON artifact; it must be a single object."""
    try:
        value = _loads(data)
    except ValueError:
        raise RecordInvalid(f"{relative}: invalid JSON") from None
    if not isinstance(value, dict):
        raise RecordInvalid(f"{relative}: not a JSON object")
    return value


def iter_jsonl(data: bytes, relative: str):
    """Yield (1-based physical line number, record) for every non-blank whole line.

    A final fragment without its newline is damage (a cooperating writer holds
    the exclusive lock for the whole record), so it is refused, not skipped.
    """
    if data and not data.endswith(b"\n"):
        raise RecordInvalid(f"{relative}: journal ends in a truncated record")
    line_no = 0
    for line in data.split(b"\n")[:-1] if data else ():
        line_no += 1
        if not line.strip():
            continue
        if len(line) > MAX_LINE_BYTES:
            raise RecordInvalid(f"{relative}:{line_no}: line longer than {MAX_LINE_BYTES} bytes")
        try:
            value = _loads(line)
        except ValueError:
            raise RecordInvalid(f"{relative}:{line_no}: invalid JSON") from None
        if not isinstance(value, dict):
            raise RecordInvalid(f"{relative}:{line_no}: not a JSON object")
        yield line_no, value


def count_lines(data: bytes) -> int:
    """The number of non-blank lines in `data`."""
    return sum(1 for line in data.split(b"\n") if line.strip())


def hash_source(path: str, relative: str, limit: int) -> tuple[int, str]:
    """Stream a regular file (no-follow) through SHA-256; return (size, hex digest)."""
    fd, st = _open_source(path, relative)
    try:
        if st.st_size > limit:
            raise UnsafeSource(f"{relative}: larger than {limit} bytes")
        digest = hashlib.sha256()
        size = 0
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            size += len(chunk)
            digest.update(chunk)
    finally:
        os.close(fd)
    return size, digest.hexdigest()
