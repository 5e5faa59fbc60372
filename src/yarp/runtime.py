"""The broker's private runtime directory, socket path and locks.

Layout (names shared with the reference implementation, so two implementations
never write one archive at once)::

    $XDG_RUNTIME_DIR/yarp/                 (0700)  or  <tmp>/yarp-runtime-<uid>/yarp/
        archive-<id>.sock                  (0600)  the broker's Unix socket
        archive-<id>.lock                  (0600)  startup lock: held while starting or stopping
        archive-<id>.lifetime              (0600)  lifetime lock: held while a broker owns the archive

`<id>` is the lowercase hex of the first 16 bytes of SHA-256 over the canonical
archive path. Every component is checked: a real directory (not a symlink),
owned by us, without group/other permission bits; lock files are regular files
opened without following links. Nothing here ever contains request payloads.
"""

import errno
import os
import stat

from yarp import private_files
from yarp._digest import identity_sha256
from yarp._record import Record
from yarp.limits import MAX_SOCKET_PATH_BYTES
from yarp.paths import canonical_archive_path

#: Startup lock and readiness pipe that a starting client hands to the broker
#: it spawns (here, not in `yarp.broker`, so clients never import the event loop).
STARTUP_FD_ENV = "YARP_BROKER_STARTUP_FD"
READY_FD_ENV = "YARP_BROKER_READY_FD"


def archive_id(archive_path: str) -> str:
    """The archive's short id: 32 hex digits of the SHA-256 of its canonical path, naming its socket and locks."""
    digest = identity_sha256(canonical_archive_path(archive_path).encode("utf-8", "surrogateescape")).digest()
    return digest[:16].hex()


def _is_private_dir(path: str) -> bool:
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return private_files.problem_of(st, directory=True) is None


def _ensure_private_dir(path: str, label: str) -> None:
    try:
        private_files.ensure_private_directory(path, create=True, narrow=False, parents=False)
    except private_files.PrivatePathProblem as exc:
        from yarp.errors import UnsafePath

        raise UnsafePath.at(label, path, exc.problem) from None
    except OSError as exc:
        raise unusable(exc, f"{label} {path}") from None


#: errno values a retry within a request's deadline cannot cure: the runtime directory or an entry
#: in it is read-only, not ours to write, or of the wrong type, or the file system is full.
PERMANENT_ERRNOS = frozenset(getattr(errno, name) for name in (
    "EACCES", "EPERM", "EROFS", "ENOTDIR", "EISDIR", "ELOOP", "ENOTSOCK", "ENAMETOOLONG", "ENOSPC", "EDQUOT")
    if hasattr(errno, name))


def unusable(exc: OSError, what: str):
    """The error for an `OSError` met using the runtime directory at `what` (a label and its path):
    `RuntimeDirUnusable` when it is permanent (`PERMANENT_ERRNOS`: reported at once, never retried),
    `BrokerUnavailable` (retried within the deadline) otherwise; the message names the path and the cause."""
    from yarp.errors import BrokerUnavailable, RuntimeDirUnusable

    cls = RuntimeDirUnusable if exc.errno in PERMANENT_ERRNOS else BrokerUnavailable
    return cls(f"cannot use {what}: {exc.strerror or 'I/O error'}")


#: Where temporary files may go, in `tempfile.gettempdir()`'s order of preference.
_TEMP_VARIABLES = ("TMPDIR", "TEMP", "TMP")
_TEMP_DIRECTORIES = ("/tmp", "/var/tmp", "/usr/tmp")


def temp_directory(environ=os.environ) -> str:
    """The temporary directory, chosen as `tempfile.gettempdir()` chooses it, without importing `tempfile`.

    `tempfile` pulls in `shutil`, `random` and `re`: about 15 ms on every hook
    event and `yarp run` of a user without `XDG_RUNTIME_DIR`. The first
    absolute, writable directory among $TMPDIR, $TEMP, $TMP, /tmp, /var/tmp and
    /usr/tmp wins; else the working directory.
    """
    candidates = [environ.get(name, "") for name in _TEMP_VARIABLES]
    for candidate in (*candidates, *_TEMP_DIRECTORIES):
        if candidate and os.path.isabs(candidate) and os.path.isdir(candidate) \
                and os.access(candidate, os.W_OK | os.X_OK):
            return os.path.normpath(candidate)
    return os.getcwd()


def runtime_base(environ=os.environ) -> str:
    """The private per-user base: XDG_RUNTIME_DIR when set, else <tmp>/yarp-runtime-<uid>.

    An absolute XDG_RUNTIME_DIR that exists but is unsafe (a symlink, another
    user's, group/other bits, not a directory) is refused rather than silently
    replaced: two clients of one archive that disagreed about the runtime
    directory would each start a broker. An unset, empty, relative or missing
    value means "absent" and selects the temporary-directory fallback.
    """
    xdg = environ.get("XDG_RUNTIME_DIR", "")
    if xdg and os.path.isabs(xdg) and os.path.lexists(xdg):
        if not _is_private_dir(xdg):
            _ensure_private_dir(xdg, "XDG_RUNTIME_DIR")
            from yarp.errors import UnsafePath

            raise UnsafePath("XDG_RUNTIME_DIR is not a private directory")
        return xdg
    base = os.path.join(temp_directory(environ), f"yarp-runtime-{os.geteuid()}")
    _ensure_private_dir(base, "runtime base directory")
    return base


class RuntimePaths(Record):
    """Where one archive's broker socket and lock files live in the private runtime directory."""

    __slots__ = ("directory", "archive_id")
    directory: str
    archive_id: str

    @property
    def socket(self) -> str:
        """The broker's Unix socket for this archive."""
        return os.path.join(self.directory, f"archive-{self.archive_id}.sock")

    @property
    def startup_lock(self) -> str:
        """The lock held while a broker is starting or stopping, so only one starts at a time."""
        return os.path.join(self.directory, f"archive-{self.archive_id}.lock")

    @property
    def lifetime_lock(self) -> str:
        """The lock a running broker holds for its whole life."""
        return os.path.join(self.directory, f"archive-{self.archive_id}.lifetime")


def runtime_paths(archive_path: str, environ=os.environ, *, create: bool = True) -> RuntimePaths:
    """Resolve (and create/check) the runtime directory for one archive."""
    directory = os.path.join(runtime_base(environ), "yarp")
    if create:
        _ensure_private_dir(directory, "runtime directory")
    paths = RuntimePaths(directory, archive_id(archive_path))
    if len(paths.socket.encode()) >= MAX_SOCKET_PATH_BYTES:
        from yarp.errors import UnsafePath

        raise UnsafePath.at("broker socket path", paths.socket,
                            f"is longer than the {MAX_SOCKET_PATH_BYTES - 1} bytes a socket path may have")
    return paths


def open_lock_file(path: str) -> int:
    """Open (creating 0600) a lock file without following links; check type, owner and mode."""
    try:
        return private_files.open_lock_file(path)
    except private_files.PrivatePathProblem as exc:
        from yarp.errors import UnsafePath

        raise UnsafePath.at("broker lock", path, exc.problem) from None


def try_lock(fd: int) -> bool:
    """Take an exclusive flock without blocking; False if another process holds it."""
    import fcntl  # only for locks: a thin client that finds its broker never loads it

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def lock_held_elsewhere(path: str) -> bool:
    """True when another open file description holds an exclusive lock on `path`."""
    try:
        fd = open_lock_file(path)
    except FileNotFoundError:
        return False
    try:
        if try_lock(fd):
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_UN)
            return False
        return True
    finally:
        os.close(fd)


def check_socket_entry(path: str) -> bool:
    """True when a socket entry exists and is safe to use or remove; raise if unsafe."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return False
    if stat.S_ISLNK(st.st_mode):
        problem = "is a symbolic link"
    elif not stat.S_ISSOCK(st.st_mode):
        problem = "is not a socket"
    elif st.st_uid != os.geteuid():
        problem = "is owned by another user"
    elif stat.S_IMODE(st.st_mode) & 0o077:
        problem = "permissions are broader than 0600"
    else:
        return True
    from yarp.errors import UnsafePath

    raise UnsafePath.at("broker socket", path, problem)


def fix_for(error, environ=os.environ) -> str:
    """What to do about `error`, raised by `runtime_paths` or `check_socket_entry`, for the state it
    found (`yarp doctor`'s fix line): the path it names (`UnsafePath.at`) and what is wrong with it."""
    import shlex

    xdg = environ.get("XDG_RUNTIME_DIR", "")
    elsewhere = "or point XDG_RUNTIME_DIR at a private directory of yours (mkdir -m 700 DIR)"
    label, path, problem = (getattr(error, name, None) for name in ("label", "path", "problem"))
    if path is None:  # an errno: read-only, not writable by us (`unusable`), said in the message
        return f"make the directory named above writable by you, {elsewhere}"
    quoted, problem = shlex.quote(path), problem or ""
    if label == "XDG_RUNTIME_DIR":
        return (f"chmod 700 {quoted}, or unset XDG_RUNTIME_DIR" if problem.startswith("permissions")
                else "point XDG_RUNTIME_DIR at a private directory of yours, or unset it")
    if label == "broker socket path":
        return "point XDG_RUNTIME_DIR at a shorter private directory" + ("" if xdg else " (or TMPDIR at a shorter one)")
    if problem == "is owned by another user":
        return f"{quoted} belongs to another user: have it removed, {elsewhere}"
    if problem.startswith("permissions") and label != "broker socket":
        return f"chmod {'600' if label == 'broker lock' else '700'} {quoted}"
    # A link, a file where a directory or socket belongs, or a socket no broker of ours made.
    return f"remove {quoted}: no broker uses it, and yarp makes it anew"


def write_owner(fd: int) -> None:
    """Write our pid into the lifetime lock file we hold (`fd`), so a client can name a broker
    that does not answer (`broker_pid`). Only a name: liveness is the lock, never this file."""
    os.ftruncate(fd, 0)
    os.pwrite(fd, b"%d\n" % os.getpid(), 0)


def broker_pid(paths: RuntimePaths) -> int | None:
    """The pid of the broker that holds this archive's lifetime lock, as it wrote it there
    (`write_owner`); None when no process holds the lock or the file does not say."""
    try:
        fd, _ = private_files.open_for_reading(paths.lifetime_lock, private=True)
    except (OSError, private_files.PrivatePathProblem):
        return None
    try:
        text = private_files.read_bounded(fd, 32)
    except OSError:
        return None
    finally:
        os.close(fd)
    try:
        pid = int(text.strip() or b"0")
    except ValueError:
        return None
    try:
        held = lock_held_elsewhere(paths.lifetime_lock)
    except Exception:  # noqa: BLE001 - only a name for a message: an unsafe or unreadable lock names none
        return None
    return pid if pid > 0 and held else None


def silent_broker(paths: RuntimePaths, bound_s: float) -> str:
    """What to say of a broker that owns the archive but does not answer: its pid (`broker_pid`),
    its socket, and the bound it was waited for."""
    pid = broker_pid(paths)
    who = f"broker pid {pid}" if pid else "the broker (pid unknown)"
    return f"{who} does not answer on {paths.socket} (no answer within {round(bound_s, 1):g} s)"


def remove_stale_socket(paths: RuntimePaths) -> bool:
    """Remove a leftover socket only when no broker holds the lifetime lock.

    The caller must hold the startup lock. Returns whether an entry was removed.
    """
    if not check_socket_entry(paths.socket):
        return False
    if lock_held_elsewhere(paths.lifetime_lock):
        return False
    os.unlink(paths.socket)
    return True
