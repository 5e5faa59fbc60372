"""The Codex post event's work done ahead: when the transcript shows the call executed.

The broker watches a begun shell call's transcript (`yarp.agents.codex.broker.watch`,
real inotify on a real file) and caps the view and prepares the payloads as soon
as the execution is written, while Codex starts the post hook. What the post
event then stores must be exactly what it would have stored doing the work
itself, and work done for a record a later one superseded must not be used.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time

from broker_helpers import BrokerProcess
from broker_helpers import broker_env  # noqa: F401  (fixture)
from test_hooks import calls, world  # noqa: F401  (fixture)
from test_hooks_codex import Transcript, answer, event, seq, transcript  # noqa: F401  (fixture)

from yarp.wire import operations as ops
from yarp.agents.codex.broker.ahead import work_ahead
from yarp.agents.codex.broker.evidence import Mark, mark_at_end, read_since
from yarp.agents.codex.broker.outcome import Finish
from yarp.agents.codex.broker.watch import TranscriptWatch
from yarp.agents.codex.transcripts.evidence import PERSISTENCE_CUT, CallEvidence

SESSION = ops.Session("codex", "local:1000", "session-1")
REF = "yr_" + "ab" * 16


def _snapshots(prepared) -> list:
    return [(part.operation.kind, part.snapshots) for part in prepared.parts]


def _executed(tmp_path, output: str, exit_code: int = 0) -> tuple[Transcript, Mark]:
    log = Transcript(tmp_path / "rollout.jsonl")
    log.called("c1", "exec_command", {"cmd": "seq 1 9000"})
    mark = mark_at_end(str(log.path))
    log.executed("c1", output, exit_code)
    return log, mark


def test_work_done_ahead_stores_what_the_post_event_would(tmp_path):
    cut = seq(20000)[:30000] + PERSISTENCE_CUT + seq(20000)[-30000:]
    for output, exit_code, cap in ((seq(9000), 0, 5120), (seq(9000), 3, 0), ("small\n", 0, 5120), (cut, 1, 5120)):
        log, mark = _executed(tmp_path / str(len(output) + cap), output, exit_code)
        ends, done = work_ahead(str(log.path), {"c1": mark}, {"c1": (cap, REF)})
        assert set(done) == {"c1"} and ends["c1"].offset == log.path.stat().st_size
        # The post event reads from the mark the work ahead left: the same output, read no further.
        found, _ = read_since(str(log.path), ends)
        evidence = found["c1"]
        finish = Finish(SESSION, "what Codex showed", REF, cap)
        with_ahead, without = finish.prepare(evidence, done["c1"]), finish.prepare(evidence, None)
        assert with_ahead[0].view == without[0].view
        assert [op.kind for op in with_ahead[0].operations] == [op.kind for op in without[0].operations]
        assert _snapshots(with_ahead[1]) == _snapshots(without[1])
        if cap and output == seq(9000):
            assert with_ahead[0].view.startswith(f"Process exited with code {exit_code}\nOutput:\n1\n")
            staged = with_ahead[1].parts[-2].snapshots[0].payload
            assert staged is done["c1"].results[id(done["c1"].result_after)][1], "the payload made ahead is used"


def test_work_done_ahead_is_not_used_for_a_later_record_or_another_cap(tmp_path):
    log, mark = _executed(tmp_path, seq(9000))
    _, done = work_ahead(str(log.path), {"c1": mark}, {"c1": (5120, REF)})
    ahead = done["c1"]
    evidence = CallEvidence("c1", seq(9000), 0, "completed")
    assert ahead.holds(evidence, 5120, REF)
    assert not ahead.holds(CallEvidence("c1", seq(9001), 0, "completed"), 5120, REF)
    assert not ahead.holds(CallEvidence("c1", seq(9000), 1, "completed"), 5120, REF)
    assert not ahead.holds(evidence, 2048, REF) and not ahead.holds(evidence, 5120, "yr_" + "cd" * 16)
    # Not executed yet: nothing is done ahead, and the mark stays usable.
    log2 = Transcript(tmp_path / "other.jsonl")
    start = mark_at_end(str(log2.path))
    log2.model_output("c9", "still thinking")
    ends, done = work_ahead(str(log2.path), {"c9": start}, {"c9": (5120, REF)})
    assert done == {} and ends["c9"].fields == (("model_output", "still thinking"),)


def test_a_line_still_being_written_is_read_whole_next_time(tmp_path):
    """Reading as soon as the file changes may meet a record half written: the mark stays before it."""
    log = Transcript(tmp_path / "rollout.jsonl")
    mark = mark_at_end(str(log.path))
    whole = log.path.stat().st_size
    line = '{"type": "event_msg", "payload": {"type": "item_completed", "item": {"type": "CommandExecution", ' \
           '"id": "c1", "aggregated_output": "ran\\n", "exit_code": 0, "status": "completed"}}}'
    with open(log.path, "a", encoding="utf-8") as handle:
        handle.write(line[:40])
    found, ends = read_since(str(log.path), {"c1": mark})
    assert not found["c1"].executed and ends["c1"].offset == whole
    with open(log.path, "a", encoding="utf-8") as handle:
        handle.write(line[40:] + "\n")
    found, ends = read_since(str(log.path), ends)
    assert (found["c1"].output, found["c1"].exit_code) == ("ran\n", 0)
    assert ends["c1"].offset == log.path.stat().st_size


def test_the_watch_reports_writes_until_the_file_is_forgotten(tmp_path):
    async def scenario() -> list[str]:
        loop = asyncio.get_running_loop()
        seen: list[str] = []
        changed = asyncio.Event()

        def written(path: str) -> None:
            seen.append(path)
            changed.set()

        watch = TranscriptWatch(loop, written)
        assert watch.available
        path = str(tmp_path / "rollout.jsonl")
        with open(path, "w") as handle:
            handle.write("x\n")
        assert watch.watch(path)
        assert not watch.watch(str(tmp_path / "missing.jsonl"))
        with open(path, "a") as handle:
            handle.write("one\n")
            handle.flush()
            handle.write("two\n")
        await asyncio.wait_for(changed.wait(), 5)
        await asyncio.sleep(0.05)
        count = len(seen)
        watch.forget(path)
        with open(path, "a") as handle:
            handle.write("three\n")
        await asyncio.sleep(0.1)
        assert len(seen) == count, "a forgotten file is not reported"
        watch.close()
        return seen

    seen = asyncio.run(scenario())
    assert seen and set(seen) == {str(tmp_path / "rollout.jsonl")}


def test_a_record_written_after_the_work_ahead_wins(world, transcript):  # noqa: F811
    """The execution is written, the broker caps it ahead; then Codex writes a later record of the call
    (as it may when a run is retried): the post event archives the later one and shows its view."""
    transcript.called("call_twice", "exec_command", {"cmd": "seq 1 9000"})
    assert answer(world.hook("codex", event(world, transcript, "PreToolUse", "call_twice", "seq 1 9000"))) is None
    transcript.executed("call_twice", seq(9000), 0)
    time.sleep(0.3)  # the broker reads it and does the work ahead meanwhile
    second = "".join(f"line {i}\n" for i in range(1, 6001))
    transcript.executed("call_twice", second, 7)
    reply = answer(world.hook("codex", event(world, transcript, "PostToolUse", "call_twice", "seq 1 9000",
                                             tool_response="shown")))
    call = calls(world.archive)["call_twice"]
    assert (call["status"], call["is_error"]) == ("finished", 1)
    assert call["snaps"]["source_output/before"] == second.encode()
    view = reply["reason"]
    assert view.startswith("Process exited with code 7\nOutput:\nline 1\n") and view.endswith("line 6000\n")
    assert f"ref={call['ref']}" in view
    assert "incomplete_calls: 0" in world.verify()
    assert os.path.exists(world.archive)


def test_a_broker_watching_transcripts_stops_cleanly_at_idle(broker_env, tmp_path):  # noqa: F811
    """A begun shell call's transcript is watched and its execution written (work ahead starts),
    but no post event comes: the broker's idle exit closes the watch and ends the work ahead,
    with status 0 and nothing but its own log lines on stderr."""
    env = broker_env.with_env(YARP_BROKER_IDLE_MS=400)
    proc = BrokerProcess(broker_env, env=env).wait_ready()
    hook_env = dict(env, YARP_ARCHIVE=broker_env.archive)
    rollout = Transcript(tmp_path / "rollout-idle.jsonl")
    work = tmp_path / "work"
    work.mkdir()

    def hook(payload: dict) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "yarp", "hook", "codex"], input=json.dumps(payload).encode(),
                              env=hook_env, capture_output=True, timeout=60, cwd=work, check=False)

    pre = {"session_id": "idle-session", "turn_id": "t", "transcript_path": str(rollout.path), "cwd": str(work),
           "hook_event_name": "PreToolUse", "model": "m", "permission_mode": "bypassPermissions",
           "tool_name": "Bash", "tool_input": {"command": "seq 1 9000"}, "tool_use_id": "call_idle"}
    rollout.called("call_idle", "exec_command", {"cmd": "seq 1 9000"})
    assert (hook(pre).returncode, proc.proc.poll()) == (0, None)
    rollout.executed("call_idle", seq(9000), 0)
    try:
        assert proc.wait_exit(15) == 0
    finally:
        proc.stop()
    lines = proc.log_text().splitlines()
    assert lines and all(line.startswith("{") for line in lines), lines[-5:]
    events = [e["event"] for e in proc.events()]
    assert "shutdown" in events and "internal_error" not in events
