"""Where the agent-workflow state lives, and the trust checks on it.

The state root is `$XDG_STATE_HOME/agent-workflow` (else
`~/.local/state/agent-workflow`) unless a caller names one explicitly. Every
component of its absolute path must be a real directory (no symlinks); the
root and `index/` must be owned by the effective user and closed to group and
other; `runs/`, `archive/` and `evidence-repairs/` must be owned by the user
and not writable by group or other (the recorder leaves them 0755).

This module never changes evidence: the only things it creates or narrows are
the state root itself when absent and the index directory it owns.
"""

from __future__ import annotations

import os
import stat

from yarp import private_files

from .errors import StateRootUnsafe

APP_DIR = "agent-workflow"
RUNS_DIR = "runs"
ARCHIVE_DIR = "archive"
REPAIRS_DIR = "evidence-repairs"
INDEX_DIR = "index"
DATABASE_NAME = "agent-workflow.sqlite3"
LOCK_NAME = "index.lock"
COMPANION_SUFFIXES = ("-wal", "-shm")


def default_state_root(environ=os.environ) -> str:
    """`$XDG_STATE_HOME/agent-workflow` (else `~/.local/state/agent-workflow`)."""
    base = environ.get("XDG_STATE_HOME") or ""
    if not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, APP_DIR)


class StateRoot:
    """An absolute, checked state root and the paths derived from it."""

    __slots__ = ("path",)

    def __init__(self, path: str) -> None:
        self.path = path

    def __eq__(self, other) -> bool:
        return isinstance(other, StateRoot) and other.path == self.path

    def __hash__(self) -> int:
        return hash(self.path)

    def __repr__(self) -> str:
        return f"StateRoot({self.path!r})"

    @property
    def runs(self) -> str:
        """Where active runs live."""
        return os.path.join(self.path, RUNS_DIR)

    @property
    def archive(self) -> str:
        """Where archived runs live."""
        return os.path.join(self.path, ARCHIVE_DIR)

    @property
    def repairs(self) -> str:
        """Where repair records live."""
        return os.path.join(self.path, REPAIRS_DIR)

    @property
    def index_dir(self) -> str:
        """The index's own private directory."""
        return os.path.join(self.path, INDEX_DIR)

    @property
    def database(self) -> str:
        """The projection database inside the index directory."""
        return os.path.join(self.index_dir, DATABASE_NAME)

    @property
    def lock(self) -> str:
        """The writer lock file inside the index directory."""
        return os.path.join(self.index_dir, LOCK_NAME)


def _check_no_symlink_components(path: str) -> None:
    probe = "/"
    for part in path.strip("/").split("/"):
        if not part:
            continue
        probe = os.path.join(probe, part)
        try:
            st = os.lstat(probe)
        except FileNotFoundError:
            return
        if stat.S_ISLNK(st.st_mode):
            raise StateRootUnsafe("state root path has a symbolic-link component")


def _check_dir(path: str, label: str, forbidden_bits: int) -> bool:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return False
    problem = private_files.problem_of(st, directory=True, private=False)
    if problem is not None:
        raise StateRootUnsafe(f"{label} {problem}")
    if stat.S_IMODE(st.st_mode) & forbidden_bits:
        raise StateRootUnsafe(f"{label} permissions are broader than allowed ({stat.S_IMODE(st.st_mode):04o})")
    return True


def resolve_state_root(explicit: str | None = None, *, create: bool = False, environ=os.environ) -> StateRoot:
    """Resolve and trust-check the state root; with `create`, make it 0700 when absent."""
    path = os.path.abspath(os.path.expanduser(explicit)) if explicit else default_state_root(environ)
    _check_no_symlink_components(path)
    if not _check_dir(path, "state root", 0o077):
        if not create:
            return StateRoot(path)
        os.makedirs(path, mode=0o700, exist_ok=True)
        _check_dir(path, "state root", 0o077)
    for name in (RUNS_DIR, ARCHIVE_DIR, REPAIRS_DIR):
        _check_dir(os.path.join(path, name), f"{name} directory", 0o022)
    return StateRoot(path)


def ensure_index_dir(root: StateRoot) -> None:
    """Create (0700) or narrow the index directory the writer owns."""
    try:
        private_files.ensure_private_directory(root.index_dir, create=True, narrow=True, parents=False)
    except private_files.PrivatePathProblem as exc:
        raise StateRootUnsafe(f"index directory {exc.problem}") from None


def check_index_dir(root: StateRoot) -> bool:
    """Read-only check of the index directory; return whether it exists."""
    return _check_dir(root.index_dir, "index directory", 0o077)


def check_database_file(path: str, label: str = "index database") -> bool:
    """The database and its companions must be regular, ours, and 0600 or narrower."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return False
    problem = private_files.problem_of(st, directory=False)
    if problem is None and stat.S_IMODE(st.st_mode) & 0o100:
        problem = "permissions are broader than 0600"
    if problem is not None:
        raise StateRootUnsafe(f"{label} {problem}")
    return True
