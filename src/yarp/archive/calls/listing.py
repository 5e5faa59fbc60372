"""The call list: one row per call, newest first, with what a person scans it for.

`iter_calls` walks the `Selection`'s index (see `selection`) in one statement
and, a page of calls at a time, reads their snapshot rows in a second: each
call's row then says who called which tool, on what (`gist`: the command, the
path, the pattern, from the small `input/before` payload), where, how it ended
(the exit code of a failed call, where its result records one), how long it
took, how much output it made (`output_bytes`: its exact streams, else its
result text, else its result) and whether YARP's view cut it (`cut`: a stream
or the result differs after YARP from before). Sizes come from the payload
rows; no output payload is read, only inputs up to `MAX_INPUT_BYTES` and
the results of failed calls up to `MAX_RESULT_BYTES`.

This module never writes to the archive and never puts archived bytes into an error message.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterable, Iterator

from yarp._record import Record
from yarp.archive.calls.selection import Selection
from yarp.archive.sqlite import map_error
from yarp.archive.tools import input_gist, is_shell

#: An input larger than this is not read for its gist.
MAX_INPUT_BYTES = 1 << 20
#: A failed call's result larger than this is not read for its exit code.
MAX_RESULT_BYTES = 64 << 10
#: Calls whose snapshots are read per statement.
PAGE = 200
_CALL_COLUMNS = ("c.id, c.archive_ref, se.agent, se.account, se.source_session_id, c.tool_name,"
                 " c.working_directory, c.started_at_ms, c.finished_at_ms, c.status, c.is_error, c.executed")
#: The page's snapshots; the body only of its input and of a failed call's small result.
_SNAPSHOTS = ("SELECT s.tool_call_id, s.subject, s.stage, s.payload_sha256, p.uncompressed_byte_length,"
              " CASE WHEN (s.subject = 'input' AND s.stage = 'before' AND p.uncompressed_byte_length <= ?)"
              " OR (s.subject = 'result' AND s.stage = 'before' AND c.is_error = 1"
              " AND p.uncompressed_byte_length <= ?) THEN p.compression END,"
              " CASE WHEN (s.subject = 'input' AND s.stage = 'before' AND p.uncompressed_byte_length <= ?)"
              " OR (s.subject = 'result' AND s.stage = 'before' AND c.is_error = 1"
              " AND p.uncompressed_byte_length <= ?) THEN p.body END"
              " FROM tool_calls c JOIN snapshots s ON s.tool_call_id = c.id"
              " JOIN payloads p ON p.sha256 = s.payload_sha256 WHERE c.id IN ({ids})")
#: How a shell's result text says the exit code (as several agents' shells write it).
_EXIT_TEXT = re.compile(r"(?:exited with code|exit code:?|exit status:?)\s*(-?\d{1,4})\b", re.IGNORECASE)


class CallRow(Record):
    """One call as the list shows it (see the module docstring); None where the archive does not say."""

    __slots__ = ("id", "ref", "agent", "account", "session", "tool", "cwd", "started_ms", "finished_ms", "status",
                 "is_error", "executed", "exit_code", "gist", "output_bytes", "view_bytes", "cut")

    @property
    def state(self) -> str:
        """`ok`, `error`, `incomplete` (still started) or `not-run` (a preflight failure)."""
        if self.status != "finished":
            return "incomplete"
        if self.executed == 0:
            return "not-run"
        return "error" if self.is_error else "ok"

    @property
    def duration_ms(self) -> int | None:
        """Finish less start, for a finished call."""
        return None if self.finished_ms is None else max(self.finished_ms - self.started_ms, 0)

    def as_json(self) -> dict:
        """The row for `--json`: raw values (Unix milliseconds, bytes), every field present."""
        return {"ref": self.ref, "agent": self.agent, "account": self.account, "session": self.session,
                "tool": self.tool, "gist": self.gist, "cwd": self.cwd, "started_at_ms": self.started_ms,
                "finished_at_ms": self.finished_ms, "duration_ms": self.duration_ms, "status": self.state,
                "exit_code": self.exit_code, "output_bytes": self.output_bytes, "view_bytes": self.view_bytes,
                "cut": self.cut}


def iter_calls(conn: sqlite3.Connection, selection: Selection, *, limit: int | None) -> Iterator[CallRow]:
    """The selected calls, newest first, at most `limit` (None: all), a page at a time."""
    clauses, params = selection.where("c.")
    where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
    sql = (f"SELECT {_CALL_COLUMNS} FROM tool_calls c CROSS JOIN sessions se ON se.id = c.session_id{where}"
           f" {selection.order_by('c.')}" + (" LIMIT ?" if limit is not None else ""))
    try:
        cursor = conn.execute(sql, (*params, limit) if limit is not None else tuple(params))
        while page := cursor.fetchmany(min(PAGE, limit or PAGE)):
            yield from _rows(conn, page)
    except sqlite3.Error as exc:
        raise map_error(exc, "reading archive") from None


def calls_by_id(conn: sqlite3.Connection, ids: list[int]) -> list[CallRow]:
    """The rows of the calls `ids`, in that order (those still in the archive)."""
    found: dict[int, CallRow] = {}
    try:
        for start in range(0, len(ids), PAGE):
            chunk = ids[start:start + PAGE]
            rows = conn.execute(f"SELECT {_CALL_COLUMNS} FROM tool_calls c JOIN sessions se ON se.id = c.session_id"
                                f" WHERE c.id IN ({', '.join('?' * len(chunk))})", chunk).fetchall()
            found.update((row.id, row) for row in _rows(conn, rows))
    except sqlite3.Error as exc:
        raise map_error(exc, "reading archive") from None
    return [found[i] for i in ids if i in found]


def _rows(conn: sqlite3.Connection, page: list[tuple]) -> Iterable[CallRow]:
    """The page's calls with what their snapshots say."""
    snapshots: dict[int, dict] = {row[0]: {} for row in page}
    sql = _SNAPSHOTS.format(ids=", ".join("?" * len(page)))
    bounds = (MAX_INPUT_BYTES, MAX_RESULT_BYTES) * 2
    for call_id, subject, stage, digest, length, compression, body in conn.execute(
            sql, (*bounds, *snapshots)):
        snapshots[call_id][subject, stage] = (digest, length, compression, body)
    for row in page:
        yield _row(row, snapshots[row[0]])


def _row(row: tuple, snaps: dict) -> CallRow:
    call_id, ref, agent, account, session, tool, cwd, started, finished, status, is_error, executed = row
    streams = [snaps.get((subject, "before")) for subject in ("stdout", "stderr")]
    if any(streams):
        output = sum(s[1] for s in streams if s)
        after = [snaps.get((subject, "after")) for subject in ("stdout", "stderr")]
        view = sum(s[1] for s in after if s) if any(after) else None
        cut = any(b is not None and a is not None and a[0] != b[0] for b, a in zip(streams, after))
    else:
        source = snaps.get(("result_text", "before")) or snaps.get(("result", "before"))
        output = source[1] if source else None
        view = snaps[("result", "after")][1] if ("result", "after") in snaps else None
        cut = False
    before, after_result = snaps.get(("result", "before")), snaps.get(("result", "after"))
    if before is not None and after_result is not None and before[0] != after_result[0]:
        cut = True
    gist = _gist(tool, snaps.get(("input", "before")))
    exit_code = _exit_code(tool, before) if is_error else None
    return CallRow(call_id, ref, agent, account, session, tool, cwd, started, finished, status, is_error,
                   executed, exit_code, gist, output, view, cut)


def _value(snapshot: tuple | None) -> object:
    """The JSON value of a snapshot read with its body; None when it was not read or is not JSON."""
    if snapshot is None or snapshot[3] is None:
        return None
    _, length, compression, body = snapshot
    try:
        if compression != "none":
            # Inputs are small and mostly stored as they are: the codec (and zstandard) loads only when needed.
            from yarp.archive.codec import decode_body

            body = decode_body(compression, body, length)
        # The standard parser: canonical JSON needs nothing more, and orjson costs a listing ~10 ms to load.
        return json.loads(body)
    except Exception:  # a damaged payload is verify's to report; the list shows the call without it
        return None


def _gist(tool: str, snapshot: tuple | None) -> str | None:
    return input_gist(tool, _value(snapshot))


def _exit_code(tool: str, snapshot: tuple | None) -> int | None:
    """The exit code a failed call's result records: a member (`exitCode`, `exit_code`, `exit`, also
    under `details` or `metadata`), or a shell result's text saying it."""
    value = _value(snapshot)
    if not isinstance(value, dict):
        return None
    for holder in (value, value.get("details"), value.get("metadata")):
        if isinstance(holder, dict):
            for key in ("exitCode", "exit_code", "exit"):
                code = holder.get(key)
                if type(code) is int:
                    return code
    if not is_shell(tool):
        return None
    for text in _texts(value):
        for part in (text[:300], text[-300:]):
            found = _EXIT_TEXT.search(part)
            if found is not None:
                return int(found.group(1))
    return None


def _texts(value: dict) -> Iterator[str]:
    """The text a result holds: its `content` blocks' text, its `output`, `stdout` and `llmContent`."""
    content = value.get("content")
    if isinstance(content, str):
        yield content
    elif isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                yield block["text"]
    for key in ("output", "stdout", "llmContent", "returnDisplay"):
        if isinstance(value.get(key), str):
            yield value[key]
