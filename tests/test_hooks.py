"""Claude Code hooks: recorded event payloads through real hook processes.

Every event below has exactly the documented shape (`PreToolUse`, `PostToolUse`,
`PostToolUseFailure` for Bash, Read, Edit, Write and an MCP tool; the Codex
hook has its own tests in test_hooks_codex.py). Each goes through `python -m yarp hook …` as a real
subprocess against a real broker; rewritten Bash commands are really run
through a shell the way the agent would; the archive is then read read-only:
every snapshot, status and flag, and `yarp archive verify`.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from ingest_helpers import broker_pids

from yarp import agents
from yarp.wire import protocol

ROOT = Path(__file__).resolve().parent.parent
SESSION = "5d2c6a1e-7f4b-4c1a-9e0b-1f2a3b4c5d6e"
#: Set by tests/installed/run.py: the venv whose installed `yarp` the hooks and commands run instead
#: of the checkout's (the real-agent tests then drive the hook commands a wheel writes).
INSTALLED_VENV = os.environ.get("YARP_TEST_VENV")


class HookWorld:
    """Private HOME/XDG, a short runtime dir, a `yarp` on PATH (the checkout's, or the installed one),
    one archive: the world every hook test and every real-agent test starts from."""

    def __init__(self, tmp_path: Path, drop: tuple[str, ...] = ()) -> None:
        """`drop`: more prefixes of the environment's names to leave out (an agent's own settings)."""
        self.tmp = tmp_path
        self.home = tmp_path / "home"
        self.bin = tmp_path / "bin"
        self.work = tmp_path / "work"
        archive_dir = tmp_path / "archive"
        for path in (self.home, self.bin, self.work, archive_dir, tmp_path / "tmp"):
            path.mkdir(mode=0o700)
        # Socket paths must stay under 104 bytes: pytest's tmp_path is too deep.
        self.runtime = Path(tempfile.mkdtemp(prefix="yr", dir="/tmp"))
        os.chmod(self.runtime, 0o700)
        self.archive = str(archive_dir / "tool-calls.sqlite3")
        if INSTALLED_VENV:
            self.yarp = Path(INSTALLED_VENV) / "bin" / "yarp"
            self.command = [str(self.yarp)]
        else:
            self.yarp = self.bin / "yarp"
            src = shlex.quote(str(ROOT / "src"))
            self.yarp.write_text(f'#!/bin/sh\nPYTHONPATH={src}${{PYTHONPATH:+:$PYTHONPATH}} '
                                 f'exec {shlex.quote(sys.executable)} -m yarp "$@"\n')
            self.yarp.chmod(0o755)
            self.command = [sys.executable, "-m", "yarp"]
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("YARP_", "XDG_", "CLAUDE", "ANTHROPIC", *drop)) and k not in ("HOME", "TMPDIR", "PWD")}
        env.update(
            HOME=str(self.home),
            XDG_DATA_HOME=str(self.home / ".local" / "share"),
            XDG_CONFIG_HOME=str(self.home / ".config"),
            XDG_STATE_HOME=str(self.home / ".local" / "state"),
            XDG_CACHE_HOME=str(self.home / ".cache"),
            XDG_RUNTIME_DIR=str(self.runtime),
            TMPDIR=str(tmp_path / "tmp"),
            PWD=str(self.work),
            PATH=f"{self.yarp.parent}{os.pathsep}{os.environ.get('PATH', '')}",
            YARP_ARCHIVE=self.archive,
            YARP_BROKER_IDLE_MS="300",
        )
        if not INSTALLED_VENV:
            env["PYTHONPATH"] = str(ROOT / "src")
        self.env = env

    def close(self) -> None:
        deadline = time.monotonic() + 15
        while any((self.runtime / "yarp").glob("archive-*.sock")) and time.monotonic() < deadline:
            time.sleep(0.05)
        for pid in broker_pids(self.archive):  # only brokers of this test's archive
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        shutil.rmtree(self.runtime, ignore_errors=True)

    def hook(self, agent: str, payload, *, raw: bytes | None = None) -> subprocess.CompletedProcess:
        data = raw if raw is not None else json.dumps(payload).encode()
        return subprocess.run([*self.command, "hook", agent], input=data, env=self.env,
                              capture_output=True, timeout=60, cwd=self.work, check=False)

    def yarp_cli(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([*self.command, *args], env=self.env, capture_output=True,
                              timeout=60, cwd=self.work, check=False)

    def shell(self, command: str) -> subprocess.CompletedProcess:
        """Run a command the way the agent's Bash tool does: `bash -c`, output kept apart."""
        return subprocess.run(["bash", "-c", command], env=self.env, capture_output=True, timeout=60, cwd=self.work, check=False)

    def verify(self) -> str:
        result = self.yarp_cli("archive", "verify")
        assert result.returncode == 0, result.stderr.decode()
        return result.stdout.decode()


def yarp_ok(yarp: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    """`yarp ARGS` run as an agent's hook finds it (the world's `yarp`, its environment); it must exit 0."""
    result = subprocess.run([str(yarp), *args], env=env, capture_output=True, timeout=120, check=False)
    assert result.returncode == 0, f"yarp {args[0]} exited {result.returncode}: {result.stderr[-800:]!r}"
    return result


@pytest.fixture
def world(tmp_path):
    w = HookWorld(tmp_path)
    yield w
    w.close()


# --- reading the archive ------------------------------------------------------------


def open_archive(path: str) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True)


def payload(con, call_id: int, subject: str, stage: str) -> bytes | None:
    row = con.execute(
        "SELECT p.compression, p.uncompressed_byte_length, p.body FROM snapshots s "
        "JOIN payloads p ON p.sha256 = s.payload_sha256 WHERE s.tool_call_id = ? AND s.subject = ? AND s.stage = ?",
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


def calls(path: str) -> dict[str, dict]:
    """Every archived call by source call id, with its flags and decoded snapshots."""
    con = open_archive(path)
    try:
        out = {}
        for row in con.execute(
            "SELECT c.id, c.source_call_id, c.tool_name, c.model, c.working_directory, c.requires_streams,"
            " c.status, c.is_error, c.executed, c.archive_ref, s.agent, s.account, s.source_session_id"
            " FROM tool_calls c JOIN sessions s ON s.id = c.session_id"
        ):
            (rowid, source_call_id, tool, model, cwd, requires, status, is_error, executed, ref, agent, account,
             session) = row
            snaps = {
                f"{subject}/{stage}": payload(con, rowid, subject, stage)
                for subject, stage in con.execute(
                    "SELECT subject, stage FROM snapshots WHERE tool_call_id = ?", (rowid,))
            }
            out[source_call_id] = {
                "tool": tool, "model": model, "cwd": cwd, "requires_streams": requires, "status": status, "is_error": is_error,
                "executed": executed, "ref": ref, "agent": agent, "account": account, "session": session, "snaps": snaps}
        return out
    finally:
        con.close()


def as_json(data: bytes | None):
    assert data is not None, "snapshot missing"
    return json.loads(data)


# --- recorded payloads ------------------------------------------------------------------


def claude_event(name: str, tool: str, tool_input: dict, call_id: str, cwd: str, **extra) -> dict:
    event = {
        "session_id": SESSION,
        "transcript_path": f"/home/user/.claude/projects/-work/{SESSION}.jsonl",
        "cwd": cwd,
        "permission_mode": "default",
        "hook_event_name": name,
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": call_id,
    }
    event.update(extra)
    return event


def bash_response(run: subprocess.CompletedProcess) -> dict:
    return {"stdout": run.stdout.decode().rstrip("\n"), "stderr": run.stderr.decode().rstrip("\n"),
            "interrupted": False, "isImage": False, "noOutputExpected": False}


def make_haystack(work: Path, lines: int = 400) -> None:
    (work / "src").mkdir()
    for n in range(4):
        body = "".join(f"line {i}: needle number {i} in file {n} with some padding text\n" for i in range(lines // 4))
        (work / "src" / f"f{n}.txt").write_text(body)


def answer(result: subprocess.CompletedProcess) -> dict | None:
    assert result.returncode == 0, result.stderr.decode()
    text = result.stdout.decode().strip()
    return json.loads(text) if text else None


# --- tests ---------------------------------------------------------------------------------------


def test_wrapped_bash_is_rewritten_run_and_finished_with_four_streams(world):
    make_haystack(world.work)
    tool_input = {"command": "grep -rn needle src", "timeout": 120000, "description": "Find needles"}
    cwd = str(world.work)
    pre = answer(world.hook("claude-code", claude_event("PreToolUse", "Bash", tool_input, "toolu_bash1", cwd)))
    assert pre is not None, "a command with a reduce rule must be rewritten"
    output = pre["hookSpecificOutput"]
    assert output["hookEventName"] == "PreToolUse"
    assert "permissionDecision" not in output, "the hook must not approve tools on the user's behalf"
    updated = output["updatedInput"]
    # The whole object is replaced by the agent: every other field is kept exactly.
    assert {k: v for k, v in updated.items() if k != "command"} == {"timeout": 120000, "description": "Find needles"}
    command = updated["command"]
    assert command.startswith(shlex.quote(str(world.yarp)) + " run --archive-agent 'claude-code' ")
    assert command.endswith(" -- grep -rn needle src")
    ran = world.shell(command)
    assert ran.returncode == 0
    raw = world.shell("grep -rn needle src")
    assert len(raw.stdout) > 5120 and len(ran.stdout) < len(raw.stdout), "the visible output is pruned"
    post = world.hook("claude-code", claude_event("PostToolUse", "Bash", updated, "toolu_bash1", cwd,
                                                  tool_response=bash_response(ran), duration_ms=91))
    assert answer(post) is None and post.stderr == b""
    call = calls(world.archive)["toolu_bash1"]
    assert (call["agent"], call["session"], call["tool"], call["cwd"]) == ("claude-code", SESSION, "Bash", cwd)
    assert (call["requires_streams"], call["status"], call["executed"], call["is_error"]) == (1, "finished", 1, 0)
    snaps = call["snaps"]
    assert as_json(snaps["input/before"]) == tool_input
    assert as_json(snaps["input/after"]) == updated
    assert as_json(snaps["result/before"]) == bash_response(ran)
    assert snaps["result/after"] == snaps["result/before"]
    assert snaps["stdout/before"] == raw.stdout, "the exact child stdout is archived"
    assert snaps["stdout/after"] == ran.stdout
    assert snaps["stderr/before"] == b"" and snaps["stderr/after"] == b""
    assert "incomplete_calls: 0" in world.verify()
    found = world.yarp_cli("search", call["ref"], "number 57 in file 2")
    assert found.returncode == 0 and b"number 57 in file 2" in found.stdout


def test_rewrite_ignored_by_the_agent_is_finished_as_not_wrapped(world):
    tool_input = {"command": "grep -rn needle src", "description": "Find needles"}
    make_haystack(world.work, 8)
    cwd = str(world.work)
    pre = answer(world.hook("claude-code", claude_event("PreToolUse", "Bash", tool_input, "toolu_ign", cwd)))
    assert pre is not None
    ran = world.shell(tool_input["command"])  # the agent ran the original command
    post = world.hook("claude-code", claude_event("PostToolUse", "Bash", tool_input, "toolu_ign", cwd,
                                                  tool_response=bash_response(ran)))
    assert answer(post) is None and post.stderr == b""
    call = calls(world.archive)["toolu_ign"]
    assert (call["requires_streams"], call["status"], call["executed"]) == (1, "finished", 0)
    assert as_json(call["snaps"]["result/before"]) == bash_response(ran), "the real output is still archived"
    assert as_json(call["snaps"]["input/after"])["command"] == pre["hookSpecificOutput"]["updatedInput"]["command"]
    assert not any(key.startswith(("stdout", "stderr")) for key in call["snaps"])
    assert "incomplete_calls: 0" in world.verify()


def test_failing_wrapped_bash_finishes_as_error_with_streams(world):
    make_haystack(world.work, 8)
    tool_input = {"command": "grep -rn absent_word src", "description": "Search"}
    cwd = str(world.work)
    pre = answer(world.hook("claude-code", claude_event("PreToolUse", "Bash", tool_input, "toolu_fail", cwd)))
    updated = pre["hookSpecificOutput"]["updatedInput"]
    ran = world.shell(updated["command"])
    assert ran.returncode == 1, "grep's status passes through the wrapper"
    failure = claude_event("PostToolUseFailure", "Bash", updated, "toolu_fail", cwd,
                           error="Exit code 1", is_interrupt=False)
    assert answer(world.hook("claude-code", failure)) is None
    call = calls(world.archive)["toolu_fail"]
    assert (call["status"], call["executed"], call["is_error"], call["requires_streams"]) == ("finished", 1, 1, 1)
    assert as_json(call["snaps"]["result/before"]) == {"error": "Exit code 1", "isInterrupt": False}
    assert call["snaps"]["stdout/before"] == b"" and "stderr/after" in call["snaps"]
    world.verify()


def test_other_tools_are_archived_unchanged(world):
    cwd = str(world.work)
    target = str(world.work / "notes.txt")
    cases = [
        ("toolu_read", "Read", {"file_path": target, "offset": 1, "limit": 20},
         {"type": "text", "file": {"filePath": target, "content": "alpha\n", "numLines": 1, "startLine": 1,
                                   "totalLines": 1}}),
        ("toolu_write", "Write", {"file_path": target, "content": "alpha\n"},
         {"type": "create", "filePath": target, "content": "alpha\n", "structuredPatch": []}),
        ("toolu_edit", "Edit", {"file_path": target, "old_string": "alpha", "new_string": "beta",
                                "replace_all": False},
         {"filePath": target, "oldString": "alpha", "newString": "beta", "originalFile": "alpha\n",
          "structuredPatch": [{"oldStart": 1, "oldLines": 1, "newStart": 1, "newLines": 1,
                               "lines": ["-alpha", "+beta"]}], "userModified": False, "replaceAll": False}),
        ("toolu_mcp", "mcp__memory__create_entities", {"entities": [{"name": "yarp", "entityType": "project",
                                                                      "observations": ["é ✓"]}]},
         [{"type": "text", "text": "[{\"name\":\"yarp\"}]"}]),
        ("toolu_pipe", "Bash", {"command": "cd src && echo 0", "description": "count"},
         {"stdout": "0", "stderr": "", "interrupted": False, "isImage": False}),
    ]
    for call_id, tool, tool_input, response in cases:
        pre = world.hook("claude-code", claude_event("PreToolUse", tool, tool_input, call_id, cwd))
        assert answer(pre) is None, f"{tool} must run unchanged"
        post = world.hook("claude-code", claude_event("PostToolUse", tool, tool_input, call_id, cwd,
                                                      tool_response=response))
        assert answer(post) is None and post.stderr == b""
    failed_input = {"file_path": str(world.work / "missing.txt")}
    world.hook("claude-code", claude_event("PreToolUse", "Read", failed_input, "toolu_missing", cwd))
    world.hook("claude-code", claude_event("PostToolUseFailure", "Read", failed_input, "toolu_missing", cwd,
                                           error="File does not exist.", is_interrupt=False))
    archived = calls(world.archive)
    assert len(archived) == len(cases) + 1
    for call_id, tool, tool_input, response in cases:
        call = archived[call_id]
        assert (call["tool"], call["status"], call["executed"], call["is_error"], call["requires_streams"]) == \
            (tool, "finished", 1, 0, 0)
        snaps = call["snaps"]
        assert as_json(snaps["input/before"]) == tool_input and snaps["input/after"] == snaps["input/before"]
        assert as_json(snaps["result/before"]) == response and snaps["result/after"] == snaps["result/before"]
        assert set(snaps) == {"input/before", "input/after", "result/before", "result/after"}
    missing = archived["toolu_missing"]
    assert (missing["status"], missing["is_error"], missing["executed"]) == ("finished", 1, 1)
    assert as_json(missing["snaps"]["result/before"]) == {"error": "File does not exist.", "isInterrupt": False}
    assert "incomplete_calls: 0" in world.verify()


def test_archive_failure_runs_the_tool_untouched_and_warns_once_per_session(world):
    # A broadly readable archive directory is refused: every capture fails for real.
    os.chmod(Path(world.archive).parent, 0o755)
    cwd = str(world.work)
    tool_input = {"command": "grep -rn needle src", "description": "Find"}
    first = world.hook("claude-code", claude_event("PreToolUse", "Bash", tool_input, "toolu_x1", cwd))
    second = world.hook("claude-code", claude_event("PreToolUse", "Read", {"file_path": "/etc/hostname"},
                                                    "toolu_x2", cwd))
    post = world.hook("claude-code", claude_event("PostToolUse", "Read", {"file_path": "/etc/hostname"},
                                                  "toolu_x2", cwd, tool_response={"type": "text"}))
    for result in (first, second, post):
        assert result.returncode == 0 and result.stdout == b"", "no answer: the original input runs"
    assert first.stderr.startswith(b"yarp: archive capture failed") and first.stderr.count(b"\n") == 1
    assert b"needle" not in first.stderr, "warnings never carry command text"
    assert second.stderr == b"" and post.stderr == b""
    markers = list((world.runtime / "yarp" / "hooks").iterdir())
    assert len(markers) == 1 and markers[0].name.startswith("claude-code-") and SESSION not in markers[0].name
    assert stat.S_IMODE(markers[0].stat().st_mode) == 0o600
    assert stat.S_IMODE(markers[0].parent.stat().st_mode) == 0o700
    other = dict(claude_event("PreToolUse", "Read", {"file_path": "/etc/hostname"}, "toolu_x3", cwd),
                 session_id="another-session")
    assert world.hook("claude-code", other).stderr.startswith(b"yarp: archive capture failed")
    assert not os.path.exists(world.archive), "no database or fallback store is created"


def test_malformed_and_foreign_events_are_ignored(world):
    for raw in (b"", b"{not json", b"[]", json.dumps({"hook_event_name": "Stop", "session_id": "s"}).encode(),
                json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Read"}).encode()):
        result = world.hook("claude-code", None, raw=raw)
        assert (result.returncode, result.stdout) == (0, b"")
    assert not os.path.exists(world.archive)


def test_disabled_archive_leaves_the_tool_alone(world):
    config = world.home / ".config" / "yarp"
    config.mkdir(parents=True)
    (config / "config.toml").write_text("version = 1\n[archive]\nenabled = false\n")
    make_haystack(world.work, 8)
    event = claude_event("PreToolUse", "Bash", {"command": "grep -rn needle src"}, "toolu_off", str(world.work))
    result = world.hook("claude-code", event)
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
    assert not os.path.exists(world.archive)


# --- the thin client and the broker's half ------------------------------------------------

#: Modules the hook process must never import: the broker, the planner, SQLite,
#: the slow conveniences over the C cores it reaches directly.
HOOK_FORBIDDEN = ("uvloop", "asyncio", "concurrent.futures", "tree_sitter", "tree_sitter_bash", "sqlite3", "_sqlite3",
                  "orjson", "zstandard", "rfc8785", "dataclasses", "argparse", "typing", "json", "re", "socket",
                  "selectors", "signal", "enum", "hashlib", "_hashlib", "threading", "shutil", "shlex", "tomllib",
                  "yarp.broker", "yarp.archive.store", "yarp.archive.prepare", "yarp.view.plan", "yarp.view.rules",
                  "yarp.hooks", "yarp.hooks.events", "yarp.hooks.capture", "yarp.broker.services.hooks", "yarp.clients.notice",
                  "yarp.agents.codex.transcripts.evidence", "yarp.view.cap",
                  "yarp.view.markers", "yarp.view.streams",
                  # With a broker running, the start-up (locks, spawning) and the operation types stay unloaded.
                  "yarp.clients.startup", "yarp.wire.protocol", "yarp.wire.operations", "yarp.wire.frames", "yarp._fastframe",
                  "yarp._fastframe_py", "fcntl",
                  # The payload kernel is the broker's (through yarp.archive.codec), never a client's.
                  "yarp.archive.payload_kernel", "yarp._payload_kernel", "yarp._payload_kernel_py",
                  # Loaded on a failure only (`yarp.cli.reported_errors`); annotations stay unevaluated
                  # without the `__future__` module, a real import at run time.
                  "yarp.errors", "__future__",
                  # `yarp.cli` hands a hook straight to `yarp.clients.hook`.
                  "yarp.commands", "yarp.commands.hook_agent",
                  # The agent's facts come from its hook.json (`yarp.clients.hook.hook_facts`), the event's
                  # name and session from the head of its JSON: no module of the agents is imported.
                  "yarp.agents", "yarp.launcher",
                  *(agents.module_name(name) for name in agents.names()),
                  *(f"{agents.module_name(name)}.{part}" for name in agents.names() for part in agents.PARTS))


def hook_imports(world: HookWorld, agent: str, payload: dict) -> tuple[set[str], subprocess.CompletedProcess]:
    """`python -X importtime` of one hook event, started as the console script starts (its own path as
    `sys.argv[0]`: the `yarp` the agent ran)."""
    entry = f"import sys; sys.argv[0] = {str(world.yarp)!r}; from yarp.cli import main; sys.exit(main())"
    result = subprocess.run([sys.executable, "-X", "importtime", "-c", entry, "hook", agent],
                            input=json.dumps(payload).encode(), env=world.env, capture_output=True, timeout=60,
                            cwd=world.work, check=False)
    names = set()
    for line in result.stderr.decode().splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip())
    return names, result


def broker_status(world: HookWorld) -> dict:
    from yarp.clients.broker import BrokerClient
    from yarp.paths import resolve_archive

    with BrokerClient(resolve_archive(world.archive, world.env), world.env) as client:
        return client.status(time.monotonic() + 10)


def test_hook_process_imports_only_the_c_cores(world):
    make_haystack(world.work, 8)
    cwd = str(world.work)
    warm = claude_event("PreToolUse", "Read", {"file_path": "/etc/hostname"}, "toolu_warm", cwd)
    assert answer(world.hook("claude-code", warm)) is None  # the broker is running from here on
    tool_input = {"command": "grep -rn needle src"}
    names, pre = hook_imports(world, "claude-code", claude_event("PreToolUse", "Bash", tool_input, "toolu_imp", cwd))
    updated = answer(pre)["hookSpecificOutput"]["updatedInput"]  # planned and rewritten, by the broker
    assert "yarp.clients.hook" in names and "yarp.clients.broker" in names  # the list is real
    assert sorted(set(HOOK_FORBIDDEN) & names) == []
    # The agent's facts come from its hook.json: no Python of the registry or of any agent is loaded.
    assert sorted(name for name in names if name.startswith("yarp.agents")) == []
    ran = world.shell(updated["command"])
    post_event = claude_event("PostToolUse", "Bash", updated, "toolu_imp", cwd, tool_response=bash_response(ran))
    names, post = hook_imports(world, "claude-code", post_event)
    assert answer(post) is None and b"yarp:" not in post.stderr
    assert "yarp.clients.hook" in names and sorted(set(HOOK_FORBIDDEN) & names) == []
    assert calls(world.archive)["toolu_imp"]["status"] == "finished"


def test_post_event_is_one_request_and_one_commit(world):
    make_haystack(world.work, 8)
    cwd = str(world.work)
    tool_input = {"command": "grep -rn needle src"}
    updated = answer(world.hook("claude-code", claude_event("PreToolUse", "Bash", tool_input, "toolu_one", cwd)))[
        "hookSpecificOutput"]["updatedInput"]
    ran = world.shell(updated["command"])
    before = broker_status(world)
    post = world.hook("claude-code", claude_event("PostToolUse", "Bash", updated, "toolu_one", cwd,
                                                  tool_response=bash_response(ran)))
    assert answer(post) is None and post.stderr == b""
    after = broker_status(world)
    assert after["pid"] == before["pid"]
    # Raw result, visible result and finish: one request, one batch (one commit).
    assert (after["requests"] - before["requests"], after["batches"] - before["batches"]) == (1, 1)
    call = calls(world.archive)["toolu_one"]
    assert (call["status"], call["executed"], call["requires_streams"]) == ("finished", 1, 1)
    assert set(call["snaps"]) >= {"result/before", "result/after", "stdout/before", "stdout/after"}


def test_post_event_after_a_broker_restart_reads_the_call_from_the_archive(world):
    # The broker remembers a call between its events; a new broker does not, and
    # finds the begun call (wrapped or not) in the archive instead.
    make_haystack(world.work, 8)
    cwd = str(world.work)
    updated = answer(world.hook("claude-code", claude_event("PreToolUse", "Bash", {"command": "grep -rn needle src"},
                                                            "toolu_wr", cwd)))["hookSpecificOutput"]["updatedInput"]
    ran = world.shell(updated["command"])
    ignored = {"command": "grep -rn needle src"}
    assert answer(world.hook("claude-code", claude_event("PreToolUse", "Bash", ignored, "toolu_ig", cwd))) is not None
    first = broker_status(world)["pid"]
    os.kill(first, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while first in broker_pids(world.archive) and time.monotonic() < deadline:
        time.sleep(0.02)
    for call_id, command_input, result in (("toolu_wr", updated, ran), ("toolu_ig", ignored, world.shell("true"))):
        post = world.hook("claude-code", claude_event("PostToolUse", "Bash", command_input, call_id, cwd,
                                                      tool_response=bash_response(result)))
        assert answer(post) is None and post.stderr == b"", post.stderr
    assert broker_status(world)["pid"] != first
    archived = calls(world.archive)
    assert (archived["toolu_wr"]["status"], archived["toolu_wr"]["executed"]) == ("finished", 1)
    assert (archived["toolu_ig"]["status"], archived["toolu_ig"]["executed"]) == ("finished", 0)
    # A replayed post event of a finished call changes nothing and says nothing.
    again = world.hook("claude-code", claude_event("PostToolUse", "Bash", updated, "toolu_wr", cwd,
                                                   tool_response=bash_response(ran)))
    assert answer(again) is None and again.stderr == b""
    assert calls(world.archive)["toolu_wr"]["snaps"] == archived["toolu_wr"]["snaps"]
    assert "incomplete_calls: 0" in world.verify()


def test_a_stopped_broker_costs_the_tool_nothing_but_the_deadline(world):
    # A broker that accepts and never answers (stopped by SIGSTOP): the hook
    # gives up at its 2 s deadline, answers "no change" and warns once.
    cwd = str(world.work)
    warm = claude_event("PreToolUse", "Read", {"file_path": "/etc/hostname"}, "toolu_w", cwd)
    assert answer(world.hook("claude-code", warm)) is None
    pid = broker_status(world)["pid"]
    os.kill(pid, signal.SIGSTOP)
    try:
        make_haystack(world.work, 8)
        first = world.hook("claude-code", claude_event("PreToolUse", "Bash", {"command": "grep -rn needle src"},
                                                       "toolu_s1", cwd))
        second = world.hook("claude-code", claude_event("PreToolUse", "Read", {"file_path": "/etc/hostname"},
                                                        "toolu_s2", cwd))
    finally:
        os.kill(pid, signal.SIGCONT)
    assert (first.returncode, first.stdout, second.returncode, second.stdout) == (0, b"", 0, b"")
    # The warning names the broker that does not answer and the bound it waited.
    assert first.stderr.startswith(b"yarp: archive capture failed") and b"does not answer on" in first.stderr
    assert second.stderr == b"", "one warning per session"


def test_the_lean_client_speaks_the_broker_protocol():
    # The per-tool-call processes write frames and service requests without
    # importing `yarp.wire.protocol` or the frame kernel; they must stay the protocol's.
    from yarp import json_text
    from yarp.clients.broker import frame, service_request
    from yarp.wire import protocol
    from yarp.wire.frames import encode_frame

    assert frame(b'{"a":1}') == encode_frame(b'{"a":1}')
    fields = {"agent": "claude-code", "launcher": ["/bin/yarp", "é"], "pruning": True, "rulePacks": [],
              "nested": {"n": None, "size": 7}}
    assert json.loads("{" + json_text.members("hook", fields) + "}") == {"hook": fields}
    built = service_request("hook", fields, b',"event":{"x":[1,2]}')("c-0123", 1500)
    assert built[:8] == len(built[8:]).to_bytes(8, "big")
    assert json.loads(built[8:]) == {"schema": protocol.SCHEMA, "correlationId": "c-0123", "hook": fields,
                                     "deadlineMs": 1500, "event": {"x": [1, 2]}}
    for bad in (b"", b"{not json", b"[]", b'{"a":1} x', b"\xff"):
        assert json_text.object_or_none(bad) is None


@pytest.mark.parametrize("implementation", ["_validate_py", "_validate"])
def test_the_agents_a_hook_forwards_are_the_agents_the_broker_accepts(implementation):
    # One registry for both: every agent with command hooks is accepted (with the cap its record
    # asks for), every other name refused, by the compiled validator and its twin alike.
    import importlib

    from yarp.errors import ValidationError

    validator = importlib.import_module(f"yarp.{implementation}")

    def request(agent, **extra):
        return {"schema": protocol.SCHEMA, "correlationId": "c", "deadlineMs": 2000, "event": {},
                "hook": {"agent": agent, "launcher": ["/bin/yarp"], "pruning": True, "rulePacks": [], **extra}}

    assert agents.hooked() and set(agents.hooked()) < set(agents.names())
    for name in agents.hooked():
        capped = validator.hook_request(request(name, capBytes=5120))
        assert (capped.agent, capped.cap_bytes) == (name, 5120)
        if agents.record(name).CAPS_VIEW:
            with pytest.raises(ValidationError):
                validator.hook_request(request(name))
    for stranger in [*(n for n in agents.names() if n not in agents.hooked()), "ts", "nobody", "Codex", ""]:
        with pytest.raises(ValidationError, match="unknown agent"):
            validator.hook_request(request(stranger, capBytes=0))


def test_malformed_service_requests_get_bounded_errors(world):
    # Requests that name a service are validated as strictly as operations:
    # fixed field sets, bounded values, errors without payload text.
    from yarp.clients.broker import BrokerClient, service_request
    from yarp.errors import ValidationError
    from yarp.paths import resolve_archive

    cwd = str(world.work)
    assert answer(world.hook("claude-code", claude_event("PreToolUse", "Read", {"file_path": "/x"}, "t_v", cwd))) is None
    location = resolve_archive(world.archive, world.env)
    secret = "s3cr3t-payload"
    bad = [
        service_request("hook", {"agent": "other-agent", "launcher": ["/bin/yarp"], "pruning": True,
                                 "rulePacks": []}, b',"event":{}'),
        service_request("hook", {"agent": "claude-code", "launcher": ["relative"], "pruning": True,
                                 "rulePacks": []}, b',"event":{}'),
        service_request("hook", {"agent": "claude-code", "launcher": ["/bin/yarp"], "pruning": True,
                                 "rulePacks": [], "extra": secret}, b',"event":{}'),
        service_request("run", {"step": "launch", "argv": [secret]}),
        service_request("run", {"step": "not_started", "target": {"agent": "pi", "account": "a", "session": "s",
                                                                  "call": "c"}, "status": 1}),
    ]
    with BrokerClient(location, world.env) as client:
        for build in bad:
            with pytest.raises(ValidationError) as caught:
                client.ask(build, time.monotonic() + 10)
            assert secret not in caught.value.message and len(caught.value.message) < 200
    assert set(calls(world.archive)) == {"t_v"}, "nothing was archived from a refused request"
