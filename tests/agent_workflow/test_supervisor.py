"""`supervisor once` with real child processes standing in for runner and executor."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time

import pytest
from aw_helpers import cli, cli_json, db, write_json


@pytest.fixture
def live_run(state_home):
    os.makedirs(state_home, mode=0o700)
    os.makedirs(os.path.join(state_home, "runs"), mode=0o700)
    run = os.path.join(state_home, "runs", "live-0001")
    os.makedirs(run, mode=0o700)
    runner = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    executor = subprocess.Popen([sys.executable, "-c", "x = bytearray(8 << 20); import time; time.sleep(60)"])
    write_json(os.path.join(run, "status.json"), {
        "schema": "agent-workflow/session-status/v2", "session_id": "live-0001", "status": "running",
        "created_at": "2026-07-30T00:00:00+00:00", "workdir": "/tmp/w", "prompt_path": None, "log_path": None,
    })
    write_json(os.path.join(run, "heartbeat.json"), {
        "schema": "agent-workflow/heartbeat/v2", "at": "2026-07-30T00:00:00+00:00",
        "runner_pid": runner.pid, "executor_pid": executor.pid,
    })
    log = os.path.join(run, "output.log")
    with open(log, "w", encoding="utf-8") as handle:
        handle.write("started\n")
    old = time.time() - 3600
    os.utime(log, (old, old))
    yield state_home, run, runner, executor
    for process in (runner, executor):
        process.kill()
        process.wait()


def _journal(run, name):
    path = os.path.join(run, name)
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def test_cycle_records_health_and_incident_then_syncs(live_run):
    root, run, runner, executor = live_run
    time.sleep(0.2)  # let the executor touch its memory
    code, report = cli_json("supervisor", "once", "--state-root", root)
    assert code == 0, report
    [result] = report["runs"]
    assert result["runner_alive"] is True and result["executor_alive"] is True
    assert result["seconds_since_semantic_progress"] >= 3500
    samples = _journal(run, "run-health-samples.jsonl")
    assert len(samples) == 1 and samples[0]["executor"]["rss_bytes"] > 8 << 20
    assert samples[0]["runner"]["pid"] == runner.pid
    with open(os.path.join(run, "run-health-samples.jsonl"), encoding="utf-8") as handle:
        line = handle.readline()
    assert line == json.dumps(samples[0], sort_keys=True, separators=(",", ":")) + "\n"
    [incident] = _journal(run, "incident-events.jsonl")
    assert incident["category"] == "process_alive_no_progress" and incident["state"] == "open"
    assert report["index_sync"]["status"] == "ok"
    code, incidents = cli_json("index", "query", "incidents", "--category", "process_alive_no_progress",
                               "--state-root", root)
    assert [r["session_id"] for r in incidents["rows"]] == ["live-0001"]
    conn = db(root)
    assert conn.execute("SELECT runner_alive, executor_alive FROM health_samples").fetchall() == [(1, 1)]
    # A second cycle appends a sample but does not repeat the same incident.
    code, report = cli_json("supervisor", "once", "--state-root", root, "--no-sync-index")
    assert report["index_sync"] == {"status": "disabled"}
    assert len(_journal(run, "run-health-samples.jsonl")) == 2
    assert len(_journal(run, "incident-events.jsonl")) == 1


def test_dead_processes_open_a_process_missing_incident(live_run):
    root, run, runner, executor = live_run
    for process in (runner, executor):
        process.kill()
        process.wait()
    code, report = cli_json("supervisor", "once", "--state-root", root)
    assert code == 0
    assert report["runs"][0]["runner_alive"] is False
    assert [i["category"] for i in _journal(run, "incident-events.jsonl")] == ["process_missing"]


def test_index_failure_is_reported_without_suppressing_evidence(live_run):
    root, run, _, _ = live_run
    os.makedirs(os.path.join(root, "index"), mode=0o700)
    database = os.path.join(root, "index", "agent-workflow.sqlite3")
    conn = sqlite3.connect(database)
    conn.execute("PRAGMA application_id = 7")
    conn.execute("CREATE TABLE foreign_table(x)")
    conn.close()
    os.chmod(database, 0o600)
    code, out, _ = cli("supervisor", "once", "--state-root", root, "--json")
    report = json.loads(out)
    assert code == 65
    assert report["index_sync"]["status"] == "error" and "another application" in report["index_sync"]["error"]
    assert report["health_sample_count"] == 1 and report["incident_count"] == 1
    assert len(_journal(run, "run-health-samples.jsonl")) == 1
