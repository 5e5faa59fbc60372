"""A private on-disk cache of validated parse results, so `yarp run` skips TOML.

`yarp run` reads the configuration on every call and consults the rule set
for every command with output. Parsing them costs a wrapped command up to
30 ms (importing `tomllib` and `re`, parsing, checking every rule pattern),
so each validated result — plain data — is kept in one `marshal` file per
kind, `$XDG_CACHE_HOME/yarp/<kind>.marshal` (else `~/.cache/yarp/`), and read
back in well under a millisecond.

An entry is keyed by the SHA-256 of every source file's bytes in order (with
its origin), the kind, the cache format, YARP's version and the
interpreter's. The files are small and read anyway: keying by content rather
than by timestamps means no edit can be missed, however quick, and a parse
after a miss uses the very bytes that were hashed. Callers store only fully
validated results, so a file's errors are reported exactly as without the
cache.

It is a cache, never a source of truth: any doubt — a directory or file that
is not ours, writable by group or others, a symlink, unreadable, corrupt,
from another version — means the files are parsed instead, and a failure to
write is ignored. The directory is created 0700 and each file written 0600
through a private temporary file and an atomic rename (`private_files.replace_atomically`).
"""

import os
import sys

from yarp import private_files
from yarp._digest import identity_sha256
from yarp._version import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

#: Bumped whenever a stored layout changes.
CACHE_FORMAT = 1
#: The kinds of entry (one file each).
KINDS = ("rules", "config", "salience")
#: A cache file larger than this is not ours to read (the sources themselves are bounded).
MAX_CACHE_BYTES = 4 * 1024 * 1024


def cache_dir(environ: "Mapping[str, str]" = os.environ) -> str:
    """`$XDG_CACHE_HOME/yarp` (else `~/.cache/yarp`)."""
    base = environ.get("XDG_CACHE_HOME") or ""
    if not os.path.isabs(base):
        base = os.path.join(environ.get("HOME") or os.path.expanduser("~"), ".cache")
    return os.path.join(base, "yarp")


def cache_path(kind: str, environ: "Mapping[str, str]" = os.environ) -> str:
    """The cache file of one kind of entry (`rules` or `config`)."""
    if kind not in KINDS:
        raise ValueError(kind)
    return os.path.join(cache_dir(environ), f"{kind}.marshal")


def cache_key(kind: str, sources: "Sequence[tuple[str, bytes]]") -> str:
    """The key for one kind's source files, given as (origin, bytes) pairs in order."""
    digest = identity_sha256(f"yarp-{kind}/{CACHE_FORMAT}/{__version__}/{sys.hexversion}".encode())
    for origin, data in sources:
        digest.update(b"\0%d\0%s\0" % (len(data), origin.encode("utf-8", "surrogateescape")))
        digest.update(data)
    return digest.hexdigest()


def _ours(st: os.stat_result, *, directory: bool) -> bool:
    """Of the expected type, owned by us and writable by nobody else (readable is no doubt)."""
    return private_files.problem_of(st, directory=directory, private=False) is None and not st.st_mode & 0o022


def load(kind: str, key: str, environ: "Mapping[str, str]" = os.environ):
    """The value stored for `key`, or None (absent, stale, unsafe or unreadable)."""
    path = cache_path(kind, environ)
    try:
        if not _ours(os.lstat(os.path.dirname(path)), directory=True):
            return None
        fd, st = private_files.open_for_reading(path, private=False)
    except (OSError, private_files.PrivatePathProblem):
        return None
    try:
        if not _ours(st, directory=False) or st.st_size > MAX_CACHE_BYTES:
            return None
        data = os.read(fd, MAX_CACHE_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    import marshal

    try:
        stored = marshal.loads(data)
    except (ValueError, TypeError, EOFError):
        return None
    if type(stored) is not tuple or len(stored) != 3 or stored[:2] != (CACHE_FORMAT, key):
        return None
    return stored[2]


def store(kind: str, key: str, value, environ: "Mapping[str, str]" = os.environ) -> None:
    """Keep `value` (plain, marshal-able data) under `key`, best effort: a failure
    only means parsing next time."""
    import marshal

    path = cache_path(kind, environ)
    directory = os.path.dirname(path)
    try:
        data = marshal.dumps((CACHE_FORMAT, key, value))
    except ValueError:  # not plain data: a caller's mistake, never worth failing a run for
        return
    if len(data) > MAX_CACHE_BYTES:
        return
    try:
        try:
            os.makedirs(directory, 0o700)
        except FileExistsError:
            pass
        if not _ours(os.lstat(directory), directory=True):
            return
        private_files.replace_atomically(path, data)
    except OSError:
        pass
