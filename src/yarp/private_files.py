"""Private files and directories: the one home of YARP's filesystem safety rules.

Every file YARP or the evidence index creates for itself is created here: mode
0600 (directories 0700), exclusively, without following a symbolic link as the
final component. Every file they read or lock for themselves is opened here:
without following a link, checked through its descriptor to be a regular
file owned by the effective user and, where it must be private, without
group or other permission bits, and read within a byte bound.

Checks are reported as a short *problem* phrase ("is a symbolic link", "is
owned by another user", …); callers put their own label in front and raise their
own package's error, so messages stay bounded and never carry paths or payloads.
`yarp run` and the hooks import this module: it imports nothing beyond `os` and
`stat`.
"""

import os
import stat

#: Flags for creating a new private file: never an existing file, never through a final link.
CREATE_FLAGS = os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
#: Flags for reading a file of ours: no final link, no blocking on a FIFO, no controlling terminal.
READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY
#: errno of an O_NOFOLLOW open that met a symbolic link.
ELOOP = 40
FILE_MODE = 0o600
DIRECTORY_MODE = 0o700


class PrivatePathProblem(Exception):
    """A path is not safe to use as private; `problem` completes a sentence after the caller's label."""

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem


def problem_of(st: os.stat_result, *, directory: bool, private: bool = True, owned: bool = True) -> str | None:
    """What makes `st` unfit as a private directory or regular file of ours, or None.

    `private=False` accepts group and other permission bits (files we only read,
    such as an agent's own output files); `owned=False` accepts another owner
    too (an adapter's approved source output file). Type is always checked.
    """
    if stat.S_ISLNK(st.st_mode):
        return "is a symbolic link"
    if directory and not stat.S_ISDIR(st.st_mode):
        return "is not a directory"
    if not directory and not stat.S_ISREG(st.st_mode):
        return "is not a regular file"
    if owned and st.st_uid != os.geteuid():
        return "is owned by another user"
    if private and stat.S_IMODE(st.st_mode) & 0o077:
        return f"permissions are broader than {DIRECTORY_MODE if directory else FILE_MODE:04o}"
    return None


def create_private(path: str, flags: int = os.O_WRONLY) -> int:
    """Create a new file 0600 and return its descriptor.

    Raises `FileExistsError` when anything (a file, a link) already has the
    name, and `OSError` for any other failure; it never opens an existing file.
    """
    return os.open(path, flags | CREATE_FLAGS, FILE_MODE)


def create_private_empty(path: str) -> bool:
    """Create an empty 0600 file; return False (touching nothing) if the name is taken."""
    try:
        fd = create_private(path)
    except FileExistsError:
        return False
    os.close(fd)
    return True


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of `data` to `fd` (os.write may write less than asked)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def replace_atomically(path: str, data: bytes, mode: int = FILE_MODE) -> None:
    """Make `path` hold exactly `data`, all or nothing: a new private file, synced, renamed over it.

    The temporary name lives in the same directory, so the rename is atomic; it
    is removed again when anything fails. The directory is synced afterwards
    (best effort) so the rename itself survives a crash.
    """
    temporary = f"{path}.tmp-{os.getpid()}-{os.urandom(4).hex()}"
    fd = create_private(temporary)
    try:
        try:
            write_all(fd, data)
            if mode != FILE_MODE:
                os.fchmod(fd, mode)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
    try:
        dir_fd = os.open(os.path.dirname(path) or ".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)


def ensure_private_directory(path: str, *, create: bool, narrow: bool, parents: bool = True) -> bool:
    """Check (and create, and narrow) a private directory; return whether it existed before.

    With `create`, a missing directory is made 0700 (and, when `parents`, its
    missing parents as `mkdir -p` makes them: only the leaf is ours to
    restrict). With `narrow`, group/other bits on a directory of ours are
    removed instead of refused. Raises `PrivatePathProblem` for a link, a
    non-directory, a foreign owner or (without `narrow`) broad permissions, and
    `FileNotFoundError` when it is missing and `create` is false.
    """
    try:
        st = os.lstat(path)
        existed = True
    except FileNotFoundError:
        if not create:
            raise
        if parents:
            os.makedirs(path, mode=DIRECTORY_MODE, exist_ok=True)
        else:
            try:
                os.mkdir(path, DIRECTORY_MODE)
            except FileExistsError:
                pass  # made by a concurrent process: checked below like any other
        st = os.lstat(path)
        existed = False
    _check_or_narrow(path, st, directory=True, narrow=narrow)
    return existed


def check_private_file(path: str, *, narrow: bool) -> bool:
    """Check (and, with `narrow`, narrow to 0600) a private regular file; return whether it exists."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return False
    _check_or_narrow(path, st, directory=False, narrow=narrow)
    return True


def _check_or_narrow(path: str, st: os.stat_result, *, directory: bool, narrow: bool) -> None:
    """Raise `PrivatePathProblem` unless `st` is ours and private; with `narrow`, drop group/other bits instead."""
    problem = problem_of(st, directory=directory)
    if problem is not None and problem.startswith("permissions") and narrow:
        mode = DIRECTORY_MODE if directory else FILE_MODE
        try:
            os.chmod(path, stat.S_IMODE(st.st_mode) & mode, follow_symlinks=False)
        except OSError as exc:
            raise PrivatePathProblem(f"cannot be made private: {exc.strerror}") from None
        problem = None
    if problem is not None:
        raise PrivatePathProblem(problem)


def open_for_reading(path: str, *, private: bool, owned: bool = True) -> tuple[int, os.stat_result]:
    """Open a regular file of ours without following a final link; return (fd, its fstat).

    Raises `FileNotFoundError` when it is missing, `PrivatePathProblem` for a
    link or a file that fails `problem_of` (with `private` and `owned`), and
    `OSError` otherwise.
    """
    try:
        fd = os.open(path, READ_FLAGS)
    except OSError as exc:
        if exc.errno == ELOOP:
            raise PrivatePathProblem("is a symbolic link") from None
        raise
    try:
        st = os.fstat(fd)
        problem = problem_of(st, directory=False, private=private, owned=owned)
        if problem is not None:
            raise PrivatePathProblem(problem)
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def read_bounded(fd: int, limit: int) -> bytes:
    """Read `fd` to its end; at most `limit` + 1 bytes, so a caller can tell a file that grew past it."""
    chunks = []
    remaining = limit + 1
    while remaining > 0:
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def names(path: str, identity: tuple[int, int]) -> bool:
    """Whether `path` (a link not followed) still names the file whose (device, inode) is `identity`."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return (st.st_dev, st.st_ino) == identity


def open_lock_file(path: str, *, private: bool = True) -> int:
    """Open (creating 0600) a lock file of ours without following a link; return its descriptor.

    Raises `PrivatePathProblem` when the file is not a regular file owned by us
    (or, with `private`, has group/other bits), and `OSError` otherwise.
    """
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, FILE_MODE)
    except OSError as exc:
        if exc.errno == ELOOP:
            raise PrivatePathProblem("is a symbolic link") from None
        raise
    try:
        problem = problem_of(os.fstat(fd), directory=False, private=private)
        if problem is not None:
            raise PrivatePathProblem(problem)
    except BaseException:
        os.close(fd)
        raise
    return fd
