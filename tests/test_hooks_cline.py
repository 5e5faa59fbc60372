"""The Cline hook: events recorded from the real Cline CLI 3.0.65, through real hook processes and a real broker.

tests/cline_recorded/ holds what one real run wrote (tests/test_real_cline.py's
script plus a call of two commands and a read of a missing file):
`events.jsonl`, every `tool_call` and `tool_result` event its hook files got
on stdin (the hooks installed by `yarp hook install cline`, the shell calls
already rewritten to `yarp run` when the `tool_result` fired); `messages.json`,
the session's messages file (its system prompt shortened); and
`sessions.sql`, the session's row of Cline's index (`sessions.db`) with the
table as Cline creates it. Each event goes through `yarp hook cline` as a real
subprocess; the archive is then read read-only. The real CLI is driven in
tests/test_real_cline.py.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from test_hooks import as_json, calls, world  # noqa: F401  (fixture)
from yarp.agents.cline import hooks

RECORDED = Path(__file__).with_name("cline_recorded")
SESSION = "1796580845104_7c08c"
EVENTS = [json.loads(line) for line in (RECORDED / "events.jsonl").read_text().splitlines() if line]


def recorded(name: str, call_id: str) -> dict:
    """The recorded event `name` (`tool_call`, `tool_result`) of call `call_id`."""
    (found,) = [e for e in EVENTS if e["hookName"] == name and e[name]["id"] == call_id]
    return json.loads(json.dumps(found))


def test_the_recorded_events_decode_to_the_calls_they_are():
    decoded = [hooks.parse_event(event) for event in EVENTS]
    assert [(e.event, e.call_id) for e in decoded] == [
        (name, call) for call in ("call_seq", "call_fail", "call_read", "call_two", "call_bad")
        for name in ("tool_call", "tool_result")]
    for event in decoded:
        assert (event.agent, event.session_id, event.cwd) == ("cline", SESSION, "/tmp/clab/full/work")
        assert event.before == (event.event == "tool_call") and (event.response is None) == event.before
    by = {(e.event, e.call_id): e for e in decoded}
    # Only a one-command run_commands call is a shell command; the one after names the rewrite that ran.
    assert by["tool_call", "call_seq"].shell_command() == "seq 1 100000"
    assert "--archive-call 'call_seq' -- seq 1 100000" in by["tool_result", "call_seq"].shell_command()
    assert by["tool_call", "call_two"].shell_command() is None
    assert by["tool_call", "call_read"].shell_command() is None
    # A failure is in the output: a command's exit status, a file that could not be read.
    assert [e.call_id for e in decoded if e.is_failure] == ["call_fail", "call_bad"]
    assert by["tool_result", "call_read"].response == {"output": [
        {"query": "/tmp/clab/full/work/small.txt", "result": "1 | alpha\n2 | beta", "success": True}]}


def test_the_rewritten_input_keeps_the_rest_and_is_handed_over_whole():
    event = hooks.parse_event(recorded("tool_call", "call_seq"))
    event = hooks.ClineEvent(**{**{f: getattr(event, f) for f in event.__dataclass_fields__},
                                "tool_input": {"commands": ["seq 1 3"], "other": 1}})
    after = event.rewritten_input("yarp run -- seq 1 3")
    assert after == {"commands": ["yarp run -- seq 1 3"], "other": 1}
    assert hooks.rewrite_answer(after) == {"overrideInput": after}


@pytest.mark.parametrize("payload", [[], {"hookName": "agent_start"}, {"hookName": "tool_call"}])
def test_other_and_malformed_events(payload):
    from yarp.errors import ValidationError

    if isinstance(payload, dict) and payload["hookName"] == "agent_start":
        assert hooks.parse_event(payload) is None
        return
    with pytest.raises(ValidationError):
        hooks.parse_event(payload)


def test_a_shell_call_is_rewritten_and_a_read_archived_as_cline_made_it(world):  # noqa: F811
    pre = recorded("tool_call", "call_seq")
    pre["workspaceRoots"] = [str(world.work)]
    answered = world.hook("cline", pre)
    assert answered.returncode == 0 and answered.stderr == b""
    (line,) = answered.stdout.decode().splitlines()  # Cline reads the answer from the last line
    (command,) = json.loads(line)["overrideInput"]["commands"]
    assert f"--archive-session '{SESSION}' --archive-call 'call_seq' -- seq 1 100000" in command

    for name in ("tool_call", "tool_result"):
        event = recorded(name, "call_read")
        event["workspaceRoots"] = [str(world.work)]
        done = world.hook("cline", event)
        assert (done.returncode, done.stdout) == (0, b""), done.stderr
    archived = calls(world.archive)
    seq, read = archived["call_seq"], archived["call_read"]
    assert (seq["status"], seq["requires_streams"]) == ("started", 1)  # its `yarp run` never ran here
    assert as_json(seq["snaps"]["input/after"]) == {"commands": [command]}
    assert (read["status"], read["is_error"], read["agent"], read["session"], read["cwd"]) == (
        "finished", 0, "cline", SESSION, str(world.work))
    output = recorded("tool_result", "call_read")["tool_result"]["output"]
    assert as_json(read["snaps"]["result/before"]) == as_json(read["snaps"]["result/after"]) == {"output": output}


def test_a_failed_read_is_an_error_and_other_hooks_events_are_left_alone(world):  # noqa: F811
    for name in ("tool_call", "tool_result"):
        assert world.hook("cline", recorded(name, "call_bad")).returncode == 0
    start = {k: v for k, v in recorded("tool_call", "call_bad").items() if k not in ("tool_call", "preToolUse")}
    start.update(hookName="agent_start", taskStart={"taskMetadata": {}})
    ignored = world.hook("cline", start)
    assert (ignored.returncode, ignored.stdout, ignored.stderr) == (0, b"", b"")
    (bad,) = calls(world.archive).values()
    assert (bad["status"], bad["is_error"]) == ("finished", 1)


def test_install_and_uninstall_in_both_scopes(tmp_path):
    from test_hooks_install import yarp as yarp_in

    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    folder = home / ".cline" / "hooks"
    folder.mkdir(parents=True)
    own = folder / "PreToolUse"
    own.write_text("#!/bin/sh\necho '{}'\n")  # the user's own hook keeps its name and bytes
    assert yarp_in(home, project, "hook", "install", "cline").returncode == 0
    assert sorted(p.name for p in folder.iterdir()) == ["PostToolUse", "PreToolUse", "PreToolUse.sh"]
    ours = (folder / "PreToolUse.sh").read_text().splitlines()
    assert ours[0] == "#!/bin/sh" and ours[2].startswith("exec ") and ours[2].endswith(" -m yarp hook cline")
    again = yarp_in(home, project, "hook", "install", "cline")
    assert b"already installed" in again.stdout
    # A project's hooks folder is committed with it: the file runs the yarp on each machine's PATH.
    assert yarp_in(home, project, "hook", "install", "cline", "--project").returncode == 0
    shared = project / ".clinerules" / "hooks"
    assert {(shared / name).read_text().splitlines()[2] for name in ("PreToolUse", "PostToolUse")} == {
        "exec yarp hook cline"}
    assert yarp_in(home, project, "hook", "uninstall", "cline", "--project").returncode == 0
    assert not (project / ".clinerules").exists()
    assert yarp_in(home, project, "hook", "uninstall", "cline").returncode == 0
    assert [p.name for p in folder.iterdir()] == ["PreToolUse"] and own.read_text() == "#!/bin/sh\necho '{}'\n"


def test_import_of_the_recorded_session_is_idempotent(world):  # noqa: F811
    import subprocess

    sessions = world.home / ".cline" / "data" / "sessions" / SESSION
    sessions.mkdir(parents=True)
    messages = sessions / f"{SESSION}.messages.json"
    messages.write_text((RECORDED / "messages.json").read_text())
    db = world.home / ".cline" / "data" / "db" / "sessions.db"
    db.parent.mkdir()
    script = (RECORDED / "sessions.sql").read_text().replace(
        f"/tmp/clab/full/home/.cline/data/sessions/{SESSION}/{SESSION}.messages.json", str(messages))
    with sqlite3.connect(db) as conn:
        conn.executescript(script)
    conn.close()

    def run() -> dict:
        done = subprocess.run([*world.command, "import", "cline", "--json", "--settle", "0"], env=world.env,
                              capture_output=True, timeout=120, check=False)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    first = run()
    assert (first["callsFound"], first["callsNew"], first["sessions"], first["resultsWithoutCall"]) == (5, 5, 1, 0)
    assert (run()["filesUnchanged"], run()["callsNew"]) == (1, 0)
    archived = calls(world.archive)
    assert sorted(archived) == ["call_bad", "call_fail", "call_read", "call_seq", "call_two"]
    assert {k for k, v in archived.items() if v["is_error"]} == {"call_bad", "call_fail"}
    for call_id, call in archived.items():
        live = hooks.parse_event(recorded("tool_result", call_id))
        assert (call["session"], call["cwd"], call["status"], call["model"]) == (
            SESSION, "/tmp/clab/full/work", "finished", "scripted-model")
        # The model's own input; the result as the live hook archives it.
        assert as_json(call["snaps"]["input/before"]) == recorded("tool_call", call_id)["tool_call"]["input"]
        assert as_json(call["snaps"]["result/before"]) == live.response
