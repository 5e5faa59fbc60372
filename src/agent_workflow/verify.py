"""`index verify --full`: prove the projection still matches its sources.

For every indexed run (or just the reviewed one) the run is re-read and
re-projected from source exactly as the reconciler would (no-follow reads,
contract validation, full sealed-receipt re-hash), and the result is compared
with the stored fingerprint, source-file digests and typed row digests. Runs
on disk but not indexed, indexed but gone, or in error make the index
invalid; historical artifacts are reported as quarantined, not valid.
Uses only the read-only connection; never writes anything.
"""

from __future__ import annotations

import sqlite3

from .discovery import discover_runs, fingerprint_entries, structured_entries
from .errors import EvidenceError
from .projection import project_run
from .state_root import StateRoot

_DIGEST_TABLES = (
    ("events", "events"),
    ("health", "health_samples"),
    ("permissions", "permission_events"),
    ("incidents", "incident_events"),
    ("remediations", "remediation_events"),
)


def _problem(problems: list, session_id, category: str, detail: str) -> None:
    if len(problems) < 1000:
        problems.append({"session_id": session_id, "category": category, "detail": detail})


def _check_run(conn, run, stored_row, problems) -> None:
    session_id = run.session_id
    fingerprint, state = stored_row
    try:
        entries = structured_entries(run.path)
    except OSError:
        _problem(problems, session_id, "source_unreadable", "run directory cannot be listed")
        return
    if fingerprint_entries(entries) != fingerprint:
        _problem(problems, session_id, "source_changed", "structured sources changed since indexing")
    try:
        rows = project_run(run, entries, "")
    except EvidenceError as exc:
        _problem(problems, session_id, exc.category, exc.message)
        return
    stored_files = {
        r[0]: (r[1], r[2])
        for r in conn.execute("SELECT relative_path, size_bytes, sha256 FROM source_files WHERE session_id = ?", (session_id,))
    }
    fresh_files = {r[1]: (r[2], r[5]) for r in rows.source_files}
    for rel in sorted(set(stored_files) | set(fresh_files)):
        if stored_files.get(rel) != fresh_files.get(rel):
            _problem(problems, session_id, "source_digest_mismatch", f"{rel}: content differs from the indexed digest")
    receipt = conn.execute("SELECT final_receipt_sha256 FROM runs WHERE session_id = ?", (session_id,)).fetchone()[0]
    if receipt != rows.run.get("final_receipt_sha256"):
        _problem(problems, session_id, "receipt_digest_mismatch", "final receipt digest differs from the indexed one")
    if state != "current":
        return
    for attr, table in _DIGEST_TABLES:
        stored = [
            r[0]
            for r in conn.execute(
                f"SELECT record_sha256 FROM {table} WHERE session_id = ? ORDER BY relative_path, source_sequence",
                (session_id,),
            )
        ]
        fresh = [row[-1] for row in sorted(getattr(rows, attr), key=lambda row: (row[1], row[2]))]
        if stored != fresh:
            _problem(problems, session_id, "record_digest_mismatch", f"{table} rows differ from their sources")


def verify_full(conn: sqlite3.Connection, root: StateRoot, *, review: str | None = None) -> dict:
    """Check the index database and every indexed run against its evidence; return problems and quarantined runs."""
    problems: list[dict] = []
    quarantined: list[dict] = []
    check = conn.execute("PRAGMA quick_check").fetchone()[0]
    if check != "ok":
        _problem(problems, None, "database_corrupt", "SQLite quick_check failed")
    discovered = discover_runs(root, review)
    if review is None:
        stored = conn.execute("SELECT session_id, source_fingerprint, index_state, index_error, source_dir FROM runs").fetchall()
    else:
        stored = conn.execute(
            "SELECT session_id, source_fingerprint, index_state, index_error, source_dir FROM runs WHERE session_id = ?",
            (review,),
        ).fetchall()
    by_id = {row[0]: row for row in stored}
    checked = 0
    for session_id in sorted(set(discovered) | set(by_id)):
        run = discovered.get(session_id)
        row = by_id.get(session_id)
        if row is None:
            _problem(problems, session_id, "not_indexed", "run exists on disk but is not in the index")
            continue
        if run is None:
            _problem(problems, session_id, "source_missing", "indexed run no longer exists on disk")
            continue
        if row[4] != run.source_dir:
            _problem(problems, session_id, "source_moved", "run moved between runs/ and archive/ since indexing")
        if row[2] == "error":
            _problem(problems, session_id, "run_in_error", row[3] or "run could not be indexed")
            continue
        checked += 1
        if row[2] == "historical_artifact":
            quarantined.append({"session_id": session_id, "detail": row[3]})
        _check_run(conn, run, (row[1], row[2]), problems)
    if review is None:
        for error_id, rel, category, detail in conn.execute(
            "SELECT error_id, relative_path, category, detail FROM index_errors WHERE relative_path LIKE 'evidence-repairs/%'"
        ):
            _problem(problems, None, category, detail)
    report = {
        "schema": "agent-workflow/index-verify/v1",
        "database": root.database,
        "valid": not problems,
        "checked_run_count": checked,
        "quarantined_count": len(quarantined),
        "problem_count": len(problems),
        "problems": problems,
        "quarantined": quarantined[:1000],
    }
    if review is not None:
        row = conn.execute(
            "SELECT session_id, index_state, durable_status, storage_class, final_receipt_sha256, indexed_at,"
            " (SELECT COUNT(*) FROM source_files f WHERE f.session_id = runs.session_id) AS source_file_count"
            " FROM runs WHERE session_id = ?",
            (review,),
        ).fetchone()
        names = ("session_id", "index_state", "durable_status", "storage_class", "final_receipt_sha256", "indexed_at",
                 "source_file_count")
        report["review"] = dict(zip(names, row)) if row else None
    return report
