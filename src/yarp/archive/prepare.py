"""Turn a validated operation into prepared snapshots, before any SQLite lock.

This is the CPU and file work of the broker: canonical JSON, SHA-256, the
compression decision, and snapshots of approved stream and source-output files.
It runs in the broker's worker pool; it never touches SQLite.

Stream files (the runner's spools) must be regular files owned by us with
private permissions; approved source-output files (an agent's own full-output
file, such as Pi's world-readable temporary log) follow the same no-follow,
bounded and identity rules but are not refused for their mode.
"""

from __future__ import annotations

import os
from collections import namedtuple
from dataclasses import dataclass

from yarp import private_files
from yarp.archive.codec import MEDIA_TEXT, bytes_payload, json_payload, json_payload_pair
from yarp.errors import UnsafePath, ValidationError
from yarp.limits import MAX_STREAM_FILE_BYTES
from yarp.wire import operations as ops

#: Read size when a file does not arrive in one read.
_READ_CHUNK_BYTES = 64 * 1024 * 1024


class SnapshotSpec(namedtuple("SnapshotSpec", ("subject", "stage", "payload", "source_completeness"),
                              defaults=(None,))):
    """One snapshot to write: its `subject` and `stage`, the encoded `payload` (a `Payload`) and, for result
    text, its `source_completeness` (else None). A named tuple, like `Payload`, for the same reason.
    """

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class Prepared:
    """An operation with every snapshot it writes, ready for one savepoint."""

    operation: ops.ArchiveOperation
    snapshots: tuple[SnapshotSpec, ...]

    @property
    def payload_bytes(self) -> int:
        """The snapshots' encoded payload bytes together, for the writer's batch budget."""
        return sum(len(s.payload.body) for s in self.snapshots)


def read_snapshot_file(sf: ops.StreamFile, *, private: bool, limit: int = MAX_STREAM_FILE_BYTES) -> bytes:
    """Read a declared file exactly, without following a symlink, and check its identity."""
    label = "stream file" if private else "source output file"
    try:
        # A private stream file is ours alone; an approved source output file may be readable by others.
        fd, st = private_files.open_for_reading(sf.path, private=private, owned=private)
    except FileNotFoundError:
        raise ValidationError(f"{label} does not exist") from None
    except private_files.PrivatePathProblem as exc:
        raise UnsafePath(f"{label} {exc.problem}") from None
    except OSError as exc:
        raise ValidationError(f"{label} cannot be opened: {exc.strerror}") from None
    try:
        if st.st_size > limit:
            raise ValidationError(f"{label} is larger than {limit} bytes")
        if (sf.device is not None and sf.device != st.st_dev) or (sf.inode is not None and sf.inode != st.st_ino):
            raise UnsafePath(f"{label} is not the file that was declared")
        if sf.size is not None and sf.size != st.st_size:
            raise UnsafePath(f"{label} size differs from the declared size")
        # One read straight into the result (a regular file returns it whole up
        # to about 2 GiB); reading in chunks and joining them copied every
        # byte twice and took longer than hashing them.
        data = os.read(fd, st.st_size) if st.st_size else b""
        if len(data) < st.st_size:
            chunks = [data]
            remaining = st.st_size - len(data)
            while remaining > 0:
                chunk = os.read(fd, min(remaining, _READ_CHUNK_BYTES))
                if not chunk:
                    break
                chunks.append(chunk)
                remaining -= len(chunk)
            if remaining:
                raise ValidationError(f"{label} changed while it was read")
            data = b"".join(chunks)
        if os.read(fd, 1):
            raise ValidationError(f"{label} changed while it was read")
        return data
    finally:
        os.close(fd)


def _streams(op: ops.ArchiveOperation) -> tuple[SnapshotSpec, ...]:
    if isinstance(op, ops.CaptureStreams):
        out_b, err_b, out_a, err_a = (
            bytes_payload(read_snapshot_file(f, private=True))
            for f in (op.stdout_before, op.stderr_before, op.stdout_after, op.stderr_after)
        )
    else:
        out_b = out_a = bytes_payload(read_snapshot_file(op.stdout, private=True))
        err_b = err_a = bytes_payload(read_snapshot_file(op.stderr, private=True))
    return (
        SnapshotSpec("stdout", "before", out_b),
        SnapshotSpec("stderr", "before", err_b),
        SnapshotSpec("stdout", "after", out_a),
        SnapshotSpec("stderr", "after", err_a),
    )


def prepare(op: ops.ArchiveOperation) -> Prepared:
    """Compute every payload the operation stores (raises `DataError` subclasses)."""
    snaps: tuple[SnapshotSpec, ...]
    match op:
        case ops.BeginCall():
            # The common case (nothing was rewritten) is encoded, hashed and compressed once.
            before, after = json_payload_pair(op.input_before, op.input_after)
            snaps = (SnapshotSpec("input", "before", before), SnapshotSpec("input", "after", after))
        case ops.ResultBefore():
            snaps = (SnapshotSpec("result", "before", json_payload(op.result)),)
            if op.full_output is not None:
                data = read_snapshot_file(op.full_output, private=False)
                snaps += (SnapshotSpec("source_output", "before", bytes_payload(data)),)
        case ops.ResultText():
            payload = bytes_payload(op.text.encode("utf-8"), MEDIA_TEXT)
            snaps = (SnapshotSpec("result_text", "before", payload, op.source_completeness),)
        case ops.StageResult() | ops.FinishCall() | ops.UpdateFinalResult():
            snaps = (SnapshotSpec("result", "after", json_payload(op.result)),)
        case ops.CaptureStreams() | ops.CapturePassthroughStreams():
            snaps = _streams(op)
        case ops.PruneBefore():
            snaps = ()
        case _:
            raise TypeError(type(op).__name__)
    return Prepared(op, snaps)


def prepare_json(obj: object) -> Prepared:
    """Validate an operation JSON object and prepare it (the pool's unit of work)."""
    from yarp.wire.validation import parse_operation

    return prepare(parse_operation(obj))
