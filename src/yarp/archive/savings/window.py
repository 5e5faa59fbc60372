"""Which calls a report covers: those started in [since, until), and how its statements reach them.

Every statement of the report takes the window as its first two parameters
(`?1`, `?2`), and an unbounded side as the extreme 64-bit value, so one
statement serves every window. A window holding few of the archive's calls
walks the start-time index; any other walks every call in rowid order, which
is cheaper than the index once a window holds more than a small share.
"""

from __future__ import annotations

import sqlite3

from yarp.archive.savings.projection import ARCHIVE

#: Below one call in this many, a window walks the start-time index instead
#: of scanning every call.
INDEX_RATIO = 8
#: The bounds of a report without --since and --until.
NO_WINDOW = (-(2**63), 2**63 - 1)


def bounds(since_ms: int | None, until_ms: int | None) -> tuple[int, int]:
    """The window's (low, high) statement parameters; an absent side is unbounded."""
    return (since_ms if since_ms is not None else NO_WINDOW[0],
            until_ms if until_ms is not None else NO_WINDOW[1])


def uses_index(conn: sqlite3.Connection, low: int, high: int) -> bool:
    """Whether the calls started in [low, high) are few enough to walk by the start-time index."""
    if (low, high) == NO_WINDOW:
        return False
    in_window = conn.execute(f"SELECT count(*) FROM {ARCHIVE}.tool_calls"
                             " WHERE started_at_ms >= ? AND started_at_ms < ?", (low, high)).fetchone()[0]
    everything = conn.execute(f"SELECT max(rowid) FROM {ARCHIVE}.tool_calls").fetchone()[0] or 0
    return in_window * INDEX_RATIO < everything


def access(windowed: bool) -> str:
    """How a statement reads `tool_calls`: by the start-time index for a small window, else every call."""
    return "" if windowed else "NOT INDEXED"
