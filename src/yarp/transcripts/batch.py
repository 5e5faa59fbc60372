"""The batched import operation: past calls read from transcripts, applied by the broker.

A live adapter records a call in four to six small operations while it runs;
an imported call is already over, so it travels whole: session, call record,
input, result (when the transcript has one) and an approved source-output file.
Many calls travel in one `import_calls` operation so that one broker request
and one savepoint cover hundreds of calls (the live path is bounded by one
commit per few requests, see docs/design/import.md, "Importing transcripts").

The broker stays the only writer. The operation's record and JSON form live
with every other operation's (`yarp.wire.operations`, validated by
`yarp.wire.validation`); this module holds the two pieces the broker runs for it:
`prepare_import_calls` (canonical JSON, hashes and compression, off the writer
thread, registered in `yarp.broker.handlers`) and `apply_import_calls` (the
rows, inside the store's transaction, reached through the prepared batch's
`apply_to`).

Applying never replays into an existing call: an identity that is already in
the archive (captured live, or imported before) is reported ``existing`` and
left untouched, so live rows stay the richer copy and re-imports write nothing.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from yarp.archive.codec import MEDIA_TEXT, bytes_payload, json_payload
from yarp.archive.prepare import Prepared, SnapshotSpec, read_snapshot_file
from yarp.errors import UnsafePath, ValidationError
from yarp.wire import operations as ops

#: Per-call outcome letters in the reply: imported, existing, refused.
IMPORTED, EXISTING, REFUSED = "i", "e", "r"


# --- broker: prepare ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PreparedCall:
    """One imported call and the snapshots prepared for it."""

    call: ops.ImportedCall
    snapshots: tuple[SnapshotSpec, ...]


def prepare_import_calls(op: ops.ImportCalls) -> Prepared:
    """Every payload of every call: input before = after, result before = after.

    No processing happened between the agent and its tool for an imported
    call, so each pair is one payload row. A result text and a source output
    the call holds are stored as live capture stores them (`result_text/before`
    with its completeness; `source_output/before`, exact bytes). An approved
    source-output file that cannot be read (gone, replaced by a link) leaves
    the call without it rather than refusing the call: the transcript's
    result is still exact.
    """
    prepared = []
    for c in op.calls:
        payload = json_payload(c.input)
        snaps = [SnapshotSpec("input", "before", payload), SnapshotSpec("input", "after", payload)]
        if c.has_result:
            result = json_payload(c.result)
            snaps += [SnapshotSpec("result", "before", result), SnapshotSpec("result", "after", result)]
            if c.result_text is not None:
                text = bytes_payload(c.result_text.encode("utf-8"), MEDIA_TEXT)
                snaps.append(SnapshotSpec("result_text", "before", text, c.result_text_completeness))
            if c.source_output is not None:
                snaps.append(SnapshotSpec("source_output", "before",
                                          bytes_payload(c.source_output.encode("utf-8", "surrogatepass"))))
            if c.source_output_path is not None:
                try:
                    raw = read_snapshot_file(ops.StreamFile(c.source_output_path), private=False)
                except (ValidationError, UnsafePath, OSError):
                    raw = None
                if raw is not None:
                    snaps.append(SnapshotSpec("source_output", "before", bytes_payload(raw)))
        prepared.append(PreparedCall(c, tuple(snaps)))
    return PreparedImport(op, tuple(s for p in prepared for s in p.snapshots), tuple(prepared))


@dataclass(frozen=True, slots=True)
class PreparedImport(Prepared):
    """A prepared batch that keeps each call's snapshots apart (the store writes them per call)."""

    calls: tuple[PreparedCall, ...] = ()

    def apply_to(self, store):
        """Write the batch inside the store's current transaction (see `apply_import_calls`)."""
        return apply_import_calls(store, self)


# --- broker: apply -------------------------------------------------------------------


def apply_import_calls(store, prepared: PreparedImport):
    """Write every new call of the batch; return the store's `Outcome` with per-call letters.

    Runs inside the store's request savepoint. The fast path inserts the call
    rows one by one (their ids are needed) and every payload and snapshot row
    of the batch with one `executemany` each — per-statement overhead, not
    SQLite's work, dominated a per-call loop. Should any row break a
    constraint, the batch is rolled back to its start and applied again call
    by call, each in its own savepoint, so that only the offending call is
    refused.
    """
    from yarp.archive.store import Outcome

    conn = store.conn
    conn.execute("SAVEPOINT import_batch")
    try:
        letters = _apply_fast(store, prepared)
    except sqlite3.IntegrityError:
        conn.execute("ROLLBACK TO import_batch")
        letters = _apply_each(store, prepared)
    conn.execute("RELEASE import_batch")
    return Outcome(extra={"calls": "".join(letters)})


_INSERT_FINISHED = (
    "INSERT INTO tool_calls (session_id, source_call_id, archive_ref, tool_name, provider, model,"
    " working_directory, started_at_ms, requires_streams, status, finished_at_ms, is_error, executed)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, 'finished', ?, ?, ?)"
)
_INSERT_STARTED = (
    "INSERT INTO tool_calls (session_id, source_call_id, archive_ref, tool_name, provider, model,"
    " working_directory, started_at_ms, requires_streams, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, 'started')"
)


def _insert_call(conn, session_id: int, c: ops.ImportedCall) -> tuple[int, str]:
    from yarp.archive.store import new_archive_ref

    m = c.call
    ref = new_archive_ref()
    row = (session_id, m.source_call_id, ref, m.tool_name, m.provider, m.model, m.working_directory, m.started_at_ms)
    if c.has_result:
        cur = conn.execute(_INSERT_FINISHED, (*row, c.finished_at_ms, int(c.is_error), int(c.executed)))
    else:
        cur = conn.execute(_INSERT_STARTED, row)
    return cur.lastrowid, ref


def _new_calls(store, prepared: PreparedImport):
    """(index, session row id) of each call not yet archived; letters with `existing` filled in."""
    sessions: dict = {}
    letters = [EXISTING] * len(prepared.calls)
    fresh = []
    for index, pc in enumerate(prepared.calls):
        s = pc.call.session
        key = (s.agent, s.account, s.source_session_id)
        session_id = sessions.get(key)
        if session_id is None:
            session_id = sessions[key] = store._session_id(s, create=True)
        if store._load_call(session_id, pc.call.call.source_call_id) is None:
            fresh.append((index, session_id))
    return letters, fresh


def _apply_fast(store, prepared: PreparedImport) -> list[str]:
    conn = store.conn
    captured_at_ms = prepared.operation.captured_at_ms
    letters, fresh = _new_calls(store, prepared)
    payload_rows: dict[bytes, tuple] = {}
    snapshot_rows = []
    for index, session_id in fresh:
        pc = prepared.calls[index]
        call_rowid, _ref = _insert_call(conn, session_id, pc.call)
        for spec in pc.snapshots:
            p = spec.payload
            if p.sha256 not in payload_rows:
                payload_rows[p.sha256] = (p.sha256, p.compression, p.length, p.body)
            snapshot_rows.append((call_rowid, spec.subject, spec.stage, p.media_type, spec.source_completeness,
                                  captured_at_ms, p.sha256))
        letters[index] = IMPORTED
    conn.executemany("INSERT OR IGNORE INTO payloads (sha256, compression, uncompressed_byte_length, body)"
                     " VALUES (?, ?, ?, ?)", payload_rows.values())
    conn.executemany("INSERT INTO snapshots (tool_call_id, subject, stage, media_type, source_completeness,"
                     " captured_at_ms, payload_sha256) VALUES (?, ?, ?, ?, ?, ?, ?)", snapshot_rows)
    return letters


def _apply_each(store, prepared: PreparedImport) -> list[str]:
    from yarp.archive.store import _Call

    conn = store.conn
    captured_at_ms = prepared.operation.captured_at_ms
    letters = []
    for index, pc in enumerate(prepared.calls):
        c = pc.call
        session_id = store._session_id(c.session, create=True)
        if store._load_call(session_id, c.call.source_call_id) is not None:
            letters.append(EXISTING)
            continue
        savepoint = f"i{index}"
        conn.execute(f"SAVEPOINT {savepoint}")
        try:
            rowid, ref = _insert_call(conn, session_id, c)
            m = c.call
            row = _Call(rowid, ref, m.tool_name, m.provider, m.model, m.working_directory, m.started_at_ms, 0,
                        "started", None, None)
            store._insert_snapshots(row, pc.snapshots, captured_at_ms)
        except sqlite3.IntegrityError:
            conn.execute(f"ROLLBACK TO {savepoint}")
            conn.execute(f"RELEASE {savepoint}")
            letters.append(REFUSED)
            continue
        conn.execute(f"RELEASE {savepoint}")
        letters.append(IMPORTED)
    return letters
