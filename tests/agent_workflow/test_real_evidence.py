"""The 200 real launched runs and 200 real journal runs index completely and truthfully."""

from __future__ import annotations

import json
import os

from aw_helpers import cli, cli_json, db, snapshot

from agent_workflow import index_store


def _direct_records(root: str, name: str) -> list[dict]:
    records = []
    for run in sorted(os.listdir(os.path.join(root, "runs"))):
        path = os.path.join(root, "runs", run, name)
        if os.path.exists(path):
            with open(path, encoding="utf-8") as handle:
                records += [json.loads(line) for line in handle if line.strip()]
    return records


def test_all_launched_runs_index_as_current_with_no_errors(launched_indexed):
    conn = db(launched_indexed)
    states = dict(conn.execute("SELECT index_state, COUNT(*) FROM runs GROUP BY index_state").fetchall())
    assert states == {"current": 200}
    assert conn.execute("SELECT COUNT(*) FROM index_errors").fetchone()[0] == 0
    assert conn.execute("SELECT COUNT(*) FROM runs WHERE evidence_complete = 1").fetchone()[0] == 200
    statuses = dict(conn.execute("SELECT durable_status, COUNT(*) FROM runs GROUP BY durable_status").fetchall())
    assert statuses == {"completed": 160, "failed": 40}
    assert conn.execute("SELECT COUNT(*) FROM runs WHERE disposition = 'reviewed'").fetchone()[0] == 40


def test_launched_typed_rows_match_the_source_files(launched_indexed):
    conn = db(launched_indexed)
    root = launched_indexed
    # Lifecycle events: one events row per record, with the record's own sequence as event_id.
    lifecycle = _direct_records(root, "events.jsonl")
    assert conn.execute(
        "SELECT COUNT(*) FROM events WHERE schema_id = 'agent-workflow/lifecycle-event/v1'"
    ).fetchone()[0] == len(lifecycle) == 840
    health = _direct_records(root, "run-health-samples.jsonl")
    assert conn.execute("SELECT COUNT(*) FROM health_samples").fetchone()[0] == len(health)
    incidents = _direct_records(root, "incident-events.jsonl")
    assert conn.execute("SELECT COUNT(*) FROM incident_events").fetchone()[0] == len(incidents) == 40
    assert conn.execute("SELECT COUNT(*) FROM process_results").fetchone()[0] == 200
    assert conn.execute("SELECT COUNT(*) FROM execution_metrics").fetchone()[0] == 600
    # Spot-check one run value by value against a direct read.
    run_dir = os.path.join(root, "runs", "gen-0004")
    with open(os.path.join(run_dir, "process-result.json"), encoding="utf-8") as handle:
        process = json.load(handle)
    row = conn.execute(
        "SELECT returncode, exit_code, duration_seconds, error_category, stdout_bytes, runner_pid FROM process_results"
        " WHERE session_id = 'gen-0004'"
    ).fetchone()
    assert row == (process["returncode"], process["exit_code"], process["duration_seconds"],
                   process["error_category"], process["stdout_bytes"], process["runner_pid"])
    with open(os.path.join(run_dir, "status.json"), encoding="utf-8") as handle:
        status = json.load(handle)
    run = conn.execute(
        "SELECT durable_status, failure_category, executor, model, attempt_classification, final_receipt_sha256"
        " FROM runs WHERE session_id = 'gen-0004'"
    ).fetchone()
    assert run == (status["status"], status["failure_category"], status["executor"], status["model"],
                   status["attempt_classification"], status["final_receipt_sha256"])
    first_sample = _direct_records(run_dir.rsplit("/runs/", 1)[0], "run-health-samples.jsonl")[0]
    sample = conn.execute(
        "SELECT runner_pid, runner_alive, executor_rss_bytes, disk_free_bytes, seconds_since_semantic_progress"
        " FROM health_samples WHERE session_id = 'gen-0000' AND source_sequence = 1"
    ).fetchone()
    assert sample == (first_sample["runner"]["pid"], int(first_sample["runner"]["alive"]),
                      first_sample["executor"]["rss_bytes"], first_sample["host"]["disk_free_bytes"],
                      first_sample["seconds_since_semantic_progress"])
    # Every structured file is a source_files row with its raw-byte digest.
    structured = sum(
        1 for dirpath, _, files in os.walk(os.path.join(root, "runs")) for f in files if f.endswith((".json", ".jsonl"))
    )
    assert conn.execute("SELECT COUNT(*) FROM source_files").fetchone()[0] == structured


def test_journal_runs_populate_health_permission_incident_and_remediation(journals_indexed):
    conn = db(journals_indexed)
    root = journals_indexed
    assert dict(conn.execute("SELECT index_state, COUNT(*) FROM runs GROUP BY index_state").fetchall()) == {"current": 200}
    for table, name in (
        ("health_samples", "run-health-samples.jsonl"),
        ("permission_events", "permission-events.jsonl"),
        ("incident_events", "incident-events.jsonl"),
        ("remediation_events", "remediation-events.jsonl"),
    ):
        direct = _direct_records(root, name)
        assert direct
        assert conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] == len(direct), table
    remediation = _direct_records(root, "remediation-events.jsonl")[0]
    stored = conn.execute(
        "SELECT rule_id, action, outcome, reason_sha256 FROM remediation_events WHERE session_id = ?",
        (remediation["session_id"],),
    ).fetchone()
    import hashlib

    assert stored == (remediation["rule_id"], remediation["action"], remediation["outcome"],
                      hashlib.sha256(remediation["reason"].encode()).hexdigest())


def test_no_raw_content_reaches_the_projection(journals_indexed):
    """Terminal text, free-form reasons and prompts never appear in any table."""
    conn = db(journals_indexed)
    forbidden = ("Permission required", "working...", "/home/agent", "resumed 0")
    tables = [name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    assert "remediation_events" in tables
    for table in tables:
        for row in conn.execute(f"SELECT * FROM {table}"):
            # The remediation reason is the free-form text "stalled": only its digest may be stored.
            assert "stalled" not in row, table
            text = "|".join(str(v) for v in row)
            for needle in forbidden:
                assert needle not in text, (table, needle)


def test_counts_reflect_the_latest_state_of_each_item(journals_indexed):
    """Each journal run had a permission pending then cleared: nothing is pending now."""
    code, report = cli_json("index", "query", "runs", "--state-root", journals_indexed, "--limit", "500")
    assert code == 0
    assert sum(row["pending_permission_count"] for row in report["rows"]) == 0
    assert sum(row["open_incident_count"] for row in report["rows"]) == 200
    code, pending = cli_json("index", "query", "permissions", "--state-root", journals_indexed, "--state", "pending")
    assert pending["rows"] == []
    code, cleared = cli_json("index", "query", "permissions", "--state-root", journals_indexed, "--state", "cleared",
                             "--limit", "1000")
    assert cleared["row_count"] == 200 and all(r["event_count"] == 2 for r in cleared["rows"])
    conn = db(journals_indexed)
    assert conn.execute("SELECT COUNT(*) FROM permission_events WHERE state = 'pending'").fetchone()[0] == 200


def test_every_command_leaves_the_state_root_byte_identical(mixed_root):
    before = snapshot(mixed_root)
    commands = [
        ("index", "rebuild"),
        ("index", "sync"),
        ("index", "status"),
        ("index", "verify", "--full"),
        ("index", "verify", "--full", "--review", "gen-0000"),
        ("index", "query", "runs"),
        ("index", "query", "incidents"),
        ("index", "query", "errors"),
    ]
    for argv in commands:
        code, _, err = cli(*argv, "--state-root", mixed_root)
        assert code == 0, (argv, err)
        assert snapshot(mixed_root) == before, argv


def test_rebuild_reports_through_the_facade(mixed_root):
    root = index_store.open_root(mixed_root)
    report = index_store.sync(root, rebuild=True)
    assert report["indexed_count"] == 9 and report["error_count"] == 0
    again = index_store.sync(root)
    assert again["skipped_count"] == 9 and again["indexed_count"] == 0
