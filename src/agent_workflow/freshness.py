"""How far the projection is behind the state root, for status and every query.

Two checks, both read-only (they never write, and never open evidence):

* full (`index status`, `index query --fresh`): every discovered run's
  fingerprint is recomputed and compared with the stored one. Exact, but one
  `lstat` per structured file of every run.
* probe (default for `index query`): bounded. The mtimes of `runs/` and
  `archive/` recorded at the last full sync tell whether a run was added,
  removed or moved (if either changed, the run names are listed and compared).
  Then, for at most `MAX_FRESHNESS_PROBE_RUNS` runs (runs in error, then
  active runs, then the most recently indexed), every directory's mtime and
  every journal's size and mtime are compared with the stored values; a
  mismatch, or a value recorded too recently to trust, is settled by that
  run's full fingerprint. Atomic replacement, creation or deletion of a file
  changes its directory's mtime and an append changes a journal's size, so the
  recorder's writes are seen; what the probe does not see is an in-place
  rewrite of a JSON artifact, a chmod/chown, or any change to an unprobed run.

Result: `current` (nothing seen stale, no errors), `stale` (something changed
since the last sync) or `incomplete` (never synced, or runs/repairs in error).
`freshness_basis` says which check produced it.
"""

from __future__ import annotations

import os
import sqlite3

from .discovery import RunDir, discover_runs, run_fingerprint
from .limits import MAX_FRESHNESS_PROBE_RUNS
from .state_root import StateRoot

_ACTIVE = "('prepared', 'launched', 'running', 'interruption_requested')"
_CHUNK = 500
_PROBE_ORDER = (
    f"ORDER BY index_state = 'error' DESC, durable_status IN {_ACTIVE} DESC, indexed_at DESC, session_id LIMIT ?"
)


def _common(conn: sqlite3.Connection) -> tuple[int, int, str | None]:
    errors = conn.execute("SELECT COUNT(*) FROM index_errors").fetchone()[0]
    historical = conn.execute("SELECT COUNT(*) FROM runs WHERE index_state = 'historical_artifact'").fetchone()[0]
    synced = conn.execute("SELECT value FROM index_metadata WHERE key = 'last_sync_at'").fetchone()
    return errors, historical, synced[0] if synced else None


def _report(basis: str, stale: int, current: int, errors: int, historical: int, synced, probed: int, unprobed: int):
    if stale:
        state = "stale"
    elif errors or synced is None:
        state = "incomplete"
    else:
        state = "current"
    return {
        "freshness": state,
        "freshness_basis": basis,
        "current_run_count": current,
        "stale_run_count": stale,
        "error_count": errors,
        "historical_run_count": historical,
        "last_sync_at": synced,
        "probed_run_count": probed,
        "unprobed_run_count": unprobed,
    }


def freshness(conn: sqlite3.Connection, root: StateRoot) -> dict:
    """The full check: recompute every run's fingerprint."""
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
    errors, historical, synced = _common(conn)
    return _report("full", stale, current, errors, historical, synced, len(runs), 0)


def _top_level(path: str) -> str:
    try:
        return str(os.lstat(path).st_mtime_ns)
    except FileNotFoundError:
        return "absent"


def _run_dir(root: StateRoot, session_id: str, source_dir: str) -> RunDir:
    base = root.runs if source_dir == "runs" else root.archive
    path = os.path.join(base, session_id)
    try:
        is_link = os.path.islink(path)
    except OSError:
        is_link = False
    return RunDir(session_id, "active" if source_dir == "runs" else "archive", source_dir, path, is_link)


def _changed(run_path: str, dirs: list, journals: list) -> bool:
    """Whether the cheap stats disagree with what was stored (or cannot be trusted)."""
    if not dirs:
        return True
    try:
        for rel, mtime in dirs:
            if mtime < 0 or os.lstat(os.path.join(run_path, rel) if rel else run_path).st_mtime_ns != mtime:
                return True
        for rel, size, mtime in journals:
            st = os.lstat(os.path.join(run_path, rel))
            if st.st_size != size or st.st_mtime_ns != mtime:
                return True
    except OSError:
        return True
    return False


def probe_freshness(conn: sqlite3.Connection, root: StateRoot, budget: int = MAX_FRESHNESS_PROBE_RUNS) -> dict:
    """The bounded check described in the module docstring."""
    states = dict(conn.execute("SELECT index_state, COUNT(*) FROM runs GROUP BY index_state").fetchall())
    total = sum(states.values())
    meta = dict(
        conn.execute(
            "SELECT key, value FROM index_metadata WHERE key IN ('probe_runs_mtime_ns', 'probe_archive_mtime_ns')"
        ).fetchall()
    )
    stale: dict[str, str | None] = {}  # session id -> stored index_state (None: not indexed)
    if (
        meta.get("probe_runs_mtime_ns") in (None, "-1")
        or meta.get("probe_archive_mtime_ns") in (None, "-1")
        or meta["probe_runs_mtime_ns"] != _top_level(root.runs)
        or meta["probe_archive_mtime_ns"] != _top_level(root.archive)
    ):
        stored = {row[0]: row[1:] for row in conn.execute("SELECT session_id, source_dir, index_state FROM runs")}
        runs = discover_runs(root)
        for session_id, run in runs.items():
            previous = stored.get(session_id)
            if previous is None or previous[0] != run.source_dir:
                stale[session_id] = previous[1] if previous else None
        for session_id, previous in stored.items():
            if session_id not in runs:
                stale[session_id] = previous[1]
    candidates = conn.execute(
        f"SELECT session_id, source_dir, index_state FROM runs {_PROBE_ORDER}", (budget,)
    ).fetchall()
    dirs: dict[str, list] = {}
    journals: dict[str, list] = {}
    for start in range(0, len(candidates), _CHUNK):
        ids = [row[0] for row in candidates[start:start + _CHUNK]]
        marks = ", ".join("?" * len(ids))
        for sid, rel, mtime in conn.execute(
            f"SELECT session_id, relative_path, mtime_ns FROM source_dirs WHERE session_id IN ({marks})", ids
        ):
            dirs.setdefault(sid, []).append((rel, mtime))
        for sid, rel, size, mtime in conn.execute(
            "SELECT session_id, relative_path, size_bytes, mtime_ns FROM source_files"
            f" WHERE session_id IN ({marks}) AND relative_path LIKE '%.jsonl'",
            ids,
        ):
            journals.setdefault(sid, []).append((rel, size, mtime))
    for session_id, source_dir, state in candidates:
        if session_id in stale:
            continue
        run = _run_dir(root, session_id, source_dir)
        if run.is_symlink or _changed(run.path, dirs.get(session_id, []), journals.get(session_id, [])):
            stored = conn.execute("SELECT source_fingerprint FROM runs WHERE session_id = ?", (session_id,)).fetchone()
            if run_fingerprint(run) != stored[0]:
                stale[session_id] = state
    current = states.get("current", 0) - sum(1 for state in stale.values() if state == "current")
    errors, historical, synced = _common(conn)
    return _report("probe", len(stale), current, errors, historical, synced, len(candidates), total - len(candidates))


def summary_line(report: dict) -> str:
    """One line for a terminal: the index's freshness and its current, stale and error counts."""
    line = (
        f"index: {report['freshness']} ({report['current_run_count']} current, "
        f"{report['stale_run_count']} stale, {report['error_count']} errors)"
    )
    if report.get("unprobed_run_count"):
        line += f"; {report['unprobed_run_count']} runs not probed (--fresh checks all)"
    return line
