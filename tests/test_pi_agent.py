"""End to end: the real Pi coding agent, our extension and the real `yarp`.

Pi runs non-interactively against the scripted model server on loopback, both
inside a loopback-only network namespace (tests/netns.py), executes
real tool calls (large, binary and failing shell output, write, read, edit) and
loads the extension shipped in the package (src/yarp/agents/pi) with `-e`. The test then reads the archive read-only and checks
every call's exact input, raw and visible result, stream and source-output
snapshots, that the text the model was shown is the archived visible result, that
capped results carry a marker whose `yarp search` finds the omitted text, and
that `yarp archive verify` passes.
"""

from __future__ import annotations

import collections
import json
import os
import shlex
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from netns import loopback_namespace
from real_agent_required import unavailable
from scripted_model import ScriptedModel, Text, ToolCall, tool_messages
from yarp.view.host import text_view

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
#: The npm project that pins the Pi version the extension is tested against.
PI_DIR = ROOT / "hooks" / "pi"
#: The extension as the package ships it, loaded as a directory through its package.json `pi.extensions` entry.
EXTENSION = ROOT / "src" / "yarp" / "agents" / "pi"
#: Set by tests/installed/run.py: the venv whose installed `yarp` this test drives, with the extension
#: that `yarp hook install pi` put where Pi discovers it (no `-e`), instead of the checkout's.
INSTALLED_VENV = os.environ.get("YARP_TEST_VENV")
PI_VERSION = "0.73.1"
CAP = 5120


@pytest.fixture(scope="session")
def pi_cli() -> Path:
    if shutil.which("node") is None or shutil.which("npm") is None:
        unavailable("node and npm are needed to run the real Pi agent")
    manifest = PI_DIR / "node_modules" / "@mariozechner" / "pi-coding-agent" / "package.json"
    installed = json.loads(manifest.read_text())["version"] if manifest.exists() else None
    if installed != PI_VERSION:
        subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund", "--silent"], cwd=PI_DIR, check=True, timeout=600
        )
    pi = PI_DIR / "node_modules" / ".bin" / "pi"
    assert pi.exists(), "npm ci did not install the pi command"
    return pi


@pytest.fixture
def world(tmp_path):
    """Private HOME/XDG/TMPDIR, a `yarp` on PATH that runs this checkout, and the env."""
    dirs = {name: tmp_path / name for name in ("home", "tmp", "bin", "agent", "work")}
    for path in dirs.values():
        path.mkdir(mode=0o700)
    # The broker socket path must stay under 104 bytes: pytest's tmp_path is too deep.
    dirs["run"] = Path(tempfile.mkdtemp(prefix="yarp-run-"))
    if INSTALLED_VENV:
        yarp = Path(INSTALLED_VENV) / "bin" / "yarp"
    else:
        yarp = dirs["bin"] / "yarp"
        src = shlex.quote(str(ROOT / "src"))
        yarp.write_text(
            f'#!/bin/sh\nPYTHONPATH={src}${{PYTHONPATH:+:$PYTHONPATH}} exec {shlex.quote(sys.executable)} -m yarp "$@"\n'
        )
        yarp.chmod(0o755)
    home = dirs["home"]
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("YARP_", "XDG_", "PI_")) and key not in ("HOME", "TMPDIR")
    }
    env.update(
        HOME=str(home),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_STATE_HOME=str(home / ".local" / "state"),
        XDG_RUNTIME_DIR=str(dirs["run"]),
        TMPDIR=str(dirs["tmp"]),
        PATH=f"{dirs['bin']}{os.pathsep}{os.environ.get('PATH', '')}",
        YARP_BIN=str(yarp),
        YARP_ARCHIVE=str(tmp_path / "archive" / "tool-calls.sqlite3"),
        PI_CODING_AGENT_DIR=str(dirs["agent"]),
        PI_OFFLINE="1",
    )
    # A short idle grace lets the broker this test started exit on its own.
    env["YARP_BROKER_IDLE_MS"] = "300"
    (tmp_path / "archive").mkdir(mode=0o700)
    if INSTALLED_VENV:
        # As a user hooks Pi up: the extension copied from the installed package runs the yarp its
        # install record names, so no YARP_BIN tells it which.
        del env["YARP_BIN"]
        installed = subprocess.run([str(yarp), "hook", "install", "pi"], env=env, capture_output=True, timeout=60)
        assert installed.returncode == 0, installed.stderr
        assert (dirs["agent"] / "extensions" / "yarp" / "yarp-install.json").is_file()
    yield dirs, env
    _wait_for_broker_exit(dirs["run"])
    shutil.rmtree(dirs["run"], ignore_errors=True)


def _wait_for_broker_exit(runtime: Path, limit_s: float = 15.0) -> None:
    """Wait until no broker socket remains, so the runtime dir is not pulled from under it."""
    deadline = time.monotonic() + limit_s
    while any((runtime / "yarp").glob("archive-*.sock")) and time.monotonic() < deadline:
        time.sleep(0.05)


def yarp(env, *args, check=True, cwd=None) -> subprocess.CompletedProcess:
    binary = env.get("YARP_BIN") or str(Path(INSTALLED_VENV) / "bin" / "yarp")
    result = subprocess.run([binary, *args], env=env, capture_output=True, timeout=60, cwd=cwd)
    if check and result.returncode != 0:
        raise AssertionError(f"yarp {args[0]} exited {result.returncode}: {result.stderr[-500:]!r}")
    return result


def payload(con, call_id: int, subject: str, stage: str) -> bytes | None:
    row = con.execute(
        "SELECT p.compression, p.uncompressed_byte_length, p.body FROM snapshots s "
        "JOIN payloads p ON p.sha256 = s.payload_sha256 "
        "WHERE s.tool_call_id = ? AND s.subject = ? AND s.stage = ?",
        (call_id, subject, stage),
    ).fetchone()
    if row is None:
        return None
    compression, length, body = row
    if compression == "zstd":
        import zstandard

        body = zstandard.ZstdDecompressor().decompress(body, max_output_size=length)
    assert len(body) == length
    return bytes(body)


def completeness_rule(details, full_output_path) -> str:
    if full_output_path:
        return "complete"
    if not isinstance(details, dict):
        return "unknown"
    truncated = details.get("truncated")
    if not isinstance(truncated, bool) and isinstance(details.get("truncation"), dict):
        truncated = details["truncation"].get("truncated")
    return {True: "incomplete", False: "complete"}.get(truncated, "unknown")


def text_of(result: dict) -> str:
    return "".join(block["text"] for block in result["content"] if block.get("type") == "text")


def test_real_pi_calls_are_archived_pruned_and_capped(pi_cli, world):
    dirs, env = world
    work = dirs["work"]
    (work / "blob.bin").write_bytes(bytes(range(256)) * 40)
    (work / "big.txt").write_text("".join(f"row {i:04d} lorem ipsum dolor sit amet\n" for i in range(900)))
    notes = "alpha line\nbeta line\n"
    script = [
        # Printed by the shell itself (a loop stays in the shell; its `seq` runs wrapped): Pi's own result.
        ToolCall("call-01", "bash", {"command": "for i in $(seq 1 60000); do echo $i; done"}),
        ToolCall("call-02", "bash", {"command": "cat blob.bin"}),
        ToolCall("call-03", "bash", {"command": "sh -c 'seq 1 3000; echo failure-marker >&2; exit 3'"}),
        ToolCall("call-04", "bash", {"command": "while read -r line; do echo \"$line\"; done < big.txt"}),
        ToolCall("call-05", "bash", {"command": "ls -la"}),
        ToolCall("call-06", "write", {"path": "notes.txt", "content": notes}),
        ToolCall("call-07", "read", {"path": "notes.txt"}),
        ToolCall("call-08", "edit", {"path": "notes.txt", "edits": [{"oldText": "beta line", "newText": "gamma line"}]}),
        ToolCall("call-09", "read", {"path": "big.txt"}),
        Text("all done"),
    ]
    calls = [step for step in script if isinstance(step, ToolCall)]
    # Pi and the scripted server share a loopback-only network namespace (npm ran before it).
    with loopback_namespace(), ScriptedModel(script) as model:
        agent = dirs["agent"]
        (agent / "models.json").write_text(
            json.dumps(
                {
                    "providers": {
                        "scripted": {
                            "baseUrl": model.base_url,
                            "api": "openai-completions",
                            "apiKey": "dummy",
                            "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
                            "models": [
                                {"id": "scripted-model", "reasoning": False, "contextWindow": 128000, "maxTokens": 4096}
                            ],
                        }
                    }
                }
            )
        )
        (agent / "settings.json").write_text(json.dumps({"retry": {"enabled": False, "provider": {"maxRetries": 0}}}))
        run = subprocess.run(
            [
                str(pi_cli), "--model", "scripted/scripted-model",
                *(() if INSTALLED_VENV else ("--no-extensions", "-e", str(EXTENSION))),
                "--no-session", "--no-context-files", "-p", "run the scripted workload",
            ],
            cwd=work, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=180,
        )
        assert run.returncode == 0, run.stderr[-2000:]
        assert "all done" in run.stdout
        assert "[yarp]" not in run.stderr, run.stderr[-2000:]
        shown: dict[str, str] = {}
        for request in model.requests:
            shown.update(tool_messages(request))

    # The tools really ran with the inputs the model asked for.
    assert (work / "notes.txt").read_text() == "alpha line\ngamma line\n"

    con = sqlite3.connect(f"file:{env['YARP_ARCHIVE']}?mode=ro", uri=True)
    sessions = con.execute("SELECT agent, account FROM sessions").fetchall()
    assert len(sessions) == 1 and sessions[0][0] == "pi"
    rows = {
        row[1]: row
        for row in con.execute(
            "SELECT id, source_call_id, tool_name, status, executed, is_error, requires_streams, archive_ref, model "
            "FROM tool_calls"
        )
    }
    # A wrapped command of a compound command records a call of its own, `<parent>/<start>-<pid>`:
    # the loop's `$(seq …)` of call-01.
    segments = {call_id: row for call_id, row in rows.items() if "/" in call_id}
    assert [call_id.split("/")[0] for call_id in segments] == ["call-01"]
    for row in segments.values():
        assert (row[2], row[3], row[4], row[6]) == ("shell", "finished", 1, 1)
        for subject in ("stdout", "stderr"):
            assert payload(con, row[0], subject, "before") is not None
    rows = {call_id: row for call_id, row in rows.items() if call_id not in segments}
    assert sorted(rows) == [call.id for call in calls]

    capped_seen = 0
    searched = 0
    wrapped_seen = 0
    for call in calls:
        call_id, _, tool_name, status, executed, is_error, requires_streams, ref, model_name = rows[call.id]
        assert (tool_name, status, executed, model_name) == (call.name, "finished", 1, "scripted-model")
        before_input = json.loads(payload(con, call_id, "input", "before"))
        after_input = json.loads(payload(con, call_id, "input", "after"))
        assert before_input == call.arguments
        if call.name == "bash":
            # The plan names the binary the extension runs (the agent's PATH may lack it).
            ran_by = env.get("YARP_BIN") or json.loads(
                (dirs["agent"] / "extensions" / "yarp" / "yarp-install.json").read_text())["yarpBin"]
            plan = json.loads(
                yarp(
                    env, "plan", "--json", "--compound", "--launcher", "'" + ran_by.replace("'", "'\\''") + "'",
                    "--archive-agent", "pi", "--archive-account", sessions[0][1],
                    "--archive-session", _session_id(con), "--archive-call", call.id, "--", call.arguments["command"],
                    cwd=work,
                ).stdout
            )
            rewritten = plan["execution"]["kind"] == "rewrite"
            wrapped = rewritten and plan["execution"]["wrapped"] == "whole"
        else:
            plan, rewritten, wrapped = None, False, False
        assert requires_streams == int(wrapped)
        if rewritten:
            assert after_input == {**call.arguments, "command": plan["execution"]["command"]}
        else:
            assert after_input == before_input
        if wrapped:
            wrapped_seen += 1
            for subject in ("stdout", "stderr"):
                for stage in ("before", "after"):
                    assert payload(con, call_id, subject, stage) is not None, (call.id, subject, stage)

        result_before = json.loads(payload(con, call_id, "result", "before"))
        result_after = json.loads(payload(con, call_id, "result", "after"))
        assert bool(is_error) == result_before["isError"] == result_after["isError"]
        visible = text_of(result_after)
        # What the model received in its next request is exactly the archived visible result.
        assert shown[call.id] == visible, call.id
        raw = text_of(result_before)
        recovery = plan is not None and plan["result"]["kind"] == "recovery"
        if not recovery:
            assert len(visible.encode()) <= CAP, call.id
        if len(raw.encode()) > CAP and not wrapped and not recovery:
            capped_seen += 1
            full_output_path = (result_before.get("details") or {}).get("fullOutputPath") if call.name == "bash" else None
            completeness = completeness_rule(result_before.get("details"), full_output_path)
            # The view is the broker's, made from the committed text by the Python view the hooks
            # use for a host's text: the extension has no cap of its own.
            view = text_view(raw.encode(), cap=CAP, archive_ref=ref, source="result_text", completeness=completeness)
            assert visible.encode() == view, call.id
            assert f"ref={ref}; result_text {completeness}" in visible, call.id
            assert payload(con, call_id, "result_text", "before") == raw.encode()
            stored = con.execute(
                "SELECT source_completeness FROM snapshots WHERE tool_call_id = ? AND subject = 'result_text'",
                (call_id,),
            ).fetchone()
            assert stored == (completeness,)
            # A line the view left out is found again in the archived text.
            shown_lines = set(visible.split("\n"))
            counts = collections.Counter(raw.split("\n"))
            candidates = [line for line, count in counts.items() if count == 1 and len(line) > 3
                          and line.isprintable() and line not in shown_lines]
            if candidates:
                omitted = candidates[len(candidates) // 2]
                found = yarp(env, "search", "-F", ref, omitted)
                assert omitted.encode() in found.stdout, (call.id, omitted)
                searched += 1
        else:
            assert result_after == result_before or wrapped, call.id

    # Large pipeline: Pi kept only its tail and wrote the full output to a file,
    # which the archive holds byte for byte.
    seq_id = rows["call-01"][0]
    assert payload(con, seq_id, "source_output", "before") == "".join(f"{i}\n" for i in range(1, 60001)).encode()
    hit = yarp(env, "search", rows["call-01"][7], "^123$")
    assert b"123" in hit.stdout
    # Failing command: the error result is archived as such.
    assert rows["call-03"][5] == 1
    assert text_of(json.loads(payload(con, rows["call-03"][0], "result", "before"))).endswith(
        "Command exited with code 3"
    )
    assert capped_seen >= 3 and searched >= 3
    assert wrapped_seen >= 1, "no scripted command was planned for rewrite; script one the rules reduce"
    con.close()

    verify = yarp(env, "archive", "verify")
    assert b"archive: ok" in verify.stdout


def _session_id(con) -> str:
    return con.execute("SELECT source_session_id FROM sessions").fetchone()[0]
