"""Find runs under the state root and fingerprint their structured sources.

Runs live in `runs/<id>` (active) and `archive/<id>` (archived); an id must
match the recorder's pattern, and when both places hold the same id the
active copy wins. The fingerprint of a run covers every `*.json` / `*.jsonl`
below its directory: relative path, size, mtime_ns, mode and owner, plus the
kind of entry (so a symlink substituted for a file changes it). Inode, device
and ctime are left out on purpose so that a `cp -a` copy of an unchanged state
root keeps every fingerprint (see docs/design/evidence-index.md, "Evidence index: fingerprint").

Discovery only lists and stats; it never opens evidence for writing.
"""

from __future__ import annotations

import os
import re

from .limits import PARALLEL_FINGERPRINT_RUNS
from .state_root import StateRoot

RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}\Z")
STRUCTURED_SUFFIXES = (".json", ".jsonl")


class RunDir:
    """One discovered run directory (plain slots: queries should not pay for typing/dataclasses)."""

    __slots__ = ("session_id", "storage_class", "source_dir", "path", "is_symlink")

    def __init__(self, session_id: str, storage_class: str, source_dir: str, path: str, is_symlink: bool = False):
        self.session_id = session_id
        self.storage_class = storage_class  # "active" | "archive"
        self.source_dir = source_dir  # "runs" | "archive"
        self.path = path
        self.is_symlink = is_symlink

    def __repr__(self) -> str:
        return f"RunDir({self.session_id!r}, {self.storage_class!r}, {self.source_dir!r}, {self.path!r}, {self.is_symlink})"


def discover_runs(root: StateRoot, only: str | None = None) -> dict[str, RunDir]:
    """Map session id -> run directory; active wins over archive."""
    found: dict[str, RunDir] = {}
    for source_dir, storage_class, base in (("archive", "archive", root.archive), ("runs", "active", root.runs)):
        try:
            entries = os.scandir(base)
        except FileNotFoundError:
            continue
        with entries:
            for entry in entries:
                name = entry.name
                if only is not None and name != only:
                    continue
                if not RUN_ID.match(name):
                    continue
                if entry.is_symlink():
                    found[name] = RunDir(name, storage_class, source_dir, entry.path, True)
                elif entry.is_dir(follow_symlinks=False):
                    found[name] = RunDir(name, storage_class, source_dir, entry.path)
    return found


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_S_IFMT = 0o170000
_S_IFLNK = 0o120000


def _walk(dir_fd: int, prefix: str, out: list) -> None:
    # Listing through a directory descriptor makes every DirEntry.stat an
    # fstatat(dir_fd, name): one lstat that resolves one component instead of
    # the whole path from `/` again. Subdirectories are opened O_NOFOLLOW
    # relative to their parent, so a directory swapped for a symlink mid-walk
    # fails instead of being followed.
    subdirs = []
    with os.scandir(dir_fd) as entries:
        for entry in entries:
            name = entry.name
            if entry.is_dir(follow_symlinks=False):
                subdirs.append(name)
            elif name.endswith(STRUCTURED_SUFFIXES):
                st = entry.stat(follow_symlinks=False)
                mode = st.st_mode
                out.append((prefix + name, st.st_size, st.st_mtime_ns, mode, st.st_uid, mode & _S_IFMT == _S_IFLNK))
    for name in subdirs:
        fd = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
        try:
            _walk(fd, prefix + name + "/", out)
        finally:
            os.close(fd)


def structured_entries(run_path: str) -> list[tuple[str, int, int, int, int, bool]]:
    """Every structured entry below `run_path`, sorted:
    (relative path, size, mtime_ns, mode, uid, is_symlink), from one `lstat` each."""
    out: list[tuple[str, int, int, int, int, bool]] = []
    fd = os.open(run_path, _DIR_FLAGS)
    try:
        _walk(fd, "", out)
    finally:
        os.close(fd)
    out.sort()
    return out


def fingerprint_entries(entries) -> str:
    # Unambiguous: a file name cannot contain NUL and every other field is a
    # decimal number, so two different entry lists never give the same text.
    """A SHA-256 over a run's directory entries (name, size, mtime, mode, owner, link), changing when any does."""
    text = "\n".join(["%s\0%d\0%d\0%d\0%d\0%d" % entry for entry in entries])
    import hashlib

    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def directory_mtimes(run_path: str, trusted_before_ns: int) -> list[tuple[str, int]]:
    """(relative dir, mtime_ns) for the run directory ('') and every directory below it.

    The freshness probe compares these with fresh `lstat`s: adding, removing or
    atomically replacing a file changes its directory's mtime. A directory
    modified at or after `trusted_before_ns` is stored as -1: file-system
    timestamps are coarse, so a change in the same tick could leave the mtime
    unchanged, and the probe must check such a run in full instead.
    """
    out: list[tuple[str, int]] = []
    stack = [("", run_path)]
    while stack:
        rel, path = stack.pop()
        st = os.lstat(path)
        out.append((rel.rstrip("/"), st.st_mtime_ns if st.st_mtime_ns < trusted_before_ns else -1))
        with os.scandir(path) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    stack.append((rel + entry.name + "/", entry.path))
    out.sort()
    return out


def run_fingerprint(run: RunDir) -> str:
    """Deterministic fingerprint of one run's structured sources."""
    if run.is_symlink:
        return "symlink"
    try:
        return fingerprint_entries(structured_entries(run.path))
    except OSError:
        return "unreadable"


def _fingerprint_all(runs) -> list[str]:
    return [run_fingerprint(run) for run in runs]


def fingerprints(runs: list[RunDir], *, parallel_from: int = PARALLEL_FINGERPRINT_RUNS) -> list[str]:
    """`run_fingerprint` of every run, in order.

    The walk is one lstat per structured file, and threads do not overlap it
    (the interpreter lock is taken back after every short system call), so for
    many runs a forked child fingerprints the second half while this process
    does the first; the child only lists and stats, writes its hex digests to a
    pipe and exits. Any failure of the child falls back to doing its half here.
    """
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    if len(runs) < parallel_from or cpus < 2:
        return _fingerprint_all(runs)
    half = len(runs) // 2
    read_fd, write_fd = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read_fd)
        os.close(write_fd)
        return _fingerprint_all(runs)
    if pid == 0:  # child: never returns into the caller's code
        status = 1
        try:
            os.close(read_fd)
            data = "\n".join(_fingerprint_all(runs[half:])).encode("ascii")
            view = memoryview(data)
            while view:
                view = view[os.write(write_fd, view):]
            status = 0
        finally:
            os._exit(status)
    os.close(write_fd)
    try:
        first = _fingerprint_all(runs[:half])
        chunks = []
        while True:
            chunk = os.read(read_fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(read_fd)
        _, wait_status = os.waitpid(pid, 0)
    second = b"".join(chunks).decode("ascii").split("\n") if chunks else []
    if os.waitstatus_to_exitcode(wait_status) != 0 or len(second) != len(runs) - half:
        second = _fingerprint_all(runs[half:])
    return first + second


def tree_fingerprint(path: str) -> str:
    """Fingerprint of every file below `path` (used for the evidence-repairs tree)."""
    parts = []
    for dirpath, dirnames, filenames in os.walk(path):
        dirnames.sort()
        for name in sorted(filenames):
            full = os.path.join(dirpath, name)
            st = os.lstat(full)
            parts.append(f"{os.path.relpath(full, path)}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_mode:o}\0{st.st_uid}")
    import hashlib

    return hashlib.sha256("\n".join(parts).encode("utf-8", "surrogateescape")).hexdigest()

