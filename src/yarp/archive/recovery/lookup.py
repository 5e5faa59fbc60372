"""Find archived calls and their recovery sources, read-only.

A call is found by its `archive_ref` or by its source identity (agent,
account, session, call id). Its recovery sources follow the specification's
order: `stdout/before` and `stderr/before` first, then `result_text/before`,
then `source_output/before`. Calls with none of these fall back to
`result/before` (the exact canonical JSON the tool returned), so every executed
call has something to restore.

This module must never write to the archive and never put archived bytes into
an error message.
"""

from __future__ import annotations

import re
import sqlite3

from yarp._record import Record
from yarp.archive.sqlite import map_error
from yarp.errors import InvalidReference, NotFound, UsageError

REF_PATTERN = re.compile(r"yr_[0-9a-f]{32}\Z")

#: (source name, subject) in recovery order; every recovery source is a `before` snapshot.
RECOVERY_ORDER = (
    ("stdout", "stdout"),
    ("stderr", "stderr"),
    ("result_text", "result_text"),
    ("source_output", "source_output"),
)
FALLBACK_SOURCE = ("result", "result")
SOURCE_NAMES = tuple(name for name, _ in RECOVERY_ORDER) + (FALLBACK_SOURCE[0],)

_COMPLETE_LABEL = {"complete": "true", "incomplete": "false", "unknown": "unknown"}


def check_ref(ref: str) -> str:
    """Return `ref` if it is `yr_` plus 32 lowercase hex digits, else raise `InvalidReference`."""
    if not isinstance(ref, str) or not REF_PATTERN.match(ref):
        raise InvalidReference("archive reference must be yr_ followed by 32 lowercase hex digits")
    return ref



class CallInfo(Record):
    """The metadata of one archived call (never its payloads)."""

    __slots__ = ("id", "archive_ref", "tool_name", "started_at_ms", "finished_at_ms", "status", "requires_streams",
                 "is_error", "executed")


class Source(Record):
    """One recovery source: a `before` snapshot and where its payload row lives."""

    __slots__ = ("name", "media_type", "completeness", "sha256", "compression", "length", "payload_rowid")

    @property
    def complete_label(self) -> str:
        """How search and read label completeness: `true`, `false` or `unknown`."""
        return _COMPLETE_LABEL.get(self.completeness, "unknown")


CALL_COLUMNS = ("id, archive_ref, tool_name, started_at_ms, finished_at_ms, status, requires_streams,"
                 " is_error, executed")


def query(conn: sqlite3.Connection, sql: str, params: tuple = ()) -> list:
    """Run a read query; SQLite errors become the archive's bounded errors."""
    try:
        return conn.execute(sql, params).fetchall()
    except sqlite3.Error as exc:
        raise map_error(exc, "reading archive") from None


def find_call(conn: sqlite3.Connection, ref: str) -> CallInfo:
    """The call with this archive_ref; `InvalidReference` or `NotFound` otherwise."""
    check_ref(ref)
    rows = query(conn, f"SELECT {CALL_COLUMNS} FROM tool_calls WHERE archive_ref = ?", (ref,))
    if not rows:
        raise NotFound("no archived call has this reference")
    return CallInfo(*rows[0])


_SESSION_CALLS = (f"SELECT {', '.join('c.' + c.strip() for c in CALL_COLUMNS.split(','))}, c.source_call_id"
                  " FROM tool_calls c JOIN sessions s ON s.id = c.session_id"
                  " WHERE s.agent = ? AND s.account = ? AND s.source_session_id = ?")


def call_by_source(conn: sqlite3.Connection, agent: str, account: str, session: str, call: str) -> CallInfo | None:
    """The call recorded for a source identity, or None when it was never begun.

    The one lookup by source identity: recovery, the broker's hook and run
    services and `yarp import` all ask it.
    """
    rows = query(conn, _SESSION_CALLS + " AND c.source_call_id = ?", (agent, account, session, call))
    return CallInfo(*rows[0][:-1]) if rows else None


def find_call_by_source(conn: sqlite3.Connection, agent: str, account: str, session: str, call: str) -> CallInfo:
    """The call recorded for a source identity; `NotFound` when it was never begun."""
    found = call_by_source(conn, agent, account, session, call)
    if found is None:
        raise NotFound("no archived call matches these source identities")
    return found


def unfinished_calls(conn: sqlite3.Connection, agent: str, account: str, session: str,
                     also: str | None = None) -> dict[str, CallInfo]:
    """A session's calls still `started` (and the call `also`, whatever its state), by source call id."""
    rows = query(conn, _SESSION_CALLS + " AND (c.status = 'started' OR c.source_call_id = ?)",
                 (agent, account, session, also))
    return {row[-1]: CallInfo(*row[:-1]) for row in rows}


def calls_with_prefix(conn: sqlite3.Connection, agent: str, account: str, session: str, prefix: str) -> int:
    """How many calls of a session have a source call id starting with `prefix` (through the
    (session, call id) unique index: a range, not a scan)."""
    rows = query(conn, "SELECT count(*) FROM tool_calls c JOIN sessions s ON s.id = c.session_id"
                       " WHERE s.agent = ? AND s.account = ? AND s.source_session_id = ?"
                       " AND c.source_call_id >= ? AND c.source_call_id < ?",
                 (agent, account, session, prefix, prefix + "\U0010ffff"))
    return rows[0][0]


def recovery_sources(conn: sqlite3.Connection, call: CallInfo) -> list[Source]:
    """The call's recovery sources in the specification's order (maybe empty)."""
    rows = query(
        conn,
        "SELECT s.subject, s.media_type, s.source_completeness, p.sha256, p.compression,"
        " p.uncompressed_byte_length, p.rowid FROM snapshots s JOIN payloads p ON p.sha256 = s.payload_sha256"
        " WHERE s.tool_call_id = ? AND s.stage = 'before'",
        (call.id,),
    )
    by_subject = {r[0]: r for r in rows}
    sources = []
    for name, subject in RECOVERY_ORDER + (FALLBACK_SOURCE,):
        if name == FALLBACK_SOURCE[0] and sources:
            break
        row = by_subject.get(subject)
        if row is None:
            continue
        completeness = row[2] if subject == "result_text" else "complete"
        sources.append(Source(name, row[1], completeness or "unknown", bytes(row[3]), row[4], row[5], row[6]))
    return sources


def stream_sources(conn: sqlite3.Connection, call: CallInfo) -> tuple[Source, Source]:
    """The exact stdout/before and stderr/before sources of a call."""
    sources = {s.name: s for s in recovery_sources(conn, call)}
    if "stdout" not in sources or "stderr" not in sources:
        raise NotFound("call has no archived stdout and stderr")
    return sources["stdout"], sources["stderr"]


def choose_source(sources: list[Source], name: str | None) -> Source:
    """The named source, or the first recovery source when no name is given."""
    if not sources:
        raise NotFound("call has no recovery source")
    if name is None:
        return sources[0]
    for source in sources:
        if source.name == name:
            return source
    if name not in SOURCE_NAMES:
        raise UsageError(f"unknown source; choose one of: {', '.join(s.name for s in sources)}")
    raise NotFound(f"source {name} is not archived for this call; choose one of: "
                   f"{', '.join(s.name for s in sources)}")

