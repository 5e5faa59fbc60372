"""The savings report over a window: complete the projection, sum per group.

`compute` runs one transaction on a projection connection: it adds the rows
of the finished calls that the projection lacks (`rule.project_sql`: after
the previous report, only the calls since its marks; on a first report over a
large archive half of them on a second connection, `parallel`), annotates
them once (`recalls`: the rule, the re-run key and links, the labels of a
shell input), adds them to the per-day sums (`sums`), and reads the report
from those sums, what followers took back and the calls still open; the days
a window holds only in part are summed from their calls' rows
(`report_sql`). Python sees a few rows per group, and memory does not grow
with the archive. The groups, the totals and the top commands are then
gathered into a `totals.Savings`. The archive is attached read-only and
never written; the report's connection is the projection's one writer.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Mapping

from yarp.archive.calls.selection import PROBE_AGENT
from yarp.archive.savings import projection, sums
from yarp.archive.savings.parallel import Half
from yarp.archive.savings.programs import clean
from yarp.archive.savings.projection import ARCHIVE, INSERT_CALL_VALUES, drop_stale, tune
from yarp.archive.savings.recalls import annotate
from yarp.archive.savings.rule import COUNTED, project_sql
from yarp.archive.savings.totals import Row, Savings, Totals
from yarp.archive.savings.window import NO_WINDOW, access, bounds
from yarp.archive.sqlite import map_error
from yarp.errors import ArchiveBusy, DataError
from yarp.paths import ArchiveLocation

GROUPINGS = ("tool", "program", "command", "rule", "day", "session")
_GROUP_SQL = {"tool": "NULL", "program": "NULL", "command": "NULL", "rule": "NULL",
              "day": "c.started_at_ms / 86400000", "session": "c.session_id"}
#: The group of calls whose view nothing cut, when grouping by rule.
UNCAPPED = "(not capped)"
_DAY_MS = 86_400_000
_FOLLOW_SUMS_TABLE = ("CREATE TEMP TABLE IF NOT EXISTS follow_sums (id INTEGER PRIMARY KEY, recovered INTEGER NOT NULL,"
                      " rerun INTEGER NOT NULL, recalled INTEGER NOT NULL)")

#: The report over the calls of [?1, ?2), from their rows: every call of the window with its
#: projected row (none while it is unfinished), what its followers took back
#: (`temp.follow_sums`) and its input's labels, summed per group, kind, label and rule. It serves
#: the parts of days a window holds (`sums` holds whole days).
_REPORT = """
SELECT c.tool_name, {group}, CASE WHEN c.status = 'finished' THEN k.kind ELSE 'incomplete' END,
  k.withheld > 0, k.program, k.command, k.rule, count(*), ifnull(sum(k.produced), 0), ifnull(sum(k.withheld), 0),
  ifnull(sum(k.gross), 0), ifnull(sum(k.returned), 0), ifnull(sum(f.recovered), 0), ifnull(sum(f.rerun), 0),
  ifnull(sum(f.recalled), 0)
FROM tool_calls c {access}
LEFT JOIN main.call_savings k ON k.id = CASE WHEN c.status = 'finished' THEN c.id END
  AND k.archive_ref = c.archive_ref
LEFT JOIN temp.follow_sums f ON f.id = k.id
WHERE c.started_at_ms >= ?1 AND c.started_at_ms < ?2 AND +c.session_id NOT IN ({probe})
GROUP BY 1, 2, 3, 4, 5, 6, 7
"""
#: `yarp doctor`'s probe sessions: their calls are none of the user's, so no report counts them.
_PROBE_SESSIONS = f"SELECT id FROM {ARCHIVE}.sessions WHERE agent = '{PROBE_AGENT}'"
#: What followers took back, per call: a follower's returned bytes charged to the capped call it
#: follows (shared among the calls it follows), its own gross charged to itself (its net is
#: nothing). A `yarp run` follower inside another agent's follower of the same call, from start
#: to end, is that follower's own recovery and is not counted again.
_FOLLOW_SUMS = f"""
INSERT INTO temp.follow_sums (id, recovered, rerun, recalled)
WITH valid AS (
  SELECT f.id AS follower, f.kind AS kind, f.parts AS parts, fs.returned AS returned, fs.gross AS gross,
    t.id AS target
  FROM main.followups f
  JOIN main.call_savings fs ON fs.id = f.id AND fs.archive_ref = f.archive_ref
  JOIN {ARCHIVE}.sessions fa ON fa.id = fs.session_id
  JOIN {ARCHIVE}.tool_calls tc ON tc.archive_ref = f.target_ref
  JOIN main.call_savings t ON t.id = tc.id AND t.archive_ref = tc.archive_ref
  WHERE t.kind = 'counted' AND t.withheld > 0
    AND NOT (fa.agent = 'yarp-run' AND EXISTS (
      SELECT 1 FROM main.followups g
      JOIN main.call_savings gs ON gs.id = g.id AND gs.archive_ref = g.archive_ref
      JOIN {ARCHIVE}.sessions ga ON ga.id = gs.session_id
      WHERE g.target_ref = f.target_ref AND g.id <> f.id AND ga.agent <> 'yarp-run'
        AND gs.started_at_ms <= fs.started_at_ms AND gs.finished_at_ms >= fs.finished_at_ms))
)
SELECT id, sum(recovered), sum(rerun), max(recalled) FROM (
  SELECT target AS id, CASE kind WHEN 'recovery' THEN returned / parts ELSE 0 END AS recovered,
    CASE kind WHEN 'rerun' THEN returned / parts ELSE 0 END AS rerun, 1 AS recalled FROM valid
  UNION ALL
  SELECT follower, CASE kind WHEN 'recovery' THEN gross / parts ELSE 0 END,
    CASE kind WHEN 'rerun' THEN gross / parts ELSE 0 END, 0 FROM valid WHERE gross <> 0
)
GROUP BY id
"""


def sum_followups(conn: sqlite3.Connection) -> None:
    """Fill `temp.follow_sums`, which the report's statement reads, from the projection's follow-ups."""
    conn.execute(_FOLLOW_SUMS_TABLE)
    conn.execute("DELETE FROM temp.follow_sums")
    conn.execute(_FOLLOW_SUMS)


def report_sql(by: str, windowed: bool) -> str:
    """The statement that sums the projection over the calls started in [?1, ?2), grouped by `by`.

    Rows: (tool, group, kind, withheld > 0, program label, command label,
    rule, calls, bytes produced, withheld, gross withheld, returned,
    recovered, re-run, calls recalled); labels are NULL where the report
    does not name the call or its input names no command, the rule where
    nothing cut the view.
    """
    return _REPORT.format(access=access(windowed), group=_GROUP_SQL[by], probe=_PROBE_SESSIONS)


def _rows(conn: sqlite3.Connection, by: str, low: int, high: int, opener: Callable[[], sqlite3.Connection] | None,
          progress: Progress | None = None) -> tuple[list[tuple], list[tuple]]:
    """The report's rows for calls started in [low, high) (for the groups, for the rules and commands),
    after completing the projection and its sums.

    One transaction: the calls the projection lacks, their annotations and
    sums, and the report all see one snapshot of the archive, so every
    finished call summed has its row. The projection's own writes are
    committed with the report: a second report finds them. When the marks of
    the previous report hold, only the calls after them and the calls open
    then can lack a row; otherwise (a first report, one after a prune) every
    call is looked at and the sums are made again, and when many rows are
    missing a `Half` computes the upper half of them on a second connection
    meanwhile. `progress(text)` hears each step of a report that computes rows.
    """
    import json

    half = None
    if opener is not None and projection.read_marks(conn) is None:
        half = Half.start_if_worth(conn, opener, *NO_WINDOW)
    try:
        conn.execute("BEGIN IMMEDIATE")
        marks = projection.read_marks(conn)
        holds = marks is not None and projection.marks_hold(conn, marks)
        with _watching(conn, progress, "measuring the calls since the last report" if holds else "measuring every call"):
            if half is not None:
                conn.execute(project_sql(False, split=True), (*NO_WINDOW, NO_WINDOW[0], half.middle))
                conn.executemany(INSERT_CALL_VALUES, half.rows())
            if holds:
                since = (*NO_WINDOW, marks["last"] or 0, json.dumps(marks["open"]))
                conn.execute(project_sql(False, since_marks=True), since)
                open_ids = [r[0] for r in conn.execute(_OPEN_SINCE_MARKS, since[2:])]
            else:
                conn.execute(project_sql(False), NO_WINDOW)  # every call without its row
                open_ids = [r[0] for r in conn.execute(f"SELECT id FROM {ARCHIVE}.tool_calls"
                                                       " WHERE status <> 'finished'")]
        annotate(conn, progress, since[2:] if holds else None)
        with _watching(conn, progress, "summing"):
            if holds:
                sums.add_new(conn, since[2], since[3])
            else:
                sums.rebuild(conn)
        projection.write_marks(conn, open_ids)
        sum_followups(conn)
        rows = _window_rows(conn, by, low, high, json.dumps(open_ids))
        if not holds:
            drop_stale(conn)
        conn.execute("COMMIT")
    except BaseException:
        if half is not None:
            half.stop()
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return rows


#: SQLite instructions between two calls of a long statement's progress handler (a few milliseconds).
_TICK_INSTRUCTIONS = 2_000_000
#: Told the step under way (`compute`'s `progress`).
Progress = Callable[[str], None]


class _watching:
    """While the block runs statements on `conn`, `progress(text (N s))` from SQLite's progress handler."""

    def __init__(self, conn: sqlite3.Connection, progress: Progress | None, text: str) -> None:
        self.conn, self.progress, self.text = conn, progress, text

    def __enter__(self) -> None:
        if self.progress is None:
            return
        import time

        started = time.monotonic()

        def tick() -> int:
            try:
                self.progress(f"{self.text} ({time.monotonic() - started:.0f} s)")
            except Exception:  # noqa: BLE001 - a display that fails must not stop the report
                pass
            return 0

        tick()
        self.conn.set_progress_handler(tick, _TICK_INSTRUCTIONS)

    def __exit__(self, *exc) -> None:
        if self.progress is not None:
            self.conn.set_progress_handler(None, 0)


#: The calls after the marks (?1) and those open then (?2) that are still not finished.
_OPEN_SINCE_MARKS = (f"SELECT id FROM {ARCHIVE}.tool_calls WHERE id > ?1 AND status <> 'finished' UNION ALL"
                     f" SELECT id FROM {ARCHIVE}.tool_calls WHERE id IN (SELECT value FROM json_each(?2))"
                     " AND status <> 'finished'")


def _window_rows(conn: sqlite3.Connection, by: str, low: int, high: int,
                 open_json: str) -> tuple[list[tuple], list[tuple]]:
    """The rows of [low, high): the days it holds whole from the sums, the parts of days at its edges
    from their calls' rows."""
    first, end = sums.whole_days(low, high)
    groups: list[tuple] = []
    details: list[tuple] = []
    edges = [(low, high)]
    if first < end:
        groups, details = sums.summed_rows(conn, by, first, end, open_json)
        edges = [(low, first * sums.DAY_MS) if first != NO_WINDOW[0] else (0, 0),
                 (end * sums.DAY_MS, high) if end != NO_WINDOW[1] else (0, 0)]
    for edge_low, edge_high in edges:
        if edge_low < edge_high:
            part = conn.execute(report_sql(by, True), (edge_low, edge_high)).fetchall()
            groups += part
            details += part
    return groups, details


def compute(conn: sqlite3.Connection, *, by: str = "tool", since_ms: int | None = None,
            until_ms: int | None = None, top: int = 10,
            opener: Callable[[], sqlite3.Connection] | None = None, progress: Progress | None = None) -> Savings:
    """The savings of calls started in [since_ms, until_ms), grouped by `by`.

    `conn` is a projection connection (`projection.connect`): the archive
    attached read-only, the per-call rows kept in its main database.
    `opener`, when given, opens another (its projection in memory), on which
    the first report over a large archive computes half the missing rows.
    `progress(text)`, when given, hears the steps of a report that computes
    rows (a first report over a large archive takes seconds).
    """
    if by not in GROUPINGS:
        raise ValueError(by)
    report = Savings(by=by, since_ms=since_ms, until_ms=until_ms)
    low, high = bounds(since_ms, until_ms)
    try:
        tune(conn)
        rows = _rows(conn, by, low, high, opener, progress)
        session_labels = (
            {sid: f"{agent}:{source}" for sid, agent, source in
             conn.execute(f"SELECT id, agent, source_session_id FROM {ARCHIVE}.sessions")}
            if by == "session" else {}
        )
    except sqlite3.Error as exc:
        raise map_error(exc, "reading archive savings") from None
    report.groups, report.rules, commands = _sums(*rows, by, session_labels)
    for group in report.groups.values():
        report.total.merge(group)
    report.top_commands = sorted(commands.items(), key=lambda item: (-item[1].net, item[0]))[:top]
    return report


def _sums(group_rows: list[tuple], detail_rows: list[tuple], by: str,
          session_labels: dict) -> tuple[dict[str, Totals], dict[str, Totals], dict[str, Totals]]:
    """The report's rows summed per group, and per rule and per command (capped views)."""
    groups: dict[str, Totals] = {}
    rules: dict[str, Totals] = {}
    commands: dict[str, Totals] = {}
    for tool, grp, kind, capped, program, command, rule, *numbers in group_rows:
        if kind is None:  # a finished call without its row: the transaction of `_rows` rules it out
            raise DataError("reading archive savings: a finished call has no projected row")
        _totals(groups, _group_key(by, tool, grp, program, command, rule, session_labels)).add(
            Row(kind, bool(capped), *numbers))
    for tool, _, kind, capped, _, command, rule, *numbers in detail_rows:
        if kind == COUNTED and capped:
            row = Row(kind, True, *numbers)
            _totals(rules, rule or "cap").add(row)
            _totals(commands, command or clean(tool)).add(row)
    return groups, rules, commands


def _totals(table: dict[str, Totals], key: str) -> Totals:
    found = table.get(key)
    if found is None:
        found = table[key] = Totals()
    return found


def _group_key(by: str, tool: str, grp, program: str | None, command: str | None, rule: str | None,
               session_labels: dict) -> str:
    """The label of a report row's group: tool, program or command (else tool), rule, UTC day or `agent:session`."""
    if by == "tool":
        return clean(tool)
    if by == "program":
        return program or clean(tool)
    if by == "command":
        return command or clean(tool)
    if by == "rule":
        return rule or UNCAPPED
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
