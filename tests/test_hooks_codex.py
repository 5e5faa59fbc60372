"""The Codex hook: recorded event and transcript shapes through real hook processes.

Every event has the shape the real Codex CLI 0.171.0 sends (tool `Bash` with
`{"command"}`, `transcript_path`, `model`, `turn_id`), and every transcript line
the shape it writes (`event_msg`/`item_completed` with a `CommandExecution`,
`response_item`/`function_call_output`). Each event goes through
`python -m yarp hook codex` as a real subprocess against a real broker; the
archive is then read read-only. The real binary is driven in test_real_codex.py.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from test_hooks import HOOK_FORBIDDEN, as_json, broker_status, calls, hook_imports, world  # noqa: F401  (fixture)

from yarp.errors import ValidationError
from yarp.agents.codex.broker.evidence import read_evidence
from yarp.agents.codex.broker.outcome import capped_view
from yarp.agents.codex.transcripts.evidence import PERSISTENCE_CUT, CallEvidence

SESSION = "01a23bf7-a58f-7472-b223-ba675f3a3c01"


class Transcript:
    """A Codex rollout file written line by line, as Codex appends it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self.write({"type": "session_meta", "payload": {"id": SESSION, "cli_version": "0.171.0"}})

    def write(self, record: dict, *, newline: bool = True) -> None:
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + ("\n" if newline else ""))

    def executed(self, call_id: str, output: str, exit_code: int) -> None:
        self.write({"type": "event_msg", "payload": {"type": "item_completed", "item": {
            "type": "CommandExecution", "id": call_id, "command": ["/bin/bash", "-lc", "x"],
            "status": "completed" if exit_code == 0 else "failed", "aggregated_output": output,
            "exit_code": exit_code, "duration": {"secs": 0, "nanos": 4000}}}})

    def called(self, call_id: str, name: str, arguments: dict) -> None:
        self.write({"type": "response_item", "payload": {"type": "function_call", "name": name,
                                                          "arguments": json.dumps(arguments), "call_id": call_id}})

    def model_output(self, call_id: str, output: str) -> None:
        self.write({"type": "response_item", "payload": {"type": "function_call_output", "call_id": call_id,
                                                          "output": output}})


@pytest.fixture
def transcript(world):  # noqa: F811
    return Transcript(world.tmp / "codex" / "sessions" / "2026" / "12" / "03" / f"rollout-x-{SESSION}.jsonl")


def event(world, transcript, name: str, call_id: str | None = None, command: str | None = None,  # noqa: F811
          tool: str = "Bash", **extra) -> dict:
    out = {"session_id": SESSION, "turn_id": "turn-1", "transcript_path": str(transcript.path),
           "cwd": str(world.work), "hook_event_name": name, "model": "scripted-model",
           "permission_mode": "bypassPermissions"}
    if call_id is not None:
        out.update(tool_name=tool, tool_input={"command": command} if tool == "Bash" else {"input": command},
                   tool_use_id=call_id)
    out.update(extra)
    return out


def answer(result) -> dict | None:
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout) if result.stdout.strip() else None


def seq(n: int) -> str:
    return "".join(f"{i}\n" for i in range(1, n + 1))


def test_large_output_is_archived_exactly_and_the_view_replaced(world, transcript):  # noqa: F811
    output = seq(8000)
    arguments = {"cmd": "seq 1 8000", "yield_time_ms": 10000}
    transcript.called("call_big", "exec_command", arguments)
    assert answer(world.hook("codex", event(world, transcript, "PreToolUse", "call_big", "seq 1 8000"))) is None
    transcript.executed("call_big", output, 0)
    cut = output[:5000] + "\n…33894 chars truncated…\n" + output[-5000:]  # Codex's own cut
    reply = answer(world.hook("codex", event(world, transcript, "PostToolUse", "call_big", "seq 1 8000",
                                             tool_response=cut)))
    call = calls(world.archive)["call_big"]
    assert (call["status"], call["executed"], call["is_error"], call["requires_streams"]) == ("finished", 1, 0, 0)
    # The call as the model made it, not Codex's `Bash {"command"}` translation; nothing rewritten.
    assert call["tool"] == "exec_command"
    assert as_json(call["snaps"]["input/before"]) == as_json(call["snaps"]["input/after"]) == arguments
    assert call["snaps"]["source_output/before"] == output.encode()
    assert as_json(call["snaps"]["result/before"]) == {"exit_code": 0, "status": "completed", "output": cut}
    view = reply["reason"]
    assert reply == {"decision": "block", "reason": view}
    assert as_json(call["snaps"]["result/after"])["output"] == view
    assert view.startswith("Process exited with code 0\nOutput:\n1\n2\n") and view.endswith("\n8000\n")
    assert f"capped at 5120; ref={call['ref']}; source_output complete]" in view
    found = world.yarp_cli("search", call["ref"], "^4321$")
    assert found.returncode == 0 and b"4321" in found.stdout
    assert "incomplete_calls: 0" in world.verify()


def test_a_cap_over_codexs_hook_text_budget_is_held_under_it(world, transcript):  # noqa: F811
    # Codex cuts hook text over 2,500 tokens (10,000 bytes) and saves it to a file: the view stays under that.
    config = world.tmp / "config.toml"
    config.write_text("version = 1\n[output]\ncap_bytes = 20000\n")
    world.env["YARP_CONFIG"] = str(config)
    output = seq(8000)
    world.hook("codex", event(world, transcript, "PreToolUse", "call_wide", "seq 1 8000"))
    transcript.executed("call_wide", output, 0)
    reply = answer(world.hook("codex", event(world, transcript, "PostToolUse", "call_wide", "seq 1 8000",
                                             tool_response=output[:10000])))
    view = reply["reason"]
    call = calls(world.archive)["call_wide"]
    assert len(view.encode()) <= 10_000 and f"capped at 9900; ref={call['ref']}" in view
    assert as_json(call["snaps"]["result/after"])["output"] == view
    assert call["snaps"]["source_output/before"] == output.encode()


def test_exit_code_decides_the_error_and_small_output_stays_codexs(world, transcript):  # noqa: F811
    world.hook("codex", event(world, transcript, "PreToolUse", "call_fail", "false"))
    transcript.executed("call_fail", "boom\n", 2)
    assert answer(world.hook("codex", event(world, transcript, "PostToolUse", "call_fail", "false",
                                            tool_response="boom\n"))) is None
    call = calls(world.archive)["call_fail"]
    assert (call["status"], call["executed"], call["is_error"]) == ("finished", 1, 1)
    assert (call["tool"], as_json(call["snaps"]["input/before"])) == ("Bash", {"command": "false"}), \
        "without the model's call in the transcript the hook's view is archived"
    assert call["snaps"]["result/after"] == call["snaps"]["result/before"]
    assert as_json(call["snaps"]["result/before"]) == {"exit_code": 2, "status": "failed", "output": "boom\n"}
    assert call["snaps"]["source_output/before"] == b"boom\n"


def test_calls_without_a_post_event_are_settled_by_the_next_event(world, transcript):  # noqa: F811
    world.hook("codex", event(world, transcript, "PreToolUse", "call_refused", "touch x"))
    refusal = "approval policy is Never; reject command"
    transcript.model_output("call_refused", refusal)
    world.hook("codex", event(world, transcript, "PreToolUse", "call_late", "sleep 20"))
    running = "Chunk ID: 1\nWall time: 0.1 seconds\nProcess running with session ID 7\nOutput:\n"
    transcript.model_output("call_late", running)
    # The next event settles the refused call; the running one has no outcome yet.
    world.hook("codex", event(world, transcript, "PreToolUse", "call_next", "true"))
    archived = calls(world.archive)
    refused = archived["call_refused"]
    assert (refused["status"], refused["executed"], refused["is_error"]) == ("finished", 0, 1)
    assert as_json(refused["snaps"]["result/before"]) == {"exit_code": None, "status": None, "output": refusal}
    assert archived["call_late"]["status"] == "started"
    # A post event whose execution is not in the transcript yet leaves its call for later.
    assert answer(world.hook("codex", event(world, transcript, "PostToolUse", "call_next", "true",
                                            tool_response=""))) is None
    assert calls(world.archive)["call_next"]["status"] == "started"
    transcript.executed("call_next", "", 0)
    transcript.model_output("call_next", "Chunk ID: 2\nProcess exited with code 0\nOutput:\n")
    transcript.executed("call_late", "late\n", 0)
    world.hook("codex", event(world, transcript, "Stop", stop_hook_active=False, last_assistant_message="done"))
    archived = calls(world.archive)
    late = archived["call_late"]
    assert (late["status"], late["executed"], late["is_error"]) == ("finished", 1, 0)
    assert late["snaps"]["source_output/before"] == b"late\n"
    assert as_json(late["snaps"]["result/before"])["output"] == running
    assert archived["call_next"]["status"] == "finished"
    assert "incomplete_calls: 0" in world.verify()


def test_output_codex_cut_for_persistence_is_an_incomplete_text(world, transcript):  # noqa: F811
    output = seq(3000) + PERSISTENCE_CUT + seq(3000)
    world.hook("codex", event(world, transcript, "PreToolUse", "call_huge", "seq 1 30000"))
    transcript.executed("call_huge", output, 0)
    reply = answer(world.hook("codex", event(world, transcript, "PostToolUse", "call_huge", "seq 1 30000",
                                             tool_response="cut")))
    call = calls(world.archive)["call_huge"]
    assert "source_output/before" not in call["snaps"]
    assert call["snaps"]["result_text/before"] == output.encode()
    assert f"ref={call['ref']}; result_text incomplete]" in reply["reason"]
    assert "incomplete_calls: 0" in world.verify()


def test_recovery_commands_and_other_tools_keep_codexs_result(world, transcript):  # noqa: F811
    search = "yarp search yr_0123456789abcdef0123456789abcdef 'x'"
    world.hook("codex", event(world, transcript, "PreToolUse", "call_search", search))
    transcript.executed("call_search", seq(8000), 0)
    assert answer(world.hook("codex", event(world, transcript, "PostToolUse", "call_search", search,
                                            tool_response="found"))) is None
    world.hook("codex", event(world, transcript, "PreToolUse", "call_patch", "*** Begin Patch", tool="apply_patch"))
    assert answer(world.hook("codex", event(world, transcript, "PostToolUse", "call_patch", "*** Begin Patch",
                                            tool="apply_patch", tool_response="Success."))) is None
    archived = calls(world.archive)
    assert as_json(archived["call_search"]["snaps"]["result/after"])["output"] == "found"
    patch = archived["call_patch"]
    assert (patch["status"], patch["executed"], patch["is_error"]) == ("finished", 1, 0)
    assert as_json(patch["snaps"]["result/after"]) == "Success."
    assert "incomplete_calls: 0" in world.verify()


def test_an_unreadable_transcript_leaves_the_call_incomplete(world, transcript):  # noqa: F811
    world.hook("codex", event(world, transcript, "PreToolUse", "call_x", "seq 1 9"))
    transcript.executed("call_x", seq(9), 0)
    link = transcript.path.with_name("link.jsonl")
    os.symlink(transcript.path, link)
    post = event(world, transcript, "PostToolUse", "call_x", "seq 1 9", tool_response=seq(9),
                 transcript_path=str(link))
    result = world.hook("codex", post)
    assert (result.returncode, result.stdout) == (0, b"")
    assert result.stderr.startswith(b"yarp: the Codex transcript is unreadable")
    assert calls(world.archive)["call_x"]["status"] == "started"


# --- the transcript reader, in process ------------------------------------------------


def test_read_evidence_takes_complete_lines_and_the_last_record(tmp_path):
    log = Transcript(tmp_path / "rollout.jsonl")
    log.executed("a", "first\n", 1)
    log.executed("a", "second\n", 0)
    log.model_output("b", [{"type": "input_text", "text": "part one, "}, {"type": "input_text", "text": "two"}])
    log.executed("e", "half a pair: \ud800\n", 0)  # json writes it escaped; orjson alone would refuse it
    log.write({"type": "event_msg", "payload": {"type": "item_completed", "item": {
        "type": "CommandExecution", "id": "c", "aggregated_output": "x", "exit_code": 0}}}, newline=False)
    found = read_evidence(str(log.path), ["a", "b", "c", "d", "e"])
    assert found.pop("e").output == "half a pair: \ud800\n"
    assert found["a"] == CallEvidence("a", "second\n", 0, "completed", None)
    assert not found["a"].settled, "no tool output yet: its post hook may still be running"
    assert found["b"].model_output == "part one, two" and found["b"].settled and not found["b"].executed
    assert found["c"] == CallEvidence("c") and not found["c"].settled, "a line still being written is not read"
    assert found["d"] == CallEvidence("d")
    with pytest.raises(ValidationError):
        read_evidence(str(tmp_path / "missing.jsonl"), ["a"])
    with pytest.raises(ValidationError):
        read_evidence(str(tmp_path), ["a"])


def test_view_is_replaced_only_over_the_cap():
    small = CallEvidence("a", "x" * 5120, 0, "completed")
    assert capped_view(small, cap=5120, archive_ref="yr_" + "0" * 32) is None
    assert capped_view(CallEvidence("a", "x" * 6000, 0), cap=0, archive_ref="yr_" + "0" * 32) is None
    assert capped_view(CallEvidence("a", model_output="refused"), cap=10, archive_ref="yr_" + "0" * 32) is None
    view = capped_view(CallEvidence("a", "é" * 4000, 1), cap=5120, archive_ref="yr_" + "1" * 32)
    header = "Process exited with code 1\nOutput:\n"
    assert view.startswith(header + "é") and len(view[len(header):].encode()) <= 5120


def test_hook_process_imports_only_the_c_cores(world, transcript):  # noqa: F811
    """The Codex hook is the same thin client as Claude Code's: the transcript, the
    archive and the capped view are the broker's work, never this process's."""
    world.hook("codex", event(world, transcript, "PreToolUse", "call_warm", "true"))  # starts the broker
    transcript.called("call_imp", "exec_command", {"cmd": "seq 1 8000"})
    names, pre = hook_imports(world, "codex", event(world, transcript, "PreToolUse", "call_imp", "seq 1 8000"))
    assert (pre.returncode, pre.stdout) == (0, b"") and b"yarp:" not in pre.stderr
    assert "yarp.clients.hook" in names and "yarp.clients.broker" in names  # the list is real
    assert sorted(set(HOOK_FORBIDDEN) & names) == []
    transcript.executed("call_imp", seq(8000), 0)
    names, post = hook_imports(world, "codex", event(world, transcript, "PostToolUse", "call_imp", "seq 1 8000",
                                                     tool_response="cut"))
    assert answer(post)["decision"] == "block" and b"yarp:" not in post.stderr  # capped by the broker
    assert "yarp.clients.hook" in names and sorted(set(HOOK_FORBIDDEN) & names) == []
    names, stop = hook_imports(world, "codex", event(world, transcript, "Stop", stop_hook_active=False))
    assert (stop.returncode, stop.stdout) == (0, b"") and sorted(set(HOOK_FORBIDDEN) & names) == []
    assert calls(world.archive)["call_imp"]["status"] == "finished"


def test_each_event_is_one_request_and_one_commit(world, transcript):  # noqa: F811
    # Two calls get no post event; the next PreToolUse begins its call and settles
    # both in one composite request: one request, one batch (one commit).
    for call_id in ("call_a", "call_b"):
        world.hook("codex", event(world, transcript, "PreToolUse", call_id, "seq 1 9"))
        transcript.executed(call_id, seq(9), 0)
        transcript.model_output(call_id, "Process exited with code 0\nOutput:\n" + seq(9))
    before = broker_status(world)
    world.hook("codex", event(world, transcript, "PreToolUse", "call_c", "seq 1 8000"))
    after = broker_status(world)
    assert after["pid"] == before["pid"]
    assert (after["requests"] - before["requests"], after["batches"] - before["batches"]) == (1, 1)
    archived = calls(world.archive)
    assert [archived[c]["status"] for c in ("call_a", "call_b", "call_c")] == ["finished", "finished", "started"]
    assert archived["call_a"]["snaps"]["source_output/before"] == seq(9).encode()
    transcript.executed("call_c", seq(8000), 0)
    before = broker_status(world)
    reply = answer(world.hook("codex", event(world, transcript, "PostToolUse", "call_c", "seq 1 8000",
                                             tool_response="cut")))
    after = broker_status(world)
    assert (after["requests"] - before["requests"], after["batches"] - before["batches"]) == (1, 1)
    call = calls(world.archive)["call_c"]
    assert call["status"] == "finished" and as_json(call["snaps"]["result/after"])["output"] == reply["reason"]
    assert call["snaps"]["source_output/before"] == seq(8000).encode()


def test_a_transcript_of_another_user_is_not_read(world, transcript):  # noqa: F811
    if os.geteuid() != 0:
        pytest.skip("changing a file's owner needs root")
    world.hook("codex", event(world, transcript, "PreToolUse", "call_o", "seq 1 9"))
    transcript.executed("call_o", seq(9), 0)
    os.chown(transcript.path, 65534, 65534)
    result = world.hook("codex", event(world, transcript, "PostToolUse", "call_o", "seq 1 9", tool_response=seq(9)))
    assert (result.returncode, result.stdout) == (0, b"")
    assert result.stderr.startswith(b"yarp: the Codex transcript is unreadable") and b"another user" in result.stderr
    assert calls(world.archive)["call_o"]["status"] == "started"


def test_read_evidence_reads_the_tail_first_and_the_whole_file_when_needed(tmp_path):
    log = Transcript(tmp_path / "rollout.jsonl")
    log.executed("old", "old output\n", 0)
    log.model_output("old", "old shown")
    for number in range(50):
        log.executed(f"filler{number}", "y" * 1000, 0)
    log.executed("new", "new output\n", 4)
    # Only the whole file holds "old"; the tail alone answers for "new".
    found = read_evidence(str(log.path), ["old", "new"], tail_bytes=2000)
    assert found["old"] == CallEvidence("old", "old output\n", 0, "completed", "old shown")
    assert found["new"] == CallEvidence("new", "new output\n", 4, "failed")
    assert read_evidence(str(log.path), ["new"], tail_bytes=2000) == {"new": found["new"]}
    # Evidence the tail holds only in part (the execution, not the shown output) sends the reader to the start.
    log.executed("old", "old output, again\n", 0)
    settled = read_evidence(str(log.path), ["old"], tail_bytes=2000, enough=lambda e: e.settled)["old"]
    assert (settled.output, settled.model_output) == ("old output, again\n", "old shown")
    tail = read_evidence(str(log.path), ["old"], tail_bytes=2000, enough=lambda e: e.settled, tail_only=True)
    assert tail["old"] == CallEvidence("old", "old output, again\n", 0, "completed"), "the tail alone, as asked"


def test_read_evidence_is_the_same_whatever_the_block_and_tail_sizes(tmp_path, monkeypatch):
    from yarp.agents.codex.broker import evidence

    log = Transcript(tmp_path / "rollout.jsonl")
    for number in range(30):
        log.called(f"c{number}", "exec_command", {"cmd": f"echo {number}"})
        log.executed(f"c{number}", f"out {number}\n" * (number % 7), number % 3)
        log.model_output(f"c{number}", f"shown {number}")
    log.executed("c3", "again\n", 0)
    log.executed("c29", "being written", 0)
    with open(log.path, "rb+") as handle:  # the last line has no newline yet
        handle.seek(-1, os.SEEK_END)
        handle.truncate()
    wanted = [f"c{number}" for number in range(30)]
    expected = read_evidence(str(log.path), wanted)
    assert expected["c3"].output == "again\n" and expected["c29"].output == "out 29\n" * 1
    for block, first, tail in ((7, 50, 900), (64, 1000, 5000), (1, 3, 900)):
        monkeypatch.setattr(evidence, "SCAN_BLOCK_BYTES", block)
        monkeypatch.setattr(evidence, "FIRST_TAIL_BYTES", first)
        assert read_evidence(str(log.path), wanted, tail_bytes=tail) == expected
        # The call just made, from the end alone (its earlier `function_call` line is before the tail).
        last = read_evidence(str(log.path), ["c29"], tail_bytes=tail, tail_only=True)["c29"]
        assert (last.output, last.exit_code, last.model_output) == ("out 29\n", 2, "shown 29")


def test_archive_failure_leaves_codex_alone_and_warns_once(world, transcript):  # noqa: F811
    os.chmod(Path(world.archive).parent, 0o755)  # a broadly readable archive directory is refused
    transcript.executed("call_a", seq(8000), 0)
    results = [world.hook("codex", event(world, transcript, "PreToolUse", "call_a", "seq 1 8000")),
               world.hook("codex", event(world, transcript, "PostToolUse", "call_a", "seq 1 8000",
                                         tool_response="cut")),
               world.hook("codex", event(world, transcript, "Stop", stop_hook_active=False))]
    for result in results:
        assert (result.returncode, result.stdout) == (0, b""), "no answer: Codex's own result stands"
    warnings = b"".join(result.stderr for result in results)
    assert warnings.startswith(b"yarp: ") and warnings.count(b"\n") == 1, warnings
    assert b"seq" not in warnings, "warnings never carry command text"
    assert not os.path.exists(world.archive)


def test_reading_from_marks_equals_reading_the_whole_file(tmp_path, monkeypatch):
    """Read after every few appended lines, each call from its mark: the same evidence as one read of the whole file."""
    import random

    from yarp.agents.codex.broker import evidence

    monkeypatch.setattr(evidence, "SCAN_BLOCK_BYTES", 97)
    log = Transcript(tmp_path / "rollout.jsonl")
    rng = random.Random(5)
    ids = [f"c{n}" for n in range(12)]
    marks: dict = {}
    for step in range(120):
        call_id = rng.choice(ids)
        kind = rng.randrange(4)
        if kind == 0:
            log.called(call_id, "exec_command", {"cmd": f"echo {step}"})
        elif kind == 1:
            log.executed(call_id, f"output {step}\n" * rng.randrange(3), rng.randrange(3))
        elif kind == 2:
            log.model_output(call_id, f"shown {step}")
        else:
            log.write({"type": "event_msg", "payload": {"type": "other", "id": call_id}})
        if step % 7 == 0:
            reading = rng.sample(ids, 5)
            found, ends = evidence.read_since(str(log.path), {c: marks.get(c) for c in reading})
            marks.update(ends)
            whole = read_evidence(str(log.path), reading, enough=lambda e: False)
            assert found == whole, step
            assert all(mark.offset == log.path.stat().st_size for mark in ends.values())


def test_a_mark_is_read_from_and_not_before(tmp_path):
    from yarp.agents.codex.broker import evidence

    log = Transcript(tmp_path / "rollout.jsonl")
    log.model_output("p", "an answer written before the call was begun")
    mark = evidence.mark_at_end(str(log.path))
    log.executed("other", "x\n", 0)
    found, ends = evidence.read_since(str(log.path), {"p": mark})
    assert found["p"] == CallEvidence("p") and ends["p"].offset == log.path.stat().st_size
    log.executed("p", "ran\n", 0)
    found, _ = evidence.read_since(str(log.path), ends)
    assert (found["p"].output, found["p"].model_output) == ("ran\n", None)
    # A mark of a file since replaced (or shrunk) is not trusted: the new file is read from its start.
    os.rename(log.path, tmp_path / "old.jsonl")
    fresh = Transcript(log.path)
    fresh.model_output("p", "shown")
    assert not ends["p"].holds(str(log.path), os.stat(log.path))
    found, _ = evidence.read_since(str(log.path), ends)
    assert found["p"] == CallEvidence("p", model_output="shown")


def test_an_unmarked_call_is_settled_from_the_end_when_the_end_settles_it(tmp_path, monkeypatch):
    from yarp.agents.codex.broker import evidence

    monkeypatch.setattr(evidence, "FIRST_TAIL_BYTES", 400)
    log = Transcript(tmp_path / "rollout.jsonl")
    log.executed("p", "first run\n", 0)  # before the tail: not read when the tail settles the call
    for number in range(20):
        log.executed(f"filler{number}", "y" * 100, 0)
    log.executed("p", "second run\n", 1)
    log.model_output("p", "shown")
    found, ends = evidence.read_since(str(log.path), {"p": None})
    assert found["p"] == CallEvidence("p", "second run\n", 1, "failed", "shown") and ends == {}
    # Not settled at the end: read from the start, and marked at the end.
    found, ends = evidence.read_since(str(log.path), {"filler3": None})
    assert found["filler3"].executed and ends["filler3"].offset == log.path.stat().st_size


def test_an_open_call_does_not_make_every_later_event_read_the_whole_transcript(world, transcript):  # noqa: F811
    """A call Codex never completes stays open; later events read the transcript from where they left it."""
    transcript.called("stuck", "exec_command", {"cmd": "sleep 1000"})
    assert answer(world.hook("codex", event(world, transcript, "PreToolUse", "stuck", "sleep 1000"))) is None
    # An answer for the open call written where only a read of the whole file would find it... is not
    # possible in a real transcript; here it is planted before the call's mark to show what is read.
    lines = transcript.path.read_bytes().splitlines(keepends=True)
    planted = json.dumps({"type": "response_item", "payload": {"type": "function_call_output", "call_id": "stuck",
                                                                "output": "planted"}}).encode() + b"\n"
    transcript.path.write_bytes(b"".join(lines[:1]) + planted + b"".join(lines[1:]))
    for number in range(3):
        call_id = f"next{number}"
        transcript.called(call_id, "exec_command", {"cmd": "true"})
        world.hook("codex", event(world, transcript, "PreToolUse", call_id, "true"))
        transcript.executed(call_id, "", 0)
        world.hook("codex", event(world, transcript, "PostToolUse", call_id, "true", tool_response=""))
        transcript.model_output(call_id, "")
    archived = calls(world.archive)
    assert archived["stuck"]["status"] == "started"  # the planted line, before its mark, was never read
    assert all(archived[f"next{n}"]["status"] == "finished" for n in range(3))
    # The real answer, written after the call began, settles it at the next event.
    transcript.model_output("stuck", "rejected by the user")
    world.hook("codex", event(world, transcript, "Stop"))
    assert calls(world.archive)["stuck"]["status"] == "finished"


def test_an_event_that_begins_a_call_and_reads_open_ones_marks_them_all(tmp_path):
    from yarp.agents.codex.broker import evidence

    log = Transcript(tmp_path / "rollout.jsonl")
    log.called("open", "exec_command", {"cmd": "sleep 9"})
    log.called("new", "exec_command", {"cmd": "true"})
    reading = evidence.read_transcript(str(log.path), begun="new", pending={"open": None}, finishing=None)
    size = log.path.stat().st_size
    assert set(reading.marks) == {"new", "open"}
    assert reading.marks["new"].offset == size and reading.marks["open"].offset == size
    assert reading.called.arguments is not None and reading.settled == []
