"""Every query kind and filter, JSON envelope and human table, cost and workflow truth."""

from __future__ import annotations

import hashlib
import json
import os

import pytest
from aw_helpers import canonical_sha, cli, cli_json, db, write_json

from agent_workflow.cli import QUERY_KINDS
from agent_workflow.queries import FILTERS

STAGE_DEFAULTS = {
    "cache_write_input_tokens": None, "cached_input_tokens": None, "cost": None, "currency": None,
    "elapsed_seconds": 1.0, "errors": [], "first_output_latency_seconds": 0.5, "input_tokens": 10,
    "local_estimated_cost": None, "output_tokens": 5, "price_catalog_id": None, "provider_billed_cost": None,
    "provider_total_tokens": None, "reasoning_output_tokens": None, "retry_count": 0, "stage": "total",
    "steer_acknowledged_count": 0, "steer_count": 0, "steer_pending_count": 0,
}


def _status(session_id, status="running", **extra):
    return {"schema": "agent-workflow/session-status/v2", "session_id": session_id, "status": status,
            "created_at": "2026-07-30T00:00:00+00:00", "workdir": "/tmp/w", "prompt_path": None, "log_path": None,
            **extra}


def _cost_run(root, session_id, model, billed, local, currency):
    run = os.path.join(root, "runs", session_id)
    os.makedirs(run, mode=0o700)
    write_json(os.path.join(run, "status.json"), _status(session_id, "completed", executor="codex", model=model))
    stage = dict(STAGE_DEFAULTS, provider_billed_cost=billed, local_estimated_cost=local, currency=currency)
    write_json(os.path.join(run, "execution-metrics.json"),
               {"schema": "agent-workflow/execution-metrics/v1", "session_id": session_id, "stages": [stage]})


def _workflow_run(root):
    run = os.path.join(root, "runs", "wf-owner")
    os.makedirs(run, mode=0o700)
    write_json(os.path.join(run, "status.json"), _status("wf-owner"))
    write_json(os.path.join(run, "workflow-snapshot.json"), {
        "schema": "agent-workflow/workflow-snapshot/v1", "workflow_id": "wf-1", "pack_id": "pack-a",
        "nodes": [
            {"node_id": "plan", "kind": "task", "executor": "codex", "model": "m1", "dependencies": []},
            {"node_id": "build", "kind": "task", "executor": "claude", "model": "m2", "dependencies": ["plan"]},
            {"node_id": "review", "kind": "review", "executor": "codex", "model": "m1",
             "dependencies": ["plan", "build"]},
        ],
    })
    write_json(os.path.join(run, "workflow-status.json"), {
        "schema": "agent-workflow/workflow-status/v1", "workflow_id": "wf-1", "workflow_state": "running",
        "nodes": [
            {"node_id": "plan", "state": "succeeded", "run_id": "gen-0000", "attempt": 1},
            {"node_id": "build", "state": "recoverable", "run_id": "gen-0001", "attempt": 2},
            {"node_id": "review", "state": "blocked", "run_id": None, "attempt": None},
        ],
    })
    with open(os.path.join(run, "workflow-events.jsonl"), "w", encoding="utf-8") as handle:
        for index, state in enumerate(("succeeded", "recoverable")):
            handle.write(json.dumps({"schema": "agent-workflow/workflow-event/v1", "workflow_id": "wf-1",
                                     "node_id": "plan", "state": state,
                                     "recorded_at": f"2026-07-30T00:0{index}:00+00:00"}, sort_keys=True) + "\n")


def _repair(root, session_id="gen-0000"):
    run = os.path.join(root, "runs", session_id)
    with open(os.path.join(run, "final-receipt.json"), "rb") as handle:
        receipt_sha = hashlib.sha256(handle.read()).hexdigest()
    with open(os.path.join(run, "completion.json"), "rb") as handle:
        artifact_sha = hashlib.sha256(handle.read()).hexdigest()
    directory = os.path.join(root, "evidence-repairs", "rep-0001")
    os.makedirs(directory)
    os.chmod(os.path.join(root, "evidence-repairs"), 0o700)
    adapter = json.dumps({"id": "completion-adapter", "version": "1"}).encode()
    canonical = json.dumps({"result": "completed"}).encode()
    record = {
        "schema": "agent-workflow/evidence-repair/v1", "repair_id": "rep-0001", "source_session_id": session_id,
        "source_final_receipt_sha256": receipt_sha, "source_artifact_path": "completion.json",
        "source_artifact_sha256": artifact_sha,
        "adapter": {"id": "completion-adapter", "version": "1", "sha256": hashlib.sha256(adapter).hexdigest()},
        "canonical_sha256": hashlib.sha256(canonical).hexdigest(), "validation_result": "valid",
        "source_mutation_verified": True, "created_at": "2026-07-30T00:00:00+00:00",
    }
    blobs = {"adapter.json": adapter, "canonical-completion.json": canonical,
             "evidence-repair.json": json.dumps(record, sort_keys=True).encode()}
    artifacts = []
    for name, data in blobs.items():
        with open(os.path.join(directory, name), "wb") as handle:
            handle.write(data)
        os.chmod(os.path.join(directory, name), 0o444)
        artifacts.append({"path": name, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()})
    receipt = os.path.join(directory, "repair-receipt.json")
    with open(receipt, "w", encoding="utf-8") as handle:
        json.dump({"schema": "agent-workflow/evidence-repair-receipt/v1", "repair_id": "rep-0001",
                   "artifacts": artifacts}, handle)
    os.chmod(receipt, 0o444)


@pytest.fixture
def query_root(mixed_root):
    _cost_run(mixed_root, "cost-a", "m1", 1.0, 0.5, "USD")
    _cost_run(mixed_root, "cost-b", "m1", 3.0, None, "USD")
    _cost_run(mixed_root, "cost-c", "m2", 1.0, None, "USD")
    _cost_run(mixed_root, "cost-d", "m2", 2.0, 4.0, "EUR")
    _cost_run(mixed_root, "cost-e", "m3", 5.0, None, None)
    _workflow_run(mixed_root)
    _repair(mixed_root)
    # One incident opened then resolved, one left open, in one run.
    run = os.path.join(mixed_root, "runs", "syn-0000")
    with open(os.path.join(run, "incident-events.jsonl"), encoding="utf-8") as handle:
        opened = json.loads(handle.readline())
    resolved = dict(opened, state="resolved", recorded_at="2026-12-02T13:20:00+00:00")
    with open(os.path.join(run, "incident-events.jsonl"), "a", encoding="utf-8") as handle:
        handle.write(json.dumps(resolved, sort_keys=True, separators=(",", ":")) + "\n")
    code, out, err = cli("index", "rebuild", "--state-root", mixed_root)
    assert code == 0, out + err
    return mixed_root


def _query(root, kind, *args):
    code, report = cli_json("index", "query", kind, "--state-root", root, "--limit", "1000", *args)
    assert code == 0
    assert report["schema"] == "agent-workflow/index-query/v1" and report["kind"] == kind
    for key in ("database", "authority", "freshness", "current_run_count", "stale_run_count", "error_count"):
        assert key in report
    return report["rows"]


def test_cost_sources_are_never_coalesced(query_root):
    rows = {(r["model"], r["stage"]): r for r in _query(query_root, "performance", "--executor", "codex")}
    m1 = rows[("m1", "total")]
    assert (m1["provider_billed_sample_count"], m1["provider_billed_average"], m1["provider_billed_currency"]) == (
        2, 2.0, "USD")
    assert (m1["local_estimate_sample_count"], m1["local_estimate_average"], m1["local_estimate_currency"]) == (
        1, 0.5, "USD")
    m2 = rows[("m2", "total")]
    assert (m2["provider_billed_sample_count"], m2["provider_billed_average"], m2["provider_billed_currency"]) == (
        2, None, None)
    assert (m2["local_estimate_sample_count"], m2["local_estimate_average"], m2["local_estimate_currency"]) == (
        1, 4.0, "EUR")
    m3 = rows[("m3", "total")]
    assert (m3["provider_billed_sample_count"], m3["provider_billed_average"], m3["provider_billed_currency"]) == (
        1, None, None)
    assert [r["model"] for r in _query(query_root, "performance", "--model", "m2")] == ["m2"]


def test_workflows_nodes_and_edges(query_root):
    workflows = _query(query_root, "workflows")
    assert [(w["workflow_id"], w["node_count"], w["edge_count"], w["event_count"]) for w in workflows] == [
        ("wf-1", 3, 3, 2)]
    assert _query(query_root, "workflows", "--state", "running", "--pack", "pack-a")[0]["owner_run_id"] == "wf-owner"
    assert _query(query_root, "workflows", "--state", "done") == []
    nodes = _query(query_root, "workflow-nodes", "--state", "recoverable")
    assert [(n["node_id"], n["run_id"], n["attempt"], n["depends_on"]) for n in nodes] == [
        ("build", "gen-0001", 2, "plan")]
    assert {n["node_id"] for n in _query(query_root, "workflow-nodes", "--executor", "codex", "--model", "m1")} == {
        "plan", "review"}


def test_repairs_are_linked_to_the_sealed_source(query_root):
    rows = _query(query_root, "repairs", "--session", "gen-0000")
    assert len(rows) == 1 and rows[0]["repair_id"] == "rep-0001" and rows[0]["source_mutation_verified"] == 1
    conn = db(query_root)
    assert rows[0]["source_final_receipt_sha256"] == conn.execute(
        "SELECT final_receipt_sha256 FROM runs WHERE session_id = 'gen-0000'").fetchone()[0]
    assert _query(query_root, "repairs", "--session", "gen-0001") == []


def test_incidents_report_their_latest_state(query_root):
    rows = _query(query_root, "incidents", "--session", "syn-0000")
    assert [(r["state"], r["event_count"]) for r in rows] == [("resolved", 2)]
    open_rows = _query(query_root, "incidents", "--state", "open")
    assert "syn-0000" not in {r["session_id"] for r in open_rows}
    assert {r["category"] for r in _query(query_root, "incidents", "--category", "process_alive_no_progress")} == {
        "process_alive_no_progress"}
    row = _query(query_root, "incidents", "--category", "unclassified")[0]
    for key in ("relative_path", "source_sequence", "record_sha256", "receipt_sha256", "source_dir",
                "storage_class", "indexed_at"):
        assert key in row


@pytest.mark.parametrize(
    "kind,argv,check",
    [
        ("runs", ("--session", "gen-0002"), lambda r: [x["session_id"] for x in r] == ["gen-0002"]),
        ("runs", ("--state", "running"), lambda r: {x["durable_status"] for x in r} == {"running"} and len(r) == 4),
        ("runs", ("--executor", "codex", "--model", "m1"), lambda r: {x["session_id"] for x in r} == {"cost-a", "cost-b"}),
        ("runs", ("--pack", "synthetic"), lambda r: len(r) == 3),
        ("permissions", ("--session", "syn-0001"), lambda r: len(r) == 1 and r[0]["state"] == "cleared"),
        ("permissions", ("--state", "pending"), lambda r: r == []),
        ("errors", ("--session", "gen-0000"), lambda r: r == []),
        ("errors", ("--category", "record_invalid"), lambda r: r == []),
        ("runs", ("--session", "x' OR '1'='1"), lambda r: r == []),
    ],
)
def test_filters(query_root, kind, argv, check):
    assert check(_query(query_root, kind, *argv))


def test_every_kind_has_json_and_human_output(query_root):
    assert set(QUERY_KINDS) == set(FILTERS)
    for kind in QUERY_KINDS:
        code, out, err = cli("index", "query", kind, "--state-root", query_root)
        assert code == 0, err
        first, _, rest = out.partition("\n")
        assert first.startswith("index: current (") and first.endswith("0 errors)")
        assert rest.strip()


def test_unsupported_filter_and_limits_are_usage_errors(query_root):
    assert cli("index", "query", "workflows", "--session", "x", "--state-root", query_root)[0] == 64
    assert cli("index", "query", "runs", "--limit", "0", "--state-root", query_root)[0] == 64
    assert cli("index", "query", "runs", "--limit", "10001", "--state-root", query_root)[0] == 64
    assert cli("index", "query", "sql", "--state-root", query_root)[0] == 64
    rows = _query(query_root, "runs")
    code, report = cli_json("index", "query", "runs", "--limit", "2", "--state-root", query_root)
    assert len(report["rows"]) == 2 < len(rows)


def test_envelope_reports_errors_and_staleness(query_root):
    path = os.path.join(query_root, "runs", "cost-a", "execution-metrics.json")
    with open(path, encoding="utf-8") as handle:
        value = json.load(handle)
    value["stages"][0]["provider_billed_cost"] = -1
    write_json(path, value)
    code, report = cli_json("index", "query", "runs", "--state-root", query_root)
    assert report["freshness"] == "stale" and report["stale_run_count"] == 1
    assert cli("index", "sync", "--state-root", query_root)[0] == 65
    code, report = cli_json("index", "query", "errors", "--state-root", query_root)
    assert report["freshness"] == "incomplete" and report["error_count"] == 1
    assert report["rows"][0]["session_id"] == "cost-a" and report["rows"][0]["category"] == "record_invalid"
    code, out, _ = cli("index", "query", "errors", "--state-root", query_root)
    assert out.startswith("index: incomplete (") and "1 errors)" in out.splitlines()[0]
    assert canonical_sha({"a": 1})


def test_run_rows_count_latest_states_like_the_overview_view(query_root):
    rows = {r["session_id"]: r for r in _query(query_root, "runs")}
    view = {
        sid: (incidents, permissions)
        for sid, incidents, permissions in db(query_root).execute(
            "SELECT session_id, open_incident_count, pending_permission_count FROM run_overview"
            " WHERE index_state != 'historical_artifact'"
        )
    }
    assert {sid: (r["open_incident_count"], r["pending_permission_count"]) for sid, r in rows.items()} == view
    # syn-0000's only incident was resolved: by latest state it is not open.
    assert rows["syn-0000"]["open_incident_count"] == 0
    assert sum(r["open_incident_count"] for r in rows.values()) > 0
