"""Find runs under the state root and fingerprint their structured sources.

Runs live in `runs/<id>` (active) and `archive/<id>` (archived); an id must
match the recorder's pattern, and when both places hold the same id the
active copy wins. The fingerprint of a run covers every `*.json` / `*.jsonl`
below its directory: relative path, size, mtime_ns, mode and owner, plus the
kind of entry (so a symlink substituted for a file changes it). Inode, device
and ctime are left out on purpose so that a `cp -a` copy of an unchanged state
root keeps every fingerprint (see docs/decisions.md).

Discovery only lists and stats; it never opens evidence for writing.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from dataclasses import dataclass

from .state_root import StateRoot

RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}\Z")
STRUCTURED_SUFFIXES = (".json", ".jsonl")


@dataclass(frozen=True)
class RunDir:
    session_id: str
    storage_class: str  # "active" | "archive"
    source_dir: str  # "runs" | "archive"
    path: str
    is_symlink: bool = False


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


def structured_entries(run_path: str) -> list[tuple[str, int, int, int, int, bool]]:
    """Every structured entry below `run_path`, sorted:
    (relative path, size, mtime_ns, mode, uid, is_symlink), from `lstat`."""
    out: list[tuple[str, int, int, int, int, bool]] = []
    stack = [("", run_path)]
    while stack:
        prefix, path = stack.pop()
        with os.scandir(path) as entries:
            for entry in entries:
                name = entry.name
                if entry.is_dir(follow_symlinks=False):
                    stack.append((prefix + name + "/", entry.path))
                elif name.endswith(STRUCTURED_SUFFIXES):
                    st = entry.stat(follow_symlinks=False)
                    out.append((prefix + name, st.st_size, st.st_mtime_ns, st.st_mode, st.st_uid,
                                stat.S_ISLNK(st.st_mode)))
    out.sort()
    return out


def fingerprint_entries(entries) -> str:
    # repr of a list of (str, int, ...) tuples is deterministic across processes.
    return hashlib.sha256(repr(entries).encode("utf-8", "surrogateescape")).hexdigest()


def run_fingerprint(run: RunDir) -> str:
    """Deterministic fingerprint of one run's structured sources."""
    if run.is_symlink:
        return "symlink"
    try:
        return fingerprint_entries(structured_entries(run.path))
    except OSError:
        return "unreadable"


def tree_fingerprint(path: str) -> str:
    """Fingerprint of every file below `path` (used for the evidence-repairs tree)."""
    parts = []
    for dirpath, dirnames, filenames in os.walk(path):
        dirnames.sort()
        for name in sorted(filenames):
            full = os.path.join(dirpath, name)
            st = os.lstat(full)
            parts.append(f"{os.path.relpath(full, path)}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_mode:o}\0{st.st_uid}")
    return hashlib.sha256("\n".join(parts).encode("utf-8", "surrogateescape")).hexdigest()

