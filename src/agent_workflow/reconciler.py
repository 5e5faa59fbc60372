"""The single-writer reconciler: bring the projection in line with the state root.

For every discovered run it compares a deterministic fingerprint with the
stored one, skips unchanged runs, and replaces a changed run in one
transaction. A run that cannot be projected becomes an `index_state='error'`
row with details in `index_errors`; other runs are untouched. A later
successful projection of that run removes its errors. Runs carrying retired
schema ids are kept as `historical_artifact` rows, excluded from current
evidence. Deleted runs are pruned. The caller holds the writer lock; this
module never writes to the state root.
"""

from __future__ import annotations

import os
import re
import sqlite3
import time

from .discovery import (
    directory_mtimes,
    discover_runs,
    fingerprint_entries,
    fingerprints,
    structured_entries,
    tree_fingerprint,
)
from .errors import EvidenceError, RecordInvalid
from .index_schema import utc_now
from .limits import FRESHNESS_TRUST_MARGIN_NS, MAX_INDEX_ERROR_CHARS
from .state_root import StateRoot

# projection and contracts are imported only when a run must be projected:
# a no-change sync never loads the validators.

_RUN_COLUMNS = (
    "launch_schema", "ticket_id", "pack_id", "workflow_id", "workflow_node_id", "retry_of_run_id", "agent_name",
    "agent_class", "tier", "executor", "model", "interactive", "source_revision", "branch", "created_at",
    "started_at", "finished_at", "updated_at", "durable_status", "disposition", "failure_category", "exit_code",
    "final_receipt_sha256", "evidence_complete", "sealed_artifact_count", "executor_result", "completion_result",
    "policy_result", "acceptance_eligible", "attempt_classification", "score_verdict", "evaluation_state",
)
_INSERT_RUN = (
    "INSERT INTO runs(session_id, source_dir, storage_class, index_state, index_error, source_fingerprint, indexed_at, "
    + ", ".join(_RUN_COLUMNS)
    + ") VALUES (" + ", ".join("?" * (7 + len(_RUN_COLUMNS))) + ")"
)
_CHILD_INSERTS = (
    ("source_files", "INSERT INTO source_files VALUES (?, ?, ?, ?, ?, ?, ?, ?)"),
    ("events", "INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"),
    ("health", "INSERT INTO health_samples VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"),
    ("permissions", "INSERT INTO permission_events VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"),
    ("incidents", "INSERT INTO incident_events VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"),
    ("remediations", "INSERT INTO remediation_events VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"),
    ("metrics", "INSERT INTO execution_metrics VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"),
)
_PATH_PREFIX = re.compile(r"([A-Za-z0-9_.\-/]+\.(?:jsonl?|md|log|diff|sh)):")


def _error_path(message: str) -> str | None:
    match = _PATH_PREFIX.match(message)
    return match.group(1) if match else None


def _delete_run(conn: sqlite3.Connection, session_id: str) -> None:
    conn.execute("DELETE FROM runs WHERE session_id = ?", (session_id,))
    conn.execute("DELETE FROM index_errors WHERE session_id = ?", (session_id,))


def _trusted_before() -> int:
    return time.time_ns() - FRESHNESS_TRUST_MARGIN_NS


def top_level_mtime(path: str) -> str:
    """The freshness probe's view of `runs/` or `archive/`: its mtime, 'absent', or
    '-1' when too recent to trust (see `discovery.directory_mtimes`)."""
    try:
        mtime = os.lstat(path).st_mtime_ns
    except FileNotFoundError:
        return "absent"
    return str(mtime) if mtime < _trusted_before() else "-1"


def _write_run(conn, run, fingerprint: str, rows, indexed_at: str) -> str:
    from .contracts import ACTIVE_RUN_STATES

    historical = rows.retired_schema is not None
    if historical and rows.run.get("durable_status") in ACTIVE_RUN_STATES:
        raise RecordInvalid("an active run carries a retired schema id")
    state = "historical_artifact" if historical else "current"
    detail = (
        f"retired schema {rows.retired_schema}: preserved in place, excluded from current evidence" if historical else None
    )
    conn.execute("BEGIN IMMEDIATE")
    try:
        _delete_run(conn, run.session_id)
        conn.execute(
            _INSERT_RUN,
            (run.session_id, run.source_dir, run.storage_class, state, detail, fingerprint, indexed_at)
            + tuple(rows.run.get(name) for name in _RUN_COLUMNS),
        )
        conn.executemany(_CHILD_INSERTS[0][1], rows.source_files)
        conn.executemany(
            "INSERT INTO source_dirs VALUES (?, ?, ?)",
            [(run.session_id, rel, mtime) for rel, mtime in directory_mtimes(run.path, _trusted_before())],
        )
        if not historical:
            for attr, sql in _CHILD_INSERTS[1:]:
                values = getattr(rows, attr)
                if values:
                    conn.executemany(sql, values)
            if rows.process_result is not None:
                conn.execute(
                    "INSERT INTO process_results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    rows.process_result,
                )
            if rows.workflow is not None:
                conn.execute("INSERT INTO workflows VALUES (?, ?, ?, ?, ?, ?)", rows.workflow)
                conn.executemany("INSERT INTO workflow_nodes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows.nodes)
                conn.executemany("INSERT OR IGNORE INTO workflow_edges VALUES (?, ?, ?)", rows.edges)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return state


def _write_error(conn, run, fingerprint: str, category: str, message: str, indexed_at: str) -> None:
    detail = message[:MAX_INDEX_ERROR_CHARS]
    conn.execute("BEGIN IMMEDIATE")
    try:
        _delete_run(conn, run.session_id)
        conn.execute(
            "INSERT INTO runs(session_id, source_dir, storage_class, index_state, index_error, source_fingerprint,"
            " evidence_complete, indexed_at) VALUES (?, ?, ?, 'error', ?, ?, 0, ?)",
            (run.session_id, run.source_dir, run.storage_class, detail, fingerprint, indexed_at),
        )
        conn.execute(
            "INSERT INTO index_errors(session_id, relative_path, category, detail, detected_at) VALUES (?, ?, ?, ?, ?)",
            (run.session_id, _error_path(detail), category, detail, indexed_at),
        )
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


class _Outcome:
    """What a sync did with each run it discovered, for its report (plain slots, as `RunDir`)."""

    __slots__ = ("indexed", "historical", "failed", "skipped", "refresh_dirs")

    def __init__(self) -> None:
        self.indexed: list[str] = []
        self.historical: list[str] = []
        self.failed: list[dict] = []
        self.skipped = 0
        #: Unchanged runs whose directory mtimes were stored as untrusted (-1).
        self.refresh_dirs: list[str] = []


def reconcile(conn: sqlite3.Connection, root: StateRoot, *, only: str | None = None) -> dict:
    """Sync every run (or just `only`); return a bounded report.

    A full sync also returns, under `probe_metadata`, the top-level directory
    mtimes taken before discovery, for the caller to store with last_sync_at.
    """
    probe_metadata = (
        {}
        if only is not None
        else {"probe_runs_mtime_ns": top_level_mtime(root.runs), "probe_archive_mtime_ns": top_level_mtime(root.archive)}
    )
    runs = discover_runs(root, only)
    existing = _stored_runs(conn, only)
    untrusted_dirs = {row[0] for row in conn.execute("SELECT DISTINCT session_id FROM source_dirs WHERE mtime_ns < 0")}
    outcome = _Outcome()
    order = sorted(runs)
    # Cheap pass first: most runs are unchanged and need only their fingerprint
    # (nothing to compare against on a rebuild).
    quick = dict(zip(order, fingerprints([runs[session_id] for session_id in order]))) if existing else {}
    for session_id in order:
        run = runs[session_id]
        previous = existing.get(session_id)
        if _unchanged(previous, quick.get(session_id), run):
            outcome.skipped += 1
            if session_id in untrusted_dirs:
                outcome.refresh_dirs.append(session_id)
            if previous[2] == "historical_artifact":
                outcome.historical.append(session_id)
            continue
        _index_run(conn, run, outcome)
    if outcome.refresh_dirs:
        _refresh_dirs(conn, runs, outcome.refresh_dirs)
    pruned = sorted(set(existing) - set(runs))
    for session_id in pruned:
        conn.execute("BEGIN IMMEDIATE")
        _delete_run(conn, session_id)
        conn.execute("COMMIT")
    repairs = _sync_repairs(conn, root, force=bool(outcome.indexed or outcome.failed or pruned))
    error_runs = conn.execute("SELECT COUNT(*) FROM runs WHERE index_state = 'error'").fetchone()[0]
    return _report(len(runs), outcome, pruned, repairs, error_runs, probe_metadata)


def _stored_runs(conn: sqlite3.Connection, only: str | None) -> dict[str, tuple]:
    """session id -> (fingerprint, source dir, index state) of every indexed run (or just `only`)."""
    if only is None:
        stored = conn.execute("SELECT session_id, source_fingerprint, source_dir, index_state FROM runs").fetchall()
    else:
        stored = conn.execute(
            "SELECT session_id, source_fingerprint, source_dir, index_state FROM runs WHERE session_id = ?", (only,)
        ).fetchall()
    return {row[0]: row[1:] for row in stored}


def _unchanged(previous: tuple | None, fingerprint: str | None, run) -> bool:
    """Whether a run's stored row still holds: same fingerprint and directory, projected without error."""
    return (
        previous is not None
        and previous[0] == fingerprint
        and previous[1] == run.source_dir
        and previous[2] in ("current", "historical_artifact")
    )


def _index_run(conn: sqlite3.Connection, run, outcome: _Outcome) -> None:
    """Project a new or changed run and replace its rows; one that cannot be projected becomes an error row."""
    session_id = run.session_id
    # Walk again for the entries to project, and store the fingerprint of
    # exactly what is projected (the run may have changed since the cheap pass).
    try:
        entries = [] if run.is_symlink else structured_entries(run.path)
        fingerprint = "symlink" if run.is_symlink else fingerprint_entries(entries)
    except OSError:
        entries, fingerprint = None, "unreadable"
    indexed_at = utc_now()
    try:
        if entries is None:
            raise EvidenceError("run directory cannot be listed")
        from .projection import project_run

        rows = project_run(run, entries, indexed_at)
        state = _write_run(conn, run, fingerprint, rows, indexed_at)
    except EvidenceError as exc:
        _write_error(conn, run, fingerprint, exc.category, exc.message, indexed_at)
        outcome.failed.append({"session_id": session_id, "category": exc.category, "detail": exc.message})
        return
    except sqlite3.IntegrityError:
        message = "projection conflicts with another run (duplicate workflow or key)"
        _write_error(conn, run, fingerprint, "projection_conflict", message, indexed_at)
        outcome.failed.append({"session_id": session_id, "category": "projection_conflict", "detail": message})
        return
    (outcome.historical if state == "historical_artifact" else outcome.indexed).append(session_id)


def _report(discovered: int, outcome: _Outcome, pruned: list[str], repairs: dict, error_runs: int,
            probe_metadata: dict) -> dict:
    """The sync report: counts, and at most 1,000 session ids per list."""
    return {
        "schema": "agent-workflow/index-sync-report/v1",
        "discovered_count": discovered,
        "indexed_count": len(outcome.indexed),
        "skipped_count": outcome.skipped,
        "historical_count": len(outcome.historical),
        "pruned_count": len(pruned),
        "error_count": len(outcome.failed),
        "error_run_count": error_runs,
        "repair_count": repairs["indexed"],
        "repair_error_count": repairs["errors"],
        "indexed": outcome.indexed[:1000],
        "historical": outcome.historical[:1000],
        "pruned": pruned[:1000],
        "errors": outcome.failed[:1000],
        "probe_metadata": probe_metadata,
    }


def _refresh_dirs(conn: sqlite3.Connection, runs: dict, session_ids: list[str]) -> None:
    """Re-take directory mtimes stored as untrusted (-1) for runs found unchanged.

    Taken after the fingerprint matched: a file added since then makes the
    directory recent again, so it stays -1 rather than hiding the change.
    """
    values = []
    for session_id in session_ids:
        try:
            values.extend((session_id, rel, m) for rel, m in directory_mtimes(runs[session_id].path, _trusted_before()))
        except OSError:
            continue
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.executemany("DELETE FROM source_dirs WHERE session_id = ?", [(sid,) for sid in session_ids])
        conn.executemany("INSERT OR REPLACE INTO source_dirs VALUES (?, ?, ?)", values)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def _sync_repairs(conn: sqlite3.Connection, root: StateRoot, *, force: bool) -> dict:
    from .repairs import project_repairs

    try:
        fingerprint = tree_fingerprint(root.repairs)
    except OSError:
        fingerprint = "unreadable"
    stored = conn.execute("SELECT value FROM index_metadata WHERE key = 'repairs_fingerprint'").fetchone()
    if not force and stored is not None and stored[0] == fingerprint:
        counts = conn.execute(
            "SELECT (SELECT COUNT(*) FROM evidence_repairs),"
            " (SELECT COUNT(*) FROM index_errors WHERE relative_path LIKE 'evidence-repairs/%')"
        ).fetchone()
        return {"indexed": counts[0], "errors": counts[1]}
    indexed_at = utc_now()
    rows, errors = project_repairs(conn, root, indexed_at)
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute("DELETE FROM evidence_repairs")
        conn.execute("DELETE FROM index_errors WHERE relative_path LIKE 'evidence-repairs/%'")
        conn.executemany("INSERT INTO evidence_repairs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
        conn.executemany(
            "INSERT INTO index_errors(session_id, relative_path, category, detail, detected_at) VALUES (?, ?, ?, ?, ?)",
            errors,
        )
        conn.execute(
            "INSERT OR REPLACE INTO index_metadata(key, value) VALUES ('repairs_fingerprint', ?)", (fingerprint,)
        )
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return {"indexed": len(rows), "errors": len(errors)}
