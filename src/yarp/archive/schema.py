"""Archive schema v1: the DDL exactly as specified, connection settings, migrations.

This module creates and upgrades the archive; it is used only by the broker's
writable connection (through `yarp.archive.store`) and by tests. It never runs on a
read-only connection. Migrations are ordered, each runs in one `BEGIN EXCLUSIVE`
transaction after a verified private backup, and a newer `user_version` is
refused without touching the file.
"""

from __future__ import annotations

import os
import time

from yarp.errors import ArchiveError, UnsupportedSchema
from yarp.limits import WAL_RESET_BYTES
from yarp.private_files import create_private

# Readers (`yarp run` among them) import this module for SCHEMA_VERSION only;
# sqlite3 is imported where a connection is made (`backup`).
TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable

SCHEMA_VERSION = 1

#: Version 1 DDL, statement for statement as the specification gives it.
SCHEMA_V1 = """
CREATE TABLE sessions (
id INTEGER PRIMARY KEY,
agent TEXT NOT NULL,
account TEXT NOT NULL,
source_session_id TEXT NOT NULL,
started_at_ms INTEGER,
UNIQUE (agent, account, source_session_id)
);
CREATE TABLE tool_calls (
id INTEGER PRIMARY KEY,
session_id INTEGER NOT NULL REFERENCES sessions(id),
source_call_id TEXT NOT NULL,
archive_ref TEXT NOT NULL UNIQUE CHECK (
length(archive_ref) = 35
AND substr(archive_ref, 1, 3) = 'yr_'
AND substr(archive_ref, 4) NOT GLOB '*[^0-9a-f]*'
),
tool_name TEXT NOT NULL,
provider TEXT,
model TEXT,
working_directory TEXT,
started_at_ms INTEGER NOT NULL,
requires_streams INTEGER NOT NULL CHECK (requires_streams IN (0, 1)),
finished_at_ms INTEGER,
status TEXT NOT NULL CHECK (status IN ('started', 'finished')),
is_error INTEGER CHECK (is_error IN (0, 1)),
executed INTEGER CHECK (executed IN (0, 1)),
UNIQUE (session_id, source_call_id)
);
CREATE TABLE payloads (
sha256 BLOB PRIMARY KEY CHECK (length(sha256) = 32),
compression TEXT NOT NULL CHECK (compression IN ('none', 'zstd')),
uncompressed_byte_length INTEGER NOT NULL CHECK (uncompressed_byte_length >= 0),
body BLOB NOT NULL
);
CREATE TABLE snapshots (
tool_call_id INTEGER NOT NULL REFERENCES tool_calls(id) ON DELETE CASCADE,
subject TEXT NOT NULL CHECK (
subject IN (
'input', 'result', 'result_text', 'source_output', 'stdout', 'stderr'
)
),
stage TEXT NOT NULL CHECK (stage IN ('before', 'after')),
media_type TEXT NOT NULL,
source_completeness TEXT CHECK (
source_completeness IN ('complete', 'incomplete', 'unknown')
),
captured_at_ms INTEGER NOT NULL,
payload_sha256 BLOB NOT NULL REFERENCES payloads(sha256),
PRIMARY KEY (tool_call_id, subject, stage),
CHECK (
(
subject = 'result_text'
AND stage = 'before'
AND source_completeness IS NOT NULL
)
OR (
subject <> 'result_text'
AND source_completeness IS NULL
)
)
);
CREATE INDEX tool_calls_started_at_idx ON tool_calls(started_at_ms);
CREATE INDEX tool_calls_tool_name_idx ON tool_calls(tool_name);
CREATE INDEX snapshots_payload_idx ON snapshots(payload_sha256);
"""

#: Settings of the broker's writable connection (the spec's SQLite settings).
#: `auto_vacuum` only takes effect before the first table exists, so `create`
#: sets it on the empty file before the DDL; `wal_autocheckpoint = 0` hands
#: checkpointing to the broker's bounded policy, and `journal_size_limit`
#: lets that policy see, by the file's size, that a checkpoint is done
#: (`limits.WAL_RESET_BYTES`).
WRITER_PRAGMAS = (
    "PRAGMA journal_mode = WAL",
    "PRAGMA synchronous = FULL",
    "PRAGMA foreign_keys = ON",
    "PRAGMA busy_timeout = 250",
    "PRAGMA wal_autocheckpoint = 0",
    f"PRAGMA journal_size_limit = {WAL_RESET_BYTES}",
)

#: Ordered migrations: MIGRATIONS[n] upgrades user_version n to n + 1.
#: Version 1 is the first public schema, so the table is empty in this release;
#: tests install a synthetic step to exercise the framework.
if TYPE_CHECKING:
    Migration = Callable[[sqlite3.Connection], None]
MIGRATIONS: dict[int, Migration] = {}


def user_version(conn: sqlite3.Connection) -> int:
    """The database's `PRAGMA user_version` (the schema version it holds)."""
    return conn.execute("PRAGMA user_version").fetchone()[0]


def is_empty(conn: sqlite3.Connection) -> bool:
    """Whether the database has no schema objects at all."""
    return conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0


def apply_writer_pragmas(conn: sqlite3.Connection) -> None:
    """Set the single writer's connection pragmas (WAL, `synchronous = FULL`, foreign keys, busy timeout, manual checkpoints)."""
    for pragma in WRITER_PRAGMAS:
        conn.execute(pragma)


def create(conn: sqlite3.Connection) -> None:
    """Create schema v1 on an empty database under `BEGIN EXCLUSIVE`.

    The connection must be in autocommit mode (`isolation_level=None`).
    """
    conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
    conn.execute("BEGIN EXCLUSIVE")
    try:
        if not is_empty(conn):
            # Another writer won the race between our check and the lock.
            conn.execute("ROLLBACK")
            return
        for statement in SCHEMA_V1.split(";"):
            if statement.strip():
                conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def check_supported(conn: sqlite3.Connection, migrations: dict[int, Migration] | None = None) -> int:
    """Return the archive's user_version, or raise `UnsupportedSchema` without writing.

    Supported: an empty new file (version 0), version 1, or an older version
    with an unbroken chain of migration steps. Called before any pragma that
    would change the file, so a refused archive stays byte-identical.
    """
    migrations = MIGRATIONS if migrations is None else migrations
    found = user_version(conn)
    if found == SCHEMA_VERSION or (found == 0 and is_empty(conn)):
        return found
    if found > SCHEMA_VERSION or found < 0 or any(v not in migrations for v in range(found, SCHEMA_VERSION)):
        raise UnsupportedSchema(
            f"archive schema version {found} is not supported by this binary (supports {SCHEMA_VERSION})"
        )
    return found


def ensure_current(
    conn: sqlite3.Connection,
    database_path: str,
    migrations: dict[int, Migration] | None = None,
) -> int:
    """Create, accept or migrate the schema; return the version found before.

    A newer or unknown version raises `UnsupportedSchema` and changes nothing.
    An older supported version (one with an unbroken chain of steps in
    `migrations`) is migrated in one exclusive transaction, after a private
    backup made with the backup API and verified. A failing step rolls the
    whole migration back, so the archive is never left between versions.
    """
    migrations = MIGRATIONS if migrations is None else migrations
    found = check_supported(conn, migrations)
    if is_empty(conn) and found == 0:
        create(conn)
        return 0
    if found == SCHEMA_VERSION:
        return found
    backup(conn, database_path, found)
    conn.execute("BEGIN EXCLUSIVE")
    try:
        if user_version(conn) != found:
            raise ArchiveError("archive changed during migration")
        for version in range(found, SCHEMA_VERSION):
            migrations[version](conn)
            conn.execute(f"PRAGMA user_version = {version + 1}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return found


def backup(conn: sqlite3.Connection, database_path: str, version: int) -> str:
    """Write a verified private copy of the archive before a migration; return its path.

    The copy is created 0600 without following a symlink and never overwrites
    an earlier backup: each attempt gets its own name.
    """
    stem = f"{database_path}.v{version}-{time.time_ns() // 1_000_000}"
    for attempt in range(100):
        target = f"{stem}.backup" if attempt == 0 else f"{stem}-{attempt}.backup"
        try:
            fd = create_private(target)
        except FileExistsError:
            continue
        except OSError as exc:
            raise ArchiveError(f"cannot create migration backup: {exc.strerror}") from None
        os.close(fd)
        break
    else:
        raise ArchiveError("cannot create migration backup: too many earlier backups")
    import sqlite3

    dest = sqlite3.connect(target)
    try:
        conn.backup(dest)
        ok = dest.execute("PRAGMA integrity_check").fetchone()[0]
        if ok != "ok" or user_version(dest) != version:
            raise ArchiveError("migration backup failed verification")
    finally:
        dest.close()
    os.chmod(target, 0o600)
    return target
