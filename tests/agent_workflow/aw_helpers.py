"""Small helpers shared by the evidence-index tests."""

from __future__ import annotations

import hashlib
import io
import json
import os
import sqlite3
import stat
from contextlib import redirect_stderr, redirect_stdout

from agent_workflow.cli import main


def cli(*argv: str) -> tuple[int, str, str]:
    """Run the command line in-process; return (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def cli_json(*argv: str) -> tuple[int, dict]:
    code, out, err = cli(*argv, "--json")
    assert out, err
    return code, json.loads(out)


def snapshot(root: str) -> dict:
    """Contents and checkable metadata of every entry in the state root except index/."""
    result = {}
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        if rel_dir == "index" or rel_dir.startswith("index" + os.sep):
            dirnames[:] = []
            continue
        dirnames[:] = [d for d in dirnames if not (rel_dir == "." and d == "index")]
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            entry = (st.st_mode, st.st_uid, st.st_gid, st.st_size, st.st_mtime_ns, st.st_ino)
            if stat.S_ISREG(st.st_mode):
                with open(path, "rb") as handle:
                    entry += (hashlib.sha256(handle.read()).hexdigest(),)
            elif stat.S_ISLNK(st.st_mode):
                entry += (os.readlink(path),)
            result[os.path.relpath(path, root)] = entry
    return result


def db(root: str) -> sqlite3.Connection:
    """A read-only connection to a state root's projection, for assertions."""
    path = os.path.join(root, "index", "agent-workflow.sqlite3")
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True)


def append_line(path: str, record: dict) -> None:
    mode = os.stat(path).st_mode if os.path.exists(path) else None
    if mode is not None:
        os.chmod(path, mode | stat.S_IWUSR)
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(record, sort_keys=True, separators=(",", ":")) + "\n")
    if mode is not None:
        os.chmod(path, mode)


def write_json(path: str, value: dict, mode: int = 0o600) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if os.path.exists(path):
        os.chmod(path, 0o600)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(json.dumps(value, indent=2, sort_keys=True) + "\n")
    os.chmod(path, mode)


def canonical_sha(value) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
