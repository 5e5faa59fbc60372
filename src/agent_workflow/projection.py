"""Turn one run directory into the normalised rows of the projection.

`project_run` reads every structured artifact of a run (no-follow, bounded,
shared-locked journals), validates each known record, verifies the sealed
receipt, and returns plain row tuples. It never touches the database and
never writes to the run: the reconciler decides what to do with the rows or
with the `EvidenceError` raised for a bad run.

Only normalised fields and provenance are kept. Logs, terminal content,
prompts, completion prose and provider payload bodies are never copied into a
row; free-form remediation reasons are replaced by their SHA-256.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

from . import contracts
from .discovery import RunDir
from .errors import RecordInvalid, UnsafeSource
from .limits import MAX_FIELD_CHARS, MAX_JSON_BYTES, MAX_JSONL_BYTES, MAX_SUMMARY_CHARS
from .receipts import RECEIPT_NAME, verify_seal
from .source_io import count_lines, iter_jsonl, parse_json_object, read_source, record_sha256, sha256_hex, text_sha256

#: Provider output streams: hashed and counted, never parsed into rows.
PROVIDER_STREAMS = frozenset({"executor-events.jsonl"})
LIFECYCLE = "agent-workflow/lifecycle-event/v1"
HEALTH = "agent-workflow/run-health-sample/v1"
PERMISSION = "agent-workflow/permission-event/v1"
INCIDENT = "agent-workflow/incident-event/v1"
REMEDIATION = "agent-workflow/remediation-event/v1"
TERMINAL = "agent-workflow/terminal-event/v1"


def bounded(value, limit: int = MAX_FIELD_CHARS):
    """A short text column: strings cut to `limit`, anything else dropped."""
    if isinstance(value, str):
        return value[:limit]
    return None


def flag(value):
    """A JSON boolean as SQLite stores it (0 or 1), keeping null."""
    return None if value is None else int(bool(value))


def number(value):
    """A JSON number as is; anything else, booleans included, as null."""
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


@dataclass
class RunRows:
    """Every projection row one run contributes, table by table, ready for one transaction."""
    run: dict
    source_files: list = field(default_factory=list)
    events: list = field(default_factory=list)
    health: list = field(default_factory=list)
    permissions: list = field(default_factory=list)
    incidents: list = field(default_factory=list)
    remediations: list = field(default_factory=list)
    process_result: tuple | None = None
    metrics: list = field(default_factory=list)
    workflow: tuple | None = None
    nodes: list = field(default_factory=list)
    edges: list = field(default_factory=list)
    retired_schema: str | None = None


def _event_row(sid, rel, seq, schema, record, digest):
    if schema == LIFECYCLE:
        return (sid, rel, seq, schema, str(record["sequence"]), record["timestamp"], bounded(record["dimension"]),
                bounded(record["new"]), None, digest)
    if schema == PERMISSION:
        return (sid, rel, seq, schema, record["event_id"], record["recorded_at"], bounded(record["operation"]),
                bounded(record["state"]), None, digest)
    if schema == INCIDENT:
        return (sid, rel, seq, schema, record["incident_id"], record["recorded_at"], bounded(record["category"]),
                bounded(record["state"]), None, digest)
    if schema == REMEDIATION:
        return (sid, rel, seq, schema, bounded(record["event_id"]), record["recorded_at"], bounded(record["action"]),
                None, bounded(record["outcome"]), digest)
    if schema == HEALTH:
        return (sid, rel, seq, schema, None, record["recorded_at"], "health", None, None, digest)
    if schema == TERMINAL:
        return (sid, rel, seq, schema, None, record["recorded_at"], "terminal", None, None, digest)
    recorded = record.get("recorded_at", record.get("timestamp"))
    category = record.get("event", record.get("category", record.get("type")))
    return (sid, rel, seq, bounded(schema), bounded(record.get("event_id")), bounded(recorded), bounded(category),
            bounded(record.get("state")), bounded(record.get("outcome")), digest)


def _health_row(sid, rel, seq, r, digest):
    runner, executor, host = r["runner"], r["executor"], r["host"]
    rss = [v for v in (runner.get("rss_bytes"), executor.get("rss_bytes")) if isinstance(v, int)]
    return (sid, rel, seq, r["recorded_at"], runner.get("pid"), flag(runner.get("alive")), executor.get("pid"),
            flag(executor.get("alive")), runner.get("rss_bytes"), executor.get("rss_bytes"),
            sum(rss) if rss else None, host.get("disk_free_bytes"), number(r["seconds_since_semantic_progress"]),
            bounded(r["last_semantic_progress_source"]), digest)


def _permission_row(sid, rel, seq, r, digest):
    target = r["target"]
    return (sid, rel, seq, r["event_id"], r["recorded_at"], bounded(r["principal"]), bounded(r["operation"]),
            bounded(r["resource_class"]), None if target is None else text_sha256(target),
            bounded(r["requested_access"]), r["state"], bounded(r["source"]), bounded(r["policy_rule_id"]),
            r["evidence_sha256"], bounded(r["remediation_class"]), digest)


def _incident_row(sid, rel, seq, r, digest):
    return (sid, rel, seq, r["incident_id"], r["fingerprint"], r["recorded_at"], bounded(r["category"]),
            bounded(r["severity"]), r["state"], r["summary"][:MAX_SUMMARY_CHARS], digest)


def _remediation_row(sid, rel, seq, r, digest):
    reason = r["reason"]
    return (sid, rel, seq, bounded(r["event_id"]), bounded(r["incident_id"]), r["recorded_at"], bounded(r["rule_id"]),
            bounded(r["action"]), bounded(r["outcome"]), None if reason is None else text_sha256(reason), digest)


#: Journal records that add a row to a table of their own, besides their event row.
_RECORD_TABLES = {
    HEALTH: ("health", _health_row),
    PERMISSION: ("permissions", _permission_row),
    INCIDENT: ("incidents", _incident_row),
    REMEDIATION: ("remediations", _remediation_row),
}


def project_run(run: RunDir, entries, indexed_at: str) -> RunRows:
    """Read, validate and normalise one run; raise an `EvidenceError` when it cannot be projected."""
    sid = run.session_id
    if run.is_symlink:
        raise UnsafeSource("run directory is a symbolic link")
    rows = RunRows(run={})
    docs, known, stats = _read_sources(run, entries, rows)
    final_receipt_sha256, sealed_count = _final_receipt(run, docs, known, stats)
    _lifecycle_receipts(docs, final_receipt_sha256)
    _check_run_ids(docs, sid)
    rows.run = _run_row(docs, final_receipt_sha256, sealed_count)
    process = docs.get("process-result.json")
    if process is not None:
        rows.process_result = _process_row(sid, process)
    metrics = docs.get("execution-metrics.json")
    if metrics is not None:
        rows.metrics.extend(_metric_rows(sid, metrics))
    _workflow(rows, sid, docs, known)
    return rows


def _read_sources(run: RunDir, entries, rows: RunRows) -> tuple[dict, dict, dict]:
    """Read and validate every structured artifact of `run`, adding its source-file and journal rows to `rows`.

    Returns, by relative path, each JSON document parsed, each file's
    (length, SHA-256), and each file's stat result.
    """
    sid = run.session_id
    docs: dict[str, dict] = {}
    known: dict[str, tuple[int, str]] = {}
    stats: dict[str, os.stat_result] = {}
    for rel, _size, _mtime, _mode, _uid, is_link in entries:
        if is_link:
            raise UnsafeSource(f"{rel}: is a symbolic link")
        path = os.path.join(run.path, rel)
        is_journal = rel.endswith(".jsonl")
        data, st = read_source(path, rel, MAX_JSONL_BYTES if is_journal else MAX_JSON_BYTES, shared_lock=is_journal)
        digest = sha256_hex(data)
        known[rel] = (len(data), digest)
        stats[rel] = st
        if not is_journal:
            record = parse_json_object(data, rel)
            schema = contracts.validate(record, rel, sid)
            schemas = {schema} if schema else set()
            docs[rel] = record
            count = 1
        elif rel.rsplit("/", 1)[-1] in PROVIDER_STREAMS:
            schemas, count = set(), count_lines(data)
        else:
            schemas, count = _read_journal(rows, sid, rel, data)
        retired = schemas & contracts.RETIRED_SCHEMA_IDS
        if retired and rows.retired_schema is None:
            rows.retired_schema = min(retired)
        rows.source_files.append(
            (sid, rel, st.st_size, st.st_mtime_ns, st.st_mode & 0o7777, digest, count,
             json.dumps(sorted(schemas), separators=(",", ":")))
        )
    return docs, known, stats


def _read_journal(rows: RunRows, sid: str, rel: str, data: bytes) -> tuple[set[str], int]:
    """Validate a journal's records in order and add their rows; return the schemas met and the record count.

    Lifecycle records must number 1, 2, 3... in order.
    """
    schemas: set[str] = set()
    count = 0
    expected_sequence = 1
    for seq, record in iter_jsonl(data, rel):
        count += 1
        where = f"{rel}:{seq}"
        schema = contracts.validate(record, where, sid)
        if schema:
            schemas.add(schema)
        rdigest = record_sha256(record)
        if schema == LIFECYCLE:
            if record["sequence"] != expected_sequence:
                raise RecordInvalid(f"{where}: lifecycle sequence is not contiguous")
            expected_sequence += 1
        rows.events.append(_event_row(sid, rel, seq, schema, record, rdigest))
        table = _RECORD_TABLES.get(schema)
        if table is not None:
            name, row = table
            getattr(rows, name).append(row(sid, rel, seq, record, rdigest))
    return schemas, count


def _final_receipt(run: RunDir, docs: dict, known: dict, stats: dict) -> tuple[str | None, int | None]:
    """(SHA-256, sealed artifact count) of the run's final receipt, its seal verified; (None, None) without one."""
    receipt = docs.get(RECEIPT_NAME)
    if receipt is None:
        return None, None
    if receipt.get("schema") != "agent-workflow/final-receipt/v1":
        raise RecordInvalid(f"{RECEIPT_NAME}: not a final receipt")
    sealed_count = verify_seal(run.path, receipt, stats[RECEIPT_NAME], known)
    return known[RECEIPT_NAME][1], sealed_count


def _check_run_ids(docs: dict, sid: str) -> None:
    """Refuse a launch contract or ledger row that names another run than its directory."""
    launch = docs.get("launch-contract.json") or {}
    if launch and launch["session"]["id"] != sid:
        raise RecordInvalid("launch-contract.json: session id names another run")
    ledger = docs.get("ledger-row.json") or {}
    if ledger and ledger["run_id"] != sid:
        raise RecordInvalid("ledger-row.json: run_id names another run")


def _first(*values):
    """The first of `values` that is not None (a field's sources in order of authority)."""
    for value in values:
        if value is not None:
            return value
    return None


def _run_row(docs: dict, final_receipt_sha256: str | None, sealed_count: int | None) -> dict:
    """The run's own row: each field from the first document that holds it, bounded."""
    launch = docs.get("launch-contract.json") or {}
    status = docs.get("status.json") or docs.get("final-status.json") or {}
    provenance = docs.get("run-provenance.json") or {}
    ledger = docs.get("ledger-row.json") or {}
    scores = docs.get("scores/score-set.json") or {}
    process = docs.get("process-result.json")
    session = launch.get("session") or {}
    plan = launch.get("command_plan") or {}
    worktree = launch.get("worktree") or {}
    pack = launch.get("pack") or {}
    workflow_binding = provenance.get("workflow") or {}
    exit_code = _first(provenance.get("exit_code"), (process or {}).get("exit_code"), status.get("exit_code"))
    return {
        "launch_schema": bounded(launch.get("schema")),
        "ticket_id": bounded(_first(launch.get("ticket"), status.get("ticket_id"), ledger.get("ticket_id"))),
        "pack_id": bounded(_first(pack.get("id"), status.get("pack_id"), ledger.get("pack_id"))),
        "workflow_id": bounded(workflow_binding.get("workflow_id")),
        "workflow_node_id": bounded(workflow_binding.get("node_id")),
        "retry_of_run_id": bounded(_first(session.get("retry_of"), provenance.get("retry_of_run_id"))),
        "agent_name": bounded(_first(session.get("agent_name"), provenance.get("agent_name"))),
        "agent_class": bounded(_first(session.get("agent_class"), provenance.get("agent_class"))),
        "tier": bounded(session.get("tier")),
        "executor": bounded(_first(plan.get("executor"), provenance.get("executor"), status.get("executor"))),
        "model": bounded(_first(plan.get("model"), provenance.get("model"), status.get("model"))),
        "interactive": flag(plan.get("interactive")),
        "source_revision": bounded(_first(worktree.get("source_revision"), provenance.get("source_revision"))),
        "branch": bounded(worktree.get("branch")),
        "created_at": bounded(_first(session.get("created_at"), status.get("created_at"))),
        "started_at": bounded(_first(provenance.get("started_at"), status.get("started_at"))),
        "finished_at": bounded(_first(provenance.get("finished_at"), status.get("finished_at"))),
        "updated_at": bounded(status.get("updated_at")),
        "durable_status": bounded(status.get("status")),
        "disposition": bounded(_first(status.get("disposition"), ledger.get("disposition"))),
        "failure_category": bounded(status.get("failure_category")),
        "exit_code": exit_code if type(exit_code) is int else None,
        "final_receipt_sha256": final_receipt_sha256,
        "evidence_complete": int(final_receipt_sha256 is not None),
        "sealed_artifact_count": sealed_count,
        "executor_result": bounded(_first(ledger.get("executor_result"), status.get("executor_result"))),
        "completion_result": bounded(_first(ledger.get("completion_result"), status.get("completion_result"))),
        "policy_result": bounded(_first(ledger.get("policy_result"), status.get("policy_result"))),
        "acceptance_eligible": flag(_first(ledger.get("acceptance_eligible"), status.get("acceptance_eligible"))),
        "attempt_classification": bounded(
            _first(ledger.get("attempt_classification"), status.get("attempt_classification"))),
        "score_verdict": bounded(_first(scores.get("verdict"), ledger.get("evaluation_result"))),
        "evaluation_state": bounded(_first(ledger.get("evaluation_state"), status.get("evaluation_state"))),
    }


def _process_row(sid: str, p: dict) -> tuple:
    """The row of `process-result.json`: how the executor's process ended."""
    signal = p["signal"]
    return (
        sid, "process-result.json", p["returncode"], p["exit_code"], None if signal is None else str(signal),
        int(p["timed_out"]), int(p["cancelled"]), int(p["stdout_truncated"]), int(p["stderr_truncated"]),
        p["stdout_bytes"], p["stderr_bytes"], number(p["duration_seconds"]), bounded(p["error_category"]),
        p["runner_pid"], p.get("executor_pid"), bounded(p["recorded_at"]), record_sha256(p),
    )


def _metric_rows(sid: str, metrics: dict) -> list[tuple]:
    """One row per stage of `execution-metrics.json`: tokens, costs, latency, retries."""
    return [
        (
            sid, bounded(stage["stage"]), "execution-metrics.json", index, stage["input_tokens"],
            stage["cached_input_tokens"], stage["output_tokens"], stage["reasoning_output_tokens"],
            stage["provider_total_tokens"], number(stage["provider_billed_cost"]),
            number(stage["local_estimated_cost"]), bounded(stage["currency"]), number(stage["elapsed_seconds"]),
            number(stage["first_output_latency_seconds"]), stage["retry_count"], stage["steer_count"],
            record_sha256(stage),
        )
        for index, stage in enumerate(metrics["stages"], start=1)
    ]


def _lifecycle_receipts(docs: dict, final_receipt_sha256: str | None) -> None:
    numbers = []
    for rel, record in docs.items():
        if rel.startswith("receipts/") and record.get("schema") == "agent-workflow/lifecycle-receipt/v1":
            name = rel[len("receipts/"):]
            head = name.split("-", 1)[0]
            if not head.isdigit() or "/" in name:
                raise RecordInvalid(f"{rel}: lifecycle receipt name is malformed")
            numbers.append(int(head))
            bound = record["final_receipt_sha256"]
            if bound is not None and final_receipt_sha256 is not None and bound != final_receipt_sha256:
                raise RecordInvalid(f"{rel}: lifecycle receipt binds another final receipt")
    if sorted(numbers) != list(range(1, len(numbers) + 1)):
        raise RecordInvalid("receipts/: lifecycle receipt numbers are not contiguous")


def _workflow(rows: RunRows, sid: str, docs: dict, known: dict) -> None:
    snapshot = docs.get("workflow-snapshot.json")
    status = docs.get("workflow-status.json")
    run_doc = docs.get("workflow-run.json")
    if snapshot is None and status is None and run_doc is None:
        return
    ids = {d["workflow_id"] for d in (snapshot, status, run_doc) if d is not None}
    if len(ids) != 1:
        raise RecordInvalid("workflow artifacts disagree on workflow_id")
    workflow_id = bounded(ids.pop())
    event_count = None
    if "workflow-events.jsonl" in known:
        event_count = sum(1 for e in rows.events if e[1] == "workflow-events.jsonl")
    elif status is not None:
        event_count = status.get("event_count")
    snapshot_sha = known["workflow-snapshot.json"][1] if snapshot is not None else (status or run_doc).get("snapshot_sha256")
    pack_id = (snapshot or {}).get("pack_id", (status or run_doc or {}).get("pack_id"))
    state = (status or run_doc or {}).get("workflow_state")
    rows.workflow = (workflow_id, sid, bounded(pack_id), bounded(snapshot_sha), bounded(state), event_count)
    configured = {n["node_id"]: n for n in (snapshot or {}).get("nodes") or []}
    current = {n["node_id"]: n for n in (status or {}).get("nodes") or []}
    for node_id in sorted(set(configured) | set(current)):
        c, s = configured.get(node_id, {}), current.get(node_id, {})
        attempt = s.get("attempt")
        rows.nodes.append((
            workflow_id, bounded(node_id), bounded(c.get("kind")), bounded(c.get("ticket_id")),
            bounded(s.get("run_id")), bounded(s.get("state")), attempt if type(attempt) is int else None,
            bounded(c.get("executor")), bounded(c.get("model")),
        ))
        for dep in c.get("dependencies", []):
            rows.edges.append((workflow_id, bounded(dep), bounded(node_id)))
    if rows.run.get("workflow_id") is None:
        rows.run["workflow_id"] = workflow_id
