"""One call's whole record, for `yarp show REF`: its row, input, output sources, view and snapshots.

The input (`input/before`, and `input/after` when YARP rewrote it) is read as
JSON, up to `MAX_INPUT_BYTES` (its size is in the snapshot list either way); the view (what the agent was shown: `stdout/after` and `stderr/after`
of a wrapped call, else `result/after`) is read up to a bound; the exact
output is not read at all: the record names its recovery sources and their
sizes, which `yarp read`, `search` and `restore` serve. Every snapshot is
listed with its media type, capture time, size and digest.

This module never writes to the archive and never puts archived bytes into an error message.
"""

from __future__ import annotations

import sqlite3

from yarp._record import Record
from yarp.archive.calls.listing import MAX_INPUT_BYTES, CallRow, calls_by_id
from yarp.archive.recovery.lookup import Source, find_call, recovery_sources
from yarp.archive.recovery.reading import iter_payload, utf8_safe_end
from yarp.archive.sqlite import map_error

#: Subjects in the order a record lists them.
SUBJECT_ORDER = ("input", "result", "result_text", "source_output", "stdout", "stderr")


class Snapshot(Record):
    """One snapshot row and its payload's sizes (never its bytes)."""

    __slots__ = ("subject", "stage", "media_type", "completeness", "captured_ms", "sha256", "length",
                 "stored_length", "compression", "rowid")

    def as_json(self) -> dict:
        """The snapshot for `--json`."""
        return {"subject": self.subject, "stage": self.stage, "media_type": self.media_type,
                "completeness": self.completeness, "captured_at_ms": self.captured_ms, "sha256": self.sha256.hex(),
                "bytes": self.length, "stored_bytes": self.stored_length, "compression": self.compression}


class ViewPart(Record):
    """Part of the view: `name` (`stdout`, `stderr` or `result`), its first bytes, and its whole size."""

    __slots__ = ("name", "data", "length")


class CallRecord(Record):
    """Everything `yarp show` prints of one call."""

    __slots__ = ("row", "source_call_id", "provider", "model", "requires_streams", "input_before", "input_after",
                 "sources", "view", "snapshots")


_DETAILS = "SELECT source_call_id, provider, model, requires_streams FROM tool_calls WHERE id = ?"
_SNAPSHOTS = ("SELECT s.subject, s.stage, s.media_type, s.source_completeness, s.captured_at_ms, p.sha256,"
              " p.uncompressed_byte_length, length(p.body), p.compression, p.rowid"
              " FROM snapshots s JOIN payloads p ON p.sha256 = s.payload_sha256 WHERE s.tool_call_id = ?")


def call_record(conn: sqlite3.Connection, ref: str, *, view_bytes: int) -> CallRecord:
    """The record of the call `ref` (`InvalidReference`, `NotFound`), its view cut to `view_bytes` a part."""
    call = find_call(conn, ref)
    try:
        row: CallRow = calls_by_id(conn, [call.id])[0]
        source_call_id, provider, model, requires_streams = conn.execute(_DETAILS, (call.id,)).fetchone()
        snapshots = [Snapshot(r[0], r[1], r[2], r[3], r[4], bytes(r[5]), r[6], r[7], r[8], r[9])
                     for r in conn.execute(_SNAPSHOTS, (call.id,))]
    except sqlite3.Error as exc:
        raise map_error(exc, "reading archive") from None
    snapshots.sort(key=lambda s: (SUBJECT_ORDER.index(s.subject) if s.subject in SUBJECT_ORDER else 99,
                                  s.stage != "before"))
    by_key = {(s.subject, s.stage): s for s in snapshots}
    before, after = by_key.get(("input", "before")), by_key.get(("input", "after"))
    input_before = _json(conn, before)
    input_after = _json(conn, after) if after is not None and before is not None and after.sha256 != before.sha256 \
        else None
    sources: list[Source] = recovery_sources(conn, call)
    return CallRecord(row, source_call_id, provider, model, bool(requires_streams), input_before, input_after,
                      sources, _view(conn, by_key, view_bytes), snapshots)


def _view(conn: sqlite3.Connection, by_key: dict, limit: int) -> list[ViewPart]:
    """What the agent was shown: the streams after YARP of a wrapped call, else the result after YARP."""
    streams = [by_key.get((name, "after")) for name in ("stdout", "stderr")]
    if any(streams):
        return [ViewPart(s.subject, _head(conn, s, limit), s.length) for s in streams if s is not None and s.length]
    result = by_key.get(("result", "after"))
    if result is None:
        return []
    return [ViewPart("result", _head(conn, result, limit), result.length)]


def _head(conn: sqlite3.Connection, snapshot: Snapshot, limit: int) -> bytes:
    """The first `limit` bytes of a payload (cut on a UTF-8 character boundary)."""
    taken: list[bytes] = []
    size = 0
    for data in iter_payload(conn, snapshot.rowid, snapshot.compression, chunk=max(limit, 4096)):
        taken.append(data)
        size += len(data)
        if size > limit:
            break
    data = b"".join(taken)
    return data if len(data) <= limit else data[:utf8_safe_end(data, limit)]


def _json(conn: sqlite3.Connection, snapshot: Snapshot | None) -> object:
    """A JSON snapshot's value (None when absent, larger than `MAX_INPUT_BYTES`, damaged or not JSON)."""
    if snapshot is None or snapshot.length > MAX_INPUT_BYTES:
        return None
    import json

    try:
        return json.loads(b"".join(iter_payload(conn, snapshot.rowid, snapshot.compression)))
    except Exception:  # a damaged payload is verify's to report; show names the call without it
        return None
