"""Appending records to a run's JSONL journals, exactly as the recorder does.

One record per line: compact JSON with sorted keys, written under an exclusive
`flock` with a single write and an fsync, opened append-only without
following a symlink. Used only by the supervisor, which is an evidence writer;
the index itself never calls this.
"""

from __future__ import annotations

import fcntl
import json
import os

from yarp import private_files

from .errors import UnsafeSource
from .limits import MAX_SUPERVISOR_JOURNAL_BYTES


def append_record(path: str, record: dict, max_bytes: int = MAX_SUPERVISOR_JOURNAL_BYTES) -> bool:
    """Append one record; return False (nothing written) when the journal is full."""
    line = (json.dumps(record, sort_keys=True, separators=(",", ":")) + "\n").encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        problem = private_files.problem_of(os.fstat(fd), directory=False, private=False)
        if problem is not None:
            raise UnsafeSource(f"{os.path.basename(path)}: journal {problem}")
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            if os.fstat(fd).st_size + len(line) > max_bytes:
                return False
            os.write(fd, line)
            os.fsync(fd)
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
    return True


def last_record(path: str) -> dict | None:
    """The last whole record of a journal (shared lock), or None."""
    from .source_io import iter_jsonl, read_source
    from .limits import MAX_JSONL_BYTES

    try:
        data, _ = read_source(path, os.path.basename(path), MAX_JSONL_BYTES, shared_lock=True)
    except UnsafeSource:
        return None
    last = None
    for _, record in iter_jsonl(data, os.path.basename(path)):
        last = record
    return last
