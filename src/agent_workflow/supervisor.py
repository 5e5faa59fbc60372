"""`agent-workflow supervisor once`: one foreground health-collection cycle.

For every active run (status prepared/launched/running/interruption_requested)
it reads the runner and executor pids (heartbeat, then provenance/process
result, then the status pane pid), samples liveness and RSS from /proc, disk
free space and the seconds since the newest semantic-progress file changed,
and appends a `run-health-sample/v1` record. A live process without progress
for longer than the threshold opens a `process_alive_no_progress` incident; an
active run whose processes are all gone opens `process_missing`. Then, unless
told not to, it syncs the index; the outcome (result or error) is reported in
`index_sync` and never suppresses the health and incident evidence already
written. It appends to journals only; it never rewrites or removes evidence.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from datetime import datetime, timezone

from .contracts import ACTIVE_RUN_STATES
from .discovery import discover_runs
from .errors import AgentWorkflowError, EvidenceError
from .journal import append_record, last_record
from .limits import MAX_JSON_BYTES, NO_PROGRESS_SECONDS
from .source_io import parse_json_object, read_source
from .state_root import StateRoot

PROGRESS_FILES = (
    ("output", "output.log"),
    ("stderr", "executor-stderr.log"),
    ("executor_event", "executor-events.jsonl"),
    ("terminal_event", "terminal-events.jsonl"),
    ("message", "messages.jsonl"),
    ("control_intent", "control-intents.jsonl"),
    ("steering_delivery", "steering-delivery.jsonl"),
    ("completion", "completion.json"),
)


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, tz=timezone.utc).isoformat()


def _read_json(run_path: str, name: str) -> dict:
    try:
        data, _ = read_source(os.path.join(run_path, name), name, MAX_JSON_BYTES)
        return parse_json_object(data, name)
    except EvidenceError:
        return {}


def _pid(value):
    return value if type(value) is int and value > 0 else None


def process_sample(pid: int | None) -> dict:
    """Liveness and memory of one process from /proc (None where unknown)."""
    sample = {"pid": pid, "alive": None, "rss_bytes": None, "peak_rss_bytes": None, "state": None,
              "collector": "portable"}
    if pid is None:
        return sample
    try:
        os.kill(pid, 0)
        sample["alive"] = True
    except ProcessLookupError:
        sample["alive"] = False
        return sample
    except PermissionError:
        sample["alive"] = True
    try:
        with open(f"/proc/{pid}/status", encoding="utf-8", errors="replace") as handle:
            status = handle.read()
    except OSError:
        return sample
    sample["collector"] = "linux-procfs"
    for line in status.splitlines():
        key, _, value = line.partition(":")
        parts = value.split()
        if key == "State" and parts:
            sample["state"] = parts[0]
            if parts[0] in ("Z", "X"):
                # A zombie has exited; only its parent has not reaped it yet.
                sample["alive"] = False
        elif key == "VmRSS" and parts:
            sample["rss_bytes"] = int(parts[0]) * 1024
        elif key == "VmHWM" and parts:
            sample["peak_rss_bytes"] = int(parts[0]) * 1024
    return sample


def _progress(run_path: str, now: float) -> tuple[str | None, str | None, float | None]:
    latest_name, latest = None, None
    for name, rel in PROGRESS_FILES:
        try:
            mtime = os.lstat(os.path.join(run_path, rel)).st_mtime
        except OSError:
            continue
        if latest is None or mtime > latest:
            latest_name, latest = name, mtime
    if latest is None:
        return None, None, None
    return _iso(latest), latest_name, round(max(0.0, now - latest), 3)


def _size(run_path: str, rel: str):
    try:
        return os.lstat(os.path.join(run_path, rel)).st_size
    except OSError:
        return None


def _incident(run_path: str, session_id: str, category: str, severity: str, summary: str, evidence: dict) -> dict | None:
    fingerprint = hashlib.sha256(
        json.dumps({"category": category, "evidence": evidence}, sort_keys=True, separators=(",", ":")).encode()
    ).hexdigest()
    path = os.path.join(run_path, "incident-events.jsonl")
    prior = last_record(path) if os.path.lexists(path) else None
    if prior and prior.get("fingerprint") == fingerprint:
        return None
    record = {
        "schema": "agent-workflow/incident-event/v1",
        "incident_id": fingerprint[:24],
        "session_id": session_id,
        "recorded_at": _iso(time.time()),
        "category": category,
        "severity": severity,
        "summary": summary,
        "fingerprint": fingerprint,
        "evidence": evidence,
        "state": "open",
    }
    return record if append_record(path, record) else None


def collect_run(run, threshold: float) -> dict | None:
    """Sample one active run's processes, disk and progress into its health journal and record incidents
    (alive without progress, processes missing); return the summary, or None when the run is not active."""
    status = _read_json(run.path, "status.json")
    if status.get("status") not in ACTIVE_RUN_STATES:
        return None
    heartbeat = _read_json(run.path, "heartbeat.json")
    provenance = _read_json(run.path, "run-provenance.json")
    process = _read_json(run.path, "process-result.json")
    runner_pid = _pid(heartbeat.get("runner_pid")) or _pid(process.get("runner_pid")) or _pid(status.get("pane_pid"))
    executor_pid = _pid(heartbeat.get("executor_pid")) or _pid(process.get("executor_pid")) or _pid(
        provenance.get("executor_pid")
    )
    now = time.time()
    runner, executor = process_sample(runner_pid), process_sample(executor_pid)
    progress_at, progress_source, since = _progress(run.path, now)
    try:
        vfs = os.statvfs(run.path)
        disk_free, disk_total = vfs.f_bavail * vfs.f_frsize, vfs.f_blocks * vfs.f_frsize
    except OSError:
        disk_free = disk_total = None
    sample = {
        "schema": "agent-workflow/run-health-sample/v1",
        "session_id": run.session_id,
        "recorded_at": _iso(now),
        "runner": runner,
        "executor": executor,
        "host": {"disk_free_bytes": disk_free, "disk_total_bytes": disk_total},
        "tmux_pane_id": status.get("tmux_pane_id") if isinstance(status.get("tmux_pane_id"), str) else None,
        "pane_dead": None,
        "output_bytes": _size(run.path, "output.log"),
        "stderr_bytes": _size(run.path, "executor-stderr.log"),
        "executor_event_bytes": _size(run.path, "executor-events.jsonl"),
        "terminal_event_bytes": _size(run.path, "terminal-events.jsonl"),
        "last_semantic_progress_at": progress_at,
        "seconds_since_semantic_progress": since,
        "last_semantic_progress_source": progress_source,
    }
    stored = append_record(os.path.join(run.path, "run-health-samples.jsonl"), sample)
    incidents = []
    alive = runner["alive"] is True or executor["alive"] is True
    if alive and since is not None and since >= threshold:
        record = _incident(run.path, run.session_id, "process_alive_no_progress", "medium", "No semantic progress",
                           {"seconds": int(threshold)})
        if record:
            incidents.append(record["incident_id"])
    elif not alive and (runner_pid or executor_pid):
        record = _incident(run.path, run.session_id, "process_missing", "high",
                           "Active run has no live runner or executor", {"status": status.get("status")})
        if record:
            incidents.append(record["incident_id"])
    return {
        "session_id": run.session_id,
        "runner_alive": runner["alive"],
        "executor_alive": executor["alive"],
        "rss_bytes": sum(v for v in (runner["rss_bytes"], executor["rss_bytes"]) if v) or None,
        "disk_free_bytes": disk_free,
        "seconds_since_semantic_progress": since,
        "health_sample_stored": stored,
        "incidents_opened": incidents,
    }


def run_once(root: StateRoot, *, sync_index: bool = True, no_progress_seconds: float | None = None) -> dict:
    """Sample every active run once (see `collect_run`), then sync the index unless `sync_index` is false."""
    threshold = NO_PROGRESS_SECONDS if no_progress_seconds is None else float(no_progress_seconds)
    results = []
    collection_errors = []
    for session_id, run in sorted(discover_runs(root).items()):
        if run.storage_class != "active" or run.is_symlink:
            continue
        try:
            result = collect_run(run, threshold)
        except AgentWorkflowError as exc:
            collection_errors.append({"session_id": session_id, "error": exc.message})
            continue
        if result is not None:
            results.append(result)
    report = {
        "schema": "agent-workflow/supervisor-cycle/v1",
        "runs": results,
        "health_sample_count": sum(1 for r in results if r["health_sample_stored"]),
        "incident_count": sum(len(r["incidents_opened"]) for r in results),
        "collection_errors": collection_errors,
    }
    if not sync_index:
        report["index_sync"] = {"status": "disabled"}
        return report
    from . import index_store

    try:
        result = index_store.sync(root)
        report["index_sync"] = {
            "status": "error" if result["error_count"] else "ok",
            "result": {k: result[k] for k in ("indexed_count", "skipped_count", "error_count", "elapsed_seconds")},
        }
    except AgentWorkflowError as exc:
        report["index_sync"] = {"status": "error", "error": exc.message, "category": exc.category}
    return report
