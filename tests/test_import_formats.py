"""`yarp import claude-code` and `yarp import codex` on transcripts written in the agents' formats.

The transcripts come from `import_fixtures` (shapes described field by field
in the format notes); the archive is real, written by a real broker.
"""

from __future__ import annotations

import json

from broker_helpers import broker_env  # noqa: F401  (fixture)
from import_fixtures import CLAUDE_SESSION, CODEX_THREAD, claude_project, codex_rollout, set_old_mtime
from test_import_pi import import_json, payload, yarp
from yarp.archive.codec import canonical_json


def calls_by_id(benv) -> dict:
    conn = benv.db()
    try:
        rows = conn.execute(
            "SELECT c.id, s.agent, s.source_session_id, c.source_call_id, c.tool_name, c.status, c.is_error,"
            " c.executed, c.provider, c.model, c.working_directory, c.started_at_ms, c.finished_at_ms"
            " FROM tool_calls c JOIN sessions s ON s.id = c.session_id").fetchall()
        out = {}
        for row in rows:
            snaps = {(subject, stage): payload(conn, row[0], subject, stage)
                     for subject, stage in (("input", "before"), ("input", "after"), ("result", "before"),
                                            ("result", "after"), ("source_output", "before"),
                                            ("result_text", "before"))}
            out[row[3]] = dict(zip(("rowid", "agent", "session", "call", "tool", "status", "is_error", "executed",
                                    "provider", "model", "cwd", "started", "finished"), row), snaps=snaps)
        return out
    finally:
        conn.close()


def test_claude_code_project_is_imported_with_hook_shapes(broker_env, tmp_path):  # noqa: F811
    big = "".join(f"line {n}\n" for n in range(6000))
    fixture = claude_project(tmp_path / "projects", big)
    set_old_mtime(fixture["main"], fixture["sub"])
    summary = import_json(broker_env, "claude-code", str(tmp_path / "projects"))
    assert summary["callsFound"] == 7
    assert summary["callsNew"] == 7
    assert summary["callsWithoutResult"] == 1
    assert summary["resultsWithoutCall"] == 1 and summary["corruptLines"] == 1
    assert summary["unknownRecords"] == {"claude-code:brand-new-record-kind": 1}
    lines = {(issue["line"], issue["reason"]) for issue in summary["issues"]}
    assert (15, "line is not valid JSON") in lines and (16, "result without a call in this file") in lines

    calls = calls_by_id(broker_env)
    assert set(calls) == set(fixture["results"]) | {fixture["open"]}
    for call_id, expected in fixture["results"].items():
        call = calls[call_id]
        # Subagent calls belong to the parent session, as the live hooks record them.
        assert (call["agent"], call["session"], call["status"], call["executed"]) == \
            ("claude-code", CLAUDE_SESSION, "finished", 1)
        assert call["is_error"] == int(call_id in fixture["errors"])
        assert call["model"] == "claude-sonnet-4-5" and call["provider"] is None and call["cwd"] == "/home/dev/app"
        assert call["snaps"][("result", "before")] == call["snaps"][("result", "after")] == canonical_json(expected)
        assert call["snaps"][("input", "before")] == call["snaps"][("input", "after")]
        assert call["finished"] >= call["started"]
    # The spilled output is stored whole; other calls have none.
    assert calls["toolu_03big"]["snaps"][("source_output", "before")] == big.encode()
    assert calls["toolu_01ls"]["snaps"][("source_output", "before")] is None
    # The image stays inside the result JSON with its media type.
    assert b'"media_type":"image/png"' in calls["toolu_05img"]["snaps"][("result", "before")]
    open_call = calls[fixture["open"]]
    assert (open_call["status"], open_call["is_error"], open_call["executed"]) == ("started", None, None)
    assert "archive: ok" in yarp(broker_env, "archive", "verify").stdout

    ref = broker_env.db().execute("SELECT archive_ref FROM tool_calls WHERE source_call_id = 'toolu_03big'"
                                  ).fetchone()[0]
    found = yarp(broker_env, "search", ref, "^line 5999$").stdout
    assert "source_output:6000:line 5999" in found
    assert yarp(broker_env, "restore", ref).stdout == big


def test_codex_rollout_uses_complete_output_and_exit_codes(broker_env, tmp_path):  # noqa: F811
    long_output = "".join(f"{n}\n" for n in range(1, 5001))
    fixture = codex_rollout(tmp_path / "codex", long_output)
    set_old_mtime(fixture["path"])
    env = broker_env.with_env(CODEX_HOME=str(tmp_path / "codex"))
    # Discovery: no paths, the rollout is found under $CODEX_HOME/sessions.
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "yarp", "import", "codex", "--json", "--archive", broker_env.archive],
                          env=env, capture_output=True, text=True, timeout=120, check=True)
    summary = json.loads(proc.stdout)
    assert summary["files"] == 1 and summary["callsNew"] == 4 and summary["callsWithoutResult"] == 1
    assert summary["resultsWithoutCall"] == 1
    assert summary["unknownRecords"] == {"codex:future_line_kind": 1}

    calls = calls_by_id(broker_env)
    assert set(calls) == {"call_0", "call_1", "call_2", fixture["open"]}
    for call_id, expected in fixture["results"].items():
        call = calls[call_id]
        assert (call["agent"], call["session"], call["status"]) == ("codex", CODEX_THREAD, "finished")
        assert (call["provider"], call["model"], call["cwd"]) == ("scripted", "scripted-model", "/home/dev/app")
        assert call["is_error"] == int(call_id in fixture["errors"])
        assert call["snaps"][("result", "before")] == call["snaps"][("result", "after")] == canonical_json(expected)
        assert call["snaps"][("input", "before")] == canonical_json(fixture["inputs"][call_id])
    assert calls["call_0"]["tool"] == "exec_command" and calls["call_2"]["tool"] == "apply_patch"
    assert all(calls[call_id]["executed"] == 1 for call_id in fixture["results"])
    # The complete output (not the 10 KB the model saw) is the exact source output, searchable line by line;
    # a command whose execution the rollout lacks has only the output the model got.
    assert calls["call_0"]["snaps"][("source_output", "before")] == fixture["outputs"]["call_0"].encode()
    assert calls["call_0"]["snaps"][("result_text", "before")] is None
    assert calls["call_1"]["snaps"][("source_output", "before")] is None
    assert calls["call_1"]["snaps"][("result_text", "before")] is None
    ref = broker_env.db().execute("SELECT archive_ref FROM tool_calls WHERE source_call_id = 'call_0'").fetchone()[0]
    assert "source_output:4999:4999" in yarp(broker_env, "search", ref, "^4999$").stdout
    assert "archive: ok" in yarp(broker_env, "archive", "verify").stdout


def test_codex_bare_era_rollout_with_a_local_shell_call(broker_env, tmp_path):  # noqa: F811
    from import_fixtures import set_old_mtime, write_lines

    path = tmp_path / "rollout-2025-08-01T10-00-00-bare.jsonl"
    output = json.dumps({"output": "ls: x: No such file\n", "metadata": {"exit_code": 1, "duration_seconds": 0.1}})
    action = {"type": "exec", "command": ["ls", "x"], "working_directory": "/home/dev/old", "timeout_ms": 10000}
    write_lines(path, [
        {"id": "bare-thread-1", "timestamp": "2025-08-01T10:00:00.000Z", "instructions": None,
         "git": {"branch": "main"}},
        {"record_type": "state"},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "look"}]},
        {"type": "local_shell_call", "call_id": "ls_1", "status": "completed", "action": action},
        {"type": "function_call_output", "call_id": "ls_1", "output": output},
    ])
    set_old_mtime(path)
    summary = import_json(broker_env, "codex", str(path))
    assert (summary["callsNew"], summary["unknownRecords"], summary["corruptLines"]) == (1, {}, 0)
    call = calls_by_id(broker_env)["ls_1"]
    assert (call["session"], call["tool"], call["cwd"], call["is_error"]) == \
        ("bare-thread-1", "local_shell", "/home/dev/old", 1)
    assert call["started"] == 1754042400000  # no line times in this era: the session's start
    assert call["snaps"][("input", "before")] == canonical_json(action)
    # The exit code is the one the output states: no execution record exists in this era.
    assert call["snaps"][("result", "before")] == canonical_json({"exit_code": 1, "status": None, "output": output})
    assert call["executed"] == 1
