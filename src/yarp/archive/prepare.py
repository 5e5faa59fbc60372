"""Turn a validated operation into prepared snapshots, before any SQLite lock.

This is the CPU and file work of the broker: canonical JSON, SHA-256, the
compression decision, and snapshots of approved stream and source-output files.
It runs in the broker's worker pool; it never touches SQLite.

Stream files (the runner's spools) must be regular files owned by us with
private permissions; approved source-output files (an agent's own full-output
file, such as an agent's world-readable temporary log) follow the same no-follow,
bounded and identity rules but are not refused for their mode. A file of
`CHUNKED_FILE_BYTES` or more is never read whole: its payload is prepared in
chunks and its body stays in a file until the writer copies it
(`yarp.archive.file_payload`). Over the largest payload (`payload_limit`) a
stream keeps its first bytes; a source-output file is refused.
"""

from __future__ import annotations

import os
from collections import namedtuple
from dataclasses import dataclass

from yarp import private_files
from yarp.archive.codec import MEDIA_TEXT, Payload, bytes_payload, json_payload, json_payload_pair
from yarp.archive.file_payload import chunked_bytes, file_payload, kept_length, payload_limit
from yarp.errors import UnsafePath, ValidationError
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


def _open_declared(sf: ops.StreamFile, label: str, private: bool) -> tuple[int, os.stat_result]:
    """Open a declared file without following a symlink and check it is the file declared."""
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
        if (sf.device is not None and sf.device != st.st_dev) or (sf.inode is not None and sf.inode != st.st_ino):
            raise UnsafePath(f"{label} is not the file that was declared")
        if sf.size is not None and sf.size != st.st_size:
            raise UnsafePath(f"{label} size differs from the declared size")
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def _read_whole(fd: int, size: int, label: str) -> bytes:
    # One read straight into the result (a regular file returns it whole up
    # to about 2 GiB); reading in chunks and joining them copied every
    # byte twice and took longer than hashing them.
    data = os.read(fd, size) if size else b""
    if len(data) < size:
        chunks = [data]
        remaining = size - len(data)
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


def read_snapshot_file(sf: ops.StreamFile, *, private: bool, limit: int | None = None) -> bytes:
    """Read a declared file exactly, without following a symlink, and check its identity.

    `limit` defaults to the largest payload the archive holds (`file_payload.payload_limit`).
    """
    label = "stream file" if private else "source output file"
    limit = payload_limit() if limit is None else limit
    fd, st = _open_declared(sf, label, private)
    try:
        if st.st_size > limit:
            raise ValidationError(f"{label} is larger than {limit} bytes")
        return _read_whole(fd, st.st_size, label)
    finally:
        os.close(fd)


def snapshot_payload(sf: ops.StreamFile, *, private: bool, cut: bool = False) -> Payload:
    """The payload of a declared file: read whole when small, else prepared in chunks from the file
    (`yarp.archive.file_payload`). A file whose stored body does not fit in one payload
    (`payload_limit`, compressed or not) keeps its first `kept_length` bytes when `cut` (a stream of
    `yarp run`'s, which says so) and is refused otherwise."""
    label = "stream file" if private else "source output file"
    fd, st = _open_declared(sf, label, private)
    size = st.st_size
    if size >= chunked_bytes():
        # The file payload takes the descriptor over (the body's file, or closed).
        return file_payload(fd, size, cut=cut, label=label, spill_dir=os.path.dirname(sf.path))
    try:
        data = _read_whole(fd, size, label)
        payload = bytes_payload(data)
        limit = payload_limit()
        if len(payload.body) <= limit:
            return payload
        if not cut:
            raise ValidationError(f"{label} does not fit in one archive payload ({limit} bytes stored at most)")
        return bytes_payload(data[:kept_length(fd, size)])
    finally:
        os.close(fd)


def file_key(sf: ops.StreamFile) -> tuple:
    """A declared file's identity as a capture names it: the same key is the same file, read once."""
    return sf.path, sf.device, sf.inode, sf.size


def _streams(op: ops.ArchiveOperation, cut: bool = False, ready: dict[tuple, Payload] | None = None
             ) -> tuple[SnapshotSpec, ...]:
    # A stream shown unchanged is named as its own after file: read (and hashed) once.
    seen = dict(ready) if ready else {}
    if isinstance(op, ops.CaptureStreams):
        files = (op.stdout_before, op.stderr_before, op.stdout_after, op.stderr_after)
    else:
        files = (op.stdout, op.stderr, op.stdout, op.stderr)
    payloads = []
    for f in files:
        key = file_key(f)
        if key not in seen:
            seen[key] = snapshot_payload(f, private=True, cut=cut)
        payloads.append(seen[key])
    out_b, err_b, out_a, err_a = payloads
    return (
        SnapshotSpec("stdout", "before", out_b),
        SnapshotSpec("stderr", "before", err_b),
        SnapshotSpec("stdout", "after", out_a),
        SnapshotSpec("stderr", "after", err_a),
    )


def prepare(op: ops.ArchiveOperation) -> Prepared:
    """Compute every payload the operation stores (raises `DataError` subclasses).

    A stream file that does not fit in one payload is refused here: an
    adapter's own capture would not know it lost bytes (`prepare_capture`
    keeps the first bytes of `yarp run`'s streams, which says so).
    """
    snaps: tuple[SnapshotSpec, ...]
    match op:
        case ops.BeginCall():
            # The common case (nothing was rewritten) is encoded, hashed and compressed once.
            before, after = json_payload_pair(op.input_before, op.input_after)
            snaps = (SnapshotSpec("input", "before", before), SnapshotSpec("input", "after", after))
        case ops.ResultBefore():
            snaps = (SnapshotSpec("result", "before", json_payload(op.result)),)
            if op.full_output is not None:
                payload = snapshot_payload(op.full_output, private=False)
                snaps += (SnapshotSpec("source_output", "before", payload),)
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


def prepare_capture(op: ops.CaptureStreams | ops.CapturePassthroughStreams, ready: dict[tuple, Payload]) -> Prepared:
    """A stream capture of `yarp run`'s: the payloads of its files prepared already (`ready`, by
    `file_key`) are used as they are, and a file that does not fit in one payload keeps its first bytes."""
    return Prepared(op, _streams(op, True, ready))


def prepare_json(obj: object) -> Prepared:
    """Validate an operation JSON object and prepare it (the pool's unit of work)."""
    from yarp.wire.validation import parse_operation

    return prepare(parse_operation(obj))
