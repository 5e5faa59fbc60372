"""Which calls a listing shows: the filters, as SQL over `tool_calls`, and which index walks them.

A `CallFilter` holds what a person asked for (agents, tools, a working
directory, a status, a time range, sessions); `select` resolves it against the
archive into a `Selection`: SQL conditions on the columns of `tool_calls`
alone (agents and sessions become subqueries over the small `sessions`
table, tool names the archive's own spellings) and the index the listing
should walk, newest call first:

- `time`: the `started_at` index, from the newest call backwards, stopping at
  the limit. No sort, so the first screen costs only the rows it shows, as
  long as the filters match often; a filter that matches rarely reads further
  back, at worst the whole range.
- `tool` or `session`: a filter that matches at most `DRIVER_ROWS` calls walks
  its own index (`tool_calls_tool_name_idx`, or the `(session_id,
  source_call_id)` unique index) and sorts what it found, which is cheaper than
  reading back through every call to find a few.

Which one is decided by counting, through each index alone, at most
`DRIVER_ROWS + 1` matching entries: cheap whatever the archive's size. The
schema's indexes are enough; nothing is added to the archive.

Unless the filter names `PROBE_AGENT`, the sessions of `yarp doctor`'s probe
are left out.

This module never writes to the archive.
"""

from __future__ import annotations

import os
import sqlite3

from yarp._record import Record
from yarp.archive.sqlite import map_error
from yarp.archive.tools import tool_names
from yarp.errors import UsageError

#: The agent of `yarp doctor`'s capture probe, and the session all its probes share: the probe is a
#: real call (it proves the round trip through this archive's broker) but none of the user's, so
#: listings and the savings report leave these sessions out (`PROBE_SESSIONS_SQL`).
PROBE_AGENT = "yarp-doctor"
PROBE_SESSION = "doctor"
#: The ids of the probe's sessions, as a subquery over `sessions`.
PROBE_SESSIONS_SQL = f"SELECT id FROM sessions WHERE agent = '{PROBE_AGENT}'"
#: A filter matching at most this many calls walks its own index and sorts them.
DRIVER_ROWS = 20_000
#: `--status` values and their condition.
STATUSES = {
    "ok": "{a}status = 'finished' AND {a}is_error = 0 AND {a}executed IS NOT 0",
    "error": "{a}status = 'finished' AND {a}is_error = 1 AND {a}executed IS NOT 0",
    "incomplete": "{a}status = 'started'",
    "not-run": "{a}status = 'finished' AND {a}executed = 0",
}
#: Every distinct tool name, through the tool-name index: one index probe per name.
_TOOL_NAMES = ("WITH RECURSIVE t(name) AS (SELECT min(tool_name) FROM tool_calls UNION ALL"
               " SELECT (SELECT min(tool_name) FROM tool_calls WHERE tool_name > t.name) FROM t"
               " WHERE t.name IS NOT NULL) SELECT name FROM t WHERE name IS NOT NULL")


class CallFilter(Record):
    """What a listing selects: every field narrows it; an empty filter selects every call.

    `agents`, `tools` and `sessions` are tuples of names, any of which may
    match (`tools` by family or name, see `yarp.archive.tools`; `sessions` by
    the agent's session id or its beginning); `cwd` an absolute directory
    (the calls in it or below it); `status` a key of `STATUSES`; `since_ms`
    and `until_ms` the range of start times, [since, until).
    """

    __slots__ = ("agents", "tools", "sessions", "cwd", "status", "since_ms", "until_ms")
    _defaults = {"agents": (), "tools": (), "sessions": (), "cwd": None, "status": None, "since_ms": None,
                 "until_ms": None}


class Selection(Record):
    """A resolved filter: conditions by kind, and the index the listing walks (`time`, `tool` or `session`).

    `conditions` is a tuple of (kind, SQL template, parameters); a template
    writes `{a}` before each column (the table's alias) and `{p}` before a
    column an index could serve, where a `+` keeps SQLite from walking that
    index unless its kind is the driver's. `empty`: nothing can match.
    """

    __slots__ = ("conditions", "driver", "empty")
    _defaults = {"driver": "time", "empty": False}

    def where(self, alias: str = "") -> tuple[list[str], list]:
        """(SQL conditions, parameters) for `tool_calls` under `alias` (such as `c.`)."""
        clauses, params = [], []
        for kind, template, values in self.conditions:
            clauses.append(template.format(a=alias, p="" if kind == self.driver else "+"))
            params.extend(values)
        if self.empty:
            clauses.append("0")
        return clauses, params

    def order_by(self, alias: str = "") -> str:
        """The listing's order, newest first; by the walked index when it is the time index."""
        plus = "" if self.driver == "time" else "+"
        return f"ORDER BY {plus}{alias}started_at_ms DESC, {alias}id DESC"


def select(conn: sqlite3.Connection, flt: CallFilter, *, limit: int | None = None) -> Selection:
    """Resolve `flt` against the archive; `limit` (the rows wanted, None for all) lets a rare
    filter walk its own index (see the module docstring)."""
    try:
        return _select(conn, flt, limit)
    except sqlite3.Error as exc:
        raise map_error(exc, "reading archive") from None


def _select(conn: sqlite3.Connection, flt: CallFilter, limit: int | None) -> Selection:
    conditions: list[tuple[str, str, tuple]] = []
    empty = False
    if flt.tools:
        stored = [row[0] for row in conn.execute(_TOOL_NAMES)]
        names = sorted({name for tool in flt.tools for name in tool_names(tool, stored)})
        empty = not names
        if names:
            conditions.append(("tool", f"{{p}}{{a}}tool_name IN ({', '.join('?' * len(names))})", tuple(names)))
    sessions = _session_subquery(flt)
    if sessions is not None:
        conditions.append(("session", f"{{p}}{{a}}session_id IN ({sessions[0]})", sessions[1]))
    if not any(agent.lower() == PROBE_AGENT for agent in flt.agents):
        conditions.append(("probe", f"+{{a}}session_id NOT IN ({PROBE_SESSIONS_SQL})", ()))
    if flt.cwd is not None:
        conditions.append(_cwd_condition(flt.cwd))
    if flt.status is not None:
        conditions.append(("status", STATUSES[flt.status], ()))
    if flt.since_ms is not None:
        conditions.append(("time", "{p}{a}started_at_ms >= ?", (flt.since_ms,)))
    if flt.until_ms is not None:
        conditions.append(("time", "{p}{a}started_at_ms < ?", (flt.until_ms,)))
    selection = Selection(tuple(conditions), "time", empty)
    if limit is None or empty:
        return selection
    return selection.replace(driver=_driver(conn, selection))


def _session_subquery(flt: CallFilter) -> tuple[str, tuple] | None:
    """The sessions `--agent` and `--session` name, as a subquery over `sessions` (None: no such filter)."""
    parts, params = [], []
    if flt.agents:
        parts.append(f"agent COLLATE NOCASE IN ({', '.join('?' * len(flt.agents))})")
        params.extend(flt.agents)
    if flt.sessions:
        # A session id, or the beginning of one when no session has exactly that id.
        one = ("(source_session_id = ? OR (substr(source_session_id, 1, length(?)) = ? AND NOT EXISTS"
               " (SELECT 1 FROM sessions x WHERE x.source_session_id = ?)))")
        parts.append("(" + " OR ".join(one for _ in flt.sessions) + ")")
        for session in flt.sessions:
            params.extend((session,) * 4)
    if not parts:
        return None
    return f"SELECT id FROM sessions WHERE {' AND '.join(parts)}", tuple(params)


def _cwd_condition(cwd: str) -> tuple[str, str, tuple]:
    """Calls whose working directory is `cwd` or below it."""
    if not os.path.isabs(cwd):
        raise UsageError("--cwd needs an absolute directory")
    path = os.path.normpath(cwd)
    prefix = path if path.endswith("/") else path + "/"
    return ("cwd", "({a}working_directory = ? OR substr({a}working_directory, 1, ?) = ?)",
            (path, len(prefix), prefix))


def _driver(conn: sqlite3.Connection, selection: Selection) -> str:
    """`tool` or `session` when that filter alone matches at most `DRIVER_ROWS` calls (the fewer
    wins), else `time`; `time` too when the time range alone holds that few."""
    best, fewest = "time", DRIVER_ROWS + 1
    kinds = [kind for kind, _, _ in selection.conditions if kind in ("tool", "session")]
    if not kinds:
        return "time"
    for kind in ("time", *kinds):
        parts = [(template, values) for k, template, values in selection.conditions if k == kind]
        if not parts:
            continue
        where = " AND ".join(template.format(a="", p="") for template, _ in parts)
        params = tuple(value for _, values in parts for value in values)
        found = conn.execute(f"SELECT count(*) FROM (SELECT 1 FROM tool_calls WHERE {where} LIMIT ?)",
                             (*params, DRIVER_ROWS + 1)).fetchone()[0]
        if found < fewest:
            best, fewest = kind, found
    return best
