"""What the archive keeps of a `yarp run`'s two exact streams, and the files its view is made from.

A stream whose stored body does not fit in one archive payload, or that is
too large to be tried whole within the capture's deadline, keeps its first
bytes (`yarp.archive.file_payload`). Its view is made from exactly those
bytes, so every line the view shows can be read back and its line numbers
are the archive's, and the view's work stays bounded however large the
output: the kept bytes are copied (`copy_file_range`, in the kernel) into an
anonymous private file beside the spool, which the view reads through its
descriptor's path and which disappears when it is closed.

`StreamFit.plan` decides before the view what each stream keeps
(`file_payload.planned_length`: the three-slice probe answers for every
stream but one that compresses, yet not enough, which only its whole
compression tells); the payloads and the view are then made side by side in
the broker's pool. When preparation keeps fewer bytes than planned, the view
is made again from them (`replan`).
"""

from __future__ import annotations

import errno
import os

from yarp.archive.file_payload import payload_limit, planned_length
from yarp.archive.prepare import file_key, snapshot_payload
from yarp.wire import operations as ops

TYPE_CHECKING = False
if TYPE_CHECKING:
    from yarp.wire.protocol import SpoolFiles

#: Bytes copied per `copy_file_range` call.
_COPY_STEP = 1 << 30
#: `copy_file_range` cannot copy between these files: copy through user space.
_NO_KERNEL_COPY = (errno.EXDEV, errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP)


def _fd_path(fd: int) -> str:
    """A path that opens the file behind our `fd`, also from a pool process (Linux `/proc/PID/fd`, else `/dev/fd`)."""
    return f"/proc/{os.getpid()}/fd/{fd}" if os.path.isdir("/proc/self/fd") else f"/dev/fd/{fd}"


class StreamFit:
    """The kept length of each exact stream, and the view's files: a copy of the kept bytes of a cut stream."""

    __slots__ = ("files", "heads", "kept")

    def __init__(self, files: SpoolFiles) -> None:
        self.files = files
        #: Bytes kept, by stream name ("stdout", "stderr").
        self.kept: dict[str, int] = {}
        #: Open head copies, by stream name.
        self.heads: dict[str, object] = {}

    @classmethod
    def plan(cls, files: SpoolFiles) -> StreamFit:
        """Decide what each stream keeps (a few KiB read per stream over the payload limit), and copy a
        cut stream's kept bytes (`over_limit` says whether that is work for a thread)."""
        fit = cls(files)
        for name, declared in fit.streams():
            if declared.size <= payload_limit():
                fit.kept[name] = declared.size
                continue
            fd = os.open(declared.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
            try:
                fit.kept[name] = planned_length(fd, declared.size)
            finally:
                os.close(fd)
        fit.copy_heads()
        return fit

    def streams(self) -> tuple[tuple[str, ops.StreamFile], ...]:
        """(name, declared file) of both exact streams."""
        return ("stdout", self.files.stdout), ("stderr", self.files.stderr)

    @property
    def cut(self) -> dict[str, tuple[int, int]]:
        """(size, bytes kept) of each stream that keeps only its first bytes."""
        return {name: (declared.size, self.kept[name]) for name, declared in self.streams()
                if self.kept[name] < declared.size}

    @property
    def completeness(self) -> str:
        """What the view's marker says of the archived streams."""
        return "incomplete" if self.cut else "complete"

    def copy_heads(self) -> None:
        """Copy the kept bytes of every cut stream that has no copy yet (a stream whose copy fails is
        viewed whole: slower, never wrong about what the archive keeps, which the marker says)."""
        import tempfile

        for name, declared in self.streams():
            if name in self.heads or self.kept[name] >= declared.size:
                continue
            head = tempfile.TemporaryFile(dir=os.path.dirname(declared.path))  # noqa: SIM115 - closed by close()
            try:
                _copy(declared.path, head.fileno(), self.kept[name])
            except OSError:
                head.close()
                continue
            self.heads[name] = head

    def view_files(self) -> SpoolFiles:
        """The run's spool files with each cut stream replaced by the copy of its kept bytes."""
        out, err = (ops.StreamFile(_fd_path(self.heads[name].fileno()), None, None, self.kept[name])
                    if name in self.heads else declared for name, declared in self.streams())
        return self.files.replace(stdout=out, stderr=err)

    def replan(self, ready: dict[tuple, object]) -> bool:
        """Take the lengths preparation kept (`ready`: payloads by `file_key`); True when one differs
        from the plan (its view must be made again, from a copy of its kept bytes: `copy_heads`)."""
        changed = False
        for name, declared in self.streams():
            kept = ready[file_key(declared)].length
            if kept != self.kept[name]:
                self.kept[name] = kept
                changed = True
        return changed

    def close(self) -> None:
        """Close (and so remove) the head copies."""
        for head in self.heads.values():
            head.close()
        self.heads.clear()


def over_limit(files: SpoolFiles) -> bool:
    """Whether a stream is larger than one payload holds as it is (planning it reads it)."""
    return max(files.stdout.size, files.stderr.size) > payload_limit()


def exact_payloads(files: SpoolFiles) -> dict[tuple, object]:
    """The payloads of a run's two exact streams by `file_key` (in the pool: large ones are read in
    chunks); one that does not fit keeps its first bytes."""
    return {file_key(f): snapshot_payload(f, private=True, cut=True) for f in (files.stdout, files.stderr)}


def _copy(path: str, out_fd: int, count: int) -> None:
    """The first `count` bytes of `path` into `out_fd`, in the kernel where it can."""
    src = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        done = 0
        while done < count:
            try:
                moved = os.copy_file_range(src, out_fd, min(_COPY_STEP, count - done), done, done)
            except OSError as exc:
                if exc.errno not in _NO_KERNEL_COPY:
                    raise
                moved = _copy_by_hand(src, out_fd, done, count)
            if moved <= 0:
                raise OSError(5, "the stream file ended before its declared size")
            done += moved
    finally:
        os.close(src)


def _copy_by_hand(src: int, out_fd: int, offset: int, count: int) -> int:
    done = offset
    while done < count:
        data = os.pread(src, min(1 << 20, count - done), done)
        if not data:
            break
        os.pwrite(out_fd, data, done)
        done += len(data)
    return done - offset
