"""The batched import operation: past calls read from transcripts, applied by the broker.

A live adapter records a call in four to six small operations while it runs;
an imported call is already over, so it travels whole: session, call record,
input, result (when the transcript has one) and an approved source-output file.
Many calls travel in one `import_calls` operation so that one broker request
and one savepoint cover hundreds of calls (the live path is bounded by one
commit per few requests, see docs/decisions.md).

The broker stays the only writer. This module holds the three pieces it runs:
`parse_import_calls` (strict, bounded validation of the wire object),
`prepare_import_calls` (canonical JSON, hashes and compression, off the writer
thread) and `apply_import_calls` (the rows, inside the store's transaction).

Applying never replays into an existing call: an identity that is already in
the archive (captured live, or imported before) is reported ``existing`` and
left untouched, so live rows stay the richer copy and re-imports write nothing.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from .. import operations as ops
from .._digest import identity_sha256
from ..codec import MEDIA_TEXT, bytes_payload, json_payload
from ..errors import UnsafePath, ValidationError
from ..limits import MAX_IDENTITY_CHARS, MAX_WORKING_DIRECTORY_CHARS
from ..prepare import Prepared, SnapshotSpec, read_snapshot_file

KIND = "import_calls"
#: Calls per import operation: big enough to amortise a commit, small enough
#: that one refused batch costs little and frames stay far below the limit.
MAX_BATCH_CALLS = 2048
#: Per-call outcome letters in the reply: imported, existing, refused.
IMPORTED, EXISTING, REFUSED = "i", "e", "r"


@dataclass(frozen=True, slots=True)
class ImportedCall:
    """One past call as a transcript proves it.

    `result` is None for a call the transcript shows without a result: it is
    recorded as `started` (incomplete) with no result snapshots. With a result
    the call is `finished` with `executed = 1`; `is_error` is what the
    transcript says, False when it says nothing (the live adapters record the
    same default).
    """

    session: ops.Session
    call: ops.CallMeta
    input: Any
    result: Any = None
    has_result: bool = False
    is_error: bool = False
    finished_at_ms: int | None = None
    source_output_path: str | None = None
    #: The result's exact text where the transcript proves it complete (Codex's
    #: `aggregated_output`), stored as `result_text/before` for line search.
    result_text: str | None = None


def call_to_json(c: ImportedCall) -> dict:
    out: dict[str, Any] = {
        "session": ops._session_json(c.session),
        "call": _call_meta_json(c.call),
        "input": c.input,
    }
    if c.has_result:
        out.update(result=c.result, isError=c.is_error, finishedAtMs=c.finished_at_ms)
        if c.source_output_path is not None:
            out["sourceOutputPath"] = c.source_output_path
        if c.result_text is not None:
            out["resultText"] = c.result_text
    return out


def _call_meta_json(m: ops.CallMeta) -> dict:
    out = {"sourceCallId": m.source_call_id, "toolName": m.tool_name, "startedAtMs": m.started_at_ms,
           "requiresStreams": False}
    for key, value in (("provider", m.provider), ("model", m.model), ("workingDirectory", m.working_directory)):
        if value is not None:
            out[key] = value
    return out


def _parse_call(obj: Any, where: str) -> ImportedCall:
    f = ops._Fields(obj, where)
    session = ops._session(f.json("session"))
    meta = ops._call(f.json("call"))
    if meta.requires_streams:
        raise ValidationError(f"{where}.call.requiresStreams must be false for an imported call")
    value = f.json("input")
    has_result = "result" in f.obj
    result = is_error = finished = path = text = None
    if has_result:
        result = f.json("result")
        is_error = f.flag("isError")
        finished = f.time_ms("finishedAtMs")
        path = f.text("sourceOutputPath", MAX_WORKING_DIRECTORY_CHARS, required=False)
        if path is not None and (not path.startswith("/") or "\x00" in path):
            raise ValidationError(f"{where}.sourceOutputPath must be an absolute path")
        if "resultText" in f.obj:
            text = f.any_text("resultText")
    f.finish()
    return ImportedCall(session, meta, value, result, has_result, bool(is_error), finished, path, text)


def parse_import_calls(obj: dict) -> ops.ImportCalls:
    """Validate one `import_calls` operation object strictly (the broker's boundary)."""
    f = ops._Fields(obj, KIND)
    f.used.add("operation")
    batch_id = f.text("batchId", MAX_IDENTITY_CHARS)
    captured_at_ms = f.time_ms("capturedAtMs")
    raw = f.json("calls")
    f.finish()
    if not isinstance(raw, list) or not raw:
        raise ValidationError(f"{KIND}.calls must be a non-empty list")
    if len(raw) > MAX_BATCH_CALLS:
        raise ValidationError(f"{KIND}.calls holds more than {MAX_BATCH_CALLS} calls")
    calls = tuple(_parse_call(item, f"{KIND}.calls[{i}]") for i, item in enumerate(raw))
    if batch_id != batch_id_of(calls):
        raise ValidationError(f"{KIND}.batchId does not match its calls")
    return ops.ImportCalls(batch_id, calls, captured_at_ms)


def batch_id_of(calls) -> str:
    """The batch identity: SHA-256 over its calls' source identities, in order.

    It keys the envelope (one source key per batch), so replaying the same
    batch after a lost acknowledgement is the same request.
    """
    h = identity_sha256(b"import_calls\x1f")
    for c in calls:
        s = c.session
        h.update("\x1f".join((s.agent, s.account, s.source_session_id, c.call.source_call_id)).encode(
            "utf-8", "surrogatepass") + b"\x1e")
    return h.hexdigest()


def make_operation(calls: list[ImportedCall], captured_at_ms: int) -> ops.ImportCalls:
    return ops.ImportCalls(batch_id_of(calls), tuple(calls), captured_at_ms)


def operation_json(op: ops.ImportCalls) -> dict:
    return {"operation": KIND, "batchId": op.batch_id, "capturedAtMs": op.captured_at_ms,
            "calls": [call_to_json(c) for c in op.calls]}


# --- broker: prepare ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PreparedCall:
    call: ImportedCall
    snapshots: tuple[SnapshotSpec, ...]


def prepare_import_calls(op: ops.ImportCalls) -> Prepared:
    """Every payload of every call: input before = after, result before = after.

    No processing happened between the agent and its tool for an imported
    call, so each pair is one payload row. An approved source-output file that
    cannot be read (gone, replaced by a link) leaves the call without it rather
    than refusing the call: the transcript's result is still exact.
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
                snaps.append(SnapshotSpec("result_text", "before", text, "complete"))
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
    from ..store import Outcome

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
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, 'finished', ?, ?, 1)"
)
_INSERT_STARTED = (
    "INSERT INTO tool_calls (session_id, source_call_id, archive_ref, tool_name, provider, model,"
    " working_directory, started_at_ms, requires_streams, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, 'started')"
)


def _insert_call(conn, session_id: int, c: ImportedCall) -> tuple[int, str]:
    from ..store import new_archive_ref

    m = c.call
    ref = new_archive_ref()
    row = (session_id, m.source_call_id, ref, m.tool_name, m.provider, m.model, m.working_directory, m.started_at_ms)
    if c.has_result:
        cur = conn.execute(_INSERT_FINISHED, (*row, c.finished_at_ms, int(c.is_error)))
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
    from ..store import _Call

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
