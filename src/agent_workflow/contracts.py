"""Hand-written validators for the agent-workflow record contracts the index reads.

Each known `agent-workflow/<name>/v<N>` schema id maps to one compiled checker:
a table of fields with allowed JSON types and whether each is required, a
closed/open flag, and a few value rules (enums, digests, bounds). Checking a
record is a dictionary walk, so validation costs microseconds per record; a
general JSON-Schema engine instantiated per file cost the reference index most
of its rebuild time.

Records whose schema id is not listed here are recorded (schema id, digest)
but not validated. This module never reads files and never repairs a record.
"""

from __future__ import annotations

import hashlib
import json
import re

from .errors import RecordInvalid
from .limits import MAX_SUMMARY_CHARS

S, B, I, F, Z, O, L = 1, 2, 4, 8, 16, 32, 64
N = I | F
_TYPE_BITS = {str: S, bool: B, int: I, float: F, type(None): Z, dict: O, list: L}
_TYPE_NAMES = {S: "string", B: "boolean", I: "integer", F: "number", Z: "null", O: "object", L: "array"}

HEX64 = re.compile(r"[0-9a-f]{64}\Z")
HEX24 = re.compile(r"[0-9a-f]{24}\Z")
TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})?\Z")
SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}\Z")

RUN_STATES = frozenset(
    {"prepared", "launched", "running", "interruption_requested", "completed", "failed", "interrupted", "killed"}
)
ACTIVE_RUN_STATES = frozenset({"prepared", "launched", "running", "interruption_requested"})
PERMISSION_STATES = frozenset({"pending", "denied", "cleared"})
INCIDENT_STATES = frozenset({"open", "resolved", "suppressed"})

#: Schema ids retired by the recorder: evidence carrying them is preserved as a
#: historical artifact and excluded from current evidence.
RETIRED_SCHEMA_IDS = frozenset(
    {
        "agent-workflow/command-collection-set/v1",
        "agent-workflow/execution-metrics/retired-v1",
        "agent-workflow/session-status/v1",
    }
)


def _describe(bits: int) -> str:
    return "|".join(name for bit, name in _TYPE_NAMES.items() if bits & bit)


class Contract:
    """One compiled contract: field table plus optional value rules."""

    __slots__ = ("schema_id", "fields", "required", "closed", "rules")

    def __init__(self, schema_id: str, fields: dict[str, tuple[int, bool]], *, closed: bool, rules=()) -> None:
        self.schema_id = schema_id
        self.fields = fields
        self.required = tuple(name for name, (_, req) in fields.items() if req)
        self.closed = closed
        self.rules = tuple(rules)

    def check(self, record: dict, where: str) -> None:
        """Raise `RecordInvalid` (naming `where` and the schema) unless `record` meets this contract."""
        check_fields(record, self.fields, self.required, self.closed, where)
        for rule in self.rules:
            problem = rule(record)
            if problem:
                raise RecordInvalid(f"{where}: {self.schema_id}: {problem}")


def check_fields(record: dict, fields, required, closed: bool, where: str) -> None:
    """Check required, typed and (when `closed`) only-known fields of `record`; raise `RecordInvalid`."""
    for name in required:
        if name not in record:
            raise RecordInvalid(f"{where}: missing required field {name!r}")
    for name, value in record.items():
        spec = fields.get(name)
        if spec is None:
            if closed:
                raise RecordInvalid(f"{where}: unexpected field {name[:64]!r}")
            continue
        if not _TYPE_BITS.get(type(value), 0) & spec[0]:
            raise RecordInvalid(f"{where}: field {name!r} must be {_describe(spec[0])}")


def _req(bits: int) -> tuple[int, bool]:
    return (bits, True)


def _opt(bits: int) -> tuple[int, bool]:
    return (bits, False)


def _sub(field: str, fields: dict, closed: bool = False):
    compiled = {k: v for k, v in fields.items()}
    required = tuple(k for k, (_, r) in compiled.items() if r)

    def rule(record: dict):
        value = record.get(field)
        if isinstance(value, dict):
            try:
                check_fields(value, compiled, required, closed, field)
            except RecordInvalid as exc:
                return str(exc)
        return None

    return rule


def _enum(field: str, allowed: frozenset, nullable: bool = False):
    def rule(record: dict):
        value = record.get(field)
        if value is None and (nullable or field not in record):
            return None
        if value not in allowed:
            return f"field {field!r} has an unknown value"
        return None

    return rule


def _pattern(field: str, regex: re.Pattern, nullable: bool = False):
    def rule(record: dict):
        value = record.get(field)
        if value is None and (nullable or field not in record):
            return None
        if not isinstance(value, str) or not regex.match(value):
            return f"field {field!r} is malformed"
        return None

    return rule


def _non_negative(*names: str):
    def rule(record: dict):
        for name in names:
            value = record.get(name)
            if value is not None and not isinstance(value, bool) and value < 0:
                return f"field {name!r} must not be negative"
        return None

    return rule


def _canonical_digest(value) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _incident_identity(record: dict):
    if len(record["summary"]) > MAX_SUMMARY_CHARS:
        return f"summary longer than {MAX_SUMMARY_CHARS} characters"
    if record["incident_id"] != record["fingerprint"][:24]:
        return "incident_id is not the fingerprint prefix"
    if _canonical_digest({"category": record["category"], "evidence": record["evidence"]}) != record["fingerprint"]:
        return "fingerprint does not match category and evidence"
    return None


_PROCESS_FIELDS = {
    "alive": _req(B | Z),
    "pid": _req(I | Z),
    "rss_bytes": _req(I | Z),
    "peak_rss_bytes": _opt(I | Z),
    "collector": _opt(S),
}


def _process_objects(record: dict):
    for key in ("runner", "executor"):
        try:
            check_fields(record[key], _PROCESS_FIELDS, ("alive", "pid", "rss_bytes"), False, key)
        except RecordInvalid as exc:
            return str(exc)
    host = record["host"]
    if "disk_free_bytes" not in host or not _TYPE_BITS.get(type(host["disk_free_bytes"]), 0) & (I | Z):
        return "host.disk_free_bytes must be integer|null"
    return None


def _stages(record: dict):
    stages = record["stages"]
    if not stages:
        return "stages must not be empty"
    seen = set()
    for index, stage in enumerate(stages):
        if not isinstance(stage, dict):
            return f"stages[{index}] must be an object"
        try:
            check_fields(stage, _STAGE_FIELDS, _STAGE_REQUIRED, False, f"stages[{index}]")
        except RecordInvalid as exc:
            return str(exc)
        name = stage["stage"]
        if name in seen:
            return "duplicate stage name"
        seen.add(name)
        if not (name in ("orchestrator", "verification", "total") or name.startswith("child:")):
            return f"stages[{index}] has an unknown stage name"
        for cost in ("provider_billed_cost", "local_estimated_cost"):
            if stage[cost] is not None and stage[cost] < 0:
                return f"stages[{index}].{cost} must not be negative"
    return None


_STAGE_FIELDS = {
    name: _req(I | Z)
    for name in (
        "cache_write_input_tokens",
        "cached_input_tokens",
        "input_tokens",
        "output_tokens",
        "provider_total_tokens",
        "reasoning_output_tokens",
    )
}
_STAGE_FIELDS.update(
    {
        "cost": _req(N | Z),
        "currency": _req(S | Z),
        "elapsed_seconds": _req(N | Z),
        "errors": _req(L),
        "first_output_latency_seconds": _req(N | Z),
        "local_estimated_cost": _req(N | Z),
        "price_catalog_id": _req(S | Z),
        "provider_billed_cost": _req(N | Z),
        "retry_count": _req(I),
        "stage": _req(S),
        "steer_acknowledged_count": _req(I),
        "steer_count": _req(I),
        "steer_pending_count": _req(I),
    }
)
_STAGE_REQUIRED = tuple(_STAGE_FIELDS)


def _artifacts(record: dict):
    seen = set()
    for index, item in enumerate(record["artifacts"]):
        if not isinstance(item, dict) or set(item) != {"path", "size", "sha256"}:
            return f"artifacts[{index}] must be {{path, size, sha256}}"
        path, size, digest = item["path"], item["size"], item["sha256"]
        if not isinstance(path, str) or not path or path.startswith("/") or ".." in path.split("/"):
            return f"artifacts[{index}].path is not a relative path inside the run"
        if type(size) is not int or size < 0 or not isinstance(digest, str) or not HEX64.match(digest):
            return f"artifacts[{index}] has a malformed size or digest"
        if path in seen:
            return "duplicate artifact path"
        seen.add(path)
    return None


def _lifecycle(record: dict):
    if record["sequence"] < 1:
        return "sequence must be positive"
    if not all(isinstance(ref, str) for ref in record["receipt_refs"]):
        return "receipt_refs must be strings"
    return None


def _scores(record: dict):
    for index, score in enumerate(record["scores"]):
        if not isinstance(score, dict) or score.get("schema") != "agent-workflow/score-receipt/v1":
            return f"scores[{index}] is not a score receipt"
    return None


def _workflow_nodes(record: dict):
    nodes = record.get("nodes")
    if nodes is None:
        return None
    if not isinstance(nodes, list):
        return "nodes must be an array"
    for index, node in enumerate(nodes):
        if not isinstance(node, dict) or not isinstance(node.get("node_id"), str):
            return f"nodes[{index}] needs a string node_id"
        deps = node.get("dependencies", [])
        if not isinstance(deps, list) or not all(isinstance(d, str) for d in deps):
            return f"nodes[{index}].dependencies must be strings"
    return None


_SESSION = {
    "id": _req(S),
    "agent_name": _req(S | Z),
    "agent_class": _req(S | Z),
    "tier": _req(S | Z),
    "retry_of": _req(S | Z),
    "created_at": _req(S),
}
_PACK = {"id": _req(S | Z), "root": _req(S | Z), "manifest_sha256": _req(S | Z)}
_WORKTREE = {
    "path": _req(S),
    "source_revision": _req(S | Z),
    "branch": _req(S | Z),
    "dirty_at_launch": _req(B | Z),
}
_COMMAND_PLAN = {"argv": _req(L), "interactive": _req(B), "executor": _opt(S | Z), "model": _opt(S | Z)}

def _session_id(record: dict):
    session = record["session"]
    if not isinstance(session.get("id"), str) or not SESSION_ID.match(session["id"]):
        return "session.id is malformed"
    return None


_LAUNCH_V1_FIELDS = {
    "schema": _req(S),
    "version": _opt(I),
    "session": _req(O),
    "ticket": _req(S | Z),
    "pack": _req(O),
    "worktree": _req(O),
    "command_plan": _req(O),
    "evaluation_policy": _opt(O | Z),
    "expected_outputs": _opt(O),
    "paths": _opt(O),
    "prompt": _opt(O),
    "runtime_policy": _opt(O),
    "schemas": _opt(O),
    "source_baseline": _opt(O | Z),
}
_LAUNCH_RULES = (
    _sub("session", _SESSION),
    _sub("pack", _PACK),
    _sub("worktree", _WORKTREE),
    _sub("command_plan", _COMMAND_PLAN),
    _session_id,
)

_STATUS_OPTIONAL_STR = (
    "disposition",
    "updated_at",
    "ticket_id",
    "pack_id",
    "failure_category",
    "executor_result",
    "completion_result",
    "policy_result",
    "attempt_classification",
    "evaluation_state",
    "evaluation_result",
    "executor",
    "model",
    "final_receipt_sha256",
)

CONTRACTS: dict[str, Contract] = {}


def _register(contract: Contract) -> None:
    CONTRACTS[contract.schema_id] = contract


_register(Contract("agent-workflow/launch-contract/v1", _LAUNCH_V1_FIELDS, closed=True, rules=_LAUNCH_RULES))
_register(
    Contract(
        "agent-workflow/launch-contract/v2",
        {**_LAUNCH_V1_FIELDS, "ticket_identity": _req(O | Z), "command_catalog": _opt(O | Z)},
        closed=True,
        rules=_LAUNCH_RULES,
    )
)
_register(
    Contract(
        "agent-workflow/session-status/v2",
        {
            "schema": _req(S),
            "session_id": _req(S),
            "status": _req(S),
            "created_at": _req(S),
            "workdir": _req(S | Z),
            "prompt_path": _req(S | Z),
            "log_path": _req(S | Z),
            "acceptance_eligible": _opt(B | Z),
            "exit_code": _opt(I | Z),
            **{name: _opt(S | Z) for name in _STATUS_OPTIONAL_STR},
        },
        closed=False,
        rules=(_enum("status", RUN_STATES), _pattern("created_at", TIMESTAMP)),
    )
)
_register(
    Contract(
        "agent-workflow/run-provenance/v1",
        {
            "schema": _req(S),
            "session_id": _req(S),
            "executor": _req(S | Z),
            "argv": _req(L),
            "prompt_sha256": _req(S | Z),
            "source_revision": _req(S | Z),
            "environment": _req(O),
            "started_at": _req(S),
            **{
                name: _opt(S | Z)
                for name in (
                    "model",
                    "agent_name",
                    "agent_class",
                    "worktree",
                    "retry_of_run_id",
                    "finished_at",
                    "first_output_at",
                    "adapter_version",
                    "executor_version",
                    "config_sha256",
                    "launch_prompt_sha256",
                    "pack_manifest_sha256",
                    "stream_format",
                )
            },
            "exit_code": _opt(I | Z),
            "workflow": _opt(O | Z),
            **{
                name: _opt(O | Z)
                for name in (
                    "budgets",
                    "compatibility",
                    "executable",
                    "job_binding",
                    "model_policy",
                    "provider_evidence",
                    "usage",
                    "external_snapshots",
                )
            },
        },
        closed=True,
        rules=(_pattern("started_at", TIMESTAMP),),
    )
)
_register(
    Contract(
        "agent-workflow/run-health-sample/v1",
        {
            "schema": _req(S),
            "session_id": _req(S),
            "recorded_at": _req(S),
            "runner": _req(O),
            "executor": _req(O),
            "host": _req(O),
            "tmux_pane_id": _req(S | Z),
            "pane_dead": _req(B | Z),
            "output_bytes": _req(I | Z),
            "stderr_bytes": _req(I | Z),
            "executor_event_bytes": _req(I | Z),
            "terminal_event_bytes": _req(I | Z),
            "last_semantic_progress_at": _req(S | Z),
            "seconds_since_semantic_progress": _req(N | Z),
            "last_semantic_progress_source": _req(S | Z),
        },
        closed=False,
        rules=(_pattern("recorded_at", TIMESTAMP), _process_objects, _non_negative("seconds_since_semantic_progress")),
    )
)
_register(
    Contract(
        "agent-workflow/permission-event/v1",
        {
            "schema": _req(S),
            "session_id": _req(S),
            "event_id": _req(S),
            "recorded_at": _req(S),
            "principal": _req(S | Z),
            "operation": _req(S),
            "resource_class": _req(S),
            "target": _req(S | Z),
            "requested_access": _req(S | Z),
            "state": _req(S),
            "source": _req(S),
            "policy_rule_id": _req(S | Z),
            "evidence_sha256": _req(S),
            "remediation_class": _req(S),
        },
        closed=False,
        rules=(
            _pattern("event_id", HEX24),
            _pattern("evidence_sha256", HEX64),
            _enum("state", PERMISSION_STATES),
            _pattern("recorded_at", TIMESTAMP),
        ),
    )
)
_register(
    Contract(
        "agent-workflow/incident-event/v1",
        {
            "schema": _req(S),
            "session_id": _req(S),
            "incident_id": _req(S),
            "recorded_at": _req(S),
            "fingerprint": _req(S),
            "category": _req(S),
            "severity": _req(S),
            "summary": _req(S),
            "evidence": _req(O),
            "state": _req(S),
        },
        closed=False,
        rules=(
            _pattern("fingerprint", HEX64),
            _enum("state", INCIDENT_STATES),
            _pattern("recorded_at", TIMESTAMP),
            _incident_identity,
        ),
    )
)
_register(
    Contract(
        "agent-workflow/remediation-event/v1",
        {
            "schema": _req(S),
            "session_id": _req(S),
            "event_id": _req(S),
            "recorded_at": _req(S),
            "incident_id": _req(S | Z),
            "rule_id": _req(S),
            "action": _req(S),
            "outcome": _req(S),
            "reason": _req(S | Z),
            "details": _req(O),
        },
        closed=False,
        rules=(_pattern("recorded_at", TIMESTAMP),),
    )
)
_register(
    Contract(
        "agent-workflow/process-result/v1",
        {
            "schema": _req(S),
            "returncode": _req(I | Z),
            "exit_code": _req(I | Z),
            "signal": _req(I | S | Z),
            "timed_out": _req(B),
            "duration_seconds": _req(N | Z),
            "error_category": _req(S | Z),
            "runner_pid": _req(I | Z),
            "stdout_bytes": _req(I),
            "stderr_bytes": _req(I),
            "stdout_truncated": _req(B),
            "stderr_truncated": _req(B),
            "cancelled": _req(B),
            "completion_terminated": _req(B),
            "recorded_at": _req(S),
            "argv": _req(L),
            "environment_policy": _req(S | Z),
            "executor_pid": _opt(I | Z),
        },
        closed=False,
        rules=(_non_negative("stdout_bytes", "stderr_bytes", "duration_seconds"),),
    )
)
_register(
    Contract(
        "agent-workflow/execution-metrics/v1",
        {"schema": _req(S), "session_id": _req(S), "stages": _req(L)},
        closed=True,
        rules=(_stages,),
    )
)
_register(
    Contract(
        "agent-workflow/evaluation-ledger-row/v1",
        {
            "schema": _req(S),
            "run_id": _req(S),
            "acceptance_eligible": _req(B),
            "attempt_classification": _req(S),
            "case_id": _req(S | Z),
            "completion_result": _req(S | Z),
            "disposition": _req(S | Z),
            "evaluation_result": _req(S | Z),
            "evaluation_state": _req(S),
            "evidence_paths": _req(O),
            "executor_result": _req(S | Z),
            "failures": _req(L),
            "pack_checksum_reference": _req(S | O | Z),
            "pack_id": _req(S | Z),
            "policy_result": _req(S | Z),
            "receipt_verification": _req(S | Z),
            "repository_closeout": _req(S | O | Z),
            "run_receipt_sha256": _req(S | Z),
            "source_revision": _req(S | Z),
            "supplemental_repairs": _req(L),
            "ticket_id": _req(S | Z),
        },
        closed=False,
    )
)
_register(
    Contract(
        "agent-workflow/score-set/v1",
        {"schema": _req(S), "final_receipt_sha256": _req(S), "verdict": _req(S), "scores": _req(L)},
        closed=False,
        rules=(_pattern("final_receipt_sha256", HEX64), _scores),
    )
)
_register(
    Contract(
        "agent-workflow/final-receipt/v1",
        {"schema": _req(S), "session_id": _req(S), "sealed_at": _req(S), "artifacts": _req(L)},
        closed=True,
        rules=(_artifacts, _pattern("sealed_at", TIMESTAMP)),
    )
)
_register(
    Contract(
        "agent-workflow/lifecycle-receipt/v1",
        {
            "schema": _req(S),
            "session_id": _req(S),
            "action": _req(S),
            "actor": _req(S),
            "reason": _req(S | Z),
            "created_at": _req(S),
            "final_receipt_sha256": _req(S | Z),
        },
        closed=False,
        rules=(_pattern("final_receipt_sha256", HEX64, nullable=True),),
    )
)
_register(
    Contract(
        "agent-workflow/lifecycle-event/v1",
        {
            "schema": _req(S),
            "sequence": _req(I),
            "timestamp": _req(S),
            "dimension": _req(S),
            "prior": _req(S | Z),
            "new": _req(S),
            "actor": _req(S),
            "reason": _req(S | Z),
            "receipt_refs": _req(L),
        },
        closed=True,
        rules=(_lifecycle, _pattern("timestamp", TIMESTAMP)),
    )
)
_register(
    Contract(
        "agent-workflow/heartbeat/v2",
        {"schema": _req(S), "at": _req(S), "runner_pid": _req(I | Z), "executor_pid": _req(I | Z)},
        closed=True,
        rules=(_pattern("at", TIMESTAMP),),
    )
)
_register(
    Contract(
        "agent-workflow/terminal-event/v1",
        {
            "schema": _req(S),
            "session_id": _req(S),
            "recorded_at": _req(S),
            "pane_id": _req(S | Z),
            "content_sha256": _req(S),
            "content_bytes": _req(I),
            "content": _opt(S),
        },
        closed=False,
        rules=(_pattern("content_sha256", HEX64),),
    )
)
for _name in ("workflow-snapshot", "workflow-status", "workflow-run"):
    _register(
        Contract(
            f"agent-workflow/{_name}/v1",
            {
                "schema": _req(S),
                "workflow_id": _req(S),
                "nodes": _opt(L),
                "pack_id": _opt(S | Z),
                "workflow_state": _opt(S | Z),
                "snapshot_sha256": _opt(S | Z),
                "event_count": _opt(I | Z),
            },
            closed=False,
            rules=(_workflow_nodes,),
        )
    )
_register(
    Contract(
        "agent-workflow/workflow-event/v1",
        {"schema": _req(S), "workflow_id": _req(S), "recorded_at": _opt(S), "node_id": _opt(S | Z), "state": _opt(S | Z)},
        closed=False,
    )
)
_register(
    Contract(
        "agent-workflow/evidence-repair/v1",
        {
            "schema": _req(S),
            "repair_id": _req(S),
            "source_session_id": _req(S),
            "source_final_receipt_sha256": _req(S),
            "source_artifact_path": _req(S),
            "source_artifact_sha256": _req(S),
            "adapter": _req(O),
            "canonical_sha256": _req(S),
            "validation_result": _req(S),
            "source_mutation_verified": _req(B),
            "created_at": _opt(S),
        },
        closed=False,
        rules=(
            _pattern("source_final_receipt_sha256", HEX64),
            _pattern("source_artifact_sha256", HEX64),
            _pattern("canonical_sha256", HEX64),
            _sub("adapter", {"id": _req(S), "version": _req(S), "sha256": _req(S)}),
        ),
    )
)
_register(
    Contract(
        "agent-workflow/evidence-repair-receipt/v1",
        {"schema": _req(S), "repair_id": _req(S), "artifacts": _req(L)},
        closed=False,
        rules=(_artifacts,),
    )
)


def validate(record: dict, where: str, run_id: str | None = None) -> str | None:
    """Validate a record against its contract; return its schema id (None if it has none).

    Unknown `agent-workflow/*` ids pass unvalidated; a `session_id` that names
    another run is refused, because it would attach evidence to the wrong run.
    """
    schema_id = record.get("schema")
    if schema_id is None:
        return None
    if not isinstance(schema_id, str):
        raise RecordInvalid(f"{where}: schema must be a string")
    contract = CONTRACTS.get(schema_id)
    if contract is not None:
        contract.check(record, where)
    if run_id is not None and schema_id.startswith("agent-workflow/"):
        owner = record.get("session_id")
        if owner is not None and owner != run_id:
            raise RecordInvalid(f"{where}: session_id names another run")
    return schema_id
