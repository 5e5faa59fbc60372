"""The real Claude Code writes a transcript while our hooks capture it live; `yarp import` then agrees.

Claude Code runs `-p` against the scripted Anthropic server inside a
loopback-only network namespace (tests/netns.py), with the hooks installed. Importing its own transcript afterwards must find every
call already archived (the same agent, account, session and call ids as live
capture) and write nothing. Importing the same transcript into an empty
archive must store each unwrapped call's result as the very payload the live
hook stored (the transcript's `toolUseResult` is the hook's `tool_response`),
except where the hook replaced it with YARP's view (`updatedToolOutput`): the
transcript then records the view, which is the live call's `result/after`.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from scripted_anthropic import Text, ToolUse
from test_hooks import calls, make_haystack, world  # noqa: F401  (fixture)
from test_hooks_claude_code import claude_bin, run_claude  # noqa: F401  (fixture)

pytestmark = pytest.mark.slow


def test_import_of_a_real_claude_code_transcript_meets_its_live_capture(world, claude_bin, tmp_path):  # noqa: F811
    make_haystack(world.work)
    installed = world.yarp_cli("hook", "install", "claude-code", "--user")
    assert installed.returncode == 0, installed.stderr
    read_input = {"file_path": str(world.work / "src" / "f1.txt")}
    steps = [ToolUse("toolu_echo", "Bash", {"command": "echo imported-or-live", "description": "Say"}),
             ToolUse("toolu_read", "Read", read_input), Text("done")]
    run, _ = run_claude(world, claude_bin, steps, "say and read")
    assert run.returncode == 0, run.stderr[-800:]
    session_id = json.loads(run.stdout)["session_id"]
    live = calls(world.archive)
    assert set(live) == {"toolu_echo", "toolu_read"}
    transcripts = list((world.home / ".claude" / "projects").rglob(f"{session_id}.jsonl"))
    assert len(transcripts) == 1

    # Discovery finds the transcript under ~/.claude/projects; every call is already archived.
    proc = subprocess.run([sys.executable, "-m", "yarp", "import", "claude-code", "--json", "--settle", "0"],
                          env=world.env, capture_output=True, text=True, timeout=120, check=True)
    summary = json.loads(proc.stdout)
    assert (summary["callsFound"], summary["callsNew"], summary["callsAlreadyArchived"]) == (2, 0, 2)
    assert summary["resultsWithoutCall"] == 0 and summary["corruptLines"] == 0
    assert calls(world.archive) == live, "the live rows are untouched"

    # Into an empty archive: the same identities, and the Read result is the live payload itself.
    (tmp_path / "other").mkdir(mode=0o700)  # a named archive's directory must exist
    other = str(tmp_path / "other" / "tool-calls.sqlite3")
    proc = subprocess.run([sys.executable, "-m", "yarp", "import", "claude-code", "--json", "--settle", "0",
                           "--archive", other], env=world.env, capture_output=True, text=True, timeout=120,
                          check=True)
    assert json.loads(proc.stdout)["callsNew"] == 2
    imported = calls(other)
    for call_id in ("toolu_echo", "toolu_read"):
        mine, theirs = imported[call_id], live[call_id]
        assert (mine["agent"], mine["session"], mine["cwd"]) == (theirs["agent"], theirs["session"], theirs["cwd"])
        assert mine["snaps"]["input/before"] == theirs["snaps"]["input/before"]
        assert mine["snaps"]["result/before"] == mine["snaps"]["result/after"]
    # `echo` is never wrapped, so both calls ran unchanged; its result is byte-identical. The Read
    # result (about 6 KB) is over the cap: the model got YARP's view, and Claude Code kept that.
    assert live["toolu_echo"]["requires_streams"] == 0
    assert imported["toolu_echo"]["snaps"]["result/before"] == live["toolu_echo"]["snaps"]["result/before"]
    read = live["toolu_read"]["snaps"]
    assert read["result/after"] != read["result/before"] and b"yr_" in read["result/after"]
    assert imported["toolu_read"]["snaps"]["result/before"] == read["result/after"]
    verify = subprocess.run([sys.executable, "-m", "yarp", "archive", "verify", "--archive", other], env=world.env,
                            capture_output=True, text=True, timeout=120)
    assert "archive: ok" in verify.stdout, verify.stdout + verify.stderr
