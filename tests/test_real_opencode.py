"""End to end: the real opencode CLI, the plugin `yarp hook install opencode` put in place, and the real `yarp`.

`opencode run` works against the scripted model server (OpenAI chat
completions), both inside a loopback-only network namespace (tests/netns.py);
the package is installed from npm into the test cache before the namespace is
entered. The script asks for:

- a command with a large output that opencode cuts (its tail, its spill file)
  and YARP caps: the exact text is archived and the model gets at most the cap
  with a marker whose `yarp search` finds what was left out;
- a command `yarp plan` wraps, with a large output: `yarp run` archives its
  exact stdout, the model gets the pruned view;
- a failing command, recorded as an error with its exit status;
- a file read (capped the same way), and a read of a missing file, which
  opencode ends in an error instead of a result;
- two calls in one step, which opencode runs concurrently.

Then `yarp archive verify`, and `yarp import opencode` of the session store
that run wrote: every live call comes back "already archived", and imported
into an empty archive the same calls carry the same identities and results.

CI runs it and it must not skip there: with `CI` set, a missing npm, registry
or network namespace fails the test instead of skipping it (`real_agent_required`).
"""

from __future__ import annotations

import json
import os
import pwd
import re
import subprocess
from pathlib import Path

import pytest

from agent_packages import OPENCODE_VERSION, opencode_binary, opencode_config, seed_opencode_config
from netns import loopback_namespace
from scripted_model import ScriptedModel, Text, ToolCall, tool_messages
from test_hooks import HookWorld, as_json, calls
from test_hooks import yarp_ok as _yarp

pytestmark = pytest.mark.slow

CAP = 5120


@pytest.fixture(scope="session")
def opencode_cli() -> Path:
    return opencode_binary()


@pytest.fixture
def world(tmp_path):
    """The hook world (test_hooks.HookWorld) with the plugin installed."""
    w = HookWorld(tmp_path, drop=("OPENCODE",))
    config_dir = w.home / ".config" / "opencode"
    _yarp(w.yarp, w.env, "hook", "install", "opencode")
    assert (config_dir / "plugin" / "yarp.ts").is_file() and (config_dir / "yarp" / "yarp-install.json").is_file()
    seed_opencode_config(config_dir)
    yield w.work, w.env, w.yarp
    w.close()


def found(yarp: Path, env: dict, ref: str, text: str, source: str) -> bool:
    """Whether `yarp search REF -F TEXT` shows a line of `source` holding `text` as a match."""
    out = _yarp(yarp, env, "search", "-F", ref, text).stdout.decode()
    return re.search(rf"^{source}:\d+:.*{re.escape(text)}", out, re.MULTILINE) is not None


def shown_text(archived: dict) -> str:
    """The text of a visible result: what opencode (or a fork of it, Kilo Code) hands the model for it."""
    result = as_json(archived["snaps"]["result/after"])
    return result["output"] if "output" in result else result["error"]


def _python_view(text: str, ref: str, completeness: str) -> str:
    """The view the Claude Code hooks show of a host's text (`yarp.view.host.text_view`): the plugin must show it too."""
    from yarp.view.host import text_view

    view = text_view(text.encode(), cap=CAP, archive_ref=ref, source="result_text", completeness=completeness)
    assert view is not None, "the text fits the cap"
    return view.decode()


def test_real_opencode_calls_are_archived_capped_and_imported(world, opencode_cli):
    work, env, yarp = world
    subprocess.run("git init -q && git -c user.email=t@example.org -c user.name=t commit -q --allow-empty -m init",
                   shell=True, cwd=work, check=True)
    (work / "big.txt").write_text("".join(f"row {i:04d} lorem ipsum dolor sit amet\n" for i in range(900)))
    (work / "notes.txt").write_text("alpha line\nbeta line\n")
    steps = [
        # Printed by the shell itself (a loop stays in the shell; its `seq` runs wrapped): the host's result.
        ToolCall("call_seq", "bash", {"command": "for i in $(seq 1 30000); do echo $i; done", "description": "count"}),
        ToolCall("call_grep", "bash", {"command": "grep -n row big.txt", "description": "search"}),
        ToolCall("call_fail", "bash", {"command": "echo failure-marker >&2; exit 3", "description": "fail"}),
        ToolCall("call_read", "read", {"filePath": "big.txt"}),
        ToolCall("call_missing", "read", {"filePath": "missing.txt"}),
        [ToolCall("call_par_bash", "bash", {"command": "echo one", "description": "one"}),
         ToolCall("call_par_read", "read", {"filePath": "notes.txt"})],
        Text("all done"),
    ]
    ids = [call.id for step in steps if not isinstance(step, Text) for call in (step if isinstance(step, list) else [step])]
    with loopback_namespace(), ScriptedModel(steps) as model:
        version = subprocess.run([str(opencode_cli), "--version"], env=env, capture_output=True, text=True, timeout=60)
        assert version.stdout.strip() == OPENCODE_VERSION, version.stderr[-400:]
        run = subprocess.run([str(opencode_cli), "run", "run the scripted workload"], cwd=work,
                             env=dict(env, OPENCODE_CONFIG_CONTENT=opencode_config(model.base_url)),
                             stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip().endswith("all done"), run.stderr[-2000:]
    logs = "".join(path.read_text() for path in (Path(env["XDG_DATA_HOME"]) / "opencode" / "log").glob("*.log"))
    assert "[yarp]" not in logs + run.stderr, "the plugin warned"
    shown: dict[str, str] = {}
    for request in model.requests:
        shown.update(tool_messages(request))

    archived = calls(env["YARP_ARCHIVE"])
    # The loop's `seq` recorded a call of its own under its parent (docs/run.md, "What an adapter wraps").
    segments = [call_id for call_id in archived if call_id.startswith("call_seq/")]
    assert len(segments) == 1 and archived[segments[0]]["requires_streams"] == 1
    del archived[segments[0]]
    assert sorted(archived) == sorted(ids)
    account = pwd.getpwuid(os.geteuid()).pw_name
    assert len({call["session"] for call in archived.values()}) == 1
    for call_id, call in archived.items():
        assert (call["agent"], call["account"], call["model"], call["cwd"]) == ("opencode", account, "scripted-model",
                                                                              str(work)), call_id
        assert call["status"] == "finished", call_id
        # The model got exactly the archived visible result, never more than the cap.
        assert shown[call_id] == shown_text(call), call_id
        assert len(shown[call_id].encode()) <= CAP, call_id

    # A large output opencode cut to its tail and spilled to a file: its exact text is archived,
    # the model got the capped view, and `yarp search` finds a line the view left out.
    seq = archived["call_seq"]
    before = as_json(seq["snaps"]["result/before"])
    assert (seq["executed"], seq["is_error"], seq["requires_streams"]) == (1, 0, 0)
    assert before["metadata"]["exit"] == 0 and before["metadata"]["truncated"] is True
    assert before["output"].startswith("...output truncated...\n\nFull output saved to: ")
    assert seq["snaps"]["result_text/before"] == before["output"].encode()
    # The view is the broker's, made from the committed text by the Python view the hooks use: the
    # plugin has no cap of its own.
    assert shown["call_seq"] == _python_view(before["output"], seq["ref"], "incomplete")
    assert f"ref={seq['ref']}; result_text incomplete" in shown["call_seq"]
    lines = before["output"].splitlines()
    hidden = next(line for line in lines[len(lines) // 2:] if f"\n{line}\n" not in shown["call_seq"])
    assert found(yarp, env, seq["ref"], hidden, "result_text")
    # The spill file is archived byte for byte as the source output. opencode 1.18.33 can lose pieces of a
    # fast command's output (its tail and its spill file then miss them, with exit 0), so it is exactly
    # what opencode wrote, not always the whole output.
    spilled = seq["snaps"].get("source_output/before")
    assert spilled is not None and spilled == Path(before["metadata"]["outputPath"]).read_bytes()

    # A command `yarp plan` wraps: `yarp run` archives its exact stdout and stderr.
    grep = archived["call_grep"]
    assert (grep["executed"], grep["is_error"], grep["requires_streams"]) == (1, 0, 1)
    assert as_json(grep["snaps"]["input/before"])["command"] == "grep -n row big.txt"
    # Run by the yarp the plugin's install record names, whatever the agent's PATH holds.
    record = Path(env["XDG_CONFIG_HOME"]) / "opencode" / "yarp" / "yarp-install.json"
    ran_by = json.loads(record.read_text())["yarpBin"]
    assert as_json(grep["snaps"]["input/after"])["command"].startswith(f"'{ran_by}' run --archive-agent 'opencode' ")
    expected = subprocess.run(["grep", "-n", "row", "big.txt"], cwd=work, capture_output=True, check=True)
    assert grep["snaps"]["stdout/before"] == expected.stdout and grep["snaps"]["stderr/before"] == b""
    assert len(expected.stdout) > CAP and grep["ref"] in shown["call_grep"]
    hidden = next(line for line in expected.stdout.decode().splitlines() if line not in shown["call_grep"])
    assert found(yarp, env, grep["ref"], hidden, "stdout")

    # A failing command: an error, with the exit status opencode reported.
    fail = archived["call_fail"]
    assert (fail["executed"], fail["is_error"]) == (1, 1)
    assert as_json(fail["snaps"]["result/before"])["metadata"]["exit"] == 3
    assert shown["call_fail"] == "failure-marker\n"

    # A file read over the cap, capped the same way; its text is complete.
    read = archived["call_read"]
    assert (read["tool"], read["executed"], read["is_error"]) == ("read", 1, 0)
    read_text = as_json(read["snaps"]["result/before"])["output"]
    assert read["snaps"]["result_text/before"] == read_text.encode()
    assert shown["call_read"] == _python_view(read_text, read["ref"], "complete")
    assert "row 0450" not in shown["call_read"] and found(yarp, env, read["ref"], "row 0450", "result_text")

    # opencode ended this call in an error instead of a result: not executed, an error.
    missing = archived["call_missing"]
    assert (missing["executed"], missing["is_error"]) == (0, 1)
    assert "result/before" not in missing["snaps"] and shown["call_missing"].startswith("File not found: ")
    for call_id in ("call_par_bash", "call_par_read"):
        assert archived[call_id]["is_error"] == 0 and archived[call_id]["executed"] == 1
    assert shown["call_par_bash"] == "one\n"

    verify = _yarp(yarp, env, "archive", "verify").stdout.decode()
    assert "archive: ok" in verify and "incomplete_calls: 0" in verify

    # The session store that run wrote: every live call is already archived, and a second run reads nothing.
    summary = json.loads(_yarp(yarp, env, "import", "opencode", "--json", "--settle", "0").stdout)
    assert (summary["callsFound"], summary["callsNew"], summary["callsAlreadyArchived"]) == (len(ids), 0, len(ids))
    assert summary["sessions"] == 1 and summary["corruptLines"] == 0 and summary["unknownRecords"] == {}
    again = json.loads(_yarp(yarp, env, "import", "opencode", "--json", "--settle", "0").stdout)
    assert (again["callsFound"], again["callsNew"], again["filesUnchanged"]) == (0, 0, 1)

    # Imported into an empty archive, the same calls: identities, inputs as opencode ran them, results as the
    # model got them.
    other = str(Path(env["YARP_ARCHIVE"]).parent / "imported.sqlite3")
    fresh = json.loads(_yarp(yarp, env, "import", "opencode", "--archive", other, "--json", "--settle", "0").stdout)
    assert fresh["callsNew"] == len(ids)
    imported = calls(other)
    assert sorted(imported) == sorted(ids)
    for call_id, live in archived.items():
        copy = imported[call_id]
        for key in ("agent", "account", "session", "tool", "model", "cwd", "status", "is_error", "executed"):
            assert copy[key] == live[key], (call_id, key)
        assert copy["snaps"]["input/before"] == copy["snaps"]["input/after"] == live["snaps"]["input/after"], call_id
        assert copy["snaps"]["result/after"] == live["snaps"]["result/after"], call_id
    assert imported["call_seq"]["snaps"].get("source_output/before") == spilled
