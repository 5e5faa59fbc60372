"""The savings projection: each finished call's kind and sizes, kept between reports.

A savings report needs, for every finished call, the sizes of two to four
payloads, found by their digests: random lookups that cost most of a report
over a large archive (about 1.5 s of CPU per 100,000 calls). A finished call
never changes (the store refuses snapshots for a finished call), so its row,
once computed, holds for as long as a call with that id *and* that
`archive_ref` exists: a pruned call's id may be reused, never its reference.

The rows live in a disposable SQLite file under the user's cache directory
(`$XDG_CACHE_HOME/yarp/savings/`, one file per archive path, 0600 in a 0700
directory), whose connection attaches the archive read-only as `archive`, so
that one statement reads both. A report computes the rows of the calls it
lacks and reads the rest. The file holds sizes, classifications, input
digests, hashed commands, the references a call recovers and the program
names of shell commands (`git log`), never an output. Deleting it costs
only the next report's time; a file that cannot be used (unsafe, locked for
longer than `BUSY_MS`, corrupt, another format) is replaced by one in memory
for that report, with the same statements.

This module holds the file, its tables, the connection and the marks that
say which calls may still lack a row; the statement that computes a call's
row is the rule's (`rule.project_sql`), the sums per day are `sums`', and the
per-call report over part of a day the report's (`report.report_sql`).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Mapping

from yarp import private_files
from yarp._version import __version__
from yarp.archive.sqlite import SQLITE_CORRUPT, SQLITE_NOTADB, attach_readonly, file_uri
from yarp.limits import READER_MMAP_BYTES
from yarp.paths import ArchiveLocation, secure_archive_location

#: Bumped when the rows' meaning changes; with the version, it keys the file's contents.
PROJECTION_FORMAT = 5
#: Schema name of the archive on a projection connection.
ARCHIVE = "archive"
#: A second report waits this long for the first to finish with the file, then uses memory.
BUSY_MS = 5000
#: Stale rows (of pruned calls) are dropped when the file holds more rows than the
#: archive has calls by this many.
STALE_SLACK = 10_000

#: `call_savings`: one row per finished call. `produced` and `withheld` are YARP's own bytes
#: (the rule's); `host_shown` is what the host would have shown of the output (`hosts`),
#: `gross` what YARP's view kept out of the context beyond that (host_shown − shown, for a
#: view YARP changed), `returned` what the call put into the agent's context (its view, or
#: the host's own view of an output YARP left alone). `rule`, `rerun_key`, the labels of a shell
#: call's input (`program`, `command`) and the follow-ups are `recalls.annotate`'s, once
#: `annotated` (a row with no shell input and no wrapped view to read is annotated as it is
#: added: a capped result was cut by the cap). The report reads the rows' sums (`sums`) instead of
#: the rows.
_DDL = """
CREATE TABLE IF NOT EXISTS projection_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS call_savings (
  id INTEGER PRIMARY KEY,
  archive_ref TEXT NOT NULL,
  kind TEXT NOT NULL,
  produced INTEGER NOT NULL,
  withheld INTEGER NOT NULL,
  input_sha256 BLOB,
  session_id INTEGER NOT NULL,
  started_at_ms INTEGER NOT NULL,
  finished_at_ms INTEGER,
  wrapped INTEGER NOT NULL,
  line_limit INTEGER,
  host_shown INTEGER NOT NULL,
  gross INTEGER NOT NULL,
  returned INTEGER NOT NULL,
  annotated INTEGER NOT NULL DEFAULT 0,
  rule TEXT,
  rerun_key BLOB,
  program TEXT,
  command TEXT
);
CREATE INDEX IF NOT EXISTS call_savings_runs ON call_savings (session_id, rerun_key, started_at_ms)
  WHERE rerun_key IS NOT NULL;
CREATE TABLE IF NOT EXISTS followups (
  id INTEGER NOT NULL,
  archive_ref TEXT NOT NULL,
  target_ref TEXT NOT NULL,
  kind TEXT NOT NULL,
  parts INTEGER NOT NULL,
  PRIMARY KEY (id, target_ref)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS followups_target ON followups (target_ref);
CREATE TABLE IF NOT EXISTS sums_by_day (
  day INTEGER NOT NULL,
  tool_name TEXT NOT NULL,
  kind TEXT NOT NULL,
  capped INTEGER NOT NULL,
  program TEXT NOT NULL,
  command TEXT NOT NULL,
  rule TEXT NOT NULL,
  calls INTEGER NOT NULL,
  produced INTEGER NOT NULL,
  withheld INTEGER NOT NULL,
  gross INTEGER NOT NULL,
  returned INTEGER NOT NULL,
  PRIMARY KEY (day, tool_name, kind, capped, program, command, rule)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS sums_total (
  tool_name TEXT NOT NULL,
  kind TEXT NOT NULL,
  capped INTEGER NOT NULL,
  program TEXT NOT NULL,
  command TEXT NOT NULL,
  rule TEXT NOT NULL,
  calls INTEGER NOT NULL,
  produced INTEGER NOT NULL,
  withheld INTEGER NOT NULL,
  gross INTEGER NOT NULL,
  returned INTEGER NOT NULL,
  PRIMARY KEY (tool_name, kind, capped, program, command, rule)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS sums_by_session (
  day INTEGER NOT NULL,
  session_id INTEGER NOT NULL,
  kind TEXT NOT NULL,
  capped INTEGER NOT NULL,
  calls INTEGER NOT NULL,
  produced INTEGER NOT NULL,
  withheld INTEGER NOT NULL,
  gross INTEGER NOT NULL,
  returned INTEGER NOT NULL,
  PRIMARY KEY (day, session_id, kind, capped)
) WITHOUT ROWID;
"""
_TABLES = ("projection_meta", "call_savings", "followups", "input_labels", "sums_by_day", "sums_total",
           "sums_by_session")
#: How a row of `call_savings` is written, by the rule's statement or from a part computed elsewhere.
CALL_COLUMNS = ("id", "archive_ref", "kind", "produced", "withheld", "input_sha256", "session_id", "started_at_ms",
                "finished_at_ms", "wrapped", "line_limit", "host_shown", "gross", "returned", "annotated", "rule",
                "rerun_key")
INSERT_CALL = f"INSERT OR REPLACE INTO main.call_savings ({', '.join(CALL_COLUMNS)})"
INSERT_CALL_VALUES = f"{INSERT_CALL} VALUES ({', '.join('?' * len(CALL_COLUMNS))})"
#: SQLite page cache for the report's connection, KiB.
SAVINGS_CACHE_KIB = 16 * 1024


def projection_path(location: ArchiveLocation, environ: Mapping[str, str] = os.environ) -> str:
    """The file that holds `location`'s projection: named by a digest of the archive's real path."""
    from yarp._digest import identity_sha256
    from yarp.parse_cache import cache_dir

    name = identity_sha256(os.fsencode(os.path.realpath(location.path))).hexdigest()[:32]
    return os.path.join(cache_dir(environ), "savings", f"{name}.sqlite3")


def _format_key() -> str:
    # The agents' own facts (their host views, tool classes, whether they replace a view) change what
    # a row means: an agent added or changed gives another key, and the rows are made again.
    from yarp import agents
    from yarp._digest import identity_sha256

    facts = repr([(name, sorted(agents.record(name).TOOL_CLASSES.items()),
                   sorted(agents.record(name).HOST_VIEWS.items(), key=repr), agents.record(name).REPLACES_VIEW)
                  for name in agents.names()])
    return f"{PROJECTION_FORMAT}/{__version__}/{identity_sha256(facts.encode()).hexdigest()[:16]}"


def _open_file(path: str) -> sqlite3.Connection:
    """The projection file, created private if missing, emptied if it holds another format.

    Raises `OSError`, `PrivatePathProblem` or `sqlite3.Error` when it cannot be used.
    """
    directory = os.path.dirname(path)
    private_files.ensure_private_directory(directory, create=True, narrow=True)
    private_files.create_private_empty(path)
    private_files.check_private_file(path, narrow=False)  # not a link, ours, 0600
    conn = sqlite3.connect(file_uri(path, "rw"), uri=True, isolation_level=None, check_same_thread=False)
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_MS}")
        # A crash may lose the last report's rows, never corrupt the file.
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("BEGIN IMMEDIATE")
        try:
            stored = conn.execute("SELECT value FROM projection_meta WHERE key = 'format'").fetchone()
        except sqlite3.OperationalError:  # a new, empty file
            stored = None
        if stored is None or stored[0] != _format_key():
            for table in _TABLES:
                conn.execute(f"DROP TABLE IF EXISTS {table}")
            _create(conn)
        conn.execute("COMMIT")
    except BaseException:
        conn.close()
        raise
    return conn


def _create(conn: sqlite3.Connection) -> None:
    for statement in _DDL.split(";"):
        if statement.strip():
            conn.execute(statement)
    conn.execute("INSERT OR REPLACE INTO projection_meta (key, value) VALUES ('format', ?)", (_format_key(),))


def _open_memory() -> sqlite3.Connection:
    # A temporary database of the connection's own: its pages beyond the cache go to a file SQLite
    # deletes on close, so a first report over a large archive does not hold every row in memory.
    conn = sqlite3.connect("", uri=True, isolation_level=None, check_same_thread=False)
    _create(conn)
    return conn


def connect(location: ArchiveLocation, *, persistent: bool = True,
            environ: Mapping[str, str] = os.environ) -> sqlite3.Connection:
    """A connection on the projection with the archive attached read-only as `ARCHIVE`.

    With `persistent`, the projection is the file of `projection_path` when it
    can be used, else (and without `persistent`) a database in memory.
    Raises the archive's errors (`ArchiveMissing`, `UnsafePath`,
    `CorruptArchive`, `UnsupportedSchema`), never the projection's.
    """
    secure_archive_location(location, create=False)  # no projection file for an archive that is not there
    conn = None
    if persistent:
        path = projection_path(location, environ)
        for attempt in range(2):
            try:
                conn = _open_file(path)
                break
            except sqlite3.DatabaseError as exc:
                # Not a database (or damaged): the file is ours and disposable, so it is made anew once.
                if attempt or (getattr(exc, "sqlite_errorcode", 0) & 0xFF) not in (SQLITE_CORRUPT, SQLITE_NOTADB):
                    break
                try:
                    os.unlink(path)
                except OSError:
                    break
            except (OSError, private_files.PrivatePathProblem, sqlite3.Error):
                break
    if conn is None:
        conn = _open_memory()
    try:
        attach_readonly(conn, location, ARCHIVE)
    except BaseException:
        conn.close()
        raise
    return conn


def tune(conn: sqlite3.Connection) -> None:
    """Set `conn`'s page cache and memory map for the report's reads of the archive."""
    # Index pages of the payload digests are revisited by every size lookup;
    # a 16 MiB page cache keeps them instead of re-reading them (about a third
    # less system time on a 300 MB archive).
    conn.execute(f"PRAGMA {ARCHIVE}.cache_size = -{SAVINGS_CACHE_KIB}")
    # Size lookups land at random in the payload table: mapped pages make each
    # lookup a memory copy instead of a read call.
    conn.execute(f"PRAGMA {ARCHIVE}.mmap_size = {READER_MMAP_BYTES}")


def is_persistent(conn: sqlite3.Connection) -> bool:
    """Whether `conn`'s projection is a file (rather than memory)."""
    return any(name == "main" and path for _, name, path in conn.execute("PRAGMA database_list"))


def drop_stale(conn: sqlite3.Connection) -> None:
    """Drop rows of calls the archive no longer holds, once they outnumber `STALE_SLACK`."""
    kept = conn.execute("SELECT count(*) FROM main.call_savings").fetchone()[0]
    calls = conn.execute(f"SELECT count(*) FROM {ARCHIVE}.tool_calls").fetchone()[0]
    if kept <= calls + STALE_SLACK:
        return
    conn.execute(f"DELETE FROM main.call_savings WHERE NOT EXISTS (SELECT 1 FROM {ARCHIVE}.tool_calls c"
                 " WHERE c.id = call_savings.id AND c.archive_ref = call_savings.archive_ref)")
    conn.execute("DELETE FROM main.followups WHERE NOT EXISTS (SELECT 1 FROM main.call_savings k"
                 " WHERE k.id = followups.id AND k.archive_ref = followups.archive_ref)")


# --- how far the rows reach -------------------------------------------------------------------
#
# Every finished call up to the call id `last` has its row, except the calls that were still
# open then (`open`): the marks a report leaves. They hold while the call at `last` keeps its
# reference and the count of calls up to it is the one recorded (every call's count, which
# SQLite takes from an index, less the calls after it), that is while no call up to it was
# pruned. A report that finds them holding computes only the calls after `last` and the open
# ones; any other (the first, one after a prune) looks for every call without a row.


def read_marks(conn: sqlite3.Connection) -> dict | None:
    """The marks the last report left (`last`, `ref`, `count`, `open`), or None."""
    import json

    row = conn.execute("SELECT value FROM main.projection_meta WHERE key = 'marks'").fetchone()
    try:
        marks = json.loads(row[0]) if row is not None else None
        if marks is not None and not (isinstance(marks.get("open"), list) and isinstance(marks.get("count"), int)):
            return None
    except (ValueError, AttributeError):
        return None
    return marks


def marks_hold(conn: sqlite3.Connection, marks: dict) -> bool:
    """Whether every call up to `marks['last']` that had a row still has it (no prune since)."""
    last = marks.get("last")
    if last is not None:
        row = conn.execute(f"SELECT archive_ref FROM {ARCHIVE}.tool_calls WHERE id = ?", (last,)).fetchone()
        if row is None or row[0] != marks.get("ref"):
            return False
    total = conn.execute(f"SELECT count(*) FROM {ARCHIVE}.tool_calls").fetchone()[0]
    after = conn.execute(f"SELECT count(*) FROM {ARCHIVE}.tool_calls WHERE id > ?", (last or 0,)).fetchone()[0]
    return total - after == marks["count"]


def write_marks(conn: sqlite3.Connection, open_ids: list[int]) -> None:
    """Record that every finished call has its row, but `open_ids` (the calls not finished yet)."""
    import json

    last = conn.execute(f"SELECT id, archive_ref FROM {ARCHIVE}.tool_calls ORDER BY id DESC LIMIT 1").fetchone()
    count = conn.execute(f"SELECT count(*) FROM {ARCHIVE}.tool_calls").fetchone()[0]
    marks = {"last": last[0] if last else None, "ref": last[1] if last else None, "count": count, "open": open_ids}
    conn.execute("INSERT OR REPLACE INTO main.projection_meta (key, value) VALUES ('marks', ?)", (json.dumps(marks),))
