"""The evidence index's facade: initialise, rebuild, reconcile, verify and query.

One writer at a time holds `index/index.lock` (`flock LOCK_EX`) and the only
read-write connection (`mode=rwc&nofollow=1`, WAL, foreign keys). Every query
and `verify` uses a separate read-only connection (`mode=ro`) after checking
the database header. Deleting the database and rebuilding is always allowed.
Nothing here writes to run evidence; the projection is never authority.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sqlite3
import stat
import time

from yarp import private_files

from . import index_schema
from .errors import IndexBusy, IndexIncompatible, IndexMissing, StateRootUnsafe
from .limits import BUSY_TIMEOUT_MS
from .state_root import (
    COMPANION_SUFFIXES,
    StateRoot,
    check_database_file,
    check_index_dir,
    ensure_index_dir,
    resolve_state_root,
)

AUTHORITY = "json-jsonl-sealed-receipts"
LOCK_WAIT_SECONDS = 30.0


_URI_SAFE = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/-._~")


def quote(path: str) -> str:
    """Percent-encode a path for a SQLite `file:` URI (urllib.parse costs every query its import)."""
    return "".join(chr(b) if b in _URI_SAFE else "%%%02X" % b for b in os.fsencode(path))


@contextlib.contextmanager
def writer_lock(root: StateRoot, wait: float = LOCK_WAIT_SECONDS):
    """Hold the exclusive writer lock; raise `IndexBusy` after `wait` seconds."""
    ensure_index_dir(root)
    try:
        fd = private_files.open_lock_file(root.lock, private=False)
    except private_files.PrivatePathProblem as exc:
        raise StateRootUnsafe(f"index lock {exc.problem}") from None
    try:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise IndexBusy("another index writer holds index.lock") from None
                time.sleep(0.05)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _check_files(root: StateRoot) -> bool:
    exists = check_database_file(root.database)
    for suffix in COMPANION_SUFFIXES:
        check_database_file(root.database + suffix, f"index {suffix[1:]} file")
    return exists


def connect_writer(root: StateRoot) -> sqlite3.Connection:
    """The one read-write connection; call only while holding `writer_lock`."""
    ensure_index_dir(root)
    if not _check_files(root):
        private_files.create_private_empty(root.database)
    try:
        conn = sqlite3.connect(
            f"file:{quote(root.database)}?mode=rwc&nofollow=1",
            uri=True,
            isolation_level=None,
            timeout=BUSY_TIMEOUT_MS / 1000,
            check_same_thread=False,
        )
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        index_schema.read_header(conn)
        conn.execute("PRAGMA journal_mode = WAL")
        # The projection is disposable (rebuild is the recovery path); WAL with
        # NORMAL never corrupts, it can only lose the last commits on power loss.
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
    except sqlite3.DatabaseError:
        raise IndexIncompatible("index database is not a SQLite database") from None
    return conn


def connect_reader(root: StateRoot) -> sqlite3.Connection:
    """A read-only connection with a validated header."""
    if not check_index_dir(root) or not _check_files(root):
        raise IndexMissing("no index database; run: agent-workflow index rebuild")
    try:
        conn = sqlite3.connect(
            f"file:{quote(root.database)}?mode=ro&nofollow=1",
            uri=True,
            isolation_level=None,
            timeout=BUSY_TIMEOUT_MS / 1000,
        )
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA query_only = ON")
    except sqlite3.DatabaseError:
        raise IndexIncompatible("index database cannot be opened read-only") from None
    index_schema.validate_header(conn)
    return conn


def open_root(explicit: str | None, *, create: bool = False) -> StateRoot:
    """The trust-checked state root (`--state-root`, else the default); `create` makes it 0700 when absent."""
    return resolve_state_root(explicit, create=create)


def initialize(root: StateRoot) -> list[int]:
    """Create or upgrade the projection database; return the migrations applied."""
    with writer_lock(root):
        conn = connect_writer(root)
        try:
            applied = index_schema.migrate(conn)
            _set_meta(conn, {"authority": AUTHORITY})
            return applied
        finally:
            conn.close()


def _set_meta(conn: sqlite3.Connection, values: dict) -> None:
    conn.executemany(
        "INSERT OR REPLACE INTO index_metadata(key, value) VALUES (?, ?)", [(k, str(v)) for k, v in values.items()]
    )


def _remove_database(root: StateRoot) -> None:
    for suffix in ("",) + COMPANION_SUFFIXES:
        path = root.database + suffix
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            continue
        if stat.S_ISDIR(st.st_mode):
            raise StateRootUnsafe("index database path is a directory")
        os.unlink(path)


def sync(root: StateRoot, *, only: str | None = None, rebuild: bool = False) -> dict:
    """Reconcile the projection with the state root (or rebuild it from nothing)."""
    from .reconciler import reconcile

    started = time.monotonic()
    with writer_lock(root):
        if rebuild:
            _remove_database(root)
        conn = connect_writer(root)
        try:
            migrated = index_schema.migrate(conn)
            report = reconcile(conn, root, only=only)
            conn.execute("BEGIN IMMEDIATE")
            _set_meta(
                conn,
                {
                    "authority": AUTHORITY,
                    "last_sync_at": index_schema.utc_now(),
                    "last_sync_scope": "run" if only else "active+archive",
                    **report.pop("probe_metadata"),
                },
            )
            conn.execute("COMMIT")
        finally:
            conn.close()
    report["operation"] = "rebuild" if rebuild else "sync"
    report["migrations_applied"] = migrated
    report["database"] = root.database
    report["elapsed_seconds"] = round(time.monotonic() - started, 4)
    return report


def status(root: StateRoot) -> dict:
    """The index's freshness report and row counts, through a read-only connection."""
    from .freshness import freshness

    conn = connect_reader(root)
    try:
        fresh = freshness(conn, root)
        meta = dict(conn.execute("SELECT key, value FROM index_metadata").fetchall())
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        states = dict(conn.execute("SELECT index_state, COUNT(*) FROM runs GROUP BY index_state").fetchall())
    finally:
        conn.close()
    return {
        "schema": "agent-workflow/index-status/v1",
        "database": root.database,
        "authority": meta.get("authority", AUTHORITY),
        "schema_version": version,
        "last_sync_at": meta.get("last_sync_at"),
        "run_counts": {k: states.get(k, 0) for k in ("current", "error", "historical_artifact")},
        **fresh,
    }


def query(root: StateRoot, kind: str, filters: dict, limit: int, *, fresh: bool = False) -> dict:
    """Run one curated query. Freshness comes from the bounded probe unless
    `fresh`, which recomputes every run's fingerprint (as `status` does)."""
    from .freshness import freshness, probe_freshness
    from .queries import run_query

    conn = connect_reader(root)
    try:
        fresh = freshness(conn, root) if fresh else probe_freshness(conn, root)
        rows = run_query(conn, kind, filters, limit)
        meta = dict(conn.execute("SELECT key, value FROM index_metadata").fetchall())
    finally:
        conn.close()
    return {
        "schema": "agent-workflow/index-query/v1",
        "database": root.database,
        "authority": meta.get("authority", AUTHORITY),
        **fresh,
        "kind": kind,
        "filters": {k: v for k, v in filters.items() if v is not None},
        "limit": limit,
        "row_count": len(rows),
        "rows": rows,
    }


def verify(root: StateRoot, *, review: str | None = None) -> dict:
    """Check the projection against the evidence it was built from (see `verify.verify_full`)."""
    from .verify import verify_full

    conn = connect_reader(root)
    try:
        return verify_full(conn, root, review=review)
    finally:
        conn.close()


def export(root: StateRoot, directory: str) -> dict:
    """Export the projection's tables as Parquet files into `directory` (see `export.export_parquet`)."""
    from .export import export_parquet

    conn = connect_reader(root)
    try:
        return export_parquet(conn, directory)
    finally:
        conn.close()
