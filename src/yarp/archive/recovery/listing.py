"""List archived calls, newest first, and find the calls whose output matches a pattern.

`yarp search` without a reference. Without a pattern it reads call rows only.
With one (`--text`) it searches the whole archive, or the `--since`/`--until`
range, newest call first, in one read statement: each call's recovery sources
(`stdout`, `stderr`, `result_text`, `source_output`, else `result`) come with
their payload bodies, each body is decompressed and matched line by line as
`yarp search REF PATTERN` matches it, and the rest of a call is skipped at its
first matching line. It stops at `limit` matching calls or when interrupted, and
says how far it got (`Listing`), so the command can name what it did not search.

This module must never write to the archive and never put archived bytes into
an error message.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Iterable, Iterator

from yarp._record import Record
from yarp.archive.calls.selection import CallFilter, Selection, select
from yarp.archive.recovery.lookup import CALL_COLUMNS, RECOVERY_ORDER, CallInfo, query
from yarp.archive.recovery.reading import iter_payload
from yarp.archive.recovery.search import as_text, block_safe, iter_match_blocks
from yarp.archive.sqlite import map_error
from yarp.limits import DEFAULT_SEARCH_MATCHES, MAX_INLINE_SCAN_PAYLOAD_BYTES, READER_MMAP_BYTES

_SUBJECTS = "(" + ", ".join(f"'{subject}'" for _, subject in RECOVERY_ORDER) + ")"

#: Every `before` snapshot that is a recovery source, with its payload, newest call first.
#: CROSS JOIN keeps tool_calls the outer loop, walked through its started_at index, so
#: rows stream in the ORDER BY without a sort (a sort would read every body before the
#: first row). The snapshots of a call are one range of its primary key, filtered here;
#: `result` is a source only for a call that has none of the others. A body larger than
#: the inline bound comes back NULL and is streamed from its row instead.
_SCAN = (
    "SELECT c.id, c.started_at_ms, p.compression, p.uncompressed_byte_length, p.rowid,"
    " CASE WHEN length(p.body) <= ? AND p.uncompressed_byte_length <= ? THEN p.body END"
    " FROM tool_calls c CROSS JOIN snapshots s ON s.tool_call_id = c.id AND s.stage = 'before'"
    " CROSS JOIN payloads p ON p.sha256 = s.payload_sha256"
    " WHERE {where} (s.subject IN {subjects} OR (s.subject = 'result' AND NOT EXISTS ("
    "SELECT 1 FROM snapshots x WHERE x.tool_call_id = c.id AND x.stage = 'before' AND x.subject IN {subjects})))"
    " ORDER BY c.started_at_ms DESC, c.id DESC"
)


class Listing(Record):
    """Calls listed by `list_calls`, and how far a `--text` search got.

    `more`: the list stopped before the end of the range (at `limit`, or
    interrupted). `searched`: calls of the range searched, newest first;
    `not_searched`: calls of the range left (0 when it ran to the end);
    `oldest_ms`: start time of the oldest call searched (None if none);
    `stop`: None, `"limit"` or `"interrupted"`. The last four are None without a pattern.
    """

    __slots__ = ("calls", "more", "searched", "not_searched", "oldest_ms", "stop")
    _defaults = {"searched": None, "not_searched": None, "oldest_ms": None, "stop": None}


def _selection(conn: sqlite3.Connection, tool: str | None, since_ms: int | None, until_ms: int | None,
               where: CallFilter | None, limit: int | None = None) -> Selection:
    """The calls a listing covers: `where`, or the range `tool`, `since_ms`, `until_ms` name."""
    if where is None:
        where = CallFilter(tools=(tool,) if tool is not None else (), since_ms=since_ms, until_ms=until_ms)
    return select(conn, where, limit=limit)


def count_calls(conn: sqlite3.Connection, *, tool: str | None = None, since_ms: int | None = None,
                until_ms: int | None = None, before: tuple[int, int] | None = None,
                where: CallFilter | None = None) -> int:
    """Calls in the range (and, with `before` = (started_at_ms, id), only those listed after that call)."""
    clauses, params = _selection(conn, tool, since_ms, until_ms, where).where()
    if before is not None:
        clauses.append("(started_at_ms < ? OR (started_at_ms = ? AND id < ?))")
        params.extend((before[0], before[0], before[1]))
    where_sql = f" WHERE {' AND '.join(clauses)}" if clauses else ""
    return query(conn, f"SELECT count(*) FROM tool_calls{where_sql}", tuple(params))[0][0]


def list_calls(conn: sqlite3.Connection, *, tool: str | None = None, since_ms: int | None = None,
               until_ms: int | None = None, text: re.Pattern | None = None,
               limit: int = DEFAULT_SEARCH_MATCHES,
               progress: Callable[[int, int, int], None] | None = None,
               where: CallFilter | None = None) -> Listing:
    """Calls in the range, newest first, at most `limit`; with `text`, only those whose recovery
    sources hold a line `text` matches (see the module docstring).

    The range is `where` (a `CallFilter`), or the one `tool`, `since_ms` and
    `until_ms` name. `progress(searched, found, started_at_ms)` is called after each call searched.
    """
    if text is None:
        selection = _selection(conn, tool, since_ms, until_ms, where, limit + 1)
        clauses, params = selection.where()
        where_sql = f" WHERE {' AND '.join(clauses)}" if clauses else ""
        rows = query(conn, f"SELECT {CALL_COLUMNS} FROM tool_calls{where_sql} {selection.order_by()} LIMIT ?",
                     (*params, limit + 1))
        return Listing([CallInfo(*r) for r in rows[:limit]], len(rows) > limit)
    span = {"tool": tool, "since_ms": since_ms, "until_ms": until_ms, "where": where}
    # One read transaction: the counts see the snapshot the search read, whatever the broker commits meanwhile.
    query(conn, "BEGIN")
    try:
        found_ids, last, stop = _search(conn, span, text, limit, progress)
        calls = _calls(conn, found_ids)
        left = count_calls(conn, **span, before=last) if stop is not None else 0
        total = count_calls(conn, **span)
    finally:
        query(conn, "COMMIT")
    return Listing(calls, bool(left), total - left, left, None if last is None else last[0], stop if left else None)


def _search(conn: sqlite3.Connection, span: dict, text: re.Pattern, limit: int,
            progress: Callable[[int, int, int], None] | None) -> tuple[list[int], tuple[int, int] | None, str | None]:
    """(ids of the calls found, (started_at_ms, id) of the last call searched, why it stopped early)."""
    found_ids: list[int] = []
    searched, last = 0, None
    matching = _matching(conn, span, text)
    try:
        for call_id, started, hit in matching:
            searched += 1
            last = (started, call_id)
            if hit:
                found_ids.append(call_id)
            if progress is not None:
                progress(searched, len(found_ids), started)
            if len(found_ids) >= limit:
                return found_ids, last, "limit"
    except KeyboardInterrupt:
        return found_ids, last, "interrupted"
    finally:
        matching.close()  # ends the statement before the counts
    return found_ids, last, None


def _calls(conn: sqlite3.Connection, ids: list[int]) -> list[CallInfo]:
    if not ids:
        return []
    rows = query(conn, f"SELECT {CALL_COLUMNS} FROM tool_calls WHERE id IN ({', '.join('?' * len(ids))})",
                 tuple(ids))
    by_id = {row[0]: CallInfo(*row) for row in rows}
    return [by_id[i] for i in ids if i in by_id]


def _matching(conn: sqlite3.Connection, span: dict, matcher: re.Pattern) -> Iterator[tuple[int, int, bool]]:
    """(call id, started_at_ms, matched) for each call with a recovery source, newest first."""
    from yarp.archive.codec import decode_body  # only a text search decodes bodies

    # The text search walks the start-time index whatever the filter: it reads in that order.
    selection = _selection(conn, span["tool"], span["since_ms"], span["until_ms"], span["where"])
    clauses, params = selection.where("c.")
    where = "".join(f"{clause} AND " for clause in clauses)
    sql = _SCAN.format(where=where, subjects=_SUBJECTS)
    hits = _line_hits(matcher)
    current, started, done = None, 0, False
    try:
        # Pages read through a read-only mapping instead of one pread each (as verify does).
        conn.execute(f"PRAGMA mmap_size = {READER_MMAP_BYTES}")
        rows = conn.execute(sql, (MAX_INLINE_SCAN_PAYLOAD_BYTES, MAX_INLINE_SCAN_PAYLOAD_BYTES, *params))
        for call_id, call_started, compression, length, rowid, body in rows:
            if call_id != current:
                if current is not None:
                    yield current, started, done
                current, started, done = call_id, call_started, False
            if done:
                continue  # the call already matched: the rest of its sources are not read
            if body is None:
                chunks: Iterable[bytes] = iter_payload(conn, rowid, compression)
            else:
                chunks = (decode_body(compression, body, length),)
            done = hits(iter_match_blocks(chunks))
    except sqlite3.Error as exc:
        raise map_error(exc, "reading archive") from None
    if current is not None:
        yield current, started, done


def _line_hits(matcher: re.Pattern) -> Callable[[Iterable[bytes]], bool]:
    """Whether any line of match-form blocks matches `matcher`, as `yarp search REF` decides it."""
    line_search = matcher.search
    block_search = re.compile(matcher.pattern, matcher.flags | re.MULTILINE).search
    whole = block_safe(matcher)

    def hits(blocks: Iterable[bytes]) -> bool:
        for block in map(as_text, blocks):
            if whole:
                pos, size = 0, len(block)
                while pos < size and (hit := block_search(block, pos)) is not None and hit.start() < size:
                    end = block.find("\n", hit.start())
                    # A hit that ran past its line proves nothing; judge the line on its own.
                    if hit.end() <= end or line_search(block[block.rfind("\n", 0, hit.start()) + 1:end]):
                        return True
                    pos = end + 1
            else:
                lines = block.split("\n")
                lines.pop()
                if any(line_search(line) for line in lines):
                    return True
        return False

    return hits
