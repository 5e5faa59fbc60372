"""The archive as Parquet files any analytical engine reads without YARP.

`export_parquet` writes one file per table into a directory: `sessions`,
`calls`, `snapshots` (with the payload decoded to text where it is text, and
the exact bytes where it is not) and `payloads` (sizes and compression only).
Columns are typed: integers, booleans for the archive's 0/1 flags, UTC
timestamps for every `*_ms` column, SHA-256 digests as lowercase hex.

Memory stays bounded whatever the archive's size: rows stream from the
read-only connection in id order (payloads in the order they were stored) and
leave as one row group per batch (at most `BATCH_ROWS` rows or about
`BATCH_BYTES` of payload, or one payload larger than that). Nothing is
collected per call; the window is a SQL condition, not a list of ids. A batch
is encoded and compressed into its file on a helper thread while the next one
is read and decompressed (pyarrow releases the GIL there), so at most two
batches are held. Text is handed to Arrow as the UTF-8 bytes it is stored as.

Incremental exports select by time window. Without a window every call is
exported, incomplete ones included. With `since_ms`/`until_ms` only finished
calls are exported, chosen by when the archive last received them: the later
of `finished_at_ms` and their snapshots' latest `captured_at_ms`. A finished
call never changes again, so consecutive windows export each call once, and
history imported later (captured now, finished long ago) lands in the window
of its import. The default end of a window lies `WINDOW_SETTLE_MS` in the past,
so a finish still in flight to the broker (stamped before it committed) falls
into the next window instead of between two.

Files are created 0600 under temporary names and linked into place only when
every table is complete; an existing file is never replaced. A directory the
export creates is 0700. Nothing leaves the machine.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable
from contextlib import suppress

from yarp.archive.codec import MEDIA_BINARY, decode_body
from yarp.archive.sqlite import map_error
from yarp.errors import ExportUnavailable, UsageError, pyarrow_missing
from yarp.limits import MAX_DEADLINE_MS, READER_MMAP_BYTES
from yarp.paths import ensure_private_directory

EXPORT_SCHEMA = "yarp.archive-export.v1"
TABLES = ("sessions", "calls", "snapshots", "payloads")
BATCH_ROWS = 8192
BATCH_BYTES = 32 * 1024 * 1024
#: A window's default end lies this far back: a finishing request commits
#: within its deadline, so none stamped before the boundary can commit after it.
WINDOW_SETTLE_MS = 2 * MAX_DEADLINE_MS

_ARCHIVED_AT = (
    "max(coalesce(c.finished_at_ms, 0),"
    " coalesce((SELECT max(s2.captured_at_ms) FROM snapshots s2 WHERE s2.tool_call_id = c.id), 0))"
)


def _arrow():
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ExportUnavailable(pyarrow_missing()) from None
    return pa, pq


def _schemas(pa):
    """Arrow schemas; a column is non-nullable exactly where the archive says NOT NULL."""
    ts = pa.timestamp("ms", tz="UTC")

    def table(*columns):
        return pa.schema([pa.field(name, kind, nullable=nullable) for name, kind, nullable in columns])

    return {
        "sessions": table(
            ("id", pa.int64(), False), ("agent", pa.string(), False), ("account", pa.string(), False),
            ("source_session_id", pa.string(), False), ("started_at", ts, True),
        ),
        "calls": table(
            ("id", pa.int64(), False), ("session_id", pa.int64(), False), ("source_call_id", pa.string(), False),
            ("archive_ref", pa.string(), False), ("tool_name", pa.string(), False), ("provider", pa.string(), True),
            ("model", pa.string(), True), ("working_directory", pa.string(), True), ("started_at", ts, False),
            ("requires_streams", pa.bool_(), False), ("finished_at", ts, True), ("status", pa.string(), False),
            ("is_error", pa.bool_(), True), ("executed", pa.bool_(), True),
        ),
        "snapshots": table(
            ("tool_call_id", pa.int64(), False), ("subject", pa.string(), False), ("stage", pa.string(), False),
            ("media_type", pa.string(), False), ("source_completeness", pa.string(), True),
            ("captured_at", ts, False), ("payload_sha256", pa.string(), False), ("byte_length", pa.int64(), False),
            ("text", pa.large_string(), True), ("body", pa.large_binary(), True),
        ),
        "payloads": table(
            ("sha256", pa.string(), False), ("compression", pa.string(), False), ("byte_length", pa.int64(), False),
            ("stored_byte_length", pa.int64(), False),
        ),
    }


def _queries(windowed: bool) -> dict[str, str]:
    chosen = (
        f"SELECT c.id FROM tool_calls c WHERE c.status = 'finished' AND {_ARCHIVED_AT} >= ?1 AND {_ARCHIVED_AT} < ?2"
        if windowed else "SELECT id FROM tool_calls"
    )
    return {
        "sessions": (
            "SELECT id, agent, account, source_session_id, started_at_ms FROM sessions"
            + (f" WHERE id IN (SELECT session_id FROM tool_calls WHERE id IN ({chosen}))" if windowed else "")
            + " ORDER BY id"
        ),
        "calls": (
            "SELECT id, session_id, source_call_id, archive_ref, tool_name, provider, model, working_directory,"
            " started_at_ms, requires_streams, finished_at_ms, status, is_error, executed FROM tool_calls"
            + (f" WHERE id IN ({chosen})" if windowed else "") + " ORDER BY id"
        ),
        "snapshots": (
            "SELECT s.tool_call_id, s.subject, s.stage, s.media_type, s.source_completeness, s.captured_at_ms,"
            " lower(hex(s.payload_sha256)), p.uncompressed_byte_length, p.compression, p.body"
            " FROM snapshots s JOIN payloads p ON p.sha256 = s.payload_sha256"
            + (f" WHERE s.tool_call_id IN ({chosen})" if windowed else "")
            + " ORDER BY s.tool_call_id, s.subject, s.stage"
        ),
        # In the order the payloads were stored: one pass over the table, not a lookup per digest.
        "payloads": (
            "SELECT lower(hex(sha256)), compression, uncompressed_byte_length, length(body) FROM payloads"
            + (f" WHERE sha256 IN (SELECT payload_sha256 FROM snapshots WHERE tool_call_id IN ({chosen}))"
               if windowed else "")
            + " ORDER BY rowid"
        ),
    }


class _TableWriter:
    """Rows of one table, written to the Parquet file as one row group per batch.

    Rows are kept as the tuples SQLite returned and turned into columns only at
    a flush (one `zip`), so a row costs one append; 0/1 flags become booleans
    by an Arrow cast, not per value in Python, and text arrives as UTF-8 bytes
    that Arrow checks once (a cast) instead of Python strings it would encode
    again. The batch is written by `pool` (one helper thread) while the next
    is read; a write still running is waited for before the next starts.
    """

    def __init__(self, pa, pq, handle, schema, pool=None) -> None:
        self.pa = pa
        self.schema = schema
        # Dictionary pages only where values repeat (names, enumerations);
        # trying them on payload text costs time for nothing.
        small = [f.name for f in schema if f.name not in ("text", "body")]
        self.writer = pq.ParquetWriter(handle, schema, compression="zstd", use_dictionary=small)
        self.batch: list[tuple] = []
        self.rows = 0
        self.pending_bytes = 0
        self.pool = pool
        self.writing = None
        self.on_flush = None

    def add(self, row: tuple, nbytes: int = 0) -> None:
        self.batch.append(row)
        self.pending_bytes += nbytes
        if len(self.batch) >= BATCH_ROWS or self.pending_bytes >= BATCH_BYTES:
            self.flush()

    def flush(self) -> None:
        if not self.batch:
            return
        pa = self.pa
        arrays = []
        for values, field in zip(zip(*self.batch), self.schema):
            if field.type == pa.bool_():
                arrays.append(pa.array(values, type=pa.int8()).cast(pa.bool_()))
            elif field.type == pa.large_string() and field.name == "text":
                arrays.append(pa.array(values, type=pa.large_binary()).cast(pa.large_string()))
            else:
                arrays.append(pa.array(values, type=field.type))
        batch = pa.RecordBatch.from_arrays(arrays, schema=self.schema)
        self.rows += len(self.batch)
        self.batch = []
        self.pending_bytes = 0
        self._wait()
        if self.pool is None:
            self.writer.write_batch(batch)
        else:
            self.writing = self.pool.submit(self.writer.write_batch, batch)
        if self.on_flush is not None:
            self.on_flush(self.rows)

    def _wait(self) -> None:
        """Let the batch being written finish (its failure is raised here)."""
        if self.writing is not None:
            writing, self.writing = self.writing, None
            writing.result()

    def close(self) -> None:
        self.flush()
        self._wait()
        self.writer.close()

    def abandon(self) -> None:
        """Close after a failure, before the file handle goes (the file is removed anyway)."""
        with suppress(Exception):  # the original failure is what gets reported
            self._wait()
        try:
            self.writer.close()
        except Exception:  # noqa: BLE001 - the original failure is what gets reported
            pass


def _prepare_directory(directory: str) -> str:
    """The export directory: created 0700, or an existing private one of ours with no export in it."""
    directory = os.path.abspath(directory)
    try:
        ensure_private_directory(directory, narrow=False, create=True, label="export directory")
    except OSError as exc:
        raise UsageError(f"cannot create export directory: {exc.strerror}") from None
    for table in TABLES:
        if os.path.lexists(os.path.join(directory, f"{table}.parquet")):
            raise UsageError(f"export file {table}.parquet already exists (choose a new directory per window)")
    return directory


def _open_private(path: str):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    return os.fdopen(fd, "wb", buffering=1 << 20)


def _write_snapshots(cursor, writer: _TableWriter) -> int:
    """Write snapshot rows with decoded text; return their payload bytes.

    A payload shared by neighbouring snapshots (before = after) is decompressed
    and decoded once. Each row is the query's first eight columns plus text and
    exact bytes, exactly one of which is set: the text as its UTF-8 bytes (checked here, not decoded into
    a string), the bytes when they are not UTF-8 or the media type says binary.
    """
    last_sha = None
    content = (None, None)
    total = 0
    add = writer.add
    for row in cursor:
        sha, length = row[6], row[7]
        if sha != last_sha:
            data = decode_body(row[8], row[9], length)
            content = (None, data)
            if row[3] != MEDIA_BINARY:
                if data.isascii():
                    content = (data, None)
                else:
                    try:
                        data.decode("utf-8")
                        content = (data, None)
                    except UnicodeDecodeError:
                        pass
            last_sha = sha
        add(row[:8] + content, length)
        total += length
    return total


#: Told each table's progress: (table, rows written, rows it will have).
Progress = Callable[[str, int, int], None]


def _write_tables(conn: sqlite3.Connection, schemas: dict, queries: dict, params: tuple, temporary: dict,
                  summary: dict, progress: Progress | None) -> None:
    """Write every table into its temporary file, one batch encoded on a helper thread while the next is
    read; `progress` hears each table's rows after every batch (its total counted first)."""
    from concurrent.futures import ThreadPoolExecutor

    pa, pq = _arrow()
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="yarp-export") as pool:
        for table in TABLES:
            total = 0
            if progress is not None:
                total = conn.execute(f"SELECT count(*) FROM ({_count_query(queries[table], table)})", params
                                     ).fetchone()[0]
                progress(table, 0, total)
            with _open_private(temporary[table]) as handle:
                writer = _TableWriter(pa, pq, handle, schemas[table], pool)
                if progress is not None:
                    writer.on_flush = lambda rows, table=table, total=total: progress(table, rows, total)
                try:
                    cursor = conn.execute(queries[table], params)
                    if table == "snapshots":
                        summary["payload_bytes"] = _write_snapshots(cursor, writer)
                    else:
                        for row in cursor:
                            writer.add(row)
                except BaseException:
                    writer.abandon()
                    raise
                writer.close()
            summary["tables"][table] = {"rows": writer.rows, "file": f"{table}.parquet"}


def _count_query(query: str, table: str) -> str:
    """`query` reduced to what counting its rows needs: a snapshot's payload is not looked up."""
    if table == "snapshots":
        return query.replace(" JOIN payloads p ON p.sha256 = s.payload_sha256", "").replace(
            " lower(hex(s.payload_sha256)), p.uncompressed_byte_length, p.compression, p.body", " 1")
    return query


def export_parquet(conn: sqlite3.Connection, directory: str, *, since_ms: int | None = None,
                   until_ms: int | None = None, now_ms: int | None = None, progress: Progress | None = None) -> dict:
    """Write the archive (or one window of it) as Parquet into `directory`; return a summary.

    `progress(table, rows written, rows)` follows each table while it is written.
    """
    pa, _ = _arrow()
    windowed = since_ms is not None or until_ms is not None
    if windowed:
        now_ms = int(time.time() * 1000) if now_ms is None else now_ms
        since_ms = 0 if since_ms is None else since_ms
        until_ms = now_ms - WINDOW_SETTLE_MS if until_ms is None else until_ms
        if until_ms <= since_ms:
            raise UsageError("the export window is empty (--until must be later than --since)")
    directory = _prepare_directory(directory)
    schemas = _schemas(pa)
    queries = _queries(windowed)
    params = (since_ms, until_ms) if windowed else ()
    token = f".partial-{os.getpid()}-{time.monotonic_ns()}"
    temporary = {table: os.path.join(directory, f".{table}.parquet{token}") for table in TABLES}
    summary: dict = {"schema": EXPORT_SCHEMA, "directory": directory, "format": "parquet",
                     "since_ms": since_ms, "until_ms": until_ms, "tables": {}, "payload_bytes": 0}
    linked: list[str] = []
    try:
        # The payloads are read in the order of the snapshots that name them: memory-mapped pages make
        # each a copy instead of a read call per page.
        conn.execute(f"PRAGMA mmap_size = {READER_MMAP_BYTES}")
        conn.execute("BEGIN")  # one read snapshot: the four files agree with each other
        try:
            _write_tables(conn, schemas, queries, params, temporary, summary, progress)
        finally:
            if conn.in_transaction:
                conn.execute("COMMIT")
        for table in TABLES:
            final = os.path.join(directory, f"{table}.parquet")
            os.link(temporary[table], final)  # never replaces a file that appeared meanwhile
            linked.append(final)
    except sqlite3.Error as exc:
        _remove(linked)
        raise map_error(exc, "exporting archive") from None
    except FileExistsError:
        _remove(linked)
        raise UsageError("an export file appeared in the directory during the export") from None
    except OSError as exc:
        _remove(linked)
        raise map_error(exc, "writing export files") from None
    except BaseException:
        _remove(linked)
        raise
    finally:
        _remove(temporary.values())
    return summary


def _remove(paths) -> None:
    for path in paths:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
