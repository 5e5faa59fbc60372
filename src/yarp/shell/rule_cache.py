"""A private on-disk cache of the validated rule set, so `yarp run` skips TOML.

Parsing the rule files costs a wrapped command about 20 ms (importing
`tomllib` and `re`, parsing, checking every pattern) each time it has output
to look at. The validated rules are plain data, so they are kept in one
`marshal` file, `$XDG_CACHE_HOME/yarp/rules.marshal` (else
`~/.cache/yarp/rules.marshal`), and read back in well under a millisecond.

The cache is keyed by the SHA-256 of every rule file's bytes in load order
(with its origin), the cache format, YARP's version and the interpreter's. The
files are small and read anyway (about 0.1 ms): keying by content rather than
by timestamps means no edit can be missed, however quick, and a parse after a
miss uses the very bytes that were hashed. Only a fully validated rule set is
ever written, so a rule file's errors are reported exactly as without the
cache.

It is a cache, never a source of truth: any doubt — a directory or file that
is not ours, writable by group or others, a symlink, unreadable, corrupt,
from another version — means the rule files are parsed instead, and a failure
to write is ignored. The directory is created 0700 and the file written 0600
through a private temporary file and an atomic rename.
"""

from __future__ import annotations

import os
import stat
import sys

from .._digest import identity_sha256
from .._version import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from .rules import Rule

#: Bumped whenever the stored layout of a rule changes.
CACHE_FORMAT = 1
CACHE_NAME = "rules.marshal"
#: A cache file larger than this is not ours to read (the rule files themselves are bounded).
MAX_CACHE_BYTES = 4 * 1024 * 1024


def cache_dir(environ: Mapping[str, str] = os.environ) -> str:
    base = environ.get("XDG_CACHE_HOME") or ""
    if not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "yarp")


def cache_key(sources: Sequence[tuple[str, bytes]]) -> str:
    """The key for rule files given as (origin, bytes) pairs in load order."""
    digest = identity_sha256(f"yarp-rules/{CACHE_FORMAT}/{__version__}/{sys.hexversion}".encode())
    for origin, data in sources:
        digest.update(b"\0%d\0%s\0" % (len(data), origin.encode("utf-8", "surrogateescape")))
        digest.update(data)
    return digest.hexdigest()


def _ours(st: os.stat_result, kind: int) -> bool:
    """Of the expected type, owned by us and writable by nobody else."""
    return stat.S_IFMT(st.st_mode) == kind and st.st_uid == os.geteuid() and not st.st_mode & 0o022


def load(key: str, environ: Mapping[str, str] = os.environ) -> list[Rule] | None:
    """The cached rules for `key`, or None (absent, stale, unsafe or unreadable)."""
    directory = cache_dir(environ)
    try:
        if not _ours(os.lstat(directory), stat.S_IFDIR):
            return None
        fd = os.open(os.path.join(directory, CACHE_NAME), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not _ours(st, stat.S_IFREG) or st.st_size > MAX_CACHE_BYTES:
            return None
        data = os.read(fd, MAX_CACHE_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    import marshal

    try:
        stored = marshal.loads(data)
        if type(stored) is not tuple or len(stored) != 3 or stored[:2] != (CACHE_FORMAT, key):
            return None
        return [_rule_from(row) for row in stored[2]]
    except (ValueError, TypeError, EOFError, IndexError):
        return None


def store(key: str, rules: Sequence[Rule], environ: Mapping[str, str] = os.environ) -> None:
    """Write `rules` under `key`, best effort: a failure only means parsing next time."""
    import marshal

    directory = cache_dir(environ)
    data = marshal.dumps((CACHE_FORMAT, key, tuple(_row_of(rule) for rule in rules)))
    if len(data) > MAX_CACHE_BYTES:
        return
    try:
        try:
            os.makedirs(directory, 0o700)
        except FileExistsError:
            pass
        if not _ours(os.lstat(directory), stat.S_IFDIR):
            return
        temp = os.path.join(directory, f".{CACHE_NAME}.{os.getpid()}.{os.urandom(4).hex()}")
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.rename(temp, os.path.join(directory, CACHE_NAME))
        except OSError:
            try:
                os.unlink(temp)
            except OSError:
                pass
    except OSError:
        pass


def _row_of(rule: Rule) -> tuple:
    return (rule.id, rule.programs, rule.argv_prefix, rule.required_args, rule.action, rule.reducer,
            rule.transform, rule.keep_patterns, rule.drop_patterns, rule.search_hint,
            rule.success._values(), rule.failure._values(), rule.origin)


def _rule_from(row: tuple) -> Rule:
    from .rules import Limits, Rule

    values = list(row)
    if len(values) != len(Rule._fields):
        raise ValueError("cached rule has the wrong shape")
    values[10] = Limits(*values[10])
    values[11] = Limits(*values[11])
    return Rule(*values)
