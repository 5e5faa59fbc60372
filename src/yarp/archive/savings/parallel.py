"""The first report over a large archive: half of the projection's missing rows on a second connection.

Only worth it when many rows are missing (`PARALLEL_MIN_CALLS`) and a second
core exists; every later report finds its rows in the projection. The half
never writes the projection, which has one writer, the report's connection:
it keeps its rows in its own temporary database (on disk past SQLite's page
cache, so half a million rows do not stay in memory), and the report copies
them over row by row.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable

from yarp.archive.savings.projection import ARCHIVE, CALL_COLUMNS, tune
from yarp.archive.savings.rule import project_sql
from yarp.archive.savings.window import NO_WINDOW

#: Missing rows from which the first part of a report's projection runs in two halves.
PARALLEL_MIN_CALLS = 20_000


class Half:
    """The upper half (by call id) of a projection's missing rows, computed on a thread of its own.

    SQLite runs a statement without holding the GIL, so on a machine with a
    second core the halves take about half the time of the whole. The thread
    reads its own snapshot of the archive and keeps its rows in the second
    connection's own database rather than the projection, which has one writer.
    A row is valid in any later snapshot (a finished call never changes), and
    calls that finish in between are projected by the report's own pass.
    """

    def __init__(self, other: sqlite3.Connection, low: int, high: int, middle: int) -> None:
        import threading

        self.middle = middle
        self._other = other
        self._outcome: list = []
        self._thread = threading.Thread(target=self._run, args=(low, high), name="yarp-savings")
        self._thread.start()

    @classmethod
    def start_if_worth(cls, conn: sqlite3.Connection, opener: Callable[[], sqlite3.Connection],
                       low: int, high: int) -> Half | None:
        """A running half, when at least `PARALLEL_MIN_CALLS` rows are missing and a second core exists."""
        if _cores() < 2:
            return None
        if (low, high) == NO_WINDOW:
            first, last = conn.execute(f"SELECT min(rowid), max(rowid) FROM {ARCHIVE}.tool_calls").fetchone()
        else:
            first, last = conn.execute(f"SELECT min(id), max(id) FROM {ARCHIVE}.tool_calls"
                                       " WHERE started_at_ms >= ? AND started_at_ms < ?", (low, high)).fetchone()
        if first is None:
            return None
        kept = conn.execute("SELECT count(*) FROM main.call_savings").fetchone()[0]
        if last - first + 1 - kept < PARALLEL_MIN_CALLS:
            return None
        return cls(opener(), low, high, first + (last - first + 1) // 2)

    def _run(self, low: int, high: int) -> None:
        try:
            tune(self._other)
            self._other.execute(project_sql(False, split=True), (low, high, self.middle, NO_WINDOW[1]))
            self._outcome.append(None)
        except BaseException as exc:  # re-raised on the report's thread
            self._outcome.append(exc)

    def rows(self):
        """The half's rows, one at a time, once its thread has ended; its failure is raised here."""
        self._thread.join()
        try:
            outcome = self._outcome[0]
            if isinstance(outcome, BaseException):
                raise outcome
            yield from self._other.execute(f"SELECT {', '.join(CALL_COLUMNS)} FROM main.call_savings")
        finally:
            self._other.close()

    def stop(self) -> None:
        """Stop the half (the report has failed) instead of waiting for it."""
        if self._thread.is_alive():
            self._other.interrupt()
        self._thread.join()
        self._other.close()


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1
