"""The Qwen Code hook: events of Qwen Code 0.24.4's shape through real hook processes and a real broker.

Every event has the shape the real CLI sends (`session_id`, `transcript_path`,
`cwd`, `hook_event_name`, `tool_name`, `tool_input`, `tool_use_id`,
`tool_call_id`, and `tool_response {llmContent, returnDisplay}` after the
tool, `error` after a failure); a large shell output is cut as Qwen Code cuts
it (`cut`: its note naming the file it saved the whole text to, then the
text's first and last lines) and that file is written where and how Qwen Code
writes it (`<home>/.qwen/tmp/<sha256>/run_shell_command_<12 hex>.output`,
0600). Each event goes through `python -m yarp hook qwen-code` as a real
subprocess; the archive is then read read-only. The real CLI is driven in
tests/test_real_qwen_code.py.
"""

from __future__ import annotations

import hashlib
import json
import os

import pytest

from test_hooks import as_json, calls, world  # noqa: F401  (fixture)

SESSION = "b0905669-eac5-4632-a32a-5353059c0214"
CAP = 5120


def event(world, name: str, call_id: str, tool: str, tool_input: dict, **extra) -> dict:  # noqa: F811
    out = {"session_id": SESSION, "cwd": str(world.work), "hook_event_name": name,
           "transcript_path": str(world.home / ".qwen" / "projects" / "-work" / "chats" / f"{SESSION}.jsonl"),
           "timestamp": "2026-12-06T16:08:28.032Z", "permission_mode": "yolo", "tool_name": tool,
           "tool_input": tool_input, "tool_use_id": f"toolu_1796573307750_{call_id}", "tool_call_id": call_id}
    out.update(extra)
    return out


def shell_text(command: str, output: str, exit_code: int = 0) -> str:
    """The text Qwen Code's shell tool builds for the model (and saves whole when it is large)."""
    return "\n".join([f"Command: {command}", "Directory: (root)", f"Output: {output.strip() or '(empty)'}",
                      "Error: (none)", f"Exit Code: {exit_code}", "Signal: (none)", "Process Group PGID: 4242"])


def saved_path(world, name: str = "run_shell_command_0ba658b811fa.output") -> str:  # noqa: F811
    return str(world.home / ".qwen" / "tmp" / hashlib.sha256(str(world.work).encode()).hexdigest() / name)


def cut(content: str, path: str, preview: int = 4000) -> str:
    """Qwen Code 0.24.4's cut of `content` (`truncateAndSaveToFile`, keeping both ends) naming `path`."""
    lines = content.split("\n")
    separator = "\n\n---\n... [CONTENT TRUNCATED] ...\n---\n\n"
    budget = preview - len(separator)
    head, used = [], 0
    for line in lines:
        if used + len(line) + 1 > budget // 5:
            break
        head.append(line)
        used += len(line) + 1
    tail, used = [], 0
    for line in reversed(lines[len(head):]):
        if used + len(line) + 1 > budget - sum(len(h) + 1 for h in head):
            break
        tail.insert(0, line)
        used += len(line) + 1
    return ("Tool output was too large and has been truncated.\n"
            f"The full output has been saved to: {path}\n"
            "To read the complete output, use the read_file tool with the absolute file path above.\n"
            "The truncated output below shows the beginning and end of the content. The marker "
            "'... [CONTENT TRUNCATED] ...' indicates where content was removed.\n\n"
            f"Truncated part of the output:\n{chr(10).join(head)}{separator}{chr(10).join(tail)}")


def save(path: str, content: str, mode: int = 0o600) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as handle:
        handle.write(content)
    os.chmod(path, mode)


def answer(result) -> dict | None:
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout) if result.stdout.strip() else None


def seq(n: int) -> str:
    return "".join(f"{i}\n" for i in range(1, n + 1))


def large_shell_call(world, call_id: str = "call_seq", **save_options):  # noqa: F811
    """A `seq 1 100000` as Qwen Code runs it: its begin, its saved whole text, its cut result."""
    whole = shell_text("seq 1 100000", seq(100000))
    path = saved_path(world)
    save(path, whole, **save_options)
    pre = world.hook("qwen-code", event(world, "PreToolUse", call_id, "run_shell_command",
                                        {"command": "seq 1 100000"}))
    assert answer(pre) is None, "Qwen Code applies no rewritten input: none is answered"
    response = {"llmContent": cut(whole, path), "returnDisplay": seq(100000).strip()}
    post = world.hook("qwen-code", event(world, "PostToolUse", call_id, "run_shell_command",
                                         {"command": "seq 1 100000"}, tool_response=response))
    return whole, path, response, answer(post)


def test_a_large_shell_output_is_archived_whole_and_the_model_gets_the_view(world):  # noqa: F811
    whole, _, response, reply = large_shell_call(world)
    archived = calls(world.archive)["call_seq"]
    assert (archived["agent"], archived["session"], archived["tool"]) == ("qwen-code", SESSION, "run_shell_command")
    assert (archived["status"], archived["executed"], archived["is_error"], archived["requires_streams"]) == (
        "finished", 1, 0, 0)
    # The answer hands the model YARP's view of the whole text as the tool's whole result.
    assert reply["continue"] is False and set(reply) == {"continue", "stopReason"}
    view = reply["stopReason"]
    assert len(view.encode()) <= CAP and f"ref={archived['ref']}; source_output complete" in view
    assert view.startswith("Command: seq 1 100000\n") and "Exit Code: 0" in view
    # The raw result as Qwen Code made it, its saved file byte for byte, the view as the visible result.
    assert as_json(archived["snaps"]["result/before"]) == response
    assert archived["snaps"]["source_output/before"] == whole.encode()
    assert as_json(archived["snaps"]["result/after"]) == {"llmContent": view}
    assert "result_text/before" not in archived["snaps"]
    restored = world.yarp_cli("restore", archived["ref"], "source_output")
    assert restored.returncode == 0 and restored.stdout == whole.encode()
    found = world.yarp_cli("search", "-F", archived["ref"], "Output: 1")
    assert found.returncode == 0 and b"source_output:3:" in found.stdout
    assert "archive: ok" in world.verify()


@pytest.mark.parametrize("trouble", ["link", "elsewhere", "shared", "other_head"])
def test_a_saved_file_that_is_not_qwen_codes_own_is_refused(world, trouble):  # noqa: F811
    whole = shell_text("seq 1 100000", seq(100000))
    path = saved_path(world)
    if trouble == "link":
        real = str(world.tmp / "real.output")
        save(real, whole)
        os.makedirs(os.path.dirname(path))
        os.symlink(real, path)
    elif trouble == "elsewhere":
        path = str(world.tmp / "run_shell_command_0ba658b811fa.output")
        save(path, whole)
    elif trouble == "shared":
        save(path, whole, mode=0o644)
    else:
        save(path, shell_text("seq 1 100000", seq(100001)[2:]))
    world.hook("qwen-code", event(world, "PreToolUse", "call_seq", "run_shell_command", {"command": "seq 1 100000"}))
    response = {"llmContent": cut(whole, path), "returnDisplay": "…"}
    reply = answer(world.hook("qwen-code", event(world, "PostToolUse", "call_seq", "run_shell_command",
                                                 {"command": "seq 1 100000"}, tool_response=response)))
    # Qwen Code's cut fits the cap: with no whole text to view, the model keeps it; the call is archived raw.
    assert reply is None
    archived = calls(world.archive)["call_seq"]
    assert archived["status"] == "finished" and "source_output/before" not in archived["snaps"]
    assert as_json(archived["snaps"]["result/before"]) == response == as_json(archived["snaps"]["result/after"])


def test_a_text_over_the_cap_without_a_saved_file_is_viewed_from_itself(world):  # noqa: F811
    text = "".join(f"{n:5}\trow {n} lorem ipsum dolor sit amet\n" for n in range(1, 1001))
    world.hook("qwen-code", event(world, "PreToolUse", "call_read", "read_file", {"absolute_path": "/w/a.txt"}))
    response = {"llmContent": text, "returnDisplay": ""}
    reply = answer(world.hook("qwen-code", event(world, "PostToolUse", "call_read", "read_file",
                                                 {"absolute_path": "/w/a.txt"}, tool_response=response)))
    archived = calls(world.archive)["call_read"]
    assert len(reply["stopReason"].encode()) <= CAP
    assert f"ref={archived['ref']}; result_text complete" in reply["stopReason"]
    assert archived["snaps"]["result_text/before"] == text.encode()
    assert as_json(archived["snaps"]["result/after"]) == {"llmContent": reply["stopReason"]}


def test_small_results_failures_and_recoveries_keep_qwen_codes_own(world):  # noqa: F811
    small = {"llmContent": shell_text("echo hi", "hi"), "returnDisplay": "hi"}
    world.hook("qwen-code", event(world, "PreToolUse", "call_small", "run_shell_command", {"command": "echo hi"}))
    assert answer(world.hook("qwen-code", event(world, "PostToolUse", "call_small", "run_shell_command",
                                                {"command": "echo hi"}, tool_response=small))) is None
    # A command that exits non-zero is a failure event: no replacement, but its saved text is archived.
    whole = shell_text("make", seq(100000), exit_code=2)
    path = saved_path(world, "run_shell_command_aaaaaaaaaaaa.output")
    save(path, whole)
    world.hook("qwen-code", event(world, "PreToolUse", "call_make", "run_shell_command", {"command": "make"}))
    assert answer(world.hook("qwen-code", event(world, "PostToolUseFailure", "call_make", "run_shell_command",
                                                {"command": "make"}, error=cut(whole, path),
                                                is_interrupt=False))) is None
    # `yarp read` prints what the model asked for, within its own bounds: never capped again.
    recovery = {"llmContent": shell_text("yarp read yr_x stdout", seq(3000)), "returnDisplay": ""}
    command = {"command": "yarp read yr_0123456789abcdef0123456789abcdef stdout 1:3000"}
    world.hook("qwen-code", event(world, "PreToolUse", "call_read", "run_shell_command", command))
    assert answer(world.hook("qwen-code", event(world, "PostToolUse", "call_read", "run_shell_command", command,
                                                tool_response=recovery))) is None
    archived = calls(world.archive)
    assert {call_id: (call["status"], call["is_error"]) for call_id, call in archived.items()} == {
        "call_small": ("finished", 0), "call_make": ("finished", 1), "call_read": ("finished", 0)}
    make = archived["call_make"]
    assert as_json(make["snaps"]["result/before"]) == {"error": cut(whole, path), "isInterrupt": False}
    assert make["snaps"]["source_output/before"] == whole.encode()
    assert make["snaps"]["result/after"] == make["snaps"]["result/before"]
    assert "archive: ok" in world.verify()


def test_without_pruning_the_model_keeps_qwen_codes_cut_and_the_whole_text_is_archived(world):  # noqa: F811
    config = world.tmp / "config.toml"
    config.write_text("version = 1\n[pruning]\nenabled = false\n")
    world.env["YARP_CONFIG"] = str(config)
    whole, _, response, reply = large_shell_call(world)
    assert reply is None
    archived = calls(world.archive)["call_seq"]
    assert archived["snaps"]["source_output/before"] == whole.encode()
    assert as_json(archived["snaps"]["result/after"]) == response


def test_an_event_without_a_begun_call_is_left_alone(world):  # noqa: F811
    response = {"llmContent": "x" * 10_000, "returnDisplay": ""}
    reply = answer(world.hook("qwen-code", event(world, "PostToolUse", "call_never", "read_file", {},
                                                 tool_response=response)))
    assert reply is None and "call_never" not in calls(world.archive)


def test_install_and_uninstall_in_both_scopes(tmp_path):
    from test_hooks_install import yarp as yarp_in

    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    user = home / ".qwen" / "settings.json"
    user.parent.mkdir()
    user.write_text(json.dumps({"general": {"enableAutoUpdate": False}}))
    assert yarp_in(home, project, "hook", "install", "qwen-code").returncode == 0
    settings = json.loads(user.read_text())
    assert settings["general"] == {"enableAutoUpdate": False}
    assert sorted(settings["hooks"]) == ["PostToolUse", "PostToolUseFailure", "PreToolUse"]
    for groups in settings["hooks"].values():
        (group,) = groups
        (entry,) = group["hooks"]
        assert group["matcher"] == "" and entry["name"] == "yarp" and entry["timeout"] == 30_000
        assert entry["command"].endswith(" -m yarp hook qwen-code")
    # A project's settings are committed with it: the entry runs the yarp on each machine's PATH.
    assert yarp_in(home, project, "hook", "install", "qwen-code", "--project").returncode == 0
    shared = json.loads((project / ".qwen" / "settings.json").read_text())
    assert {entry["command"] for groups in shared["hooks"].values() for group in groups
            for entry in group["hooks"]} == {"yarp hook qwen-code"}
    assert yarp_in(home, project, "hook", "uninstall", "qwen-code", "--project").returncode == 0
    assert not (project / ".qwen").exists()
    assert yarp_in(home, project, "hook", "uninstall", "qwen-code").returncode == 0
    assert json.loads(user.read_text()) == {"general": {"enableAutoUpdate": False}}
