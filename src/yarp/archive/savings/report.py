"""The savings report over a window: complete the projection, name the inputs, sum per group.

`compute` runs one transaction on a projection connection: it adds the rows
of the window's finished calls that the projection lacks (`rule.project_sql`,
half of them on a second connection for a first report over a large archive,
`parallel`), labels the shell inputs the report names (`programs`), and sums
the rows per group, class and label inside SQLite (`report_sql`). Python sees
a few rows per group, and memory does not grow with the archive. The groups,
the totals and the top commands are then gathered into a `totals.Savings`.
The archive is attached read-only and never written; the report's connection
is the projection's one writer.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Mapping

from yarp.archive.savings import projection
from yarp.archive.savings.parallel import Half
from yarp.archive.savings.programs import clean, input_labels
from yarp.archive.savings.projection import ARCHIVE, INSERT_CALL, INSERT_LABELS, drop_stale, tune
from yarp.archive.savings.rule import COUNTED, project_sql
from yarp.archive.savings.totals import Savings, Totals
from yarp.archive.savings.window import NO_WINDOW, access, bounds, uses_index
from yarp.archive.sqlite import map_error
from yarp.errors import ArchiveBusy, DataError
from yarp.paths import ArchiveLocation

GROUPINGS = ("tool", "program", "day", "session")
_GROUP_SQL = {"tool": "NULL", "program": "NULL", "day": "c.started_at_ms / 86400000", "session": "c.session_id"}
_DAY_MS = 86_400_000

#: Inputs of the window's shell calls that a report names but the projection has
#: no label for, in the order of the calls: inputs are then read from the
#: payload table roughly in the order they were written (about 40% less time
#: than in digest order). Repeats are dropped by the caller.
_UNLABELLED = """
SELECT k.input_sha256 FROM tool_calls c {access}
JOIN main.call_savings k ON k.id = c.id AND k.archive_ref = c.archive_ref
WHERE c.started_at_ms >= ?1 AND c.started_at_ms < ?2 AND c.status = 'finished' AND k.input_sha256 IS NOT NULL
  AND ({by_program} OR (k.kind = 'counted' AND k.withheld > 0))
  AND NOT EXISTS (SELECT 1 FROM main.input_labels l WHERE l.input_sha256 = k.input_sha256)
"""
#: The report: every call of the window with its projected row (none while it
#: is unfinished) and, where the report names it, its input's labels, summed
#: per group, kind and label. A shell call is named by its input when the
#: report groups by program or lists it among the top commands.
_REPORT = """
SELECT c.tool_name, {group}, CASE WHEN c.status = 'finished' THEN k.kind ELSE 'incomplete' END,
  k.withheld > 0, l.program, l.command, count(*), ifnull(sum(k.produced), 0), ifnull(sum(k.withheld), 0)
FROM tool_calls c {access}
LEFT JOIN main.call_savings k ON k.id = CASE WHEN c.status = 'finished' THEN c.id END
  AND k.archive_ref = c.archive_ref
LEFT JOIN main.input_labels l ON l.input_sha256 = CASE WHEN {by_program} OR (k.kind = 'counted' AND k.withheld > 0)
  THEN k.input_sha256 END
WHERE c.started_at_ms >= ?1 AND c.started_at_ms < ?2
GROUP BY 1, 2, 3, 4, 5, 6
"""


def report_sql(by: str, windowed: bool) -> str:
    """The statement that sums the projection over the calls started in [?1, ?2), grouped by `by`.

    Rows: (tool, group, kind, withheld > 0, program label, command label,
    calls, bytes produced, bytes withheld); labels are NULL where the report
    does not name the call or its input names no command.
    """
    return _REPORT.format(access=access(windowed), group=_GROUP_SQL[by], by_program="1" if by == "program" else "0")


def unlabelled_sql(by: str, windowed: bool) -> str:
    """The statement listing the input digests a report over [?1, ?2) names but has no labels for."""
    return _UNLABELLED.format(access=access(windowed), by_program="1" if by == "program" else "0")


def _rows(conn: sqlite3.Connection, by: str, low: int, high: int,
          opener: Callable[[], sqlite3.Connection] | None) -> list[tuple]:
    """The report's rows for calls started in [low, high), after completing the projection.

    One transaction: the calls the projection lacks, the labels the report
    needs, and the sums all see one snapshot of the archive, so every finished
    call summed has its row. The projection's own writes are committed with
    the report: a second report finds them. When many rows are missing (the
    first report over a large archive), a `Half` computes the upper half of
    them on a second connection meanwhile.
    """
    windowed = uses_index(conn, low, high)
    half = Half.start_if_worth(conn, opener, low, high) if opener is not None and not windowed else None
    try:
        conn.execute("BEGIN IMMEDIATE")
        if half is not None:
            conn.execute(project_sql(windowed, split=True), (low, high, NO_WINDOW[0], half.middle))
            conn.executemany(f"{INSERT_CALL} VALUES (?, ?, ?, ?, ?, ?)", half.result())
        # Every call the parts did not see (all of them, without parts).
        conn.execute(project_sql(windowed), (low, high))
        missing = list(dict.fromkeys(row[0] for row in conn.execute(unlabelled_sql(by, windowed), (low, high))))
        if missing:
            conn.executemany(INSERT_LABELS, input_labels(conn, missing))
        rows = conn.execute(report_sql(by, windowed), (low, high)).fetchall()
        drop_stale(conn)
        conn.execute("COMMIT")
    except BaseException:
        if half is not None:
            half.stop()
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return rows


def compute(conn: sqlite3.Connection, *, by: str = "tool", since_ms: int | None = None,
            until_ms: int | None = None, top: int = 10,
            opener: Callable[[], sqlite3.Connection] | None = None) -> Savings:
    """The savings of calls started in [since_ms, until_ms), grouped by `by`.

    `conn` is a projection connection (`projection.connect`): the archive
    attached read-only, the per-call rows kept in its main database.
    `opener`, when given, opens another (its projection in memory), on which
    the first report over a large archive computes half the missing rows.
    """
    if by not in GROUPINGS:
        raise ValueError(by)
    report = Savings(by=by, since_ms=since_ms, until_ms=until_ms)
    low, high = bounds(since_ms, until_ms)
    try:
        tune(conn)
        rows = _rows(conn, by, low, high, opener)
        session_labels = (
            {sid: f"{agent}:{source}" for sid, agent, source in
             conn.execute(f"SELECT id, agent, source_session_id FROM {ARCHIVE}.sessions")}
            if by == "session" else {}
        )
    except sqlite3.Error as exc:
        raise map_error(exc, "reading archive savings") from None
    report.groups, commands = _sums(rows, by, session_labels)
    for group in report.groups.values():
        report.total.merge(group)
    ranked = sorted(commands.items(), key=lambda item: (-item[1][2], item[0]))[:top]
    report.top_commands = [(name, calls, produced, withheld) for name, (calls, produced, withheld) in ranked]
    return report


def _sums(rows: list[tuple], by: str, session_labels: dict) -> tuple[dict[str, Totals], dict[str, list[int]]]:
    """The report's rows summed per group, and [calls, produced, withheld] per command that withheld bytes."""
    groups: dict[str, Totals] = {}
    commands: dict[str, list[int]] = {}
    for tool, grp, kind, positive, program, command, calls, produced, withheld in rows:
        if kind is None:  # a finished call without its row: the transaction of `_rows` rules it out
            raise DataError("reading archive savings: a finished call has no projected row")
        key = _group_key(by, tool, grp, program, session_labels)
        group = groups.get(key)
        if group is None:
            group = groups[key] = Totals()
        group.add(kind, produced, withheld, calls)
        if kind == COUNTED and positive:
            name = command or clean(tool)
            entry = commands.get(name)
            if entry is None:
                commands[name] = [calls, produced, withheld]
            else:
                entry[0] += calls
                entry[1] += produced
                entry[2] += withheld
    return groups, commands


def _group_key(by: str, tool: str, grp, program: str | None, session_labels: dict) -> str:
    """The label of a report row's group: tool, program (else tool), UTC day or `agent:session id`."""
    if by == "tool":
        return clean(tool)
    if by == "program":
        return program or clean(tool)
    if by == "day":
        return _day(grp * _DAY_MS)
    return clean(session_labels.get(grp, str(grp)))


def _day(ms: int) -> str:
    import time

    return time.strftime("%Y-%m-%d", time.gmtime(ms // 1000))


def compute_for(location: ArchiveLocation, *, environ: Mapping[str, str] = os.environ, **options) -> Savings:
    """The report (`compute`'s options) for the archive at `location`, through its projection.

    The projection is its file when that can be used; when another report
    keeps the file busy for longer than `projection.BUSY_MS` (a first report
    over a large archive), this report keeps its rows in memory instead.
    """
    for persistent in (True, False):
        conn = projection.connect(location, persistent=persistent, environ=environ)
        try:
            # A second connection computes half of what a first report over a large archive lacks.
            return compute(conn, opener=lambda: projection.connect(location, persistent=False), **options)
        except ArchiveBusy:
            if not projection.is_persistent(conn):
                raise
        finally:
            conn.close()
    raise AssertionError("unreachable")
