"""The projection's rows summed per UTC day and group, so a report reads sums instead of every call.

A report over a year of calls would otherwise walk a million rows to sum
them (about 4 s), although almost all of them were summed the same way by the
report before. A finished call's row never changes once annotated, so its
numbers are added once to two tables of the projection:

- `sums_by_day`: per day, tool, class, whether the view was cut, program,
  command and rule (empty text where there is none), the calls and their
  bytes produced, withheld, gross withheld and returned;
- `sums_total`: the same without the day, which a report over every call
  (the usual one) reads: a few hundred rows instead of a hundred thousand;
- `sums_by_session`: per day, session, class and cut, the same sums.

A report sums the days its window holds whole from these tables, and the
calls of a day it holds only in part (at most two days, at its edges) from
their rows, as before. What followers took back (`temp.follow_sums`, a few
rows per recalled call, recomputed by every report since a new recovery
changes an old call's numbers) and the calls still open are added per call.
After a prune the sums are made again from the rows whose calls remain.
Calls of `yarp doctor`'s probe sessions are never summed.
"""

from __future__ import annotations

import sqlite3

from yarp.archive.calls.selection import PROBE_AGENT
from yarp.archive.savings.projection import ARCHIVE
from yarp.archive.savings.window import NO_WINDOW

DAY_MS = 86_400_000
#: `yarp doctor`'s probe sessions: their calls are none of the user's, so no report counts them.
PROBE_SESSIONS = f"SELECT id FROM {ARCHIVE}.sessions WHERE agent = '{PROBE_AGENT}'"

#: The rows a report adds (`{rows}`: those of the calls since the marks, or every row whose call remains),
#: grouped once by every key the sums use; the three sums are rolled up from it.
_NEW = f"""
CREATE TEMP TABLE new_sums AS
SELECT k.started_at_ms / {DAY_MS} AS day, c.session_id AS session_id, c.tool_name AS tool_name, k.kind AS kind,
  k.withheld > 0 AS capped, ifnull(k.program, '') AS program, ifnull(k.command, '') AS command,
  ifnull(k.rule, '') AS rule, count(*) AS calls, sum(k.produced) AS produced, sum(k.withheld) AS withheld,
  sum(k.gross) AS gross, sum(k.returned) AS returned
FROM {{rows}} k JOIN {ARCHIVE}.tool_calls c ON c.id = k.id AND c.archive_ref = k.archive_ref
WHERE +c.session_id NOT IN ({PROBE_SESSIONS})
GROUP BY 1, 2, 3, 4, 5, 6, 7, 8
"""
#: The rows of the calls since the marks: after the last call (?1) and the calls then open (?2).
_SINCE_MARKS = ("(SELECT * FROM main.call_savings WHERE id > ?1 UNION ALL"
                " SELECT * FROM main.call_savings WHERE id IN (SELECT value FROM json_each(?2)))")
_SUMS = "sum(calls), sum(produced), sum(withheld), sum(gross), sum(returned)"
_ADDED = ("calls = calls + excluded.calls, produced = produced + excluded.produced, withheld = withheld"
          " + excluded.withheld, gross = gross + excluded.gross, returned = returned + excluded.returned")
_ROLL_UP = (
    f"INSERT INTO main.sums_by_day SELECT day, tool_name, kind, capped, program, command, rule, {_SUMS}"
    " FROM temp.new_sums WHERE 1 GROUP BY 1, 2, 3, 4, 5, 6, 7"
    f" ON CONFLICT (day, tool_name, kind, capped, program, command, rule) DO UPDATE SET {_ADDED}",
    f"INSERT INTO main.sums_total SELECT tool_name, kind, capped, program, command, rule, {_SUMS}"
    " FROM temp.new_sums WHERE 1 GROUP BY 1, 2, 3, 4, 5, 6"
    f" ON CONFLICT (tool_name, kind, capped, program, command, rule) DO UPDATE SET {_ADDED}",
    f"INSERT INTO main.sums_by_session SELECT day, session_id, kind, capped, {_SUMS}"
    " FROM temp.new_sums WHERE 1 GROUP BY 1, 2, 3, 4"
    f" ON CONFLICT (day, session_id, kind, capped) DO UPDATE SET {_ADDED}",
)
#: The report's row shape (`report.report_sql`): tool, group, kind, cut, program, command, rule, calls,
#: produced, withheld, gross, returned, recovered, re-run, recalled.
_BY_DAY = """
SELECT tool_name, {group}, kind, capped, nullif(program, ''), nullif(command, ''), nullif(rule, ''), sum(calls),
  sum(produced), sum(withheld), sum(gross), sum(returned), 0, 0, 0
FROM main.sums_by_day WHERE day >= ?1 AND day < ?2 GROUP BY 1, 2, 3, 4, 5, 6, 7
"""
_TOTAL = """
SELECT tool_name, NULL, kind, capped, nullif(program, ''), nullif(command, ''), nullif(rule, ''), calls, produced,
  withheld, gross, returned, 0, 0, 0
FROM main.sums_total
"""
_DAY_GROUPS = """
SELECT NULL, day, kind, capped, NULL, NULL, NULL, sum(calls), sum(produced), sum(withheld), sum(gross),
  sum(returned), 0, 0, 0
FROM main.sums_by_day WHERE day >= ?1 AND day < ?2 GROUP BY 2, 3, 4
"""
_BY_SESSION = """
SELECT NULL, session_id, kind, capped, NULL, NULL, NULL, sum(calls), sum(produced), sum(withheld), sum(gross),
  sum(returned), 0, 0, 0
FROM main.sums_by_session WHERE day >= ?1 AND day < ?2 GROUP BY 2, 3, 4
"""
#: What followers took back, per call of the days summed whole (from the few calls followed: CROSS JOIN
#: keeps SQLite from walking every call of the window instead).
_FOLLOWS = f"""
SELECT c.tool_name, {{group}}, k.kind, k.withheld > 0, k.program, k.command, k.rule, 0, 0, 0, 0, 0, f.recovered,
  f.rerun, f.recalled
FROM temp.follow_sums f CROSS JOIN main.call_savings k ON k.id = f.id
CROSS JOIN {ARCHIVE}.tool_calls c ON c.id = k.id AND c.archive_ref = k.archive_ref
WHERE c.started_at_ms >= ?1 AND c.started_at_ms < ?2 AND c.status = 'finished'
  AND +c.session_id NOT IN ({PROBE_SESSIONS})
"""
#: The calls still open (the marks' list, ?3) of the days summed whole.
_OPEN = f"""
SELECT c.tool_name, {{group}}, 'incomplete', NULL, NULL, NULL, NULL, count(*), 0, 0, 0, 0, 0, 0, 0
FROM {ARCHIVE}.tool_calls c
WHERE c.id IN (SELECT value FROM json_each(?3)) AND c.status <> 'finished'
  AND c.started_at_ms >= ?1 AND c.started_at_ms < ?2 AND +c.session_id NOT IN ({PROBE_SESSIONS})
GROUP BY 1, 2
"""
_GROUP = {"day": f"c.started_at_ms / {DAY_MS}", "session": "c.session_id"}


def _add(conn: sqlite3.Connection, rows: str, params: tuple = ()) -> None:
    conn.execute("DROP TABLE IF EXISTS temp.new_sums")
    conn.execute(_NEW.format(rows=rows), params)
    for statement in _ROLL_UP:
        conn.execute(statement)
    conn.execute("DROP TABLE temp.new_sums")


def add_new(conn: sqlite3.Connection, last: int, open_json: str) -> None:
    """Add the rows of the calls since the marks (after the call id `last`, and the calls of the JSON
    list `open_json` open then) to the sums: the rows this report added, annotated."""
    _add(conn, _SINCE_MARKS, (last, open_json))


def rebuild(conn: sqlite3.Connection) -> None:
    """Sum every row whose call remains, anew (a row of a pruned call counts no more)."""
    for table in ("sums_by_day", "sums_total", "sums_by_session"):
        conn.execute(f"DELETE FROM main.{table}")
    _add(conn, "main.call_savings")


def whole_days(low: int, high: int) -> tuple[int, int]:
    """The days [first, end) that [low, high) holds whole (first >= end when it holds none)."""
    first = low if low == NO_WINDOW[0] else -(-low // DAY_MS)
    end = high if high == NO_WINDOW[1] else high // DAY_MS
    return first, end


def summed_rows(conn: sqlite3.Connection, by: str, first_day: int, end_day: int,
                open_json: str) -> tuple[list[tuple], list[tuple]]:
    """(rows for the groups, rows for the rules and commands) of the days [first_day, end_day), in the
    report's row shape: the sums, what followers took back, and the open calls."""
    low = NO_WINDOW[0] if first_day == NO_WINDOW[0] else first_day * DAY_MS
    high = NO_WINDOW[1] if end_day == NO_WINDOW[1] else end_day * DAY_MS
    group = _GROUP.get(by, "NULL")
    if (first_day, end_day) == NO_WINDOW:
        detail = conn.execute(_TOTAL).fetchall()
    else:
        detail = conn.execute(_BY_DAY.format(group="NULL"), (first_day, end_day)).fetchall()
    per_call = conn.execute(_FOLLOWS.format(group=group), (low, high)).fetchall()
    per_call += conn.execute(_OPEN.format(group=group), (low, high, open_json)).fetchall()
    if by in ("session", "day"):  # the groups from the sums of their own key; the rules and commands as above
        groups = conn.execute(_BY_SESSION if by == "session" else _DAY_GROUPS, (first_day, end_day)).fetchall()
        return groups + per_call, detail + per_call
    return detail + per_call, detail + per_call
