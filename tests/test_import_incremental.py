"""Incremental, exact imports: checkpoints, waiting lines and calls, rewrites, prunes, crashes, live capture."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time

from broker_helpers import broker_env  # noqa: F401  (fixture)
from import_fixtures import (
    PI_SESSION,
    pi_call,
    pi_header,
    pi_pair,
    pi_result,
    pi_session_file,
    set_old_mtime,
    write_lines,
)
from test_import_pi import archive_digest, import_json, payload, yarp
from yarp.wire import operations as ops
from yarp.hooks.events import local_account
from yarp.transcripts import source


def call_rows(benv) -> dict:
    conn = benv.db()
    try:
        return {row[0]: row[1:] for row in conn.execute(
            "SELECT source_call_id, status, started_at_ms, is_error FROM tool_calls")}
    finally:
        conn.close()


def test_partial_line_and_waiting_call_then_live_capture_then_append(broker_env, tmp_path):  # noqa: F811
    path = tmp_path / "sessions" / "s.jsonl"
    partial = json.dumps(pi_call("c0000002", "r0000001", "toolu_00000002", 2, "echo 2"))
    write_lines(path, [pi_header(), *pi_pair(0), pi_call("c0000001", "r0000000", "toolu_00000001", 1, "sleep 9")])
    with open(path, "a") as handle:
        handle.write(partial[:40])  # the agent is still writing this line
    first = import_json(broker_env, "pi", str(path))
    # The file is being written: the call without a result waits, the partial line waits.
    assert (first["callsNew"], first["callsWaitingForResult"], first["callsWithoutResult"]) == (1, 1, 0)
    assert set(call_rows(broker_env)) == {"toolu_00000000"}

    # The live extension captures the waiting call now: it is not refused.
    session = ops.Session("pi", local_account(), PI_SESSION, 5)
    live_start = 1_900_000_000_000
    broker_env.request(ops.BeginCall(session, ops.CallMeta("toolu_00000001", "bash", live_start, False),
                                     {"command": "sleep 9"}, {"command": "sleep 9"}, live_start))
    broker_env.request(ops.FinishCall(session, "toolu_00000001", {"content": [], "details": None, "isError": True},
                                      True, False, live_start + 1))

    with open(path, "a") as handle:
        handle.write(partial[40:] + "\n")
        for record in (pi_result("r0000001", "c0000001", "toolu_00000001", 3, "slept"),
                       pi_result("r0000002", "c0000002", "toolu_00000002", 4, "2")):
            handle.write(json.dumps(record) + "\n")
    second = import_json(broker_env, "pi", str(path))
    assert (second["callsNew"], second["callsAlreadyArchived"], second["callsWaitingForResult"]) == (1, 1, 0)
    rows = call_rows(broker_env)
    assert set(rows) == {"toolu_00000000", "toolu_00000001", "toolu_00000002"}
    # The live row is the one kept, untouched.
    assert rows["toolu_00000001"] == ("finished", live_start, 1)
    assert rows["toolu_00000002"][0] == "finished"
    before = archive_digest(broker_env)
    third = import_json(broker_env, "pi", str(path))
    assert third["callsNew"] == 0 and third["filesUnchanged"] == 1
    assert archive_digest(broker_env) == before


def test_call_without_result_is_recorded_once_the_file_is_idle(broker_env, tmp_path):  # noqa: F811
    path = tmp_path / "s.jsonl"
    write_lines(path, [pi_header(), *pi_pair(0), pi_call("c0000001", "r0000000", "toolu_00000001", 1, "x")])
    assert import_json(broker_env, "pi", str(path))["callsWaitingForResult"] == 1
    set_old_mtime(path)
    settled = import_json(broker_env, "pi", str(path))
    assert (settled["callsNew"], settled["callsWithoutResult"], settled["callsWaitingForResult"]) == (1, 1, 0)
    assert call_rows(broker_env)["toolu_00000001"][0] == "started"
    assert "archive: ok" in yarp(broker_env, "archive", "verify").stdout


def test_rewritten_file_is_reconciled_and_pruned_calls_stay_pruned(broker_env, tmp_path):  # noqa: F811
    path = tmp_path / "s.jsonl"
    records = [pi_header()] + [r for n in range(5) for r in pi_pair(n)]
    write_lines(path, records)
    set_old_mtime(path)
    assert import_json(broker_env, "pi", str(path))["callsNew"] == 5
    assert "pruned_calls: 5" in yarp(broker_env, "archive", "prune", "--before", "2027-01-01T00:00:00Z").stdout
    inode = os.stat(path).st_ino

    # Pi migrates old files by rewriting them in place with new entry ids; a sixth call follows.
    rewritten = [pi_header()]
    for record in records[1:] + pi_pair(5):
        record = json.loads(json.dumps(record))
        record["id"] = "m" + record["id"]
        record["parentId"] = "m" + record["parentId"] if record["parentId"] else None
        rewritten.append(record)
    write_lines(path, rewritten)
    set_old_mtime(path)
    assert os.stat(path).st_ino == inode
    summary = import_json(broker_env, "pi", str(path))
    assert summary["filesReread"] == 1
    assert (summary["callsNew"], summary["callsImportedBefore"]) == (1, 5)
    # The pruned calls did not come back; the new one is there, once.
    assert set(call_rows(broker_env)) == {"toolu_00000005"}


def test_reused_pi_call_ids_get_stable_unique_identities(broker_env, tmp_path):  # noqa: F811
    path = tmp_path / "s.jsonl"
    # Two branches from the header ask the same call id; results arrive out of order.
    write_lines(path, [
        pi_header(),
        pi_call("a1", None, "toolu_same", 1, "echo one"),
        pi_call("b1", None, "toolu_same", 2, "echo two"),
        pi_result("b2", "b1", "toolu_same", 3, "two"),
        pi_result("a2", "a1", "toolu_same", 4, "one"),
    ])
    set_old_mtime(path)
    summary = import_json(broker_env, "pi", str(path))
    assert summary["callsNew"] == 2 and summary["resultsWithoutCall"] == 0
    conn = broker_env.db()
    try:
        rows = dict(conn.execute(
            "SELECT c.source_call_id, p.body FROM tool_calls c JOIN snapshots s ON s.tool_call_id = c.id"
            " AND s.subject = 'result' AND s.stage = 'before' JOIN payloads p ON p.sha256 = s.payload_sha256"))
    finally:
        conn.close()
    assert set(rows) == {"toolu_same", "toolu_same#2"}
    # Paired by the result's parent entry, not by order.
    assert b'"text":"one"' in rows["toolu_same"] and b'"text":"two"' in rows["toolu_same#2"]


def test_kill_9_mid_import_resumes_without_loss_or_duplicates(broker_env, tmp_path):  # noqa: F811
    path = tmp_path / "big.jsonl"
    total = 12000
    pi_session_file(path, total, payload="x" * 2048)
    set_old_mtime(path)
    proc = subprocess.Popen([sys.executable, "-m", "yarp", "import", "pi", str(path), "--archive",
                             broker_env.archive], env=broker_env.environ, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    seen = 0
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if os.path.exists(broker_env.archive):
            try:
                conn = sqlite3.connect(f"file:{broker_env.archive}?mode=ro", uri=True, timeout=0.1)
                seen = conn.execute("SELECT count(*) FROM tool_calls").fetchone()[0]
                conn.close()
            except sqlite3.Error:
                seen = 0
            if seen:
                break
        time.sleep(0.005)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert 0 < seen < total, "the import was killed between its first and its last batch"
    summary = import_json(broker_env, "pi", str(path))
    assert summary["callsNew"] + summary["callsAlreadyArchived"] == total
    conn = broker_env.db()
    try:
        assert conn.execute("SELECT count(*), count(DISTINCT source_call_id) FROM tool_calls").fetchone() \
            == (total, total)
    finally:
        conn.close()
    assert "archive: ok" in yarp(broker_env, "archive", "verify").stdout
    assert import_json(broker_env, "pi", str(path))["callsNew"] == 0


def test_corrupt_and_oversized_lines_are_reported_and_skipped(broker_env, tmp_path, monkeypatch):  # noqa: F811
    path = tmp_path / "s.jsonl"
    write_lines(path, [pi_header(), *pi_pair(0), "{broken", json.dumps({"type": "message", "pad": "y" * 5000}),
                       json.dumps({"type": "future_entry"}), *pi_pair(1)])
    fd, ident = source.open_transcript(str(path))
    try:
        monkeypatch.setattr(source, "MAX_LINE_BYTES", 4096)
        reader = source.LineReader(fd, 0, ident.size, 0)
        lines = [number for _offset, number, _raw in reader]
    finally:
        os.close(fd)
    assert reader.oversized == [5] and 5 not in lines and lines == [1, 2, 3, 4, 6, 7, 8]
    assert reader.offset == ident.size
    set_old_mtime(path)
    summary = import_json(broker_env, "pi", str(path))
    assert summary["callsNew"] == 2 and summary["corruptLines"] == 1
    # In the importer's process the long line is within the limit: a message entry without a body.
    assert summary["unknownRecords"] == {"pi:future_entry": 1, "pi:message-without-body": 1}
    assert {"file": str(path), "line": 4, "reason": "line is not valid JSON"} in summary["issues"]


def test_a_replaced_archive_gets_every_call_again(broker_env, tmp_path):  # noqa: F811
    path = tmp_path / "s.jsonl"
    write_lines(path, [pi_header(), *pi_pair(0), *pi_pair(1)])
    set_old_mtime(path)
    assert import_json(broker_env, "pi", str(path))["callsNew"] == 2
    from broker_helpers import broker_pids, kill_pid

    for pid in broker_pids(broker_env.archive):
        kill_pid(pid)
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(broker_env.archive + suffix):
            os.unlink(broker_env.archive + suffix)
    # The checkpoints belonged to the removed archive file: the new one is filled again.
    assert import_json(broker_env, "pi", str(path))["callsNew"] == 2
    assert set(call_rows(broker_env)) == {"toolu_00000000", "toolu_00000001"}


def test_all_recognises_each_agent_and_since_selects_files(broker_env, tmp_path):  # noqa: F811
    from import_fixtures import claude_project, codex_rollout

    pi_path = tmp_path / "mixed" / "pi.jsonl"
    write_lines(pi_path, [pi_header(), *pi_pair(0)])
    claude = claude_project(tmp_path / "mixed" / "claude", "big\n" * 10)
    codex = codex_rollout(tmp_path / "mixed" / "codex", "1\n")
    set_old_mtime(pi_path, claude["main"], claude["sub"], seconds=7200)
    set_old_mtime(codex["path"], seconds=3600)
    since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 5400))
    recent = import_json(broker_env, "all", str(tmp_path / "mixed"), "--since", since)
    assert (recent["files"], recent["filesSkipped"], recent["callsNew"]) == (4, 3, 4)
    everything = import_json(broker_env, "all", str(tmp_path / "mixed"))
    assert everything["callsNew"] == 1 + 7 and everything["filesUnchanged"] == 1
    conn = broker_env.db()
    try:
        agents = dict(conn.execute("SELECT s.agent, count(*) FROM tool_calls c JOIN sessions s"
                                   " ON s.id = c.session_id GROUP BY s.agent"))
    finally:
        conn.close()
    assert agents == {"pi": 1, "claude-code": 7, "codex": 4}


def test_progress_is_reported_inside_a_large_file(broker_env, tmp_path):  # noqa: F811
    from yarp.transcripts.importer import ImportOptions, import_transcripts

    path = tmp_path / "s.jsonl"
    pi_session_file(path, 25_000)
    set_old_mtime(path)
    seen = []
    tally = import_transcripts(broker_env.location, ImportOptions(("pi",), (str(path),)), environ=broker_env.environ,
                               progress=lambda done, total, t: seen.append((done, total, t.calls_found)))
    assert tally.calls_new == 25_000
    assert seen[0] == (0, 1, 0) and seen[-1] == (1, 1, 25_000)
    # Updates while the one file is read, not only between files.
    assert any(0 < found < 25_000 for _done, _total, found in seen)


def test_pi_sessions_are_discovered_under_home(broker_env, tmp_path):  # noqa: F811
    home = tmp_path / "home"
    path = home / ".pi" / "agent" / "sessions" / "--home-dev-app--" / "2026-03-01T10-00-00-000Z_s.jsonl"
    write_lines(path, [pi_header(), *pi_pair(0), *pi_pair(1)])
    set_old_mtime(path)
    proc = subprocess.run([sys.executable, "-m", "yarp", "import", "pi", "--json", "--archive", broker_env.archive],
                          env=broker_env.with_env(HOME=home, PI_CODING_AGENT_DIR=None), capture_output=True,
                          text=True, timeout=120, check=True)
    summary = json.loads(proc.stdout)
    assert (summary["files"], summary["callsNew"]) == (1, 2)


def test_a_call_the_archive_cannot_hold_is_refused_alone(broker_env, tmp_path):  # noqa: F811
    path = tmp_path / "s.jsonl"
    deep: dict = {}
    node = deep
    for _ in range(200):
        node["d"] = {}
        node = node["d"]
    bad_number = pi_call("cx", None, "toolu_bignum", 1, "x")
    bad_number["message"]["content"][0]["arguments"] = {"n": 10**30}
    bad_depth = pi_call("cy", None, "toolu_deep", 2, "y")
    bad_depth["message"]["content"][0]["arguments"] = deep
    write_lines(path, [pi_header(), *pi_pair(0), bad_number, pi_result("rx", "cx", "toolu_bignum", 1, "n"),
                       *pi_pair(1), bad_depth, pi_result("ry", "cy", "toolu_deep", 2, "d"), *pi_pair(2)])
    set_old_mtime(path)
    summary = import_json(broker_env, "pi", str(path))
    assert (summary["callsNew"], summary["callsRefused"]) == (3, 2)
    reasons = [issue["reason"] for issue in summary["issues"]]
    assert any(r.startswith("call toolu_bignum refused") for r in reasons)
    assert any(r.startswith("call toolu_deep refused") for r in reasons)
    assert set(call_rows(broker_env)) == {"toolu_00000000", "toolu_00000001", "toolu_00000002"}
    assert import_json(broker_env, "pi", str(path))["callsNew"] == 0


def test_a_codex_command_still_running_waits_across_runs_for_its_execution(broker_env, tmp_path):  # noqa: F811
    """The model was told "still running"; the execution comes in a later run and decides the outcome."""
    from import_fixtures import CODEX_THREAD, codex_line

    path = tmp_path / f"rollout-2026-03-01T10-00-00-{CODEX_THREAD}.jsonl"
    running = "Chunk ID: 9\nWall time: 10.0 seconds\nProcess running with session ID 7\nOutput:\n"
    write_lines(path, [
        codex_line("session_meta", 0, {"id": CODEX_THREAD, "cwd": "/home/dev/app"}, 0),
        codex_line("response_item", 1, {"type": "function_call", "name": "exec_command", "call_id": "call_r",
                                        "arguments": json.dumps({"cmd": "sleep 20; echo late"})}, 1),
        codex_line("response_item", 11, {"type": "function_call_output", "call_id": "call_r", "output": running}, 2),
        codex_line("event_msg", 12, {"type": "task_complete", "turn_id": "t1"}, 3),
    ])
    first = import_json(broker_env, "codex", str(path))
    assert (first["callsNew"], first["callsWaitingForResult"]) == (0, 1)
    with open(path, "a") as handle:
        handle.write(json.dumps(codex_line("event_msg", 21, {"type": "item_completed", "item": {
            "type": "CommandExecution", "id": "call_r", "status": "completed", "exit_code": 0,
            "aggregated_output": "late\n"}}, 4)) + "\n")
    second = import_json(broker_env, "codex", str(path))
    assert (second["callsNew"], second["callsWaitingForResult"]) == (1, 0)
    conn = broker_env.db()
    try:
        (rowid, status, executed, is_error), = conn.execute("SELECT id, status, executed, is_error FROM tool_calls")
        assert (status, executed, is_error) == ("finished", 1, 0)
        assert payload(conn, rowid, "source_output", "before") == b"late\n"
    finally:
        conn.close()


def test_progress_on_a_terminal_is_removed_at_the_end_and_never_in_a_pipe(broker_env, tmp_path):  # noqa: F811
    from terminal import on_a_terminal

    first, second = tmp_path / "a" / "s.jsonl", tmp_path / "b" / "s.jsonl"
    pi_session_file(first, 300)
    pi_session_file(second, 300, session_id="11111111-2222-3333-4444-555555555555")
    set_old_mtime(first, second)
    argv = [sys.executable, "-m", "yarp", "import", "pi", str(first.parent), "--archive", broker_env.archive]
    proc, seen = on_a_terminal(argv, broker_env.environ, stream="stderr", timeout=120)
    assert proc.returncode == 0 and b"imported 300 calls" in proc.stdout, proc
    assert re.search(rb"importing files 1/1 \(300 calls read, 300 imported\)", seen), seen
    assert seen.endswith(b"\r\x1b[K")  # removed before the summary
    piped = subprocess.run([*argv[:4], str(second.parent), *argv[5:]], env=broker_env.environ,
                           capture_output=True, timeout=120)
    assert piped.returncode == 0 and b"imported 300 calls" in piped.stdout and piped.stderr == b"", piped
