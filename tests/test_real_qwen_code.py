"""End to end: the real Qwen Code CLI, the hooks `yarp hook install qwen-code` put in place, and the real `yarp`.

`qwen --yolo -o json` runs headless against the scripted OpenAI-compatible
server (scripted_model.py), both inside a loopback-only network namespace;
the package is installed from npm into the test cache before the namespace
is entered. Its hooks are the ones `yarp hook install qwen-code` merged into
the test's `~/.qwen/settings.json`, running the checkout's (or the installed)
`yarp`. The script asks for:

- `seq 1 100000`, which Qwen Code cuts (its text is over 30,000 characters)
  and saves whole to a file: the model gets YARP's view of that whole text
  instead, at most 6 KiB with the call's `yr_` reference, and the archive
  gives the file back byte for byte. Qwen Code 0.24.4 applies no rewritten
  input, so YARP never sees the command's raw stdout and stderr: "exact" is
  Qwen Code's saved text (`Command:`, `Directory:`, `Output:` with the output
  as Qwen Code captured it, then the exit status lines), which holds the
  whole output but its final newline (docs/adapters.md, "Qwen Code");
- a read of a 3,000-line file, which Qwen Code pages at 25,000 characters:
  over the cap, so the model gets the view of that page;
- a command that exits 3: a failure event, archived as an error and shown as
  Qwen Code made it.

Then `yarp archive verify`, `yarp doctor`, `yarp import qwen-code` of the chat
file the run wrote (every live call "already archived", a second run reads
nothing, and into an empty archive the same identities), and `yarp hook
uninstall qwen-code`, which gives the settings file back as it was.

CI runs it and it must not skip there (`real_agent_required`).
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from agent_packages import QWEN_CODE_SETTINGS, QWEN_CODE_VERSION, qwen_code_binary
from netns import loopback_namespace
from scripted_model import ScriptedModel, Text, ToolCall, tool_messages
from test_hooks import HookWorld, as_json, calls
from test_hooks import yarp_ok as _yarp

pytestmark = pytest.mark.slow

CAP = 5120
#: What the model may be shown of a 100,000-line output.
MAX_VIEW_BYTES = 6 * 1024


@pytest.fixture(scope="session")
def qwen_cli() -> Path:
    return qwen_code_binary()


@pytest.fixture
def world(tmp_path):
    """The hook world (test_hooks.HookWorld), the scripted model's settings, the hooks installed."""
    w = HookWorld(tmp_path, drop=("QWEN", "OPENAI"))
    w.env.update(OPENAI_API_KEY="dummy", OPENAI_MODEL="scripted-model", QWEN_CODE_SUPPRESS_YOLO_WARNING="1")
    settings = w.home / ".qwen" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps(QWEN_CODE_SETTINGS))
    _yarp(w.yarp, w.env, "hook", "install", "qwen-code")
    hooks = json.loads(settings.read_text())["hooks"]
    assert sorted(hooks) == ["PostToolUse", "PostToolUseFailure", "PreToolUse"]
    yield w.work, w.env, w.yarp
    w.close()


def _run_qwen(qwen_cli: Path, work: Path, env: dict, steps: list) -> tuple[subprocess.CompletedProcess, dict]:
    """One headless run of the script; the tool results the model was shown, by call id."""
    with loopback_namespace(), ScriptedModel(steps) as model:
        version = subprocess.run([str(qwen_cli), "--version"], env=env, capture_output=True, text=True, timeout=60,
                                 check=False)
        assert version.stdout.strip() == QWEN_CODE_VERSION, version.stderr[-400:]
        run = subprocess.run([str(qwen_cli), "--yolo", "-o", "json", "run the scripted tools"], cwd=work,
                             env=dict(env, OPENAI_BASE_URL=model.base_url), stdin=subprocess.DEVNULL,
                             capture_output=True, text=True, timeout=300, check=False)
    shown: dict[str, str] = {}
    for request in model.requests:
        shown.update(tool_messages(request))
    return run, shown


def test_real_qwen_code_calls_are_archived_and_the_model_gets_the_view(world, qwen_cli):
    work, env, yarp = world
    (work / "big.txt").write_text("".join(f"row {i:04d} lorem ipsum dolor sit amet\n" for i in range(3000)))
    steps = [ToolCall("call_seq", "run_shell_command", {"command": "seq 1 100000"}),
             ToolCall("call_read", "read_file", {"file_path": str(work / "big.txt")}),
             ToolCall("call_fail", "run_shell_command", {"command": "echo failure-marker >&2; exit 3"}),
             Text("all done")]
    ids = [step.id for step in steps if isinstance(step, ToolCall)]
    run, shown = _run_qwen(qwen_cli, work, env, steps)
    assert run.returncode == 0, run.stderr[-2000:]
    assert json.loads(run.stdout)[-1]["result"] == "all done"
    assert "yarp:" not in run.stderr, "the hook warned"

    archived = calls(env["YARP_ARCHIVE"])
    assert sorted(archived) == sorted(ids)
    chats = list((Path(env["HOME"]) / ".qwen" / "projects").glob("*/chats/*.jsonl"))
    assert len(chats) == 1
    for call_id, call in archived.items():
        assert (call["agent"], call["session"], call["cwd"]) == ("qwen-code", chats[0].stem, str(work)), call_id
        assert (call["status"], call["executed"], call["requires_streams"]) == ("finished", 1, 0), call_id
        assert call["snaps"]["input/before"] == call["snaps"]["input/after"], "nothing is rewritten"

    # 100,000 lines: Qwen Code cut them and saved its whole text; the model got YARP's view of that text,
    # at most 6 KiB with the call's reference, and the archive gives the saved file back byte for byte.
    seq = archived["call_seq"]
    before = as_json(seq["snaps"]["result/before"])
    saved = re.match(r"Tool output was too large and has been truncated\.\nThe full output has been saved to: "
                     r"(/\S+)\n", before["llmContent"])
    assert saved is not None and seq["is_error"] == 0
    whole = Path(saved.group(1)).read_bytes()
    output = subprocess.run(["seq", "1", "100000"], capture_output=True, check=True).stdout
    # Qwen Code's text around the output as it captured it: the whole output but its final newline.
    assert whole.startswith(b"Command: seq 1 100000\nDirectory: (root)\nOutput: " + output.rstrip(b"\n")
                            + b"\nError: (none)\nExit Code: 0\n")
    assert seq["snaps"]["source_output/before"] == whole
    assert _yarp(yarp, env, "restore", seq["ref"], "source_output").stdout == whole
    assert len(shown["call_seq"].encode()) <= MAX_VIEW_BYTES
    assert f"ref={seq['ref']}; source_output complete" in shown["call_seq"]
    assert as_json(seq["snaps"]["result/after"]) == {"llmContent": shown["call_seq"]}
    assert "\n50000\n" not in shown["call_seq"]
    assert re.search(rb"^source_output:\d+:50000$", _yarp(yarp, env, "search", "-F", seq["ref"], "50000").stdout,
                     re.MULTILINE)

    # A page of 3,000 lines over the cap: the model got the view of the page Qwen Code made.
    read = archived["call_read"]
    page = as_json(read["snaps"]["result/before"])["llmContent"]
    assert page.startswith("Showing lines 1-") and len(page.encode()) > CAP and read["is_error"] == 0
    assert read["snaps"]["result_text/before"] == page.encode()
    assert len(shown["call_read"].encode()) <= CAP and f"ref={read['ref']}; result_text complete" in shown["call_read"]

    # A command that exits 3: a failure event, an error, shown as Qwen Code made it.
    fail = archived["call_fail"]
    assert fail["is_error"] == 1 and "Exit Code: 3" in as_json(fail["snaps"]["result/before"])["error"]
    assert "Exit Code: 3" in shown["call_fail"] and "yr_" not in shown["call_fail"]

    verify = _yarp(yarp, env, "archive", "verify").stdout.decode()
    assert "archive: ok" in verify and "incomplete_calls: 0" in verify
    doctor = subprocess.run([str(yarp), "doctor"], env=env, capture_output=True, text=True, timeout=120, check=False)
    # Found and working (a `warn` only says it runs this test's wrapper of yarp, not yarp itself).
    assert doctor.returncode == 0, doctor.stdout
    assert re.search(r"^(ok|warn) +Qwen Code hooks: \S+/\.qwen/settings\.json ", doctor.stdout, re.MULTILINE)
    assert re.search(r"^ok +tool results: qwen-code: ", doctor.stdout, re.MULTILINE)

    _check_import(yarp, env, archived, ids, shown)
    _yarp(yarp, env, "hook", "uninstall", "qwen-code")
    settings = Path(env["HOME"]) / ".qwen" / "settings.json"
    # As it was, but for the `$version` Qwen Code itself added when it read the file.
    left = json.loads(settings.read_text())
    assert left.pop("$version", None) == 4 and left == QWEN_CODE_SETTINGS


def _check_import(yarp: Path, env: dict, archived: dict, ids: list[str], shown: dict) -> None:
    """`yarp import qwen-code` of the chat file the run wrote: already archived, then the same calls afresh."""
    summary = json.loads(_yarp(yarp, env, "import", "qwen-code", "--json", "--settle", "0").stdout)
    assert (summary["callsFound"], summary["callsNew"], summary["callsAlreadyArchived"]) == (len(ids), 0, len(ids))
    assert summary["sessions"] == 1 and summary["corruptLines"] == 0 and summary["resultsWithoutCall"] == 0
    again = json.loads(_yarp(yarp, env, "import", "qwen-code", "--json", "--settle", "0").stdout)
    assert (again["callsFound"], again["callsNew"], again["filesUnchanged"]) == (0, 0, 1)

    other = str(Path(env["YARP_ARCHIVE"]).parent / "imported.sqlite3")
    fresh = json.loads(_yarp(yarp, env, "import", "qwen-code", "--archive", other, "--json", "--settle", "0").stdout)
    assert fresh["callsNew"] == len(ids)
    imported = calls(other)
    assert sorted(imported) == sorted(ids)
    for call_id, live in archived.items():
        copy = imported[call_id]
        for key in ("agent", "account", "session", "tool", "cwd", "status", "is_error", "executed"):
            assert copy[key] == live[key], (call_id, key)
        assert copy["snaps"]["input/before"] == live["snaps"]["input/before"], call_id
    # Qwen Code's chat file keeps the view the model got, as the error of a call that ran.
    assert as_json(imported["call_seq"]["snaps"]["result/after"]) == {"error": shown["call_seq"]}
