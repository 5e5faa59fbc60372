"""Qwen Code's parts: its hook events decoded, the answer that replaces a result, its chat files read.

The events and chat lines are Qwen Code 0.24.4's own, recorded from a real
headless run (`qwen --yolo -o json`) against the scripted model server
(tests/test_real_qwen_code.py drives the real CLI), shortened where a field
held a long output.
"""

from __future__ import annotations

import json

import pytest

from broker_helpers import broker_env  # noqa: F401  (fixture)
from import_fixtures import set_old_mtime
from test_import_formats import calls_by_id
from test_import_pi import import_json
from yarp import agents
from yarp.agents.qwen_code import hooks, transcripts
from yarp.errors import ValidationError
from yarp.transcripts.parsing import Tally

SESSION = "b0905669-eac5-4632-a32a-5353059c0214"
BASE = {"session_id": SESSION, "cwd": "/tmp/work", "timestamp": "2026-12-06T16:01:47.667Z",
        "transcript_path": f"/home/u/.qwen/projects/-tmp-work/chats/{SESSION}.jsonl", "permission_mode": "yolo",
        "prompt_id": f"{SESSION}########0", "tool_name": "run_shell_command", "tool_input": {"command": "seq 1 3"},
        "tool_use_id": "toolu_1796572907666_7l8rpowga", "tool_call_id": "call_1"}
SAVED = "/home/u/.qwen/tmp/8273a2/run_shell_command_0ba658b811fa.output"
CUT = ("Tool output was too large and has been truncated.\nThe full output has been saved to: " + SAVED +
       "\nTo read the complete output, use the read_file tool with the absolute file path above.\n99999\n100000\n"
       "Error: (none)\nExit Code: 0\nSignal: (none)\nProcess Group PGID: (none)")


def test_the_record_names_its_parts():
    record = agents.record("qwen-code")
    assert record.LABEL == "Qwen Code" and record.ADAPTER == agents.HOOKS
    assert record.SHELL_TOOLS == frozenset(), "Qwen Code 0.24.4 applies no rewritten input"
    assert agents.part("qwen-code", "hooks") is hooks and agents.part("qwen-code", "transcripts") is transcripts


def test_events_are_keyed_by_the_models_call_id():
    pre = hooks.parse_event({**BASE, "hook_event_name": "PreToolUse"})
    assert (pre.agent, pre.event, pre.session_id, pre.call_id) == ("qwen-code", "PreToolUse", SESSION, "call_1")
    assert (pre.tool_name, pre.tool_input, pre.cwd, pre.response) == ("run_shell_command", {"command": "seq 1 3"},
                                                                      "/tmp/work", None)
    post = hooks.parse_event({**BASE, "hook_event_name": "PostToolUse", "duration_ms": 74,
                              "tool_response": {"llmContent": CUT, "returnDisplay": "99999\n100000"}})
    assert post.call_id == "call_1" and post.response["llmContent"] == CUT
    assert hooks.response_text(post.response) == CUT and hooks.saved_output(CUT) == SAVED
    assert not hooks.is_error(post)
    # Without the model's id (an event of an older Qwen Code), Qwen Code's own.
    alone = {key: value for key, value in BASE.items() if key != "tool_call_id"}
    assert hooks.parse_event({**alone, "hook_event_name": "PreToolUse"}).call_id == BASE["tool_use_id"]


def test_failures_and_exit_codes_are_errors():
    failed = hooks.parse_event({**BASE, "hook_event_name": "PostToolUseFailure", "error": "boom",
                                "is_interrupt": False})
    assert failed.response == {"error": "boom", "isInterrupt": False} and hooks.is_error(failed)
    text = "Command: exit 3\nDirectory: (root)\nOutput: (empty)\nError: (none)\nExit Code: 3\nSignal: (none)"
    exited = hooks.parse_event({**BASE, "hook_event_name": "PostToolUse", "tool_response": {"llmContent": text}})
    assert hooks.is_error(exited) and hooks.saved_output(text) is None


@pytest.mark.parametrize("payload", [{"hook_event_name": "SessionStart"}, {"hook_event_name": "Stop"}])
def test_other_events_are_not_archived(payload):
    assert hooks.parse_event({**BASE, **payload}) is None


def test_a_malformed_event_is_refused():
    with pytest.raises(ValidationError):
        hooks.parse_event([1])
    with pytest.raises(ValidationError):
        hooks.parse_event({"hook_event_name": "PreToolUse", "session_id": SESSION})


def test_the_answers_and_the_settings_files():
    assert hooks.view_answer("VIEW") == {"continue": False, "stopReason": "VIEW"}
    assert hooks.settings_path("user", {"HOME": "/home/u"}) == "/home/u/.qwen/settings.json"
    assert hooks.settings_path("project", {}, "/src/p") == "/src/p/.qwen/settings.json"


def _chat(tmp_path, saved: str) -> str:
    line = {"parentUuid": None, "sessionId": SESSION, "cwd": "/tmp/work", "version": "0.24.4"}
    records = [
        {**line, "uuid": "u1", "timestamp": "2026-12-06T16:08:25.516Z", "type": "user", "provenance": "real_user",
         "message": {"role": "user", "parts": [{"text": "run the tool"}]}},
        {**line, "uuid": "u2", "timestamp": "2026-12-06T16:08:25.533Z", "type": "system", "provenance": "system",
         "subtype": "attribution_snapshot", "systemPayload": {}},
        {**line, "uuid": "u3", "timestamp": "2026-12-06T16:08:27.071Z", "type": "assistant",
         "provenance": "assistant_output", "model": "scripted-model",
         "message": {"role": "model", "parts": [
             {"functionCall": {"id": "call_1", "name": "run_shell_command", "args": {"command": "seq 1 100000"}}},
             {"functionCall": {"id": "call_2", "name": "run_shell_command", "args": {"command": "exit 3"}}}]}},
        {**line, "uuid": "u4", "timestamp": "2026-12-06T16:08:28.139Z", "type": "tool_result",
         "provenance": "tool_result",
         "message": {"role": "user", "parts": [{"functionResponse": {"id": "call_1", "name": "run_shell_command",
                                                                     "response": {"output": CUT}}}]},
         "toolCallResult": {"callId": "call_1", "status": "success",
                            "resultDisplay": {"type": "shell_result", "exitCode": 0, "outputFiles": [saved]}}},
        {**line, "uuid": "u5", "timestamp": "2026-12-06T16:08:28.500Z", "type": "tool_result",
         "provenance": "tool_result",
         "message": {"role": "user", "parts": [{"functionResponse": {"id": "call_2", "name": "run_shell_command",
                                                                     "response": {"output": "Exit Code: 3"}}}]},
         "toolCallResult": {"callId": "call_2", "status": "success",
                            "resultDisplay": {"type": "shell_result", "exitCode": 3}}},
    ]
    path = tmp_path / "chats" / f"{SESSION}.jsonl"
    path.parent.mkdir()
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return str(path)


def test_a_chat_file_gives_each_call_its_result_and_saved_output(tmp_path):
    saved = tmp_path / "run_shell_command_0ba658b811fa.output"
    saved.write_text("Command: seq 1 100000\nOutput: 1\n")
    path = _chat(tmp_path, str(saved))
    assert transcripts.recognizes(open(path, "rb").readline()) == 2 and transcripts.is_session_file(path)
    tally = Tally()
    parser = transcripts.Parser(path, "u", tally, None, None)
    for number, line in enumerate(open(path), 1):
        parser.feed(json.loads(line), number)
    calls = {call.call.source_call_id: call for call in parser.take_ready()}
    assert sorted(calls) == ["call_1", "call_2"]
    big, failed = calls["call_1"], calls["call_2"]
    assert (big.session.agent, big.session.source_session_id, big.call.model, big.call.working_directory) == (
        "qwen-code", SESSION, "scripted-model", "/tmp/work")
    assert big.input == {"command": "seq 1 100000"} and big.result == {"output": CUT} and not big.is_error
    assert big.source_output_path == str(saved)
    assert failed.is_error and failed.source_output_path is None
    assert tally.calls_found == 2 and tally.unknown_records == {} and tally.results_without_call == 0


def test_a_result_whose_call_is_elsewhere_is_reported(tmp_path):
    path = _chat(tmp_path, "/nonexistent")
    tally = Tally()
    parser = transcripts.Parser(path, "u", tally, None, None)
    lines = [json.loads(line) for line in open(path)]
    parser.feed(lines[3], 4)  # a result before (without) its call
    assert tally.results_without_call == 1 and parser.take_ready() == []


def test_the_text_the_model_would_get_and_the_head_a_saved_file_must_begin_with():
    post = hooks.parse_event({**BASE, "hook_event_name": "PostToolUse", "tool_response": {"llmContent": CUT}})
    failed = hooks.parse_event({**BASE, "hook_event_name": "PostToolUseFailure", "error": "boom"})
    assert hooks.model_text(post) == CUT and hooks.model_text(failed) == "boom"
    assert hooks.shell_command(post) == "seq 1 3" and not hooks.ran_recovery(post)
    read = hooks.parse_event({**BASE, "hook_event_name": "PreToolUse", "tool_name": "run_shell_command",
                              "tool_input": {"command": "yarp read yr_0123456789abcdef0123456789abcdef stdout"}})
    assert hooks.ran_recovery(read)
    shown = ("Tool output was too large and has been truncated.\nThe full output has been saved to: " + SAVED +
             "\n…\nTruncated part of the output:\nCommand: seq\nOutput: 1\n2\n3 and a line cut sho..."
             "\n\n---\n... [CONTENT TRUNCATED] ...\n---\n\n99999\n100000")
    # The whole lines of the head; a line Qwen Code cut to fit is left out.
    assert hooks.saved_head(shown) == "Command: seq\nOutput: 1\n2"
    assert hooks.saved_head("Output: 1") == "" and hooks.saved_head(None) == ""


def test_qwen_codes_folders_follow_its_home_and_runtime_variables(tmp_path):
    environ = {"HOME": "/home/u"}
    assert hooks.settings_path("user", environ) == "/home/u/.qwen/settings.json"
    assert hooks.settings_path("project", environ, cwd="/w/app") == "/w/app/.qwen/settings.json"
    assert hooks.settings_path("user", {**environ, "QWEN_HOME": "/q"}) == "/q/settings.json"
    assert transcripts.default_roots(environ) == ["/home/u/.qwen/projects"]
    assert transcripts.default_roots({**environ, "QWEN_HOME": "/q"}) == ["/q/projects"]
    assert transcripts.default_roots({**environ, "QWEN_HOME": "/q", "QWEN_RUNTIME_DIR": "/r"}) == ["/r/projects"]


def test_savings_count_what_qwen_code_would_have_shown():
    # Savings read the record: the shell tool cuts its text over 30,000 characters to about 4,500, other
    # tools over 25,000 characters or 1,000 lines to about 25,500; the hook hands the model its view.
    from yarp.archive.savings.hosts import host_view
    from yarp.archive.savings.rule import VIEW_REPLACING_AGENTS

    shell = host_view("qwen-code", "run_shell_command", False)
    assert (shell.shown(30_000), shell.shown(588_895, 100_000)) == (30_000, 4_500)
    read = host_view("qwen-code", "read_file", False)
    assert (read.shown(20_000, 999), read.shown(20_000, 1_001), read.shown(100_000)) == (20_000, 20_000, 25_500)
    assert "qwen-code" in VIEW_REPLACING_AGENTS


def test_yarp_import_reads_the_chat_files_incrementally_and_once(broker_env, tmp_path):  # noqa: F811
    saved = tmp_path / "run_shell_command_0ba658b811fa.output"
    saved.write_text("Command: seq 1 100000\nOutput: 1\n")
    runtime = tmp_path / "qwen"
    (runtime / "projects" / "-tmp-work").mkdir(parents=True)
    path = _chat(runtime / "projects" / "-tmp-work", str(saved))
    lines = open(path).read().splitlines(keepends=True)
    with open(path, "w") as handle:  # the session so far, still running: call_2 not answered yet
        handle.writelines(lines[:4])
    # Found where Qwen Code keeps them ($QWEN_RUNTIME_DIR/projects/*/chats/).
    broker_env.environ["QWEN_RUNTIME_DIR"] = str(runtime)
    first = import_json(broker_env, "qwen-code")
    assert (first["files"], first["callsFound"], first["callsNew"], first["callsWaitingForResult"]) == (1, 2, 1, 1)
    assert import_json(broker_env, "qwen-code")["filesUnchanged"] == 1
    with open(path, "a") as handle:  # the session went on: call_2's result
        handle.writelines(lines[4:])
    set_old_mtime(path)
    later = import_json(broker_env, "qwen-code")
    assert (later["callsNew"], later["callsWaitingForResult"]) == (1, 0)
    calls = calls_by_id(broker_env)
    assert {call_id: (call["agent"], call["is_error"]) for call_id, call in calls.items()} == {
        "call_1": ("qwen-code", 0), "call_2": ("qwen-code", 1)}
    assert calls["call_1"]["snaps"][("source_output", "before")] == saved.read_bytes()
    assert import_json(broker_env, "qwen-code")["callsNew"] == 0
