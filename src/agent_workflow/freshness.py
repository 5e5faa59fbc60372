"""How far the projection is behind the state root, for status and every query.

Freshness compares each discovered run's current fingerprint with the stored
one: a changed, new or deleted run is stale. Result: `current` (nothing stale,
no errors), `stale` (something changed since the last sync) or `incomplete`
(never synced, or runs/repairs are in error). Read-only; never writes.
"""

from __future__ import annotations

import sqlite3

from .discovery import discover_runs, run_fingerprint
from .state_root import StateRoot


def freshness(conn: sqlite3.Connection, root: StateRoot) -> dict:
    stored = {
        row[0]: row[1:]
        for row in conn.execute("SELECT session_id, source_fingerprint, source_dir, index_state FROM runs")
    }
    runs = discover_runs(root)
    stale = 0
    current = 0
    for session_id, run in runs.items():
        previous = stored.get(session_id)
        if previous is None or previous[1] != run.source_dir or previous[0] != run_fingerprint(run):
            stale += 1
        elif previous[2] == "current":
            current += 1
    stale += sum(1 for session_id in stored if session_id not in runs)
    errors = conn.execute("SELECT COUNT(*) FROM index_errors").fetchone()[0]
    historical = sum(1 for value in stored.values() if value[2] == "historical_artifact")
    synced = conn.execute("SELECT value FROM index_metadata WHERE key = 'last_sync_at'").fetchone()
    if stale:
        state = "stale"
    elif errors or synced is None:
        state = "incomplete"
    else:
        state = "current"
    return {
        "freshness": state,
        "current_run_count": current,
        "stale_run_count": stale,
        "error_count": errors,
        "historical_run_count": historical,
        "last_sync_at": synced[0] if synced else None,
    }


def summary_line(report: dict) -> str:
    return (
        f"index: {report['freshness']} ({report['current_run_count']} current, "
        f"{report['stale_run_count']} stale, {report['error_count']} errors)"
    )
