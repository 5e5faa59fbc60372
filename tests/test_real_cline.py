"""End to end: the real Cline CLI, the hook files `yarp hook install cline` put in place, and the real `yarp`.

`cline --json` runs headless against the scripted OpenAI-compatible server
(scripted_model.py), both inside a loopback-only network namespace; the npm
package is installed into the test cache before the namespace is entered, and
`cline auth -p openai -b URL` names the server as its OpenAI-compatible
provider. Sessions run in Cline's own process (`CLINE_ENV`), never in the
hub daemon it would start otherwise and leave running.
Its hooks are the files `yarp hook install cline` wrote into the test's
`~/.cline/hooks/`, running the checkout's (or the installed) `yarp`. The
script asks for:

- `seq 1 100000` as a `run_commands` call of one command: the hook rewrites it
  to `yarp run`, so the model gets YARP's view (at most 6 KiB, with the
  call's `yr_` reference) and the archive gives the exact output back;
- a command that exits 2: rewritten too, its stderr kept exactly, archived as an error;
- a `read_files` call: archived as Cline made it (Cline lets no hook replace a
  result).

Then `yarp archive verify`, `yarp doctor`, `yarp import cline` of the session
the run wrote (every live call "already archived", a second run reads
nothing, and into an empty archive the same identities), and `yarp hook
uninstall cline`, which leaves `~/.cline` as it was.

CI runs it and it must not skip there (`real_agent_required`).
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path

import pytest

from agent_packages import CLINE_ENV, CLINE_VERSION, cline_binary
from netns import loopback_namespace
from scripted_model import ScriptedModel, Text, ToolCall, tool_messages
from test_hooks import HookWorld, as_json, calls
from test_hooks import yarp_ok as _yarp

pytestmark = pytest.mark.slow

#: What the model may be shown of a 100,000-line output.
MAX_VIEW_BYTES = 6 * 1024


@pytest.fixture(scope="session")
def cline_cli() -> Path:
    return cline_binary()


@pytest.fixture
def world(tmp_path):
    """The hook world (test_hooks.HookWorld), Cline's hook files installed by `yarp hook install cline`."""
    w = HookWorld(tmp_path, drop=("CLINE",))
    w.env.update(CLINE_ENV)
    _yarp(w.yarp, w.env, "hook", "install", "cline")
    hooks = w.home / ".cline" / "hooks"
    assert sorted(p.name for p in hooks.iterdir()) == ["PostToolUse", "PreToolUse"]
    yield w.work, w.env, w.yarp
    w.close()


def run_cline(cline_cli: Path, work: Path, env: dict, steps: list) -> tuple[subprocess.CompletedProcess, dict]:
    """One headless run of the script; the tool results the model was shown, by call id."""
    with loopback_namespace(), ScriptedModel(steps) as model:
        auth = subprocess.run([str(cline_cli), "auth", "-p", "openai", "-k", "dummy", "-m", "scripted-model", "-b",
                               model.base_url], env=env, cwd=work, stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, timeout=60, check=False)
        assert auth.returncode == 0, auth.stderr[-800:]
        version = subprocess.run([str(cline_cli), "--version"], env=env, capture_output=True, text=True, timeout=60,
                                 check=False)
        assert version.stdout.strip() == CLINE_VERSION, version.stderr[-400:]
        run = subprocess.run([str(cline_cli), "--json", "-P", "openai-compatible", "-m", "scripted-model",
                              "run the scripted tools"], cwd=work, env=env, stdin=subprocess.DEVNULL,
                             capture_output=True, text=True, timeout=300, check=False)
    shown: dict[str, str] = {}
    for request in model.requests:
        shown.update(tool_messages(request))
    return run, shown


def _results(shown: str) -> list[dict]:
    """The `{query, result, success}` items of a result the model was shown (Cline sends the list as JSON)."""
    return json.loads(shown)


def test_real_cline_calls_are_archived_and_the_model_gets_the_view(world, cline_cli):
    work, env, yarp = world
    (work / "small.txt").write_text("alpha\nbeta\n")
    steps = [ToolCall("call_seq", "run_commands", {"commands": ["seq 1 100000"]}),
             ToolCall("call_fail", "run_commands", {"commands": ["ls /no-such-folder"]}),
             ToolCall("call_read", "read_files", {"files": [{"path": str(work / "small.txt")}]}),
             Text("all done")]
    ids = [step.id for step in steps if isinstance(step, ToolCall)]
    started = time.monotonic()
    run, shown = run_cline(cline_cli, work, env, steps)
    took = time.monotonic() - started
    assert run.returncode == 0, run.stderr[-2000:]
    assert json.loads(run.stdout.splitlines()[-1])["text"] == "all done"
    assert "yarp:" not in run.stderr, "the hook warned"

    archived = calls(env["YARP_ARCHIVE"])
    assert sorted(archived) == sorted(ids)
    sessions = list((Path(env["HOME"]) / ".cline" / "data" / "sessions").iterdir())
    assert len(sessions) == 1
    for call_id, call in archived.items():
        assert (call["agent"], call["session"], call["cwd"]) == ("cline", sessions[0].name, str(work)), call_id
        assert call["status"] == "finished", call_id

    # 100,000 lines through `yarp run`: the model got the view with the call's reference, the archive all of it.
    seq = archived["call_seq"]
    assert (seq["requires_streams"], seq["executed"], seq["is_error"]) == (1, 1, 0)
    rewritten = as_json(seq["snaps"]["input/after"])["commands"]
    assert len(rewritten) == 1 and " run " in rewritten[0] and rewritten[0].endswith("seq 1 100000")
    output = subprocess.run(["seq", "1", "100000"], capture_output=True, check=True).stdout
    assert seq["snaps"]["stdout/before"] == output
    assert _yarp(yarp, env, "restore", seq["ref"], "stdout").stdout == output
    view = _results(shown["call_seq"])[0]["result"]
    assert len(shown["call_seq"].encode()) <= MAX_VIEW_BYTES
    assert f"ref={seq['ref']}" in view and "yr_" in view and "\n50000\n" not in view

    # A command that exits 2: wrapped, its stderr kept exactly, an error.
    fail = archived["call_fail"]
    assert (fail["requires_streams"], fail["executed"], fail["is_error"]) == (1, 1, 1)
    expected = subprocess.run(["ls", "/no-such-folder"], capture_output=True, check=False)
    assert fail["snaps"]["stderr/before"] == expected.stderr and expected.returncode == 2
    failed = _results(shown["call_fail"])[0]
    assert failed["success"] is False and "code 2" in failed["result"] and "no-such-folder" in failed["result"]

    # A file read: archived as Cline made it, which is what the model got.
    read = archived["call_read"]
    assert (read["requires_streams"], read["is_error"]) == (0, 0)
    assert as_json(read["snaps"]["result/after"]) == {"output": _results(shown["call_read"])}
    assert "alpha" in shown["call_read"]

    verify = _yarp(yarp, env, "archive", "verify").stdout.decode()
    assert "archive: ok" in verify and "incomplete_calls: 0" in verify
    doctor = subprocess.run([str(yarp), "doctor"], env=env, capture_output=True, text=True, timeout=120, check=False)
    # Found and working (a `warn` only says it runs this test's wrapper of yarp, not yarp itself).
    assert doctor.returncode == 0, doctor.stdout
    assert re.search(r"^(ok|warn) +Cline hooks: \S+/\.cline/hooks ", doctor.stdout, re.MULTILINE)
    assert re.search(r"^ok +tool results: cline: ", doctor.stdout, re.MULTILINE)

    check_import(yarp, env, archived, ids)
    _yarp(yarp, env, "hook", "uninstall", "cline")
    assert not (Path(env["HOME"]) / ".cline" / "hooks").exists()
    assert took < 60, f"the run took {took:.1f} s"


def check_import(yarp: Path, env: dict, archived: dict, ids: list[str]) -> None:
    """`yarp import cline` of the session the run wrote: already archived, then the same calls afresh."""
    summary = json.loads(_yarp(yarp, env, "import", "cline", "--json", "--settle", "0").stdout)
    assert (summary["callsFound"], summary["callsNew"], summary["callsAlreadyArchived"]) == (len(ids), 0, len(ids))
    assert summary["sessions"] == 1 and summary["corruptLines"] == 0 and summary["resultsWithoutCall"] == 0
    again = json.loads(_yarp(yarp, env, "import", "cline", "--json", "--settle", "0").stdout)
    assert (again["callsFound"], again["callsNew"], again["filesUnchanged"]) == (0, 0, 1)

    other = str(Path(env["YARP_ARCHIVE"]).parent / "imported.sqlite3")
    fresh = json.loads(_yarp(yarp, env, "import", "cline", "--archive", other, "--json", "--settle", "0").stdout)
    assert fresh["callsNew"] == len(ids)
    imported = calls(other)
    assert sorted(imported) == sorted(ids)
    for call_id, live in archived.items():
        copy = imported[call_id]
        for key in ("agent", "account", "session", "tool", "cwd", "is_error"):
            assert copy[key] == live[key], (call_id, key)
        assert copy["snaps"]["result/after"] == live["snaps"]["result/after"], call_id
