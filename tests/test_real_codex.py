"""End to end: the real Codex CLI, our installed hooks and the real `yarp`.

Codex runs `codex exec` against the scripted Responses-API server, both inside a
loopback-only network namespace (Codex's network rule: with the `[features]`,
`[analytics]` and update settings below it contacts nothing but the model
server). The hooks are installed with `yarp hook install codex` into the test's
`CODEX_HOME`. The script asks for:

- a command still running at `yield_time_ms` (no post event: settled later);
- a command still running when the session ends (Codex kills it; settled at
  `SessionEnd`);
- a command asking to leave the sandbox, which Codex refuses (no post event);
- a command with a large output: archived exactly from the transcript, the
  model shown YARP's capped view whose `yr_` marker `yarp search` resolves;
- an output over 64 KiB, which Codex itself cuts before writing the
  transcript: archived as an incomplete text, and said so in the marker;
- a failing command: recorded as an error with its exit code.

The package is installed once per version into a cache directory
($YARP_TEST_CACHE, else /tmp/yarp-test-cache) before the namespace is entered;
the test skips only when npm is missing or cannot reach the registry.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path

import pytest
from agent_packages import CODEX_CONFIG, codex_binary
from netns import loopback_namespace
from scripted_responses import ScriptedResponses, Text, ToolCall, tool_outputs
from test_hooks import as_json, calls, world  # noqa: F401  (fixture)

pytestmark = pytest.mark.slow

CAP = 5120
MARKER = re.compile(r"\[yarp: (\d+) byte\(s\) capped at (\d+); ref=(yr_[0-9a-f]{32}); (\w+) (\w+)\]")


@pytest.fixture(scope="session")
def codex_bin() -> Path:
    return codex_binary()


def test_real_codex_archives_exact_output_and_shows_the_capped_view(world, codex_bin):  # noqa: F811
    from yarp.clients.broker import BrokerClient
    from yarp.paths import resolve_archive

    codex_home = world.tmp / "codex-home"
    codex_home.mkdir(mode=0o700)
    world.env["CODEX_HOME"] = str(codex_home)
    installed = world.yarp_cli("hook", "install", "codex", "--user")
    assert installed.returncode == 0, installed.stderr
    assert b"/hooks" in installed.stdout and b"codex_hooks" not in installed.stdout
    hooks = json.loads((codex_home / "hooks.json").read_text())
    assert set(hooks["hooks"]) == {"PreToolUse", "PostToolUse", "Stop", "SessionEnd"}
    assert str(world.yarp) in hooks["hooks"]["PreToolUse"][0]["hooks"][0]["command"]

    big = "seq 1 10000"
    huge = "seq 1 20000"
    failing = "echo failure-marker >&2; exit 3"
    steps = [
        ToolCall("call_late", "exec_command", {"cmd": "sleep 0.5; echo late", "yield_time_ms": 100}),
        ToolCall("call_killed", "exec_command", {"cmd": "echo started; sleep 60", "yield_time_ms": 100}),
        ToolCall("call_refused", "exec_command", {"cmd": "touch refused.txt", "sandbox_permissions": "require_escalated",
                                                  "justification": "write a file"}),
        ToolCall("call_big", "exec_command", {"cmd": big}),
        ToolCall("call_huge", "exec_command", {"cmd": huge}),
        ToolCall("call_fail", "exec_command", {"cmd": failing}),
        Text("done"),
    ]
    env = dict(world.env, SCRIPTED_API_KEY="dummy")
    # A warm broker, as in real use (its idle grace is 60 s; the test shortens it to 300 ms).
    warm = BrokerClient(resolve_archive(world.archive, world.env), world.env)
    warm.connect(time.monotonic() + 10)
    started = time.monotonic()
    try:
        with loopback_namespace(), ScriptedResponses(steps) as server:
            (codex_home / "config.toml").write_text(CODEX_CONFIG.format(base_url=server.base_url))
            run = subprocess.run(
                [str(codex_bin), "exec", "--skip-git-repo-check", "--dangerously-bypass-hook-trust",
                 "run the scripted commands"],
                env=env, cwd=world.work, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120,
                check=False)
    finally:
        warm.close()
    wall = time.monotonic() - started
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip().endswith("done")
    warnings = [line for line in run.stderr.splitlines() if line.startswith("yarp: ")]
    assert not warnings, warnings
    shown: dict[str, str] = {}
    for request in server.requests:
        shown.update(tool_outputs(request))

    archived = calls(world.archive)
    assert set(archived) == {"call_late", "call_killed", "call_refused", "call_big", "call_huge", "call_fail"}
    sessions = {call["session"] for call in archived.values()}
    assert len(sessions) == 1
    for call in archived.values():
        assert (call["agent"], call["model"], call["cwd"]) == ("codex", "scripted-model", str(world.work))
        assert (call["status"], call["requires_streams"]) == ("finished", 0)

    # Large output: the complete output is archived exactly; the model got YARP's capped view.
    exact = world.shell(big).stdout
    assert 10_000 < len(exact) < 65_536
    call = archived["call_big"]
    # The call as the model made it (Codex shows hooks `Bash {"command"}`); nothing was rewritten.
    assert call["tool"] == "exec_command"
    assert as_json(call["snaps"]["input/before"]) == as_json(call["snaps"]["input/after"]) == {"cmd": big}
    assert (call["executed"], call["is_error"]) == (1, 0)
    assert call["snaps"]["source_output/before"] == exact
    before = as_json(call["snaps"]["result/before"])
    after = as_json(call["snaps"]["result/after"])
    assert (before["exit_code"], before["status"]) == (0, "completed")
    assert len(before["output"]) < len(exact), "Codex's own result was already cut"
    view = shown["call_big"]
    assert after == {**before, "output": view}, "the archived visible result is what the model received"
    assert view.startswith("Process exited with code 0\nOutput:\n1\n2\n3\n") and view.endswith("\n10000\n")
    marker = MARKER.search(view)
    assert marker is not None and marker.groups() == (str(len(exact)), str(CAP), call["ref"], "source_output",
                                                      "complete")
    assert len(view.encode()) <= CAP + len("Process exited with code 0\nOutput:\n")
    assert "\n5432\n" not in view
    found = world.yarp_cli("search", call["ref"], "^5432$")
    assert found.returncode == 0 and b"5432" in found.stdout, found.stderr

    # Over 64 KiB Codex itself keeps only head and tail in the transcript: archived as an incomplete text.
    call = archived["call_huge"]
    assert (call["executed"], call["is_error"]) == (1, 0)
    assert "source_output/before" not in call["snaps"]
    text = call["snaps"]["result_text/before"]
    assert b"... command output truncated for persistence ..." in text and len(text) < len(world.shell(huge).stdout)
    assert text.startswith(b"1\n2\n3\n") and text.endswith(b"\n20000\n")
    marker = MARKER.search(shown["call_huge"])
    assert marker is not None and marker.groups()[2:] == (call["ref"], "result_text", "incomplete")
    assert as_json(call["snaps"]["result/after"])["output"] == shown["call_huge"]

    # Failing command: an error, with the exit code the transcript proves; small output left as Codex showed it.
    call = archived["call_fail"]
    assert (call["executed"], call["is_error"]) == (1, 1)
    assert call["snaps"]["source_output/before"] == b"failure-marker\n"
    assert as_json(call["snaps"]["result/before"])["exit_code"] == 3
    assert "Process exited with code 3" in shown["call_fail"] and "failure-marker" in shown["call_fail"]
    assert call["snaps"]["result/after"] == call["snaps"]["result/before"]

    # Refused by Codex (no post event): settled by the next event as not executed, an error.
    call = archived["call_refused"]
    assert (call["executed"], call["is_error"]) == (0, 1)
    assert as_json(call["snaps"]["input/before"])["sandbox_permissions"] == "require_escalated"
    refused = as_json(call["snaps"]["result/before"])
    assert refused["exit_code"] is None and refused["output"] == shown["call_refused"]
    assert "source_output/before" not in call["snaps"]
    assert not (world.work / "refused.txt").exists()

    # Still running when Codex answered (no post event): settled later with its real exit code and output.
    call = archived["call_late"]
    assert "Process running with session ID" in shown["call_late"]
    assert (call["executed"], call["is_error"]) == (1, 0)
    assert call["snaps"]["source_output/before"] == b"late\n"
    assert as_json(call["snaps"]["result/before"])["output"] == shown["call_late"]

    # Still running when the session ended: Codex killed it and recorded that; settled at SessionEnd.
    call = archived["call_killed"]
    killed = as_json(call["snaps"]["result/before"])
    assert (call["executed"], call["is_error"], killed["status"]) == (1, 1, "failed")
    assert killed["exit_code"] not in (0, None) and killed["output"] == shown["call_killed"]
    assert call["snaps"]["source_output/before"] == b"started\n"

    report = world.verify()
    assert "archive: ok" in report and "incomplete_calls: 0" in report
    print(f"codex exec wall time: {wall:.2f} s")
