"""Per-file import checkpoints, kept in a private state file next to the archive.

The archive keeps schema v1 and stays the record of calls; what the importer
must remember between runs lives here, one entry per transcript path:

- the file identity it last read (device, inode, size, mtime) and the parser
  version, so an unchanged file is skipped without being opened;
- the byte offset of the verified prefix and its SHA-256, so an appended file
  resumes where it stopped and a rewritten one is detected and re-read;
- the parser's small resumable context (session id, model, cwd, ...);
- calls still waiting for their result (a live session in progress);
- the source call ids already taken from the file, so a re-read never sends a
  call again — not even one `yarp archive prune` has since removed.

Losing this file costs only time: a full re-read sends every call again and the
broker answers `existing` for each one still archived (pruned calls would come
back then; the documentation says so). Written atomically (temporary file,
fsync, rename), mode 0600, never followed through a symlink.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import orjson

from yarp import private_files
from yarp.errors import ArchiveError, UnsafePath
from yarp.paths import ArchiveLocation, check_private_file

STATE_VERSION = 1
SUFFIX = ".import-state"


def state_path(location: ArchiveLocation) -> str:
    """The import state file of an archive: beside it, with its own suffix."""
    return location.path + SUFFIX


@dataclass
class FileCheckpoint:
    """One transcript's checkpoint: its identity, the verified prefix, parser context, waiting and taken calls."""

    agent: str
    device: int
    inode: int
    size: int
    mtime_ns: int
    parser_version: int
    offset: int = 0
    lines: int = 0
    prefix_sha256: str = ""
    context: dict = field(default_factory=dict)
    pending: list = field(default_factory=list)
    taken: list = field(default_factory=list)

    def to_json(self) -> dict:
        """The checkpoint as its camelCase JSON entry in the state file."""
        return {
            "agent": self.agent, "device": self.device, "inode": self.inode, "size": self.size,
            "mtimeNs": self.mtime_ns, "parserVersion": self.parser_version, "offset": self.offset,
            "lines": self.lines, "prefixSha256": self.prefix_sha256, "context": self.context,
            "pending": self.pending, "taken": self.taken,
        }

    @classmethod
    def from_json(cls, obj: dict) -> FileCheckpoint:
        """The checkpoint of a state-file entry; a missing field raises `KeyError` (the file is then corrupt)."""
        return cls(obj["agent"], obj["device"], obj["inode"], obj["size"], obj["mtimeNs"], obj["parserVersion"],
                   obj["offset"], obj["lines"], obj["prefixSha256"], obj["context"], obj["pending"], obj["taken"])


def _archive_identity(location: ArchiveLocation) -> list | None:
    try:
        st = os.stat(location.path)
    except FileNotFoundError:
        return None
    return [st.st_dev, st.st_ino]


class ImportState:
    """The checkpoints of every transcript this archive has imported from.

    The state names the archive file it belongs to (device, inode): when the
    archive was removed or replaced, its checkpoints describe calls the new
    archive does not hold, so they are dropped and every transcript is read again.
    """

    def __init__(self, path: str, files: dict[str, FileCheckpoint], location: ArchiveLocation | None = None) -> None:
        self.path = path
        self.files = files
        self.location = location

    @classmethod
    def load(cls, location: ArchiveLocation) -> ImportState:
        """The archive's import state; empty when missing, of another layout or of another archive file.

        Raises `ArchiveError` when it cannot be opened or is corrupt, and `UnsafePath` when the file is not private.
        """
        path = state_path(location)
        if not check_private_file(path, narrow=True, label="import state file", missing_ok=True):
            return cls(path, {}, location)
        try:
            fd, _ = private_files.open_for_reading(path, private=True)
        except private_files.PrivatePathProblem as exc:
            raise UnsafePath(f"import state file {exc.problem}") from None
        except OSError as exc:
            raise ArchiveError(f"import state file cannot be opened: {exc.strerror}") from None
        with os.fdopen(fd, "rb") as handle:
            data = handle.read()
        try:
            obj = orjson.loads(data)
            if obj.get("version") != STATE_VERSION or obj.get("archive") != _archive_identity(location):
                # An unknown layout, or checkpoints of another archive file: re-derived, never guessed at.
                return cls(path, {}, location)
            files = {name: FileCheckpoint.from_json(entry) for name, entry in obj["files"].items()}
        except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError):
            raise ArchiveError("import state file is corrupt; remove it to re-read every transcript") from None
        return cls(path, files, location)

    def save(self) -> None:
        """Write the state atomically (temporary file, fsync, rename), mode 0600.

        Raises `UnsafePath` if the temporary file cannot be created.
        """
        body = orjson.dumps({"version": STATE_VERSION, "archive": _archive_identity(self.location),
                             "files": {name: cp.to_json() for name, cp in self.files.items()}})
        try:
            private_files.replace_atomically(self.path, body)
        except OSError as exc:
            raise UnsafePath(f"import state file cannot be written: {exc.strerror}") from None