"""What a user who installed the wheel does, end to end, with the installed `yarp` only.

Each test runs the installed console script (and, for the hooks, the exact
command `yarp hook install` wrote into the agent's settings) in a private home,
from a directory outside the checkout, against a real broker it starts on
demand and a real SQLite archive.
"""

from __future__ import annotations

import json
import re
import shlex
import struct
import subprocess
import time
from pathlib import Path

import pytest

from conftest import SOURCE, VENV, World

REF = re.compile(rb"ref=(yr_[0-9a-f]{32})")
SEQ = "".join(f"{i}\n" for i in range(1, 300001))


def test_run_shows_a_capped_view_whose_marker_search_read_and_restore_resolve(world: World):
    result = world.yarp("run", "--", "sh", "-c", "seq 1 300000; echo boom >&2; exit 3", check=False)
    assert result.returncode == 3, result.stderr
    assert b"archive failed" not in result.stderr
    assert len(result.stdout) <= 6 * 1024 < len(SEQ), "the view is capped"
    assert result.stdout.startswith(b"1\n2\n3\n") and result.stdout.rstrip().endswith(b"300000")
    assert result.stderr.startswith(b"boom\n")
    ref = REF.search(result.stdout).group(1).decode()
    found = world.yarp("search", ref, "^123456$")
    assert b"stdout:123456:123456" in found.stdout
    exact = world.yarp("read", ref, "stdout", "123455:123457")
    assert exact.stdout == b"123455\n123456\n123457\n"
    restored = world.yarp("restore", ref)
    assert restored.stdout == SEQ.encode()
    assert "incomplete_calls: 0" in world.yarp("archive", "verify").stdout.decode()


def _settings_command(path: Path, event: str) -> str:
    groups = json.loads(path.read_text())["hooks"][event]
    commands = [hook["command"] for group in groups for hook in group["hooks"]]
    assert len(commands) == 1
    return commands[0]


def test_claude_code_hooks_as_installed_rewrite_capture_and_finish_a_bash_call(world: World):
    world.yarp("hook", "install", "claude-code")
    settings = world.home / ".claude" / "settings.json"
    pre_command = _settings_command(settings, "PreToolUse")
    assert shlex.split(pre_command) == [str(VENV / "bin" / "yarp"), "hook", "claude-code"]
    for n in range(3):
        (world.work / f"f{n}.txt").write_text("".join(f"line {i}: needle {i} of file {n}\n" for i in range(300)))
    session, cwd = "5b1c2e4a-0000-4000-8000-000000000001", str(world.work)
    tool_input = {"command": "grep -rn needle .", "description": "find needles"}
    event = {"session_id": session, "transcript_path": str(world.home / "t.jsonl"), "cwd": cwd,
             "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Bash",
             "tool_input": tool_input, "tool_use_id": "toolu_01"}
    pre = world.shell(pre_command, input=json.dumps(event).encode())
    assert pre.returncode == 0, pre.stderr
    updated = json.loads(pre.stdout)["hookSpecificOutput"]["updatedInput"]
    assert updated["description"] == "find needles" and " run --archive-agent 'claude-code' " in updated["command"]
    ran = world.shell(updated["command"])
    raw = world.shell("grep -rn needle .")
    assert ran.returncode == 0 and len(ran.stdout) < len(raw.stdout)
    response = {"stdout": ran.stdout.decode().rstrip("\n"), "stderr": "", "interrupted": False, "isImage": False}
    post_event = {**event, "hook_event_name": "PostToolUse", "tool_input": updated, "tool_response": response}
    post = world.shell(_settings_command(settings, "PostToolUse"), input=json.dumps(post_event).encode())
    assert post.returncode == 0 and post.stderr == b""
    ref = REF.search(ran.stdout).group(1).decode()
    found = world.yarp("search", ref, "needle 287 of file 1")
    assert b"needle 287 of file 1" in found.stdout
    stats = dict(line.split(": ") for line in world.yarp("archive", "stats").stdout.decode().splitlines())
    assert stats["calls"] == "1" and stats["incomplete_calls"] == "0"


def test_a_codex_post_event_replaces_a_large_view_with_the_capped_one(world: World):
    world.yarp("hook", "install", "codex")
    hooks = world.home / ".codex" / "hooks.json"
    session = "01a23bf7-a58f-7472-b223-ba675f3a3c01"
    transcript = world.home / ".codex" / "sessions" / f"rollout-x-{session}.jsonl"
    output = "".join(f"{i}\n" for i in range(1, 8001))

    def append(record: dict) -> None:
        with open(transcript, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")

    transcript.parent.mkdir(parents=True)
    append({"type": "session_meta", "payload": {"id": session, "cli_version": "0.171.0"}})
    append({"type": "response_item", "payload": {"type": "function_call", "name": "exec_command",
                                                 "arguments": json.dumps({"cmd": "seq 1 8000"}), "call_id": "c1"}})
    event = {"session_id": session, "turn_id": "t1", "transcript_path": str(transcript), "cwd": str(world.work),
             "hook_event_name": "PreToolUse", "model": "gpt-5", "permission_mode": "bypassPermissions",
             "tool_name": "Bash", "tool_input": {"command": "seq 1 8000"}, "tool_use_id": "c1"}
    pre = world.shell(_settings_command(hooks, "PreToolUse"), input=json.dumps(event).encode())
    assert pre.returncode == 0, pre.stderr
    append({"type": "event_msg", "payload": {"type": "item_completed", "item": {
        "type": "CommandExecution", "id": "c1", "command": ["/bin/bash", "-lc", "seq 1 8000"], "status": "completed",
        "aggregated_output": output, "exit_code": 0, "duration": {"secs": 0, "nanos": 4000}}}})
    cut = output[:5000] + "\n…33894 chars truncated…\n" + output[-5000:]
    post_event = {**event, "hook_event_name": "PostToolUse", "tool_response": cut}
    post = world.shell(_settings_command(hooks, "PostToolUse"), input=json.dumps(post_event).encode())
    assert post.returncode == 0, post.stderr
    answer = json.loads(post.stdout)
    assert answer["decision"] == "block" and len(answer["reason"].encode()) <= 6 * 1024
    ref = REF.search(answer["reason"].encode()).group(1).decode()
    assert b"4321" in world.yarp("search", ref, "^4321$").stdout


def _frame(obj: dict) -> bytes:
    body = json.dumps(obj).encode()
    return struct.pack(">Q", len(body)) + body


class Bridge:
    """`yarp archive ingest` as an adapter drives it: one frame, then one acknowledgement line."""

    def __init__(self, world: World) -> None:
        self.proc = subprocess.Popen(["yarp", "archive", "ingest"], env=world.env, cwd=world.work,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def send(self, obj: dict) -> dict:
        self.proc.stdin.write(_frame(obj))
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def close(self) -> int:
        self.proc.stdin.close()
        return self.proc.wait(timeout=60)


def test_an_ingest_session_survives_a_killed_broker_and_replays_exactly_once(world: World):
    session = {"agent": "pi", "account": "me", "sourceSessionId": "s-1", "startedAtMs": 1_764_800_000_000}
    now = int(time.time() * 1000)
    call = {"sourceCallId": "call-1", "toolName": "read", "startedAtMs": now, "requiresStreams": False}
    begin = {"requestId": 1, "schemaVersion": 1, "operation": "begin_call", "session": session, "call": call,
             "inputBefore": {"path": "a.txt"}, "inputAfter": {"path": "a.txt"}, "capturedAtMs": now,
             "deadlineAtMs": now + 10_000}
    bridge = Bridge(world)
    first = bridge.send(begin)
    assert first["ok"] and first["requestId"] == 1
    status = world.yarp_json("archive", "broker", "status", "--json")
    world.shell(f"kill -9 {status['pid']}")
    result = {"content": [{"type": "text", "text": "hello\n"}], "details": None, "isError": False}
    again = bridge.send({**begin, "requestId": 2, "deadlineAtMs": int(time.time() * 1000) + 10_000})
    assert again == {"requestId": 2, "ok": True, "archiveRef": first["archiveRef"]}, "an identical replay"
    for request_id, operation, extra in (
            (3, "result_before", {"result": result, "capturedAtMs": now + 1}),
            (4, "stage_result", {"result": result, "isError": False, "capturedAtMs": now + 2}),
            (5, "finish_call", {"result": result, "isError": False, "requirePreResult": True,
                                "finishedAtMs": now + 3})):
        ack = bridge.send({"requestId": request_id, "schemaVersion": 1, "operation": operation, "session": session,
                           "sourceCallId": "call-1", **extra})
        assert ack["ok"], ack
    assert bridge.close() == 0
    stats = dict(line.split(": ") for line in world.yarp("archive", "stats").stdout.decode().splitlines())
    assert (stats["sessions"], stats["calls"], stats["incomplete_calls"]) == ("1", "1", "0")


def test_import_of_pi_sessions_then_savings_export_and_verify(world: World):
    sessions = SOURCE.parent / "shared" / "data" / "pi-sessions"
    if not any(sessions.glob("*.jsonl")):
        pytest.skip("the shared Pi sessions are absent")
    summary = world.yarp_json("import", "pi", str(sessions), "--settle", "0", "--json")
    assert summary["callsNew"] > 100 and summary["callsRefused"] == 0
    again = world.yarp_json("import", "pi", "--json", str(sessions), "--settle", "0")
    assert again["callsNew"] == 0, "a second import is incremental and idempotent"
    world.yarp("run", "--", "sh", "-c", "seq 1 50000")
    total = world.yarp_json("archive", "savings", "--json")["total"]
    # Imported calls' views are unknown (the agent's own view was not archived): reported, never counted.
    assert total["view_unknown_imported_calls"] + total["incomplete_calls"] == summary["callsNew"]
    assert total["calls"] == 1 and total["bytes_withheld"] > 0
    calls = int(dict(line.split(": ") for line in world.yarp("archive", "stats").stdout.decode().splitlines())
                ["calls"])
    exported = world.yarp_json("archive", "export", str(world.root / "parquet"), "--format", "parquet", "--json")
    assert exported["tables"]["calls"]["rows"] == calls
    import duckdb

    with duckdb.connect() as con:
        counted = con.execute("SELECT count(*) FROM read_parquet(?)",
                              [str(world.root / "parquet" / "calls.parquet")]).fetchone()[0]
    assert counted == calls
    assert world.yarp("archive", "verify").stdout.decode().rstrip().endswith("archive: ok")


def test_doctor_finds_this_installation_healthy(world: World):
    world.yarp("hook", "install", "pi")
    report = world.yarp_json("doctor", "--json")
    assert report["healthy"]
    checks = {check["name"]: check for check in report["checks"]}
    assert checks["data files"]["status"] == "ok"
    assert checks["kernels"]["detail"] == (
        "compiled: frames, payloads, validation, trigger scan, line templates, line offsets, line shapes")
    assert checks["capture"]["status"] == "ok"
    assert checks["Pi extension"]["status"] == "ok" and "this yarp" in checks["Pi extension"]["detail"]


def test_the_installed_broker_refreshes_a_large_archives_summaries(world: World):
    # "Large" from the first byte: the broker starts the installed refresh module as its child.
    world.env["YARP_BROKER_REFRESH_BYTES"] = "0"
    refs = [REF.search(world.yarp("run", "--", "seq", "1", str(n)).stdout) for n in (3000, 4000)]
    last = refs[-1].group(1).decode()
    summaries = world.home / ".cache" / "yarp" / "stats"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = list(summaries.glob("*.json"))
        if found and json.loads(found[0].read_bytes())["last_ref"] == last:
            break
        time.sleep(0.1)
    else:
        raise AssertionError("no refreshed summary holds the last call")
    assert list((world.home / ".cache" / "yarp" / "savings").glob("*.sqlite3"))
    warm = world.yarp_json("archive", "stats", "--json")
    cold = json.loads(subprocess.run(["yarp", "archive", "stats", "--json"], cwd=world.work, capture_output=True,
                                     env=dict(world.env, XDG_CACHE_HOME=str(world.root / "other")),
                                     timeout=120, check=True).stdout)
    assert warm == cold and warm["calls"] == 2

