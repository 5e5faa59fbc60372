"""The only module that writes the archive.

`ArchiveStore` owns one writable connection and applies prepared operations
(`yarp.archive.prepare.Prepared`). `apply_batch` runs one outer `BEGIN IMMEDIATE` and
one commit: a request-local permanent error (`DataError`: validation, conflict,
lifecycle, not found) undoes only that request's rows and the batch goes on
(the batch is tried whole first, then request by request in savepoints if a
request failed); any other failure aborts the whole batch and no request
succeeds. Results are returned only after the commit.

Every operation is idempotent: replaying identical content returns the same
outcome (same `archive_ref`) and writes nothing new; reusing an identity with
different content raises `ConflictError`. In normal use only the broker holds
an `ArchiveStore`; clients never open the archive for writing.
"""

from __future__ import annotations

import secrets
import sqlite3
from dataclasses import dataclass

from yarp.archive.file_payload import FileBody, insert_file_payload
from yarp.archive.file_pin import FilePin
from yarp.archive.prepare import Prepared, SnapshotSpec, prepare
from yarp.archive.prune import Pruner
from yarp.archive.sqlite import map_error, open_writer
from yarp.errors import ArchiveError, ConflictError, DataError, LifecycleError, NotFound, ValidationError, YarpError
from yarp.paths import ArchiveLocation, resolve_archive
from yarp.wire import operations as ops

STREAM_KEYS = (("stdout", "before"), ("stderr", "before"), ("stdout", "after"), ("stderr", "after"))


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a committed operation reports back."""

    archive_ref: str | None = None
    pruned_calls: int | None = None
    #: Further reply fields (an import batch's per-call outcomes).
    extra: dict | None = None


@dataclass(slots=True)
class _Call:
    id: int
    archive_ref: str
    tool_name: str
    provider: str | None
    model: str | None
    working_directory: str | None
    started_at_ms: int
    requires_streams: int
    status: str
    is_error: int | None
    executed: int | None


def _constraint_error(exc: sqlite3.IntegrityError) -> DataError:
    """A request-local constraint failure: a duplicate identity conflicts; any
    other violated constraint means the request broke an archive invariant."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    if name in ("SQLITE_CONSTRAINT_UNIQUE", "SQLITE_CONSTRAINT_PRIMARYKEY"):
        return ConflictError("operation conflicts with archived rows")
    return ValidationError(f"operation violates an archive constraint ({name or 'constraint'})")


def new_archive_ref() -> str:
    """`yr_` + 32 lowercase hex digits from 128 random bits."""
    return "yr_" + secrets.token_hex(16)


#: Rows per multi-row insert at most: 64 snapshots are 448 parameters, far below SQLite's limit.
_MAX_ROWS_PER_INSERT = 64


class _RowsInsert:
    """A multi-row `INSERT` of one table: its statement text for each row count, built once."""

    def __init__(self, head: str, row: str) -> None:
        self.head = head
        self.row = row
        self.texts: dict[int, str] = {}

    def text(self, count: int) -> str:
        text = self.texts.get(count)
        if text is None:
            text = self.texts[count] = self.head + ", ".join([self.row] * count)
        return text


_CALL_ROWS = _RowsInsert(
    "INSERT INTO tool_calls (id, session_id, source_call_id, archive_ref, tool_name, provider, model,"
    " working_directory, started_at_ms, requires_streams, status) VALUES ", "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'started')")
_PAYLOAD_ROWS = _RowsInsert(
    "INSERT OR IGNORE INTO payloads (sha256, compression, uncompressed_byte_length, body) VALUES ", "(?, ?, ?, ?)")
_SNAPSHOT_ROWS = _RowsInsert(
    "INSERT INTO snapshots (tool_call_id, subject, stage, media_type, source_completeness, captured_at_ms,"
    " payload_sha256) VALUES ", "(?, ?, ?, ?, ?, ?, ?)")


class ArchiveStore:
    """One writable archive connection and the operations applied through it."""

    def __init__(self, conn: sqlite3.Connection, location: ArchiveLocation) -> None:
        self.conn = conn
        self.location = location
        #: The failure of the last post-prune vacuum, if it failed (visible to stats/logs).
        self.last_vacuum_error: YarpError | None = None
        #: The file the connection opened, to tell it is still the one at the path (`still_at_path`).
        self.pin: FilePin | None = None
        self._known = _Known()

    @classmethod
    def open(cls, location: ArchiveLocation | str | None = None) -> ArchiveStore:
        """Open (creating or migrating) the archive for the single writer, and pin the file it opened."""
        if not isinstance(location, ArchiveLocation):
            location = resolve_archive(location)
        store = cls(open_writer(location), location)
        try:
            store.pin = FilePin(location.path)
        except OSError as exc:
            store.conn.close()
            raise map_error(exc, "opening archive for writing") from None
        return store

    def still_at_path(self) -> bool:
        """Whether the open database is still the file at the archive path (not removed or replaced)."""
        return self.pin is None or self.pin.still_at_path()

    def close(self) -> None:
        """Close the writer connection, then the pin (closing it first would drop SQLite's locks)."""
        self.conn.close()
        if self.pin is not None:
            self.pin.close()

    # --- batches -----------------------------------------------------------

    def apply_batch(self, batch: list[Prepared]) -> list[Outcome | YarpError]:
        """Apply requests in order in one transaction; return per-request outcomes.

        Raises a `YarpError` (e.g. `ArchiveBusy`, `DiskFull`) when the outer
        transaction cannot begin or commit; then nothing in the batch committed.
        A prune runs alone, in steps of its own (`prune`).
        """
        if len(batch) == 1 and type(getattr(batch[0], "operation", None)) is ops.PruneBefore:
            op = batch[0].operation
            return [self.prune(op.timestamp_ms, op.incomplete_before_ms, op.dry_run)]
        conn = self.conn
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise map_error(exc, "beginning archive transaction") from None
        try:
            results = self._apply_together(batch)
            if results is None:
                results = self._apply_isolated(batch)
            conn.execute("COMMIT")
            self._known.commit()
        except BaseException as exc:
            self._known.rollback()
            try:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            if isinstance(exc, (sqlite3.Error, OSError)):
                raise map_error(exc, "committing archive batch") from None
            raise
        return results

    def _apply_begins(self, batch: list[Prepared]) -> list[Outcome] | None:
        """Begin every call of a batch of new calls table by table; None, with nothing applied, otherwise.

        The common batch (agents beginning calls) is applied with one statement
        per table instead of several per request: the calls' existence in one
        query, then `executemany` over `tool_calls`, `payloads` and `snapshots`
        rows prepared before any statement runs. It is taken only when every
        request is a `begin_call` of a distinct call that the archive does not
        hold yet, which is exactly when each request, applied alone, would
        insert its call and snapshots and nothing else; any other batch (a
        replay, two begins of one call, other operations) goes request by
        request, so the outcomes are always those of isolated requests.
        """
        # Plain prepared operations only: a composite (`PreparedParts`) or an import batch stands for more.
        if len(batch) < 2 or not all(type(p) is Prepared and type(p.operation) is ops.BeginCall for p in batch):
            return None
        begins = [p.operation for p in batch]
        keys = [(op.session.agent, op.session.account, op.session.source_session_id) for op in begins]
        if len({(key, op.call.source_call_id) for key, op in zip(keys, begins)}) != len(begins):
            return None
        conn = self.conn
        sessions = {}
        for key, op in zip(keys, begins):
            if key not in sessions:
                sessions[key] = self._session_id(op.session, create=True)
        pairs = [(sessions[key], op.call.source_call_id) for key, op in zip(keys, begins)]
        values = ", ".join("(?, ?)" for _ in pairs)
        found = conn.execute(
            f"WITH w(s, c) AS (VALUES {values}) SELECT 1 FROM w JOIN tool_calls t"
            " ON t.session_id = w.s AND t.source_call_id = w.c LIMIT 1",
            [x for pair in pairs for x in pair]).fetchone()
        if found is not None:
            return None  # a replay: compared request by request
        first = (conn.execute("SELECT max(id) FROM tool_calls").fetchone()[0] or 0) + 1
        calls, payloads, snapshots, outcomes = [], {}, [], []
        for n, (prepared, op, (session_id, call_id)) in enumerate(zip(batch, begins, pairs)):
            meta, ref = op.call, new_archive_ref()
            calls.append((first + n, session_id, call_id, ref, meta.tool_name, meta.provider, meta.model,
                          meta.working_directory, meta.started_at_ms, int(meta.requires_streams)))
            for spec in prepared.snapshots:
                p = spec.payload
                if not self._known.has_payload(p.sha256):
                    self._known.add_payload(p.sha256)
                    payloads[p.sha256] = (p.sha256, p.compression, p.length, p.body)
                snapshots.append((first + n, spec.subject, spec.stage, p.media_type, spec.source_completeness,
                                  op.captured_at_ms, p.sha256))
            outcomes.append(Outcome(archive_ref=ref))
        self._insert_rows(_CALL_ROWS, calls)
        self._insert_rows(_PAYLOAD_ROWS, list(payloads.values()))
        self._insert_rows(_SNAPSHOT_ROWS, snapshots)
        return outcomes

    def _insert_rows(self, rows_sql: _RowsInsert, rows: list[tuple]) -> None:
        """Insert rows with multi-row `INSERT ... VALUES` statements of 1, 2, 4 ... 64 rows.

        One statement opens its table's and indexes' cursors once for all its
        rows, where `executemany` runs the statement (and opens them) once per
        row: about a fifth fewer instructions in the table-by-table apply
        (docs/design/broker.md, "Batched apply"). Powers of two keep the
        prepared-statement cache to seven texts per table.
        """
        done, total = 0, len(rows)
        while done < total:
            count = min(_MAX_ROWS_PER_INSERT, 1 << ((total - done).bit_length() - 1))
            chunk = rows[done:done + count]
            self.conn.execute(rows_sql.text(count), [value for row in chunk for value in row])
            done += count

    def _apply_together(self, batch: list[Prepared]) -> list[Outcome | YarpError] | None:
        """Apply the whole batch under one savepoint; None, with nothing applied, if a request failed.

        Nearly every batch succeeds whole, and a savepoint per request was a
        fixed cost on every request (about 8 % of the store's instructions for
        a 1 KiB begin_call; docs/design/archive.md, "One savepoint per batch"). When
        a request fails, the batch is rolled back and applied again request by
        request (`_apply_isolated`), so the
        outcomes are exactly those of isolated requests; nothing here was
        acknowledged, so the first attempt's archive references are never seen.
        """
        conn = self.conn
        if len(batch) < 2:
            return None
        conn.execute("SAVEPOINT together")
        try:
            results: list[Outcome | YarpError] = (self._apply_begins(batch)
                                                   or [self._apply(prepared) for prepared in batch])
        except (DataError, sqlite3.IntegrityError):
            conn.execute("ROLLBACK TO together")
            conn.execute("RELEASE together")
            self._known.rollback()
            return None
        conn.execute("RELEASE together")
        return results

    def _apply_isolated(self, batch: list[Prepared]) -> list[Outcome | YarpError]:
        """Apply each request in its own savepoint: a request's `DataError` undoes only its own rows."""
        conn = self.conn
        results: list[Outcome | YarpError] = []
        for index, prepared in enumerate(batch):
            savepoint = f"r{index}"
            conn.execute(f"SAVEPOINT {savepoint}")
            try:
                outcome = self._apply(prepared)
            except (DataError, sqlite3.IntegrityError) as exc:
                conn.execute(f"ROLLBACK TO {savepoint}")
                conn.execute(f"RELEASE {savepoint}")
                self._known.rollback()
                results.append(exc if isinstance(exc, DataError) else _constraint_error(exc))
                continue
            conn.execute(f"RELEASE {savepoint}")
            results.append(outcome)
        return results

    def prune(self, before_ms: int, incomplete_before_ms: int | None = None, dry_run: bool = False) -> Outcome:
        """Delete the calls finished before `before_ms` (and those still started with no record since
        `incomplete_before_ms`), in bounded steps run back to back (`yarp.archive.prune`; the broker
        runs them between batches instead); a `dry_run` deletes nothing and counts what would go."""
        pruner = Pruner(self, before_ms, incomplete_before_ms=incomplete_before_ms, dry_run=dry_run)
        pruner.run()
        pruned, extra = pruner.answer()
        return Outcome(pruned_calls=pruned, extra=extra)

    def in_transaction(self, doing: str, work, argument):
        """`work(conn, argument)` in one `BEGIN IMMEDIATE` transaction of its own, committed; its result.

        For a step of maintenance (a prune's): a failure rolls it back whole
        and is raised as a typed error naming what was being done.
        """
        conn = self.conn
        try:
            conn.execute("BEGIN IMMEDIATE")
            result = work(conn, argument)
            conn.execute("COMMIT")
        except BaseException as exc:
            try:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            if isinstance(exc, (sqlite3.Error, OSError)):
                raise map_error(exc, doing) from None
            raise
        return result

    def forget_payloads(self, digests) -> None:
        """Payloads a committed step deleted: a later request must write them again."""
        self._known.forget(digests)

    def apply(self, prepared: Prepared) -> Outcome:
        """Apply one request in its own transaction; raise its error if it failed."""
        (result,) = self.apply_batch([prepared])
        if isinstance(result, YarpError):
            raise result
        return result

    def apply_operation(self, operation: ops.ArchiveOperation) -> Outcome:
        """Prepare and apply one operation (library and test convenience)."""
        return self.apply(prepare(operation))

    def incremental_vacuum(self, pages: int = 0) -> None:
        """Return free pages to the filesystem (every one, or at most `pages`); only between transactions.

        Python's `execute` steps this pragma once, which frees a single page;
        `executescript` steps it to completion. `executescript` would also
        commit an open transaction, hence the refusal inside one.
        """
        if self.conn.in_transaction:
            raise ArchiveError("cannot vacuum inside an open archive transaction")
        try:
            self.conn.executescript(f"PRAGMA incremental_vacuum({int(pages)})" if pages else "PRAGMA incremental_vacuum")
        except sqlite3.Error as exc:
            raise map_error(exc, "vacuuming archive") from None

    def wal_checkpoint(self, mode: str = "PASSIVE") -> tuple[int, int, int]:
        """Run a WAL checkpoint outside any transaction; returns (busy, log, checkpointed)."""
        if mode not in ("PASSIVE", "FULL", "RESTART", "TRUNCATE"):
            raise ValueError(mode)
        if self.conn.in_transaction:
            # A checkpoint inside a request transaction could make uncommitted
            # work look settled; the broker checkpoints only between batches.
            raise ArchiveError("cannot checkpoint inside an open archive transaction")
        try:
            return tuple(self.conn.execute(f"PRAGMA wal_checkpoint({mode})").fetchone())  # type: ignore[return-value]
        except sqlite3.Error as exc:
            raise map_error(exc, "checkpointing archive") from None

    # --- one request -----------------------------------------------------------

    def _apply(self, prepared: Prepared) -> Outcome:
        apply_to = getattr(prepared, "apply_to", None)
        if apply_to is not None:
            # Prepared work that writes its own rows (an import batch, `yarp.transcripts.batch`).
            return apply_to(self)
        parts = getattr(prepared, "parts", None)
        if parts is not None:
            # A composite request (`yarp.broker.services.shared.PreparedParts`): every
            # part in order, inside this request's one savepoint.
            outcome = None
            for part in parts:
                outcome = self._apply(part)
            return outcome
        op = prepared.operation
        snaps = prepared.snapshots
        match op:
            case ops.BeginCall():
                return self._begin_call(op, snaps)
            case ops.PruneBefore():
                raise TypeError("a prune runs alone, in steps of its own (ArchiveStore.prune)")
        call = self._find_call(op.session, op.source_call_id)
        match op:
            case ops.ResultBefore() | ops.ResultText() | ops.CaptureStreams() | ops.CapturePassthroughStreams():
                self._add_snapshots(call, snaps, op.captured_at_ms)
            case ops.StageResult():
                if not self._all_present(call, snaps):
                    self._require_finishable(call, executed=True, what="staging a result")
                self._add_snapshots(call, snaps, op.captured_at_ms)
            case ops.FinishCall():
                self._finish(call, snaps, op.is_error, op.executed, op.finished_at_ms)
            case ops.UpdateFinalResult():
                executed = call.executed if call.status == "finished" else self._has(call, "result", "before")
                self._finish(call, snaps, op.is_error, bool(executed), op.finished_at_ms, update=True)
            case _:
                raise TypeError(type(op).__name__)
        return Outcome(archive_ref=call.archive_ref)

    def _session_id(self, session: ops.Session, *, create: bool) -> int | None:
        key = (session.agent, session.account, session.source_session_id)
        known = self._known.session(key)
        # A session known with its start time, or asked for without one to record, needs no statement.
        if known is not None and (known[1] or session.started_at_ms is None or not create):
            return known[0]
        row = self.conn.execute(
            "SELECT id, started_at_ms FROM sessions WHERE agent = ? AND account = ? AND source_session_id = ?",
            key,
        ).fetchone()
        if row is not None:
            started = row[1] is not None
            if not started and session.started_at_ms is not None and create:
                self.conn.execute("UPDATE sessions SET started_at_ms = ? WHERE id = ?", (session.started_at_ms, row[0]))
                started = True
            self._known.add_session(key, row[0], started)
            return row[0]
        if not create:
            return None
        cur = self.conn.execute(
            "INSERT INTO sessions (agent, account, source_session_id, started_at_ms) VALUES (?, ?, ?, ?)",
            (*key, session.started_at_ms),
        )
        self._known.add_session(key, cur.lastrowid, session.started_at_ms is not None)
        return cur.lastrowid

    def _load_call(self, session_id: int, source_call_id: str) -> _Call | None:
        row = self.conn.execute(
            "SELECT id, archive_ref, tool_name, provider, model, working_directory, started_at_ms,"
            " requires_streams, status, is_error, executed FROM tool_calls"
            " WHERE session_id = ? AND source_call_id = ?",
            (session_id, source_call_id),
        ).fetchone()
        return _Call(*row) if row else None

    def _find_call(self, session: ops.Session, source_call_id: str) -> _Call:
        session_id = self._session_id(session, create=False)
        call = self._load_call(session_id, source_call_id) if session_id is not None else None
        if call is None:
            raise NotFound("call has not been begun in the archive")
        return call

    def _begin_call(self, op: ops.BeginCall, snaps: tuple[SnapshotSpec, ...]) -> Outcome:
        session_id = self._session_id(op.session, create=True)
        meta = op.call
        wanted = (meta.tool_name, meta.provider, meta.model, meta.working_directory, meta.started_at_ms,
                  int(meta.requires_streams))
        call = self._load_call(session_id, meta.source_call_id)
        if call is not None:
            stored = (call.tool_name, call.provider, call.model, call.working_directory, call.started_at_ms,
                      call.requires_streams)
            if stored != wanted:
                raise ConflictError("call is already stored with different metadata")
            for spec in snaps:
                self._check_snapshot(call, spec, must_exist=True)
            return Outcome(archive_ref=call.archive_ref)
        ref = new_archive_ref()
        cur = self.conn.execute(
            "INSERT INTO tool_calls (session_id, source_call_id, archive_ref, tool_name, provider, model,"
            " working_directory, started_at_ms, requires_streams, status)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'started')",
            (session_id, meta.source_call_id, ref, *wanted),
        )
        call = _Call(cur.lastrowid, ref, *wanted, "started", None, None)
        # A call inserted just now has no snapshots to compare against.
        self._insert_snapshots(call, snaps, op.captured_at_ms)
        return Outcome(archive_ref=ref)

    def _existing_snapshot(self, call: _Call, subject: str, stage: str):
        return self.conn.execute(
            "SELECT payload_sha256, media_type, source_completeness FROM snapshots"
            " WHERE tool_call_id = ? AND subject = ? AND stage = ?",
            (call.id, subject, stage),
        ).fetchone()

    def _has(self, call: _Call, subject: str, stage: str) -> bool:
        return self._existing_snapshot(call, subject, stage) is not None

    def _check_snapshot(self, call: _Call, spec: SnapshotSpec, *, must_exist: bool) -> bool:
        """True when an identical snapshot exists; conflict when a different one does."""
        row = self._existing_snapshot(call, spec.subject, spec.stage)
        if row is None:
            if must_exist:
                raise ConflictError(f"{spec.subject}/{spec.stage} snapshot is missing for an existing call")
            return False
        if (bytes(row[0]), row[1], row[2]) != (spec.payload.sha256, spec.payload.media_type, spec.source_completeness):
            raise ConflictError(f"{spec.subject}/{spec.stage} snapshot is already stored with different content")
        return True

    def _all_present(self, call: _Call, snaps: tuple[SnapshotSpec, ...]) -> bool:
        return all(self._check_snapshot(call, s, must_exist=False) for s in snaps)

    def _add_snapshots(self, call: _Call, snaps: tuple[SnapshotSpec, ...], captured_at_ms: int) -> None:
        missing = [s for s in snaps if not self._check_snapshot(call, s, must_exist=False)]
        if not missing:
            return
        if call.status != "started":
            raise LifecycleError("call is already finished")
        self._insert_snapshots(call, missing, captured_at_ms)

    def _insert_snapshots(self, call: _Call, snaps, captured_at_ms: int) -> None:
        execute = self.conn.execute
        known = self._known
        for spec in snaps:
            p = spec.payload
            if not known.has_payload(p.sha256):  # before and after often share one payload
                known.add_payload(p.sha256)
                if type(p.body) is FileBody:  # a large file's body, copied into its row in chunks
                    insert_file_payload(self.conn, p)
                else:
                    execute(
                        "INSERT OR IGNORE INTO payloads (sha256, compression, uncompressed_byte_length, body)"
                        " VALUES (?, ?, ?, ?)",
                        (p.sha256, p.compression, p.length, p.body),
                    )
            execute(
                "INSERT INTO snapshots (tool_call_id, subject, stage, media_type, source_completeness,"
                " captured_at_ms, payload_sha256) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (call.id, spec.subject, spec.stage, p.media_type, spec.source_completeness, captured_at_ms, p.sha256),
            )

    def _require_finishable(self, call: _Call, *, executed: bool, what: str) -> None:
        """The Records section's required snapshots for a finalised call."""
        if call.status != "started":
            raise LifecycleError(f"{what}: call is already finished")
        if not (self._has(call, "input", "before") and self._has(call, "input", "after")):
            raise LifecycleError(f"{what}: call has no input snapshots")
        if executed:
            if not self._has(call, "result", "before"):
                raise LifecycleError(f"{what}: executed call has no result/before snapshot")
            if call.requires_streams and not all(self._has(call, s, g) for s, g in STREAM_KEYS):
                raise LifecycleError(f"{what}: wrapped shell call is missing stream snapshots")

    def _finish(self, call: _Call, snaps, is_error: bool, executed: bool, finished_at_ms: int,
                *, update: bool = False) -> None:
        if call.status == "finished":
            same_result = self._all_present(call, snaps)
            same_flags = (call.is_error, call.executed) == (int(is_error), int(executed))
            if same_result and same_flags:
                return
            raise ConflictError("call is already finished with a different final result")
        self._require_finishable(call, executed=executed, what="finishing call")
        self._add_snapshots(call, snaps, finished_at_ms)
        self.conn.execute(
            "UPDATE tool_calls SET status = 'finished', finished_at_ms = ?, is_error = ?, executed = ?"
            " WHERE id = ?",
            (finished_at_ms, int(is_error), int(executed), call.id),
        )


class _Known:
    """Session ids and payload digests the archive is known to hold, so a batch need not ask again.

    Sessions are never deleted and a payload only by a prune, so an entry stays
    true once its transaction has committed. Entries learned inside the current
    transaction are pending: `commit` keeps them, `rollback` (of the
    transaction or of any savepoint in it) drops them all, so nothing undone is
    ever remembered. A prune forgets each payload it deleted. Both are bounded
    (`MAX_KNOWN`), the oldest forgotten first.
    """

    MAX_KNOWN = 4096

    def __init__(self) -> None:
        self._sessions: dict[tuple, tuple[int, bool]] = {}
        self._payloads: dict[bytes, None] = {}
        self._new_sessions: dict[tuple, tuple[int, bool]] = {}
        self._new_payloads: dict[bytes, None] = {}

    def session(self, key: tuple) -> tuple[int, bool] | None:
        """(id, whether its start time is recorded) of a known session, or None."""
        return self._new_sessions.get(key) or self._sessions.get(key)

    def add_session(self, key: tuple, session_id: int, started: bool) -> None:
        self._new_sessions[key] = (session_id, started)

    def has_payload(self, sha256: bytes) -> bool:
        return sha256 in self._new_payloads or sha256 in self._payloads

    def add_payload(self, sha256: bytes) -> None:
        self._new_payloads[sha256] = None

    def forget(self, digests) -> None:
        for digest in digests:
            self._payloads.pop(digest, None)
            self._new_payloads.pop(digest, None)

    def commit(self) -> None:
        for table, new in ((self._sessions, self._new_sessions), (self._payloads, self._new_payloads)):
            table.update(new)
            new.clear()
            while len(table) > self.MAX_KNOWN:
                del table[next(iter(table))]

    def rollback(self) -> None:
        self._new_sessions.clear()
        self._new_payloads.clear()
