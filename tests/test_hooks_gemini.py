"""The Gemini CLI hook: recorded event shapes through real hook processes.

Every event has the shape the real Gemini CLI 0.61.0 sends (`session_id`,
`transcript_path`, `cwd`, `hook_event_name`, `timestamp`, `tool_name`,
`tool_input`, and `tool_response {llmContent, returnDisplay[, error]}` after
the tool; a tail call adds `original_request_name`). Each event goes through
`python -m yarp hook gemini` as a real subprocess against a real broker; the
archive is then read read-only. The real binary is driven in test_real_gemini.py.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from test_hooks import HOOK_FORBIDDEN, as_json, calls, hook_imports, world  # noqa: F401  (fixture)
from yarp.agents.gemini import hooks as gemini

SESSION = "7639bc2b-aa51-4c60-8f3d-d411f7073b2a"


@pytest.fixture
def project(world):  # noqa: F811
    """Gemini's project temp folder (`~/.gemini/tmp/<slug>/`) with its chats folder, as the CLI makes them."""
    folder = world.home / ".gemini" / "tmp" / "work"
    (folder / "chats").mkdir(parents=True)
    return folder


def event(world, project, name: str, tool: str, tool_input: dict, response: dict | None = None,  # noqa: F811
          **extra) -> dict:
    out = {"session_id": SESSION,
           "transcript_path": str(project / "chats" / f"session-2026-12-04T18-23-{SESSION[:8]}.jsonl"),
           "cwd": str(world.work), "hook_event_name": name, "timestamp": "2026-12-04T18:23:36.358Z",
           "tool_name": tool, "tool_input": tool_input}
    if response is not None:
        out["tool_response"] = response
    out.update(extra)
    return out


def shell_response(output: str, exit_code: int = 0) -> dict:
    """What Gemini's shell tool hands the AfterTool hook (the exit code only as text)."""
    code = f"Exit Code: {exit_code}\n" if exit_code else ""
    return {"llmContent": f"<untrusted_context>\nOutput: {output or '(empty)'}\n{code}Process Group PGID: 6856\n"
                          "</untrusted_context>", "returnDisplay": output}


def answer(result) -> dict | None:
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout) if result.stdout.strip() else None


def seq(n: int) -> str:
    return "".join(f"{i}\n" for i in range(1, n + 1))


def no_pruning(world) -> None:  # noqa: F811
    config = world.tmp / "config.toml"
    config.write_text("version = 1\n[pruning]\nenabled = false\n")
    world.env["YARP_CONFIG"] = str(config)


def test_a_wrapped_shell_call_is_archived_with_its_exact_streams(world, project):  # noqa: F811
    (world.work / "big.txt").write_text(seq(30000))
    arguments = {"command": "grep 0 big.txt", "description": "lines with a zero"}
    reply = answer(world.hook("gemini", event(world, project, "BeforeTool", "run_shell_command", arguments)))
    rewritten = reply["hookSpecificOutput"]["tool_input"]
    assert reply["hookSpecificOutput"]["hookEventName"] == "BeforeTool"
    # Gemini replaces the arguments with the answer's: every other argument is kept.
    assert rewritten["description"] == "lines with a zero" and rewritten["command"].endswith(" -- grep 0 big.txt")
    call_id = gemini.call_prefix("run_shell_command", arguments) + "0"
    assert gemini.rewritten_call(rewritten) == (call_id, arguments)
    assert calls(world.archive)[call_id]["status"] == "started"
    ran = world.shell(rewritten["command"])  # what Gemini's shell tool runs
    assert ran.returncode == 0 and len(ran.stdout) <= 6 * 1024 and b"yr_" in ran.stdout
    after = event(world, project, "AfterTool", "run_shell_command", rewritten, shell_response(ran.stdout.decode()))
    assert answer(world.hook("gemini", after)) is None, "yarp run's view is already what the model gets"
    call = calls(world.archive)[call_id]
    assert (call["status"], call["executed"], call["is_error"], call["requires_streams"]) == ("finished", 1, 0, 1)
    assert call["snaps"]["stdout/before"] == "".join(line for line in seq(30000).splitlines(True)
                                                     if "0" in line).encode()
    assert as_json(call["snaps"]["input/before"]) == arguments
    assert as_json(call["snaps"]["input/after"]) == rewritten
    assert "incomplete_calls: 0" in world.verify()


def test_a_large_result_is_replaced_by_a_capped_view_read_through_a_tail_call(world, project):  # noqa: F811
    text = seq(20000)
    (world.work / "big.txt").write_text(text)
    arguments = {"file_path": "big.txt"}
    assert answer(world.hook("gemini", event(world, project, "BeforeTool", "read_file", arguments))) is None
    response = {"llmContent": text, "returnDisplay": ""}
    reply = answer(world.hook("gemini", event(world, project, "AfterTool", "read_file", arguments, response)))
    tail = reply["hookSpecificOutput"]["tailToolCallRequest"]
    assert tail["name"] == "read_file" and reply["hookSpecificOutput"]["hookEventName"] == "AfterTool"
    view_path = Path(tail["args"]["file_path"])
    assert view_path.parent == project / gemini.VIEWS_FOLDER
    assert stat.S_IMODE(view_path.stat().st_mode) == 0o600
    assert stat.S_IMODE(view_path.parent.stat().st_mode) == 0o700
    view = view_path.read_text()
    call = calls(world.archive)[gemini.call_prefix("read_file", arguments) + "0"]
    assert len(view.encode()) <= 5120 and f"ref={call['ref']}" in view and view.startswith("1\n2\n")
    assert call["snaps"]["result_text/before"] == text.encode()
    assert as_json(call["snaps"]["result/before"]) == response
    assert as_json(call["snaps"]["result/after"])["llmContent"] == view
    # The tail call fires the hooks again, naming the original tool: ours, never archived.
    for name in ("BeforeTool", "AfterTool"):
        tail_event = event(world, project, name, "read_file", tail["args"],
                           {"llmContent": view, "returnDisplay": ""} if name == "AfterTool" else None,
                           original_request_name="read_file")
        assert answer(world.hook("gemini", tail_event)) is None
    assert len(calls(world.archive)) == 1
    found = world.yarp_cli("search", call["ref"], "^12345$")
    assert found.returncode == 0 and b"12345" in found.stdout
    assert "incomplete_calls: 0" in world.verify()


def test_a_list_of_text_parts_is_capped_as_the_model_gets_it_and_media_are_never_dropped(world, project):  # noqa: F811
    # read_many_files hands over a list of strings, Gemini joins them with a newline for the model.
    files = [f"--- a{i}.txt ---\n{seq(4000)}" for i in range(3)]
    arguments = {"include": ["a*.txt"]}
    assert answer(world.hook("gemini", event(world, project, "BeforeTool", "read_many_files", arguments))) is None
    response = {"llmContent": [*files, "--- End of content ---"], "returnDisplay": "Read 3 files"}
    reply = answer(world.hook("gemini", event(world, project, "AfterTool", "read_many_files", arguments, response)))
    view = Path(reply["hookSpecificOutput"]["tailToolCallRequest"]["args"]["file_path"]).read_text()
    call = calls(world.archive)[gemini.call_prefix("read_many_files", arguments) + "0"]
    assert call["snaps"]["result_text/before"] == "\n".join(response["llmContent"]).encode()
    assert as_json(call["snaps"]["result/before"]) == response
    assert as_json(call["snaps"]["result/after"])["llmContent"] == view and f"ref={call['ref']}" in view
    # An image among the parts: a view read by a tail call would lose it, so Gemini's result stands.
    arguments = {"include": ["b*"]}
    image = {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}
    response = {"llmContent": [*files, image], "returnDisplay": "Read 4 files"}
    assert answer(world.hook("gemini", event(world, project, "BeforeTool", "read_many_files", arguments))) is None
    assert answer(world.hook("gemini", event(world, project, "AfterTool", "read_many_files", arguments,
                                             response))) is None
    call = calls(world.archive)[gemini.call_prefix("read_many_files", arguments) + "0"]
    assert as_json(call["snaps"]["result/after"]) == response and "result_text/before" not in call["snaps"]
    assert "incomplete_calls: 0" in world.verify()


def test_errors_come_from_the_exit_code_text_and_the_error_field(world, project):  # noqa: F811
    no_pruning(world)
    failing = {"command": "sh -c 'echo oops >&2; exit 3'"}
    assert answer(world.hook("gemini", event(world, project, "BeforeTool", "run_shell_command", failing))) is None
    assert answer(world.hook("gemini", event(world, project, "AfterTool", "run_shell_command", failing,
                                             shell_response("oops", 3)))) is None
    missing = {"file_path": "/nowhere/x"}
    world.hook("gemini", event(world, project, "BeforeTool", "read_file", missing))
    world.hook("gemini", event(world, project, "AfterTool", "read_file", missing, {
        "llmContent": "Could not read file because no file was found at the specified path.", "returnDisplay": "",
        "error": {"message": "File not found: /nowhere/x", "type": "file_not_found"}}))
    fine = {"command": "true"}
    world.hook("gemini", event(world, project, "BeforeTool", "run_shell_command", fine))
    world.hook("gemini", event(world, project, "AfterTool", "run_shell_command", fine, shell_response("")))
    archived = calls(world.archive)
    flags = {name: (c["status"], c["executed"], c["is_error"], c["requires_streams"])
             for name, c in archived.items()}
    assert flags == {gemini.call_prefix("run_shell_command", failing) + "0": ("finished", 1, 1, 0),
                     gemini.call_prefix("read_file", missing) + "0": ("finished", 1, 1, 0),
                     gemini.call_prefix("run_shell_command", fine) + "0": ("finished", 1, 0, 0)}
    assert all(c["snaps"]["result/after"] == c["snaps"]["result/before"] for c in archived.values())


def test_identical_calls_get_their_own_ids_and_finish_in_order(world, project):  # noqa: F811
    no_pruning(world)
    arguments = {"command": "date"}
    prefix = gemini.call_prefix("run_shell_command", arguments)
    # Two identical calls in flight (Gemini runs one turn's calls in parallel), then a third later.
    for _ in range(2):
        world.hook("gemini", event(world, project, "BeforeTool", "run_shell_command", arguments))
    world.hook("gemini", event(world, project, "AfterTool", "run_shell_command", arguments, shell_response("one")))
    world.hook("gemini", event(world, project, "AfterTool", "run_shell_command", arguments, shell_response("two")))
    world.hook("gemini", event(world, project, "BeforeTool", "run_shell_command", arguments))
    world.hook("gemini", event(world, project, "AfterTool", "run_shell_command", arguments, shell_response("three")))
    # An AfterTool with nothing open (its BeforeTool never reached the archive) is left alone.
    world.hook("gemini", event(world, project, "AfterTool", "run_shell_command", arguments, shell_response("four")))
    archived = calls(world.archive)
    assert sorted(archived) == [prefix + "0", prefix + "1", prefix + "2"]
    outputs = [as_json(archived[prefix + str(n)]["snaps"]["result/before"])["returnDisplay"] for n in range(3)]
    assert outputs == ["one", "two", "three"]
    assert all(c["status"] == "finished" for c in archived.values())


def test_inside_gemini_sandbox_nothing_is_rewritten_but_the_view_is_capped(world, project):  # noqa: F811
    world.env["SANDBOX"] = "sandbox-exec"
    arguments = {"command": "seq 1 30000"}
    assert answer(world.hook("gemini", event(world, project, "BeforeTool", "run_shell_command", arguments))) is None
    reply = answer(world.hook("gemini", event(world, project, "AfterTool", "run_shell_command", arguments,
                                              shell_response(seq(30000)))))
    view = Path(reply["hookSpecificOutput"]["tailToolCallRequest"]["args"]["file_path"]).read_text()
    call = calls(world.archive)[gemini.call_prefix("run_shell_command", arguments) + "0"]
    assert (call["requires_streams"], call["is_error"]) == (0, 0)
    assert len(view.encode()) <= 5120 and f"ref={call['ref']}" in view
    assert "\n29999\n" in view, "the tail of a shell output is kept"


def test_recovery_output_and_disabled_pruning_are_never_capped(world, project):  # noqa: F811
    recovery = {"command": "yarp search yr_0123456789abcdef0123456789 'x'"}
    world.hook("gemini", event(world, project, "BeforeTool", "run_shell_command", recovery))
    assert answer(world.hook("gemini", event(world, project, "AfterTool", "run_shell_command", recovery,
                                             shell_response(seq(30000))))) is None
    no_pruning(world)
    plain = {"file_path": "big.txt"}
    world.hook("gemini", event(world, project, "BeforeTool", "read_file", plain))
    assert answer(world.hook("gemini", event(world, project, "AfterTool", "read_file", plain,
                                             {"llmContent": seq(30000), "returnDisplay": ""}))) is None
    assert not (project / gemini.VIEWS_FOLDER).exists()
    assert len(calls(world.archive)) == 2


def test_a_view_folder_that_is_not_ours_leaves_geminis_result(world, project):  # noqa: F811
    target = world.tmp / "elsewhere"
    target.mkdir()
    os.symlink(target, project / gemini.VIEWS_FOLDER)
    arguments = {"file_path": "big.txt"}
    world.hook("gemini", event(world, project, "BeforeTool", "read_file", arguments))
    assert answer(world.hook("gemini", event(world, project, "AfterTool", "read_file", arguments,
                                             {"llmContent": seq(30000), "returnDisplay": ""}))) is None
    assert list(target.iterdir()) == []
    call = calls(world.archive)[gemini.call_prefix("read_file", arguments) + "0"]
    assert call["status"] == "finished" and call["snaps"]["result/after"] == call["snaps"]["result/before"]


def test_malformed_and_foreign_events_change_nothing(world, project):  # noqa: F811
    for raw in (b"not json", b"{}", json.dumps({"hook_event_name": "SessionStart", "session_id": SESSION}).encode(),
                json.dumps({"hook_event_name": "BeforeTool", "session_id": SESSION, "tool_name": "x"}).encode()):
        result = world.hook("gemini", None, raw=raw)
        assert (result.returncode, result.stdout) == (0, b"")
    assert not os.path.exists(world.archive) or calls(world.archive) == {}


def test_an_unreachable_archive_leaves_the_tool_alone_and_says_so_once(world, project):  # noqa: F811
    # A broadly readable archive directory is refused: every capture fails for real (even as root).
    os.chmod(Path(world.archive).parent, 0o755)
    arguments = {"command": "grep -rn needle src"}
    results = [world.hook("gemini", event(world, project, "BeforeTool", "run_shell_command", arguments))
               for _ in range(2)]
    assert [(r.returncode, r.stdout) for r in results] == [(0, b""), (0, b"")]
    assert results[0].stderr.startswith(b"yarp: archive capture failed") and results[1].stderr == b""
    assert b"needle" not in results[0].stderr, "warnings never carry command text"


def test_hook_process_stays_lean(world, project):  # noqa: F811
    """The hook process reads, forwards and prints: the identity, rewrite, archive and capped
    view are the broker's work, never this process's."""
    world.hook("gemini", event(world, project, "BeforeTool", "read_file", {"file_path": "warm"}))  # starts the broker
    arguments = {"file_path": "big.txt"}
    names, before = hook_imports(world, "gemini", event(world, project, "BeforeTool", "read_file", arguments))
    assert (before.returncode, before.stdout) == (0, b"") and b"yarp:" not in before.stderr
    assert "yarp.clients.hook" in names and "yarp.clients.broker" in names  # the list is real
    assert sorted(set(HOOK_FORBIDDEN) & names) == []
    names, after = hook_imports(world, "gemini", event(world, project, "AfterTool", "read_file", arguments,
                                                       {"llmContent": seq(30000), "returnDisplay": ""}))
    assert "tailToolCallRequest" in answer(after)["hookSpecificOutput"]
    assert sorted(set(HOOK_FORBIDDEN) & names) == []


@pytest.mark.parametrize(("command", "expected"), [
    ("/opt/yarp run --archive-agent 'gemini' --archive-account 'me' --archive-session 's' "
     "--archive-call 'run_shell_command:ab:0' -- ls -la", ("run_shell_command:ab:0", "ls -la")),
    ("/opt/yarp run --archive-agent 'gemini' --archive-call 'it'\\''s' -- a -- b", ("it's", "a -- b")),
    ("/opt/yarp run --archive-agent 'codex' --archive-call 'x' -- ls", None),
    ("ls -- run --archive-agent 'gemini'", None),
    # A compound rewrite: every wrapped command's prefix removed gives the command back.
    ("cd 'a b' && '/o p/yarp' run --archive-agent 'gemini' --archive-account 'me' --archive-session 's' "
     "--archive-parent 'run_shell_command:ab:0' --pass -- seq 3 | '/o p/yarp' run --archive-agent 'gemini' "
     "--archive-account 'me' --archive-session 's' --archive-parent 'run_shell_command:ab:0' -- tail -1",
     ("run_shell_command:ab:0", "cd 'a b' && seq 3 | tail -1")),
])
def test_the_rewritten_command_names_its_call(command, expected):
    found = gemini.rewritten_call({"command": command, "description": "d"})
    assert (found and (found[0], found[1]["command"])) == (expected and expected)
    if found:
        assert found[1]["description"] == "d"
