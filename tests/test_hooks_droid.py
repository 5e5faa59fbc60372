"""The Droid hook and reader: events and a session file recorded from the real Droid 0.225.2.

tests/droid_recorded/ holds what one `droid exec` run against the scripted
model wrote, unchanged: `events.jsonl`, every hook event as Droid sent it to a
recording hook (PreToolUse, PostToolUse, Stop, SessionEnd), and
`session.jsonl`, the session file it wrote. The script: `seq 1 100000`; a
command that exits 3; a read of a small file; a read of a missing file; two
identical `echo same` calls in one turn; `echo rewrite-me`, which the recording
hook rewrote to `echo rewritten` (an `updatedInput` answer, the entry with
`preserveRiskLevel`). Droid sent no `PostToolUse` for the two that failed.
The files name the run's home, `/tmp/drec/home`; a test puts them in its own.

Events go through `python -m yarp hook droid` as real subprocesses and a real
broker; the archive is then read read-only. The real CLI is driven in
tests/test_real_droid.py.
"""

from __future__ import annotations

import json
from pathlib import Path

from test_hooks import as_json, calls, world  # noqa: F401  (fixture)
from yarp.agents.droid import hooks as droid
from yarp.agents.droid import transcripts
from yarp.transcripts.parsing import Tally

RECORDED = Path(__file__).with_name("droid_recorded")
RECORDED_HOME = "/tmp/drec/home"
SESSION = "f40b34d8-967a-423c-ae09-7185b0b8e01c"
#: The model's call ids in the session file, in the order of the script.
MODEL_IDS = ("call_seq", "call_fail", "call_read", "call_miss", "call_same_a", "call_same_b", "call_rw")


def moved(text: str, world=None) -> str:  # noqa: F811
    """A recorded file's text with the run's home and working folder moved to `world`'s (None: as recorded)."""
    if world is None:
        return text
    return text.replace(RECORDED_HOME + "/work", str(world.work)).replace(RECORDED_HOME, str(world.home))


def recorded_events(world=None) -> list[dict]:  # noqa: F811
    return [json.loads(line) for line in moved((RECORDED / "events.jsonl").read_text(), world).splitlines()]


def place_session(world, path: Path | None = None) -> Path:  # noqa: F811
    """The recorded session file, where Droid keeps it in `world`'s home (or at `path`), its paths moved."""
    path = path or world.home / ".factory" / "sessions" / "-work" / f"{SESSION}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(moved((RECORDED / "session.jsonl").read_text(), world))
    path.chmod(0o600)
    return path


def relocated(world, session: Path) -> list[dict]:  # noqa: F811
    events = recorded_events(world)
    for event in events:
        event["transcript_path"] = str(session)
    return events


def answer(result) -> dict | None:
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout) if result.stdout.strip() else None


def no_pruning(world) -> None:  # noqa: F811
    config = world.tmp / "config.toml"
    config.write_text("version = 1\n[pruning]\nenabled = false\n")
    world.env["YARP_CONFIG"] = str(config)


def parsed_session(path: Path = RECORDED / "session.jsonl") -> dict:
    """The recorded session file through the import's reader: its calls by derived id."""
    found = transcripts.outcomes(str(path), "someone")
    assert found, "the file was read"
    return found


# --- decoding -------------------------------------------------------------------------------


def test_every_recorded_event_is_decoded():
    events = recorded_events()
    parsed = [droid.parse_event(event) for event in events]
    assert [event.name for event in parsed] == [event["hook_event_name"] for event in events]
    assert [event.name for event in parsed].count("PostToolUse") == 5, "none after the two that failed"
    for event in parsed:
        assert event.session_id == SESSION and event.cwd == f"{RECORDED_HOME}/work"
        assert event.transcript_path.endswith(f"/{SESSION}.jsonl")
    stop, end = parsed[-2:]
    assert (stop.name, stop.tool_name, end.name, end.tool_name) == ("Stop", None, "SessionEnd", None)
    seq = parsed[1]
    assert seq.shell_command() == "seq 1 100000" and seq.response.startswith("1\n2\n3\n")
    assert "[... 3169 lines skipped ...]" in seq.response and seq.response.endswith("[Process exited with code 0]")
    read = next(event for event in parsed if event.tool_name == "Read" and event.name == "PostToolUse")
    assert read.tool_input == {"file_path": f"{RECORDED_HOME}/work/hello.txt"}
    assert read.response == "line one\nline two\n" and read.shell_command() is None
    # After a rewrite the post event holds the rewritten input, the model's risk level kept.
    rewritten = parsed[-3]
    assert rewritten.tool_input == {"command": "echo rewritten", "riskLevelReason": "It only prints text.",
                                    "riskLevel": "low"}
    assert droid.parse_event({"hook_event_name": "Notification", "session_id": SESSION}) is None


def test_the_reader_derives_the_ids_the_hooks_derive():
    found = parsed_session()
    pre = [droid.parse_event(event) for event in recorded_events() if event["hook_event_name"] == "PreToolUse"]
    counts: dict[str, int] = {}
    expected = []
    for event in pre:  # the ids the broker derives from the PreToolUse events, in their order
        prefix = droid.call_prefix(event.tool_name, event.tool_input)
        expected.append(droid.call_id(prefix, counts.get(prefix, 0)))
        counts[prefix] = counts.get(prefix, 0) + 1
    assert sorted(found) == sorted(expected) and len(expected) == len(MODEL_IDS)
    same = droid.call_prefix("Execute", {"command": "echo same", "riskLevelReason": "It only prints text.",
                                         "riskLevel": "low"})
    assert {same + "0", same + "1"} <= set(found)
    for call_id, call in found.items():
        assert (call.session.agent, call.session.source_session_id) == ("droid", SESSION)
        assert call.call.working_directory == f"{RECORDED_HOME}/work" and call.call.model == "custom:Scripted-0"
        assert call.has_result and call.executed
    errors = {call.input.get("command", call.input.get("file_path")) for call in found.values() if call.is_error}
    assert errors == {"echo failure-marker >&2; exit 3", f"{RECORDED_HOME}/work/missing.txt"}
    # The session file keeps the model's own input, never the hook's rewrite.
    rewritten = found[expected[-1]]
    assert rewritten.input["command"] == "echo rewrite-me" and rewritten.result.startswith("rewritten\n")


def test_a_command_that_never_ran_is_not_executed():
    assert droid.ran_command("Execute", "same\n\n\n[Process exited with code 0]")
    assert droid.ran_command("Execute", "Error: Command failed (exit code: 3)\nx\n\n\n[Process exited with code 3]")
    assert not droid.ran_command("Execute", "Error: Command blocked by policy")
    assert droid.ran_command("Read", "Error: Error reading file: ENOENT")


def test_the_reader_recognizes_only_droid_sessions():
    first = (RECORDED / "session.jsonl").read_bytes().split(b"\n", 1)[0]
    assert transcripts.recognizes(first) == 2
    assert transcripts.recognizes(b'{"type":"session","version":3,"id":"x"}') == 0
    assert transcripts.is_session_file(f"/h/.factory/sessions/-work/{SESSION}.jsonl")
    assert not transcripts.is_session_file(f"/h/.factory/sessions/{SESSION}.jsonl")


def test_a_session_file_read_again_adds_nothing():
    parser = transcripts.Parser(str(RECORDED / "session.jsonl"), "someone", Tally(), None, None)
    lines = (RECORDED / "session.jsonl").read_text().splitlines()
    for number, line in enumerate(lines + lines, 1):  # a resumed session's history repeated
        parser.feed(json.loads(line), number)
    assert len(parser.take_ready()) == len(MODEL_IDS) and not parser.pending
    assert parser.tally.results_without_call == 0 and not parser.tally.unknown_records


# --- through the real hook and broker -------------------------------------------------------


def test_the_recorded_run_is_archived_and_import_finds_it_already_archived(world):  # noqa: F811
    no_pruning(world)  # Droid ran the model's commands as they were: nothing to rewrite in a replay
    session = place_session(world)
    for event in relocated(world, session):
        assert answer(world.hook("droid", event)) is None
    archived = calls(world.archive)
    found = parsed_session(session)
    assert sorted(archived) == sorted(found)
    for call_id, call in archived.items():
        imported = found[call_id]
        assert (call["agent"], call["session"], call["cwd"]) == ("droid", SESSION, str(world.work))
        assert (call["status"], call["executed"], call["requires_streams"]) == ("finished", 1, 0), call_id
        assert call["is_error"] == int(imported.is_error), call_id
        # Finished by its PostToolUse, or settled from the session file: the same result either way.
        assert as_json(call["snaps"]["result/before"]) == imported.result, call_id
        assert as_json(call["snaps"]["input/before"]) == imported.input, call_id
    assert "incomplete_calls: 0" in world.verify()
    summary = world.yarp_cli("import", "droid", "--json", "--settle", "0")
    assert summary.returncode == 0, summary.stderr
    counts = json.loads(summary.stdout)
    assert (counts["callsFound"], counts["callsNew"], counts["callsAlreadyArchived"]) == (7, 0, 7)


def test_a_failed_call_waits_for_the_session_file(world):  # noqa: F811
    no_pruning(world)
    session = world.home / "s.jsonl"
    events = relocated(world, session)
    pre_fail = events[2]
    assert pre_fail["tool_input"]["command"].endswith("exit 3")
    answer(world.hook("droid", pre_fail))
    # Stop before Droid wrote the result: the call stays open, nothing is guessed.
    answer(world.hook("droid", events[-2]))
    (call,) = calls(world.archive).values()
    assert call["status"] == "started"
    place_session(world, session)
    answer(world.hook("droid", events[-1]))
    (call,) = calls(world.archive).values()
    assert (call["status"], call["is_error"], call["executed"]) == ("finished", 1, 1)
    assert "exit code: 3" in as_json(call["snaps"]["result/before"])


def test_another_sessions_file_settles_nothing(world):  # noqa: F811
    no_pruning(world)
    events = relocated(world, place_session(world))
    other = "0b7e1a52-3c6f-4d1e-9a8b-2f4c6d8e0a1b"
    for event in (events[2], events[-2]):  # the failed call's PreToolUse, then Stop, of another session
        answer(world.hook("droid", dict(event, session_id=other)))
    (call,) = calls(world.archive).values()
    assert (call["session"], call["status"]) == (other, "started"), "the file answers another session's calls"


def test_an_execute_command_is_rewritten_and_its_post_finds_it(world):  # noqa: F811
    events = recorded_events(world)
    pre = events[0]
    reply = answer(world.hook("droid", pre))
    rewritten = reply["hookSpecificOutput"]["updatedInput"]
    assert set(reply) == {"hookSpecificOutput"} and set(reply["hookSpecificOutput"]) == {
        "hookEventName", "updatedInput"}, "no permission decision: Droid's own check still runs"
    assert rewritten["command"].endswith(" -- seq 1 100000") and rewritten["riskLevel"] == "low"
    call_id = droid.call_prefix("Execute", pre["tool_input"]) + "0"
    assert calls(world.archive)[call_id]["status"] == "started"
    ran = world.shell(rewritten["command"])  # what Droid's Execute runs
    assert ran.returncode == 0 and len(ran.stdout) <= 6 * 1024 and b"yr_" in ran.stdout
    post = dict(events[1], tool_input=rewritten,
                tool_response=ran.stdout.decode() + "\n\n[Process exited with code 0]")
    assert answer(world.hook("droid", post)) is None, "Droid takes no answer after the tool"
    call = calls(world.archive)[call_id]
    assert (call["status"], call["executed"], call["is_error"], call["requires_streams"]) == ("finished", 1, 0, 1)
    assert call["snaps"]["stdout/before"] == "".join(f"{i}\n" for i in range(1, 100001)).encode()
    assert as_json(call["snaps"]["input/before"]) == pre["tool_input"]
    assert as_json(call["snaps"]["input/after"]) == rewritten
    assert "incomplete_calls: 0" in world.verify()


def test_a_post_event_without_a_begun_call_is_left_alone(world):  # noqa: F811
    post = recorded_events(world)[1]
    assert answer(world.hook("droid", post)) is None
    assert calls(world.archive) == {}


def test_install_and_uninstall_in_both_scopes(tmp_path):
    from test_hooks_install import yarp as yarp_in

    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    user = home / ".factory" / "settings.json"
    user.parent.mkdir()
    user.write_text(json.dumps({"customModels": [], "model": "custom:scripted-model"}))
    assert yarp_in(home, project, "hook", "install", "droid").returncode == 0
    settings = json.loads(user.read_text())
    assert settings["customModels"] == [] and settings["model"] == "custom:scripted-model"
    assert sorted(settings["hooks"]) == ["PostToolUse", "PreToolUse", "SessionEnd", "Stop"]
    for event, groups in settings["hooks"].items():
        (group,) = groups
        (entry,) = group["hooks"]
        assert group.get("matcher") == ("*" if event in ("PreToolUse", "PostToolUse") else None)
        assert entry["timeout"] == 30 and entry["preserveRiskLevel"] is True
        assert entry["command"].endswith(" -m yarp hook droid")
    # Installing again changes nothing and keeps no more backups than the first time.
    backups = sorted(user.parent.glob("settings.json.yarp-backup-*"))
    assert yarp_in(home, project, "hook", "install", "droid").returncode == 0
    assert json.loads(user.read_text()) == settings
    assert sorted(user.parent.glob("settings.json.yarp-backup-*")) == backups
    # Droid reads no project settings.local.json: the project's entries go in its settings.json,
    # committed with it, so they run the yarp on each machine's PATH.
    assert yarp_in(home, project, "hook", "install", "droid", "--project").returncode == 0
    shared = json.loads((project / ".factory" / "settings.json").read_text())
    assert {entry["command"] for groups in shared["hooks"].values() for group in groups
            for entry in group["hooks"]} == {"yarp hook droid"}
    assert yarp_in(home, project, "hook", "uninstall", "droid", "--project").returncode == 0
    assert not (project / ".factory").exists()
    assert yarp_in(home, project, "hook", "uninstall", "droid").returncode == 0
    assert json.loads(user.read_text()) == {"customModels": [], "model": "custom:scripted-model"}
    assert not list(user.parent.glob("settings.json.yarp-backup-*"))
