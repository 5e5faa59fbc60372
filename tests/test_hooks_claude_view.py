"""Claude Code's `PostToolUse` view: what replaces a result, what is archived and from which source.

Real hook processes (`python -m yarp hook claude-code`) against a real broker
over its Unix socket and a real SQLite archive; the events have the shape
Claude Code 2.1.332 sends (checked against the real program in
test_hooks_claude_code.py). A session transcript names the Claude Code
version, and a large Bash output is saved where Claude Code saves it:
`<transcript folder>/<session id>/tool-results/<name>.txt`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from test_hooks import SESSION, as_json, calls, claude_event, world  # noqa: F401  (fixture)

from yarp.agents.claude_code.broker import output as claude_code

CAP = 5120
SEQ = "".join(f"{i}\n" for i in range(1, 100001)).encode()


def answer(result) -> dict | None:
    assert result.returncode == 0, result.stderr
    out = result.stdout.decode().strip()
    return json.loads(out) if out else None


class Session:
    """A Claude Code session's transcript (naming `version`) and its tool-results folder, in the world's HOME."""

    def __init__(self, world, version: str | None = "2.1.332") -> None:
        self.world = world
        project = world.home / ".claude" / "projects" / "-work"
        (project / SESSION / "tool-results").mkdir(parents=True)
        self.transcript = project / f"{SESSION}.jsonl"
        line = {"type": "user", "sessionId": SESSION, "message": {"role": "user", "content": "go"}}
        if version is not None:
            line["version"] = version
        self.transcript.write_text(json.dumps(line, separators=(",", ":")) + "\n")
        os.chmod(self.transcript, 0o600)
        self.results = project / SESSION / "tool-results"

    def save(self, name: str, data: bytes, mode: int = 0o644) -> Path:
        path = self.results / name
        path.write_bytes(data)
        os.chmod(path, mode)
        return path

    def event(self, name: str, tool: str, tool_input: dict, call_id: str, **extra) -> dict:
        return claude_event(name, tool, tool_input, call_id, str(self.world.work),
                            transcript_path=str(self.transcript), **extra)

    def call(self, tool: str, tool_input: dict, call_id: str, response) -> dict | None:
        """One call's Pre and Post events through the hook; the Post answer."""
        pre = answer(self.world.hook("claude-code", self.event("PreToolUse", tool, tool_input, call_id)))
        assert pre is None, "the test commands run unchanged"
        return answer(self.world.hook("claude-code", self.event("PostToolUse", tool, tool_input, call_id,
                                                                tool_response=response)))


def big_bash(path: Path | None, data: bytes = SEQ, size: int | None = None) -> dict:
    """A Bash result as Claude Code 2.1.332 gives it for an output over its limit."""
    response = {"stdout": data[:30000].decode(), "stderr": "", "interrupted": False, "isImage": False,
                "noOutputExpected": False}
    if path is not None:
        response.update(persistedOutputPath=str(path), persistedOutputSize=len(data) if size is None else size)
    return response


#: Builtins only: the planner leaves it in Claude Code's shell, so the post event has the view to make.
BUILTIN = {"command": "cd . && printf '%s\\n' $(eval echo {1..100000})", "description": "count"}


def updated(result: dict | None) -> dict:
    assert result is not None, "the result is replaced"
    output = result["hookSpecificOutput"]
    assert output["hookEventName"] == "PostToolUse" and set(output) == {"hookEventName", "updatedToolOutput"}
    return output["updatedToolOutput"]


def test_large_bash_output_is_viewed_from_the_saved_file_and_restored_whole(world):  # noqa: F811
    session = Session(world)
    saved = session.save("b1.txt", SEQ)
    response = big_bash(saved)
    shown = updated(session.call("Bash", BUILTIN, "toolu_big", response))
    assert set(shown) == {"stdout", "stderr", "interrupted", "isImage", "noOutputExpected"}, \
        "the saved-file fields go, or Claude Code wraps the view in its own notice again"
    view = shown["stdout"].encode()
    call = calls(world.archive)["toolu_big"]
    assert len(view) <= CAP and f"ref={call['ref']}; source_output complete" in shown["stdout"]
    assert view.startswith(b"1\n2\n3\n") and view.rstrip().endswith(b"99999\n100000")
    snaps = call["snaps"]
    assert snaps["source_output/before"] == SEQ and len(SEQ) == 588_895
    assert as_json(snaps["result/before"]) == response
    assert as_json(snaps["result/after"]) == shown
    assert "result_text/before" not in snaps, "the saved file is the recovery source"
    assert (call["status"], call["executed"], call["is_error"], call["requires_streams"]) == ("finished", 1, 0, 0)
    restored = world.yarp_cli("restore", call["ref"])
    assert restored.returncode == 0 and restored.stdout == SEQ
    found = world.yarp_cli("search", call["ref"], "^54321$")
    assert found.returncode == 0 and b"54321" in found.stdout
    assert "incomplete_calls: 0" in world.verify()


def test_older_claude_code_gets_no_answer_but_the_saved_output_is_archived(world):  # noqa: F811
    session = Session(world, "2.1.120")
    saved = session.save("b1.txt", SEQ)
    response = big_bash(saved)
    assert session.call("Bash", BUILTIN, "toolu_old", response) is None, \
        "2.1.120 does not know updatedToolOutput: nothing is sent"
    snaps = calls(world.archive)["toolu_old"]["snaps"]
    assert snaps["source_output/before"] == SEQ
    assert snaps["result/after"] == snaps["result/before"]


@pytest.mark.parametrize("version", [None, "2.1.120"])
def test_no_answer_without_a_version_that_takes_it(world, version):  # noqa: F811
    session = Session(world, version)
    text = "".join(f"line {i}\n" for i in range(3000))
    read_input = {"file_path": str(world.work / "f.txt")}
    response = {"type": "text", "file": {"filePath": read_input["file_path"], "content": text, "numLines": 3000,
                                         "startLine": 1, "totalLines": 3000}}
    assert session.call("Read", read_input, "toolu_read", response) is None
    snaps = calls(world.archive)["toolu_read"]["snaps"]
    assert snaps["result/after"] == snaps["result/before"] and "result_text/before" not in snaps


@pytest.mark.parametrize("problem", ["group-writable", "symlink", "wrong size", "elsewhere", "missing"])
def test_a_refused_saved_file_leaves_the_view_of_the_shown_text(world, tmp_path, problem):  # noqa: F811
    session = Session(world)
    size = None
    if problem == "group-writable":
        saved = session.save("b1.txt", SEQ, 0o664)
    elif problem == "symlink":
        target = session.save("real.txt", SEQ)
        saved = session.results / "b1.txt"
        saved.symlink_to(target)
    elif problem == "wrong size":
        saved, size = session.save("b1.txt", SEQ), len(SEQ) - 1
    elif problem == "elsewhere":
        saved = tmp_path / "b1.txt"
        saved.write_bytes(SEQ)
        os.chmod(saved, 0o600)
    else:
        saved = session.results / "gone.txt"
    response = big_bash(saved, size=size)
    shown = updated(session.call("Bash", BUILTIN, "toolu_cut", response))
    call = calls(world.archive)["toolu_cut"]
    snaps = call["snaps"]
    assert "source_output/before" not in snaps, f"a {problem} file is not an approved source"
    assert snaps["result_text/before"] == response["stdout"].encode(), "the text Claude Code showed, exact"
    assert len(shown["stdout"].encode()) <= CAP and f"ref={call['ref']}; result_text incomplete" in shown["stdout"]
    assert as_json(snaps["result/after"]) == shown
    assert "incomplete_calls: 0" in world.verify()


def test_read_and_grep_results_over_the_cap_are_capped(world):  # noqa: F811
    session = Session(world)
    text = "".join(f"line {i} of the file\n" for i in range(3000))
    read_input = {"file_path": str(world.work / "f.txt")}
    read = {"type": "text", "file": {"filePath": read_input["file_path"], "content": text, "numLines": 3000,
                                     "startLine": 1, "totalLines": 3000}}
    shown = updated(session.call("Read", read_input, "toolu_read", read))
    content = shown["file"]["content"]
    assert {**shown, "file": {**shown["file"], "content": text}} == read, "only the text is replaced"
    ref = calls(world.archive)["toolu_read"]["ref"]
    assert len(content.encode()) <= CAP and content.startswith("line 0 of the file\n")
    kept = content.split("[yarp:")[0].splitlines()
    assert kept == text.splitlines()[:len(kept)], "Read's view keeps the lines from the top: their numbers stay true"
    assert f"ref={ref}; result_text complete" in content
    assert content.rstrip().endswith(f"result_text {len(kept) + 1}:3000]")
    grep_input = {"pattern": "line", "path": str(world.work), "output_mode": "content"}
    grep = {"mode": "content", "numFiles": 0, "filenames": [], "content": text, "numLines": 250,
            "appliedLimit": 250}
    shown_grep = updated(session.call("Grep", grep_input, "toolu_grep", grep))
    assert len(shown_grep["content"].encode()) <= CAP and "result_text incomplete" in shown_grep["content"]
    archived = calls(world.archive)
    for call_id, shown_now in (("toolu_read", shown), ("toolu_grep", shown_grep)):
        snaps = archived[call_id]["snaps"]
        assert snaps["result_text/before"] == text.encode()
        assert as_json(snaps["result/after"]) == shown_now
    recovered = world.yarp_cli("read", ref, "result_text", "2990:3000")
    assert recovered.returncode == 0 and b"line 2995 of the file" in recovered.stdout
    assert "incomplete_calls: 0" in world.verify()


def test_small_results_recovery_commands_and_other_tools_are_not_replaced(world):  # noqa: F811
    session = Session(world)
    small = {"stdout": "0", "stderr": "", "interrupted": False, "isImage": False, "noOutputExpected": False}
    assert session.call("Bash", {"command": "cd . && echo 0"}, "toolu_small", small) is None
    big = "".join(f"match {i}\n" for i in range(5000))
    recovery = {"stdout": big, "stderr": "", "interrupted": False, "isImage": False, "noOutputExpected": False}
    assert session.call("Bash", {"command": "yarp read yr_0123456789abcdef0123456789abcdef stdout 1:5000"},
                        "toolu_recovery", recovery) is None, "recovery output is never capped again"
    glob = {"filenames": [f"/w/{i}.txt" for i in range(3000)], "durationMs": 5, "numFiles": 3000,
            "truncated": False}
    assert session.call("Glob", {"pattern": "*.txt"}, "toolu_glob", glob) is None
    archived = calls(world.archive)
    for call_id in ("toolu_small", "toolu_recovery", "toolu_glob"):
        snaps = archived[call_id]["snaps"]
        assert snaps["result/after"] == snaps["result/before"] and "result_text/before" not in snaps


def test_pruning_off_keeps_claude_codes_view(world):  # noqa: F811
    config = world.home / ".config" / "yarp"
    config.mkdir(parents=True)
    (config / "config.toml").write_text("version = 1\n[pruning]\nenabled = false\n")
    session = Session(world)
    saved = session.save("b1.txt", SEQ)
    assert session.call("Bash", BUILTIN, "toolu_off", big_bash(saved)) is None
    snaps = calls(world.archive)["toolu_off"]["snaps"]
    assert snaps["source_output/before"] == SEQ, "the complete output is archived all the same"


def test_transcript_version_is_read_from_the_newest_line(tmp_path):
    transcript = tmp_path / "t.jsonl"
    lines = [{"type": "user", "version": "2.1.120"}, {"type": "x", "pad": "y" * 200_000},
             {"type": "assistant", "version": "2.1.332"}, {"type": "last-prompt"}]
    transcript.write_text("".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines))
    assert claude_code.transcript_version(str(transcript)) == (2, 1, 332)
    assert claude_code.takes_updated_output((2, 1, 332)) and claude_code.takes_updated_output((2, 1, 121))
    assert not claude_code.takes_updated_output((2, 1, 120)) and not claude_code.takes_updated_output(None)
    link = tmp_path / "link.jsonl"
    link.symlink_to(transcript)
    assert claude_code.transcript_version(str(link)) is None, "a link is not followed"
    assert claude_code.transcript_version("relative.jsonl") is None


def test_shell_view_applies_the_rule_of_the_command_then_the_cap():
    from yarp.view.host import shell_view
    from yarp.view.plan import result_argv
    from yarp.view.rules import load_rules, select_rule

    rule = select_rule(result_argv("cd repo && git log"), load_rules(()))
    assert rule is not None, "git log has a reduce rule"
    log = "".join(f"commit {i:040x}\nAuthor: A <a@example.com>\nDate:   Mon Jan 1 00:00:00 2024\n\n"
                  f"    change {i}\n\n" for i in range(2000)).encode()
    ref = "yr_" + "a" * 32
    view = shell_view(log, rule=rule, cap=CAP, archive_ref=ref, source="source_output", completeness="complete")
    plain = shell_view(log, rule=None, cap=CAP, archive_ref=ref, source="source_output", completeness="complete")
    assert view is not None and plain is not None and len(view) <= CAP and view != plain
    assert b"[yarp summary:" in view and ref.encode() in view


def test_a_result_the_archive_refuses_gets_no_view(world):  # noqa: F811
    """A lone surrogate cannot be archived as text: the post request fails (a bounded error, once per
    session), no view names a reference whose result is missing, and the call stays incomplete."""
    session = Session(world)
    text = "".join(f"line {i}\n" for i in range(3000)) + "\udc80"
    raw = json.dumps({"stdout": text, "stderr": "", "interrupted": False, "isImage": False})
    pre = session.event("PreToolUse", "Bash", {"command": "cd . && echo x"}, "toolu_bad")
    assert answer(world.hook("claude-code", pre)) is None
    event = session.event("PostToolUse", "Bash", {"command": "cd . && echo x"}, "toolu_bad")
    data = json.dumps(event)[:-1] + ', "tool_response": ' + raw + "}"
    post = world.hook("claude-code", None, raw=data.encode())
    assert answer(post) is None and b"result archive failed" in post.stderr
    call = calls(world.archive)["toolu_bad"]
    assert call["status"] == "started" and "result/after" not in call["snaps"]
    assert "incomplete_calls: 1" in world.verify()


def test_a_wrapped_result_is_capped_again_only_over_the_cap(world):  # noqa: F811
    """`yarp run` made the view of a wrapped command already: a result under the cap is left as
    it is, and one still over the cap (here, as if the agent's shell had added to it) is capped."""
    from test_hooks import make_haystack

    make_haystack(world.work)
    session = Session(world)
    tool_input = {"command": "grep -rn needle src", "description": "find"}
    for call_id, extra in (("toolu_fits", ""), ("toolu_over", "".join(f"extra {i}\n" for i in range(2000)))):
        pre = answer(world.hook("claude-code", session.event("PreToolUse", "Bash", tool_input, call_id)))
        updated_input = pre["hookSpecificOutput"]["updatedInput"]
        ran = world.shell(updated_input["command"])
        assert ran.returncode == 0 and len(ran.stdout) <= CAP, "yarp run showed its view"
        response = {"stdout": ran.stdout.decode() + extra, "stderr": "", "interrupted": False, "isImage": False,
                    "noOutputExpected": False}
        post = answer(world.hook("claude-code", session.event("PostToolUse", "Bash", updated_input, call_id,
                                                              tool_response=response)))
        call = calls(world.archive)[call_id]
        assert call["requires_streams"] == 1 and call["executed"] == 1 and "stdout/before" in call["snaps"]
        if not extra:
            assert post is None and call["snaps"]["result/after"] == call["snaps"]["result/before"]
        else:
            shown = updated(post)
            assert len(shown["stdout"].encode()) <= CAP and f"ref={call['ref']}; result_text complete" in shown["stdout"]
            assert call["snaps"]["result_text/before"] == response["stdout"].encode()
    assert "incomplete_calls: 0" in world.verify()
