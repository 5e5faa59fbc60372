"""How YARP connects to SQLite: the writer, read-only readers, and error mapping.

The broker's writer is the only writable connection in normal use. Every other
command opens the archive through `open_readonly` (a `mode=ro` URI with
`query_only`), which can never change the file. SQLite failures become typed
`yarp.errors` exceptions by their primary result code, so only BUSY/LOCKED are
ever treated as retryable.
"""

from __future__ import annotations

import errno
import os

try:
    # The C module `sqlite3` wraps: the same connect and exception classes,
    # without the datetime adapters YARP never uses, whose imports cost
    # `yarp run` (which reads a call's reference) several milliseconds.
    import _sqlite3 as sqlite3
except ImportError:  # pragma: no cover - CPython always builds it with sqlite3
    import sqlite3

from yarp.errors import (
    ArchiveBusy,
    ArchiveError,
    ArchiveMissing,
    CorruptArchive,
    DiskFull,
    UnsafePath,
    UnsupportedSchema,
    YarpError,
)
from yarp.paths import ArchiveLocation, secure_archive_location


def _same(value):
    return value


# CPython binds int, float, str and bytearray parameters directly and sends every
# other one (bytes and None: digests, bodies, absent columns) through its
# adaptation lookup, which ends in a formatted AttributeError per parameter: about
# a tenth of the writer's instructions for a 1 KiB begin_call (docs/design/broker.md,
# "Batched apply"). An adapter registered for the exact type is found first and
# returns the same object, so the bound values do not change.
sqlite3.register_adapter(bytes, bytes)
sqlite3.register_adapter(type(None), _same)

SQLITE_BUSY = 5
SQLITE_LOCKED = 6
SQLITE_READONLY = 8
SQLITE_IOERR = 10
SQLITE_CORRUPT = 11
SQLITE_FULL = 13
SQLITE_CANTOPEN = 14
SQLITE_NOTADB = 26


def map_error(exc: BaseException, doing: str) -> YarpError:
    """Turn an sqlite3/OS exception into a typed, bounded YARP error (no SQL, no data)."""
    if isinstance(exc, YarpError):
        return exc
    if isinstance(exc, OSError) and not isinstance(exc, sqlite3.Error):
        if exc.errno == errno.ENOSPC:
            return DiskFull(f"{doing}: no space left on device")
        return ArchiveError(f"{doing}: {exc.strerror or 'I/O error'}")
    code = getattr(exc, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    name = getattr(exc, "sqlite_errorname", None) or type(exc).__name__
    if primary in (SQLITE_BUSY, SQLITE_LOCKED):
        return ArchiveBusy(f"{doing}: archive is busy ({name})")
    if primary == SQLITE_FULL:
        return DiskFull(f"{doing}: database or disk is full")
    if primary in (SQLITE_CORRUPT, SQLITE_NOTADB):
        return CorruptArchive(f"{doing}: archive is corrupt or not a database ({name})")
    if primary == SQLITE_CANTOPEN:
        return ArchiveError(f"{doing}: archive cannot be opened")
    if primary == SQLITE_READONLY:
        return ArchiveError(f"{doing}: archive is read-only ({name})")
    if primary == SQLITE_IOERR:
        return ArchiveError(f"{doing}: disk I/O error ({name})")
    return ArchiveError(f"{doing}: SQLite error ({name})")


#: Bytes a URI filename may carry unescaped (`urllib.parse.quote`'s set, with "/").
_URI_SAFE = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-~/")


def file_uri(path: str, mode: str) -> str:
    """A `file:` URI for `path` with SQLite's `mode` parameter (`ro`, `rw`, `rwc`)."""
    # Percent-encoded here rather than with urllib.parse, whose import costs
    # `yarp run` (which reads a call's reference) a few milliseconds.
    quoted = "".join(chr(b) if b in _URI_SAFE else f"%{b:02X}" for b in os.fsencode(path))
    return f"file:{quoted}?mode={mode}"


def open_readonly(location: ArchiveLocation, *, check_version: bool = True) -> sqlite3.Connection:
    """Open the archive read-only after the permission checks; never creates or writes.

    Raises `ArchiveMissing`, `UnsafePath`, `CorruptArchive`, `UnsupportedSchema`.
    """
    from yarp.archive.schema import SCHEMA_VERSION

    secure_archive_location(location, create=False)
    try:
        conn = sqlite3.connect(file_uri(location.path, "ro"), uri=True, isolation_level=None, check_same_thread=False)
    except sqlite3.Error as exc:
        raise map_error(exc, "opening archive") from None
    try:
        conn.execute("PRAGMA query_only = ON")
        conn.execute("PRAGMA busy_timeout = 250")
        version = conn.execute("PRAGMA user_version").fetchone()[0]
    except sqlite3.Error as exc:
        conn.close()
        raise map_error(exc, "reading archive") from None
    if check_version and version != SCHEMA_VERSION:
        conn.close()
        raise _unsupported(version)
    return conn


def attach_readonly(conn: sqlite3.Connection, location: ArchiveLocation, name: str) -> None:
    """Attach the archive to `conn` as schema `name`, read-only (`mode=ro`), after `open_readonly`'s checks.

    For a connection whose own database is another file (a disposable
    projection) that reads the archive in the same statements. `conn` must
    have been opened with `uri=True` for the mode to hold.
    Raises `ArchiveMissing`, `UnsafePath`, `CorruptArchive`, `UnsupportedSchema`.
    """
    from yarp.archive.schema import SCHEMA_VERSION

    secure_archive_location(location, create=False)
    try:
        conn.execute(f"ATTACH DATABASE ? AS {name}", (file_uri(location.path, "ro"),))
        version = conn.execute(f"PRAGMA {name}.user_version").fetchone()[0]
    except sqlite3.Error as exc:
        raise map_error(exc, "opening archive") from None
    if version != SCHEMA_VERSION:
        raise _unsupported(version)


def _unsupported(version: int) -> UnsupportedSchema:
    from yarp.archive.schema import SCHEMA_VERSION

    return UnsupportedSchema(f"archive schema version {version} is not supported (this binary reads {SCHEMA_VERSION})")


def open_writer(location: ArchiveLocation) -> sqlite3.Connection:
    """Open (creating if needed) the archive for the single writer, with private modes.

    The database file is created 0600 before SQLite sees it, so it is never
    briefly world-readable; the -wal/-shm files inherit SQLite's mode from the
    database file. Applies the writer pragmas and creates or migrates the schema.
    """
    from yarp.archive import schema
    from yarp.private_files import create_private_empty

    try:
        secure_archive_location(location, create=True)
    except OSError as exc:
        raise map_error(exc, "creating archive directory") from None
    old_umask = os.umask(0o077)
    try:
        create_private_empty(location.path)
        conn = sqlite3.connect(file_uri(location.path, "rw"), uri=True, isolation_level=None, check_same_thread=False)
        try:
            schema.check_supported(conn)
            if schema.is_empty(conn):
                conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
            schema.apply_writer_pragmas(conn)
            schema.ensure_current(conn, location.path)
        except BaseException:
            conn.close()
            raise
    except (sqlite3.Error, OSError) as exc:
        raise map_error(exc, "opening archive for writing") from None
    finally:
        os.umask(old_umask)
    secure_archive_location(location, create=False)
    return conn


__all__ = ["map_error", "open_readonly", "open_writer", "ArchiveMissing", "UnsafePath"]
