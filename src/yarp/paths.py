"""Where the archive lives and the private-permission rules for it.

Resolution order for the archive path: an explicit `--archive PATH`, then the
`YARP_ARCHIVE` environment variable, then `archive.path` in the configuration
file, then the known default `$XDG_DATA_HOME/yarp/tool-calls.sqlite3` (else
`~/.local/share/yarp/tool-calls.sqlite3`).

Only the known default location is ever repaired: broader permissions on its
directory and database are narrowed to 0700/0600 before opening. An explicit
override is never changed; broad permissions there are an error. Failure to
establish private permissions is always an error, never a warning.
"""

import os

from yarp import private_files
from yarp._record import Record

ARCHIVE_FILENAME = "tool-calls.sqlite3"
ARCHIVE_ENV = "YARP_ARCHIVE"
#: SQLite companion files that are parts of the same logical database.
COMPANION_SUFFIXES = ("-wal", "-shm")
#: Filesystems the archive is not safe on (the specification claims local Unix filesystems only).
NETWORK_FILESYSTEMS = frozenset({"nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "afs", "ceph", "glusterfs",
                                 "fuse.sshfs", "fuse.s3fs", "fuse.rclone", "lustre", "gpfs"})


class ArchiveLocation(Record):
    """An absolute archive path and whether it is the known default location."""

    __slots__ = ("path", "is_default")
    path: str
    is_default: bool

    @property
    def directory(self) -> str:
        """The directory that holds the database and its companions."""
        return os.path.dirname(self.path)


def default_archive_path(environ=os.environ) -> str:
    """`$XDG_DATA_HOME/yarp/tool-calls.sqlite3` (else under `~/.local/share`)."""
    data_home = environ.get("XDG_DATA_HOME") or ""
    if not os.path.isabs(data_home):
        data_home = os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(data_home, "yarp", ARCHIVE_FILENAME)


def resolve_archive(explicit: str | None = None, environ=os.environ, configured: str | None = None) -> ArchiveLocation:
    """Resolve the archive location from flag, environment, configuration, default."""
    default = default_archive_path(environ)
    for candidate in (explicit, environ.get(ARCHIVE_ENV) or None, configured):
        if candidate:
            path = os.path.abspath(os.path.expanduser(candidate))
            return ArchiveLocation(path, path == default)
    return ArchiveLocation(default, True)


def canonical_archive_path(path: str) -> str:
    """The canonical form of an archive path: symlinks resolved through the
    nearest existing parent, so one archive has one identity."""
    path = os.path.abspath(path)
    missing: list[str] = []
    probe = path
    while not os.path.exists(probe):
        parent = os.path.dirname(probe)
        if parent == probe:
            break
        missing.append(os.path.basename(probe))
        probe = parent
    resolved = os.path.realpath(probe)
    for part in reversed(missing):
        resolved = os.path.join(resolved, part)
    return resolved


def ensure_private_directory(path: str, *, narrow: bool, create: bool, label: str = "archive directory") -> None:
    """Make sure `path` is a real directory owned by us with mode 0700.

    `narrow=True` (the known default only) repairs broader modes; otherwise a
    group/other bit is an error. `create=True` creates missing directories 0700.
    """
    try:
        private_files.ensure_private_directory(path, create=create, narrow=narrow)
    except FileNotFoundError:
        from yarp.errors import ArchiveMissing

        raise ArchiveMissing(f"{label} {path} does not exist") from None
    except private_files.PrivatePathProblem as exc:
        from yarp.errors import UnsafePath

        raise UnsafePath(f"{label} {path} {exc.problem}") from None


def check_private_file(path: str, *, narrow: bool, label: str = "archive database", missing_ok: bool = False) -> bool:
    """Check (and, when `narrow`, repair) a private regular file; return whether it exists."""
    try:
        exists = private_files.check_private_file(path, narrow=narrow)
    except private_files.PrivatePathProblem as exc:
        from yarp.errors import UnsafePath

        raise UnsafePath(f"{label} {path} {exc.problem}") from None
    if not exists and not missing_ok:
        from yarp.errors import ArchiveMissing

        raise ArchiveMissing(f"{label} {path} does not exist")
    return exists


def _names_a_directory(path: str) -> str | None:
    if os.path.isdir(path) and not os.path.islink(path):
        return (f"archive path {path} is a directory; name the database file in it, "
                f"e.g. {os.path.join(path, ARCHIVE_FILENAME)}")
    return None


def refuse_directory(location: ArchiveLocation) -> None:
    """Raise `UnsafePath` when the archive path names a directory (`--archive ~/dir`): said as that,
    before the directory's parent, which is not the archive's, is judged by the archive's rules."""
    problem = _names_a_directory(location.path)
    if problem is not None:
        from yarp.errors import UnsafePath

        raise UnsafePath(problem)


def named_archive_problem(location: ArchiveLocation) -> str | None:
    """Why an archive path named on a writing command's line (`yarp run --archive`, `yarp import
    --archive`) cannot become an archive, or None: it is a directory, or its directory does not exist.

    The broker creates the database of a new archive, and the directories of the
    default location; a mistyped `--archive` must not create a tree, so those
    commands refuse it before they start anything, as the reading commands refuse it.
    """
    problem = _names_a_directory(location.path)
    if problem is None and not os.path.isdir(location.directory):
        problem = (f"archive directory {location.directory} does not exist "
                   "(yarp creates the database, not its directory)")
    return problem


def fix_for(location: ArchiveLocation, problem: str, database: bool = False) -> str:
    """What to do about `problem` of an archive's directory (or `database`), for `yarp doctor`: a chmod for
    broad permissions (the database's companions too), a mkdir for a missing directory, else another path."""
    import shlex

    if problem.startswith("permissions"):
        return f"chmod 600 {shlex.quote(location.path)}*" if database else \
            f"chmod 700 {shlex.quote(location.directory)}"
    if problem.startswith("archive directory") and not os.path.lexists(location.directory):
        return f"mkdir -m 700 {shlex.quote(location.directory)}, or name another archive"
    if problem.startswith("archive path"):
        return f"name the database file in it: --archive {shlex.quote(os.path.join(location.path, ARCHIVE_FILENAME))}"
    return "put the archive in a private directory of yours: --archive, YARP_ARCHIVE or archive.path"


def secure_archive_location(location: ArchiveLocation, *, create: bool) -> bool:
    """Apply the filesystem-permission rules to an archive; return whether the database exists.

    Checks the directory, the database and its -wal/-shm companions. With
    `create=True` a missing directory is created 0700 (the writer's path).
    """
    narrow = location.is_default
    refuse_directory(location)
    ensure_private_directory(location.directory, narrow=narrow, create=create)
    exists = check_private_file(location.path, narrow=narrow, missing_ok=True)
    if not exists and not create:
        from yarp.errors import ArchiveMissing

        raise ArchiveMissing(f"archive database {location.path} does not exist")
    for suffix in COMPANION_SUFFIXES:
        check_private_file(location.path + suffix, narrow=narrow, label=f"archive {suffix[1:]} file", missing_ok=True)
    return exists


def filesystem_type(path: str) -> str | None:
    """The type of the filesystem holding `path` (Linux `/proc/self/mountinfo`), or None when unknown."""
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return None
    best, kind = "", None
    real = os.path.realpath(path)
    for line in lines:
        head, _, tail = line.partition(" - ")
        fields = head.split()
        if len(fields) < 5 or not tail:
            continue
        mount = fields[4].replace("\\040", " ")
        if (real == mount or real.startswith(mount.rstrip("/") + "/")) and len(mount) >= len(best):
            best, kind = mount, tail.split()[0]
    return kind
