"""End to end: the real Droid, the hooks `yarp hook install droid` put in place, and the real `yarp`.

`droid exec --auto high -m custom:scripted-model -o json` runs headless
against the scripted OpenAI-compatible server (scripted_model.py), declared
as a custom model in the test's `~/.factory/settings.json` (no login), both
inside a loopback-only network namespace; the package is installed from npm
into the test cache before the namespace is entered. Its hooks are the ones
`yarp hook install droid` merged into that settings file, running the
checkout's (or the installed) `yarp`. The script asks for:

- `seq 1 100000`: rewritten to `yarp run` before it runs, so the archive
  holds its exact stdout (`yarp restore` gives it back byte for byte) and the
  model gets `yarp run`'s view, at most 6 KiB with the call's `yr_` reference;
- a read of a small file: archived as Droid returned it (Droid lets no hook
  replace a result);
- a command that exits 3: Droid sends no event after a tool that failed, so
  its `Stop` event settles the call from the session file, as an error.

Then `yarp archive verify`, `yarp doctor`, `yarp import droid` of the session
file the run wrote (every live call "already archived", a second run reads
nothing, and into an empty archive the same identities), and `yarp hook
uninstall droid`, which gives the settings file back as it was.

CI runs it and it must not skip there (`real_agent_required`).
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path

import pytest

from agent_packages import DROID_VERSION, droid_binary, droid_settings
from netns import loopback_namespace
from scripted_model import ScriptedModel, Text, ToolCall, tool_messages
from test_hooks import HookWorld, as_json, calls
from test_hooks import yarp_ok as _yarp
from yarp.agents.droid import hooks as droid

pytestmark = pytest.mark.slow

#: What the model may be shown of a 100,000-line output.
MAX_VIEW_BYTES = 6 * 1024
#: What the model says about each command's risk (Droid refuses an Execute call without it).
RISK = {"riskLevelReason": "It only prints text.", "riskLevel": "low"}


@pytest.fixture(scope="session")
def droid_cli() -> Path:
    return droid_binary()


@pytest.fixture
def world(tmp_path):
    """The hook world (test_hooks.HookWorld), with Droid's own variables left out."""
    w = HookWorld(tmp_path, drop=("FACTORY", "DROID"))
    w.env.update(TERM="dumb", NO_COLOR="1")
    yield w
    w.close()


def _run_droid(world, droid_cli: Path, steps: list) -> tuple[subprocess.CompletedProcess, dict, dict]:
    """Install the hooks into the scripted model's settings and run the script once headless; (the run,
    the tool results the model was shown by call id, the settings as they were before the install)."""
    settings = world.home / ".factory" / "settings.json"
    settings.parent.mkdir()
    with loopback_namespace(), ScriptedModel(steps) as model:
        before = droid_settings(model.base_url)
        settings.write_text(json.dumps(before))
        _yarp(world.yarp, world.env, "hook", "install", "droid")
        hooks = json.loads(settings.read_text())["hooks"]
        assert sorted(hooks) == ["PostToolUse", "PreToolUse", "SessionEnd", "Stop"]
        assert hooks["PreToolUse"][0]["hooks"][0]["preserveRiskLevel"] is True
        version = subprocess.run([str(droid_cli), "--version"], env=world.env, capture_output=True, text=True,
                                 timeout=60, check=False)
        assert version.stdout.strip() == DROID_VERSION, version.stderr[-400:]
        run = subprocess.run([str(droid_cli), "exec", "--auto", "high", "-m", "custom:scripted-model", "-o", "json",
                              "run the scripted tools"], cwd=world.work, env=world.env, stdin=subprocess.DEVNULL,
                             capture_output=True, text=True, timeout=300, check=False)
    shown: dict[str, str] = {}
    for request in model.requests:
        shown.update(tool_messages(request))
    return run, shown, before


def test_real_droid_calls_are_archived_and_the_model_gets_the_view(world, droid_cli):
    env, yarp, work = world.env, world.yarp, world.work
    (work / "hello.txt").write_text("line one\nline two\n")
    seq = {"command": "seq 1 100000", **RISK}
    read = {"file_path": str(work / "hello.txt")}
    fail = {"command": "echo failure-marker >&2; exit 3", **RISK}
    steps = [ToolCall("call_seq", "Execute", seq), ToolCall("call_read", "Read", read),
             ToolCall("call_fail", "Execute", fail), Text("all done")]
    started = time.monotonic()
    run, shown, before = _run_droid(world, droid_cli, steps)
    wall = time.monotonic() - started
    assert run.returncode == 0, run.stderr[-2000:]
    assert json.loads(run.stdout)["result"] == "all done"
    assert "yarp:" not in run.stderr, "the hook warned"

    ids = {name: droid.call_prefix(tool, args) + "0"
           for name, tool, args in (("seq", "Execute", seq), ("read", "Read", read), ("fail", "Execute", fail))}
    archived = calls(env["YARP_ARCHIVE"])
    assert sorted(archived) == sorted(ids.values())
    sessions = list((world.home / ".factory" / "sessions").glob("*/*.jsonl"))
    assert len(sessions) == 1
    for call_id, call in archived.items():
        assert (call["agent"], call["session"], call["cwd"]) == ("droid", sessions[0].stem, str(work)), call_id
        assert (call["status"], call["executed"]) == ("finished", 1), call_id

    # Rewritten before it ran: the exact stdout archived, the model shown yarp run's view with its reference.
    call = archived[ids["seq"]]
    output = subprocess.run(["seq", "1", "100000"], capture_output=True, check=True).stdout
    assert call["requires_streams"] == 1 and call["is_error"] == 0
    assert as_json(call["snaps"]["input/before"]) == seq
    after = as_json(call["snaps"]["input/after"])
    assert after["command"].endswith(" -- seq 1 100000") and after["riskLevel"] == "low"
    assert droid.wrapped_call(after["command"], call["account"], call["session"], [ids["seq"]]) == ids["seq"]
    assert call["snaps"]["stdout/before"] == output
    assert _yarp(yarp, env, "restore", call["ref"], "stdout").stdout == output
    view = shown["call_seq"]
    assert len(view.encode()) <= MAX_VIEW_BYTES and call["ref"] in view and "\n50000\n" not in view
    assert re.search(rb"^stdout:\d+:50000$", _yarp(yarp, env, "search", "-F", call["ref"], "50000").stdout,
                     re.MULTILINE)

    # A read: archived as Droid returned it, which is what the model got.
    call = archived[ids["read"]]
    assert call["requires_streams"] == 0 and call["is_error"] == 0
    assert as_json(call["snaps"]["result/before"]) == shown["call_read"] == "line one\nline two\n"

    # A command that exits 3: no event after it; Stop settled it from the session file, as an error.
    call = archived[ids["fail"]]
    assert call["is_error"] == 1 and as_json(call["snaps"]["result/before"]) == shown["call_fail"]
    assert "exit code: 3" in shown["call_fail"] and "failure-marker" in shown["call_fail"]

    verify = _yarp(yarp, env, "archive", "verify").stdout.decode()
    assert "archive: ok" in verify and "incomplete_calls: 0" in verify
    doctor = subprocess.run([str(yarp), "doctor"], env=env, capture_output=True, text=True, timeout=120, check=False)
    # Found and working (a `warn` only says it runs this test's wrapper of yarp, not yarp itself).
    assert doctor.returncode == 0, doctor.stdout
    assert re.search(r"^(ok|warn) +Droid hooks: \S+/\.factory/settings\.json ", doctor.stdout, re.MULTILINE)
    assert re.search(r"^ok +tool results: droid: ", doctor.stdout, re.MULTILINE)

    _check_import(yarp, env, archived)
    _yarp(yarp, env, "hook", "uninstall", "droid")
    assert json.loads((world.home / ".factory" / "settings.json").read_text()) == before
    print(f"droid exec wall time: {wall:.2f} s")


def _check_import(yarp: Path, env: dict, archived: dict) -> None:
    """`yarp import droid` of the session file the run wrote: already archived, then the same calls afresh."""
    summary = json.loads(_yarp(yarp, env, "import", "droid", "--json", "--settle", "0").stdout)
    count = len(archived)
    assert (summary["callsFound"], summary["callsNew"], summary["callsAlreadyArchived"]) == (count, 0, count)
    assert summary["sessions"] == 1 and summary["corruptLines"] == 0 and summary["resultsWithoutCall"] == 0
    again = json.loads(_yarp(yarp, env, "import", "droid", "--json", "--settle", "0").stdout)
    assert (again["callsFound"], again["callsNew"], again["filesUnchanged"]) == (0, 0, 1)

    other = str(Path(env["YARP_ARCHIVE"]).parent / "imported.sqlite3")
    fresh = json.loads(_yarp(yarp, env, "import", "droid", "--archive", other, "--json", "--settle", "0").stdout)
    assert fresh["callsNew"] == count
    imported = calls(other)
    assert sorted(imported) == sorted(archived)
    for call_id, live in archived.items():
        copy = imported[call_id]
        for key in ("agent", "account", "session", "tool", "cwd", "status", "is_error", "executed"):
            assert copy[key] == live[key], (call_id, key)
        assert copy["snaps"]["input/before"] == live["snaps"]["input/before"], call_id
        if not live["requires_streams"]:
            assert copy["snaps"]["result/before"] == live["snaps"]["result/before"], call_id
