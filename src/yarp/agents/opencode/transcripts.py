"""opencode's session store (`$XDG_DATA_HOME/opencode/opencode.db`), read only.

opencode 1.18 writes no transcript files: its sessions live in SQLite (WAL
mode), in the tables `session`, `message` and `part`, each with a JSON `data`
column (docs/import.md, "opencode"). A tool call is a part of type `tool`:
its `callID` (the model's), its `tool`, and its `state`, which opencode
rewrites in place from `pending` through `running` to `completed` or `error`.

Identities are the live plugin's: agent `opencode`, the OS account, the
part's `session_id` (the hooks' `sessionID`) and its `callID`. A call id one
session holds twice (the model reused it) keeps the bare id on its first part
in id order, the only one live capture could begin, and is `<id>#<n>` on the
n-th, as reused ids are in other transcripts. The result is what opencode stored, which is
what the model got: a completed part's state without its status, input and
times (`{title, output, metadata}`, the after hook's output as the plugin
left it), or, for a part that ended in an error, `{error[, metadata]}`, an
error that never executed, as the plugin records it. bash's exit status in
`metadata.exit` decides its `is_error` (the plugin's rule); its spill file
(`metadata.outputPath`), when it still exists, is the source output.

The store is never written. One read-only connection (`mode=ro`,
`query_only`) reads in one read transaction, so every query sees the same
snapshot while opencode goes on writing; parts are streamed one row at a time
and the calls sent in batches, so memory is bounded by a part, a batch and
the call ids of the sessions being read. The checkpoint (the importer's
per-file state) holds the identity of the store and of its WAL (an unchanged
store is not opened), the newest part update read (the next read starts
`REREAD_MARGIN_MS` before it), the parts still running, and the calls taken.
"""

from __future__ import annotations

import os
import sqlite3
import time

from yarp import json_text
from yarp.errors import YarpError
from yarp.limits import MAX_FRAME_BYTES
from yarp.transcripts.parsing import TranscriptParser, drainer, iso_ms
from yarp.transcripts.state import FileCheckpoint
from yarp.transcripts.stores import open_store, store_stat
from yarp.wire import operations as ops

AGENT = "opencode"
#: The store's file name; a folder holding it is a store to read.
STORE_NAME = "opencode.db"
#: Parts updated this long before the newest update last read are read again: opencode stamps
#: `time_updated` before its transaction commits, so a part can appear with an older time.
REREAD_MARGIN_MS = 60_000
#: Parts read again by id (those still running at the last read) per query.
_ID_BATCH = 500
#: Sessions whose call-id occurrences are kept while a store is read.
_MAX_CACHED_SESSIONS = 64
_FINAL = ("completed", "error")
_NOT_RESULT = ("status", "input", "time")

_PART_COLUMNS = (
    "SELECT p.id, p.session_id, p.time_created, p.time_updated,"
    " CASE WHEN length(CAST(p.data AS BLOB)) > ? THEN NULL ELSE CAST(p.data AS BLOB) END,"
    " CAST(m.data AS BLOB), s.time_created"
    " FROM part p LEFT JOIN message m ON m.id = p.message_id LEFT JOIN session s ON s.id = p.session_id"
)
#: Tool parts changed since a time; opencode writes compact JSON, the parser checks the type itself.
_CHANGED = _PART_COLUMNS + " WHERE p.time_updated >= ? AND p.data LIKE '%\"type\":\"tool\"%'"
_BY_ID = _PART_COLUMNS + " WHERE p.id IN ({})"
_CALL_IDS = (
    "SELECT id, CASE WHEN json_valid(data) THEN json_extract(data, '$.callID') END FROM part"
    " WHERE session_id = ? AND data LIKE '%\"type\":\"tool\"%'"
    " AND CASE WHEN json_valid(data) THEN json_extract(data, '$.type') END = 'tool' ORDER BY id"
)


def is_error_result(tool: str, result: dict) -> bool:
    """The plugin's rule (`isErrorResult`): bash by `metadata.exit` (non-zero, or null after a timeout),
    an MCP result by `isError`, opencode's `invalid` tool always; other tools fail with an error part."""
    if tool == "invalid":
        return True
    if isinstance(result.get("content"), list):
        return result.get("isError") is True
    metadata = result.get("metadata")
    if tool != "bash" or not isinstance(metadata, dict) or "exit" not in metadata:
        return False
    exit_status = metadata["exit"]
    return exit_status is None or (type(exit_status) is int and exit_status != 0)


def error_result(state: dict) -> dict:
    """The result of a part that ended in an error: its text, and metadata when it has some (`errorResult`)."""
    result = {"error": state["error"] if isinstance(state.get("error"), str) else ""}
    if "metadata" in state:
        result["metadata"] = state["metadata"]
    return result


def _decode(raw: bytes | None) -> dict | None:
    if raw is None:
        return None
    try:
        value = json_text.decode(raw, "opencode record")
    except YarpError:
        return None
    return value if isinstance(value, dict) else None


def _text(obj: dict, key: str) -> str | None:
    value = obj.get(key)
    return value if isinstance(value, str) and value else None


class OpencodeParser(TranscriptParser):
    """Tool parts of one store: each call complete when its part is, waiting while it runs.

    A waiting call is kept under its part id (the checkpoint's `pending`) and
    read again by that id; its result comes from the part's final state.
    """

    agent = AGENT
    version = 1

    def __init__(self, path: str, account: str, tally, context: dict | None, pending: list | None,
                 conn: sqlite3.Connection) -> None:
        super().__init__(path, account, tally, context, pending)
        self.conn = conn
        self._occurrence: dict[str, dict[str, int]] = {}

    def feed(self, obj: dict, line: int) -> None:
        """Take one tool part: `id`, `session`, `created`, `data`, `message` and `sessionStarted`."""
        data, part_id = obj["data"], obj["id"]
        state = data.get("state")
        if not isinstance(state, dict) or _text(data, "callID") is None or _text(data, "tool") is None:
            self.tally.issue(self.path, 0, f"tool part {part_id[:40]} without a call id, tool or state")
            return
        status = state.get("status")
        was_waiting = self.take_pending(part_id) is not None
        call = self._call(obj, data, state)
        if status not in _FINAL:
            if status not in ("pending", "running"):
                self.unknown(f"status:{str(status)[:20]}")
            if was_waiting:
                self.pending[part_id] = [{"raw": part_id, "call": call}]
            else:
                self.add_call(part_id, call)
            return
        if not was_waiting:
            self.tally.calls_found += 1
        times = state.get("time") if isinstance(state.get("time"), dict) else {}
        finished = iso_ms(times.get("end"))
        if status == "error":
            self.complete(call, error_result(state), True, finished, executed=False)
            return
        result = {key: value for key, value in state.items() if key not in _NOT_RESULT}
        self.complete(call, result, is_error_result(data["tool"], result), finished, _spill_file(data["tool"], result))

    def _call(self, obj: dict, data: dict, state: dict) -> ops.ImportedCall:
        message = obj["message"] or {}
        times = state.get("time") if isinstance(state.get("time"), dict) else {}
        started = iso_ms(times.get("start")) or obj["created"]
        where = message.get("path") if isinstance(message.get("path"), dict) else {}
        meta = ops.CallMeta(self._call_id(obj["session"], data["callID"], obj["id"]), data["tool"], started, False,
                            _text(message, "providerID"), _text(message, "modelID"), _text(where, "cwd"))
        arguments = state.get("input")
        return ops.ImportedCall(self.session(obj["session"], obj["sessionStarted"]), meta,
                                arguments if arguments is not None else {})

    def _call_id(self, session: str, call_id: str, part_id: str) -> str:
        """`call_id`, or `<call_id>#<n>` on the n-th tool part of the session (in id order) that holds it."""
        numbers = self._occurrence.get(session)
        if numbers is None:
            if len(self._occurrence) >= _MAX_CACHED_SESSIONS:
                self._occurrence.clear()
            numbers, counts = {}, {}
            for pid, cid in self.conn.execute(_CALL_IDS, (session,)):
                counts[cid] = counts.get(cid, 0) + 1
                numbers[pid] = counts[cid]
            self._occurrence[session] = numbers
        n = numbers.get(part_id, 1)
        return call_id if n == 1 else f"{call_id}#{n}"


def _spill_file(tool: str, result: dict) -> str | None:
    """bash's spill file, when it still exists (prepared without following links, or left out)."""
    metadata = result.get("metadata")
    path = metadata.get("outputPath") if tool == "bash" and isinstance(metadata, dict) else None
    return path if isinstance(path, str) and os.path.isabs(path) and os.path.isfile(path) else None


def _identity(path: str) -> list[int] | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns]


def _rows(conn: sqlite3.Connection, read_from_ms: int, waiting: set[str]):
    """Tool parts changed since `read_from_ms`, then the `waiting` parts not among them, as parser records."""
    left = set(waiting)
    for row in conn.execute(_CHANGED, (MAX_FRAME_BYTES, read_from_ms)):
        left.discard(row[0])
        yield row
    ordered = sorted(left)
    for start in range(0, len(ordered), _ID_BATCH):
        chunk = ordered[start:start + _ID_BATCH]
        yield from conn.execute(_BY_ID.format(",".join("?" * len(chunk))), (MAX_FRAME_BYTES, *chunk))


def _record(row, path: str, tally) -> dict | None:
    """One row as the parser takes it, or None (reported) when it is not a tool part it can read."""
    part_id, session, created, updated, raw, message, started = row
    if raw is None:
        tally.oversized_lines += 1
        tally.issue(path, 0, f"tool part {str(part_id)[:40]} is longer than the frame limit")
        return None
    data = _decode(raw)
    if data is None:
        tally.corrupt_lines += 1
        tally.issue(path, 0, f"part {str(part_id)[:40]} is not a JSON object")
        return None
    if data.get("type") != "tool":
        return None
    return {"id": part_id, "session": session, "created": created, "updated": updated, "data": data,
            "message": _decode(message), "sessionStarted": started}


def _store_key(call: ops.ImportedCall) -> str:
    """What a store's checkpoint remembers of a call it took: session and call id (one store holds many sessions)."""
    return f"{call.session.source_session_id}\x1f{call.call.source_call_id}"


def _unchanged(cp: FileCheckpoint | None, ident: list[int], wal: list[int] | None) -> bool:
    return (cp is not None and [cp.device, cp.inode, cp.size, cp.mtime_ns] == ident
            and cp.context.get("wal") == wal)


def import_store(path: str, cp: FileCheckpoint | None, sender, tally, options, account: str,
                 reader: type[OpencodeParser] = OpencodeParser) -> FileCheckpoint | None:
    """Read one opencode store from its checkpoint; return the new checkpoint, None when it stays.

    `sender`, `tally` and `options` are the importer's (`yarp.transcripts.importer`). A fork of
    opencode that keeps the same store passes its own `reader` (a subclass naming its agent).
    """
    st = store_stat(path, tally)
    if st is None:
        return None
    ident, wal = [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns], _identity(path + "-wal")
    newest_ms = max(ident[3], wal[3] if wal else 0) // 1_000_000
    if options.since_ms is not None and newest_ms < options.since_ms:
        tally.files_skipped += 1
        return None
    if cp is not None and (cp.agent, cp.parser_version) != (reader.agent, reader.version):
        tally.files_reset += 1
        cp = None
    settled = time.time() * 1000 - newest_ms >= options.settle_s * 1000
    if _unchanged(cp, ident, wal) and not (cp.pending and settled):
        tally.files_unchanged += 1
        tally.calls_pending += len(cp.pending)
        return None
    try:
        conn = open_store(path)
    except sqlite3.Error as exc:
        tally.files_skipped += 1
        tally.issue(path, 0, f"session store cannot be read: {str(exc)[:200]}")
        return None
    try:
        return _read_store(conn, path, cp, ident, wal, settled, sender, tally, options, account, reader)
    except sqlite3.Error as exc:
        tally.files_changed_during_read += 1
        tally.issue(path, 0, f"session store read failed; it is read again next time: {str(exc)[:200]}")
        return None
    finally:
        conn.close()


def _read_store(conn, path, cp, ident, wal, settled, sender, tally, options, account,
                reader: type[OpencodeParser]) -> FileCheckpoint | None:
    parser = reader(path, account, tally, cp.context if cp else None, cp.pending if cp else None, conn)
    taken = set(cp.taken) if cp else set()
    new_taken: list[str] = []
    drain = drainer(reader.agent, parser, sender, tally, taken, new_taken, _store_key)
    read_to = int(parser.context.get("readTo", 0))
    for row in _rows(conn, max(0, read_to - REREAD_MARGIN_MS), set(parser.pending)):
        record = _record(row, path, tally)
        if record is None:
            continue
        read_to = max(read_to, record["updated"])
        try:
            parser.feed(record, 0)
        except (TypeError, ValueError, AttributeError, KeyError, YarpError):
            tally.corrupt_lines += 1
            tally.issue(path, 0, f"tool part {str(record['id'])[:40]} has an unexpected shape")
            continue
        if parser.ready:
            drain()
    parser.end_of_read(settled)
    drain()
    if options.dry_run:
        tally.calls_pending += sum(len(w) for w in parser.pending.values())
        return None
    context = {"wal": wal, "readTo": read_to}
    return FileCheckpoint(reader.agent, ident[0], ident[1], ident[2], ident[3], reader.version,
                          context=context, pending=parser.pending_json(),
                          taken=(cp.taken if cp else []) + new_taken)


# --- where `yarp import` finds it -------------------------------------------------------------


def default_roots(environ=os.environ) -> list[str]:
    """opencode's session store, `$XDG_DATA_HOME/opencode/opencode.db` (else `~/.local/share/...`)."""
    home = environ.get("HOME") or os.path.expanduser("~")
    data = environ.get("XDG_DATA_HOME") or ""
    if not os.path.isabs(data):
        data = os.path.join(home, ".local", "share")
    return [os.path.join(data, "opencode", STORE_NAME)]


def recognizes(first_line: bytes) -> int:
    """2 for a SQLite file (the session store), else 0."""
    return 2 if first_line.startswith(b"SQLite format 3\x00") else 0
