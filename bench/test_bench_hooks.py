"""Hook and `yarp run` latency: whole processes beside the interpreter floor, in one run.

Run: PYTHONPATH=src .venv/bin/python -m pytest bench/test_bench_hooks.py -q -s
(`-s` prints the summary table; `--benchmark-columns=min,median,max` for the
pytest-benchmark table as well).

Every case is a whole process against one warm broker, timed in the same run
as `python -c pass` (the floor), interleaved round by round so a noisy
machine moves all of them together:

* `floor`: `python -c pass`, the interpreter's own start-up;
* `hook Read pre`: one `yarp hook claude-code` PreToolUse for a Read (one
  begin_call, no rewrite);
* `hook Bash pre+post`: the PreToolUse of a Bash command that is rewritten to
  `yarp run`, then its PostToolUse (raw result, visible result, finish). The
  rewritten command runs between them, untimed, as the agent would run it;
* `yarp run -- true`: a standalone run (its own call, begun and finished).

Budgets (issue "hooks at the interpreter's floor"): one hook event ≤ floor +
8 ms, the Bash pair ≤ 2 × floor + 15 ms, `yarp run -- true` ≤ floor + 8 ms.
The summary also reports each hook process's own CPU (user + system, from
`RUSAGE_CHILDREN`) and the broker's CPU per hook event (`/proc/PID/stat`
ticks over all rounds). These are measurements, not assertions: the bars are
checked by reading the table.

The opencode plugin is measured too (`-k opencode`): its hooks fired in
opencode's own runtime by bench/opencode_driver.ts, beside the floor and a
thin-client pair, and the real opencode's turnaround per call with the plugin
and without (both skipped when opencode is not in the test cache).

`yarp` is the installed console script, as agents run it; processes run with
bytecode caching on and warm rule caches, as an installed package would.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
sys.path.insert(0, os.path.join(HERE, "..", "src"))

from test_bench_run import PY, YARP, _SCRIPT  # noqa: E402
from test_bench_run import warm as warm_run  # noqa: E402, F401  (the shared warm-broker fixture)
from run_helpers import broker_pids  # noqa: E402

ROUNDS = int(os.environ.get("YARP_BENCH_HOOK_ROUNDS", "40"))
SESSION = "bench-hooks-session"


@pytest.fixture(scope="module")
def warm(warm_run):
    """The run benchmark's warm broker and caches, plus a working directory with a file to grep."""
    work = os.path.join(warm_run.root, "work")
    os.makedirs(work, exist_ok=True)
    with open(os.path.join(work, "notes.txt"), "w") as handle:
        handle.write("".join(f"line {i}: needle {i}\n" for i in range(50)))
    warm_run.work = work
    return warm_run


def _event(name: str, tool: str, tool_input: dict, call_id: str, cwd: str, **extra) -> bytes:
    event = {"session_id": SESSION, "transcript_path": "/tmp/none.jsonl", "cwd": cwd,
             "permission_mode": "default", "hook_event_name": name, "tool_name": tool,
             "tool_input": tool_input, "tool_use_id": call_id}
    event.update(extra)
    return json.dumps(event).encode()


class Clock:
    """Wall time and the child's own CPU (user + system) of one whole process."""

    def __init__(self) -> None:
        self.wall: list[float] = []
        self.cpu: list[float] = []

    def run(self, argv: list[str], env: dict, data: bytes | None = None, cwd: str | None = None
            ) -> subprocess.CompletedProcess:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        proc = subprocess.run(argv, env=env, input=data, capture_output=True, cwd=cwd,
                              stdin=None if data is not None else subprocess.DEVNULL)
        self.wall.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        return proc


def _broker_ticks(archive: str) -> int:
    total = 0
    for pid in broker_pids(archive):
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total


def _ms(values: list[float]) -> str:
    ordered = sorted(values)
    return (f"min {ordered[0] * 1000:6.1f}  median {statistics.median(ordered) * 1000:6.1f}  "
            f"max {ordered[-1] * 1000:6.1f} ms")


def _report(benchmark, rows: list[tuple[str, "Clock"]], over: dict[str, float]) -> None:
    """Print each process's wall time and own CPU, then the figures over the floor; keep those in the JSON."""
    width = max(len(key) for key in [*over, *(name for name, _ in rows)]) + 2
    lines = [f"{name:{width}s} {_ms(clock.wall)}  cpu median {statistics.median(clock.cpu) * 1000:5.1f} ms"
             for name, clock in rows]
    lines += [f"{key:{width}s} {value:6.1f}" for key, value in over.items()]
    benchmark.extra_info.update({k: round(v, 2) for k, v in over.items()})
    print("\n" + "\n".join(lines))


def _skip_warmup(*clocks: "Clock", rounds: int = 2) -> None:
    """Warm-up rounds are not part of the comparison."""
    for clock in clocks:
        del clock.wall[:rounds], clock.cpu[:rounds]


def test_hook_and_run_latency_beside_the_floor(benchmark, warm):
    env, cwd = warm.environ, warm.work
    floor, read_pre, bash_pre, bash_post, pair, run_true = (Clock() for _ in range(6))
    hook = [*YARP, "hook", "claude-code"]
    broker_hook_ticks = 0
    hook_events = 0
    counter = iter(range(10**6))

    def one_round() -> None:
        nonlocal broker_hook_ticks, hook_events
        n = next(counter)
        floor.run([PY, "-c", "pass"], env)
        ticks = _broker_ticks(warm.archive)
        proc = read_pre.run(hook, env, _event("PreToolUse", "Read", {"file_path": f"{cwd}/notes.txt"},
                                              f"read-{n}", cwd), cwd)
        assert proc.returncode == 0 and proc.stdout == b"", proc.stderr
        tool_input = {"command": "grep -rn needle .", "description": "find"}
        proc = bash_pre.run(hook, env, _event("PreToolUse", "Bash", tool_input, f"bash-{n}", cwd), cwd)
        answer = json.loads(proc.stdout)
        updated = answer["hookSpecificOutput"]["updatedInput"]
        broker_hook_ticks += _broker_ticks(warm.archive) - ticks
        ran = subprocess.run(["bash", "-c", updated["command"]], env=env, cwd=cwd, capture_output=True)
        assert ran.returncode == 0
        response = {"stdout": ran.stdout.decode(), "stderr": ran.stderr.decode(), "interrupted": False,
                    "isImage": False}
        ticks = _broker_ticks(warm.archive)
        proc = bash_post.run(hook, env, _event("PostToolUse", "Bash", updated, f"bash-{n}", cwd,
                                               tool_response=response), cwd)
        assert proc.returncode == 0 and proc.stderr == b"", proc.stderr
        broker_hook_ticks += _broker_ticks(warm.archive) - ticks
        hook_events += 3
        pair.wall.append(bash_pre.wall[-1] + bash_post.wall[-1])
        pair.cpu.append(bash_pre.cpu[-1] + bash_post.cpu[-1])
        proc = run_true.run([*YARP, "run", "--", "true"], env)
        assert proc.returncode == 0

    benchmark.pedantic(one_round, rounds=ROUNDS, warmup_rounds=2)
    _skip_warmup(floor, read_pre, bash_pre, bash_post, pair, run_true)
    tick = os.sysconf("SC_CLK_TCK")
    base = statistics.median(floor.wall)
    rows = [("python -c pass (floor)", floor), ("hook Read PreToolUse", read_pre),
            ("hook Bash PreToolUse (rewritten)", bash_pre), ("hook Bash PostToolUse", bash_post),
            ("hook Bash Pre + Post", pair), ("yarp run -- true", run_true)]
    low = min(floor.wall)
    over = {
        # Medians over the floor's median, and (steadier on a shared machine) minimum over minimum.
        "hook_read_pre_over_floor_min_ms": (min(read_pre.wall) - low) * 1000,
        "hook_pair_over_2floor_min_ms": (min(pair.wall) - 2 * low) * 1000,
        "run_true_over_floor_min_ms": (min(run_true.wall) - low) * 1000,
        "hook_read_pre_over_floor_ms": (statistics.median(read_pre.wall) - base) * 1000,
        "hook_bash_pre_over_floor_ms": (statistics.median(bash_pre.wall) - base) * 1000,
        "hook_bash_post_over_floor_ms": (statistics.median(bash_post.wall) - base) * 1000,
        "hook_pair_over_2floor_ms": (statistics.median(pair.wall) - 2 * base) * 1000,
        "run_true_over_floor_ms": (statistics.median(run_true.wall) - base) * 1000,
        "broker_cpu_per_hook_event_ms": broker_hook_ticks / tick / max(1, hook_events) * 1000,
        "hook_cpu_per_event_ms": statistics.median(read_pre.cpu + bash_pre.cpu + bash_post.cpu) * 1000,
    }
    _report(benchmark, rows, over)


# --- the real Claude Code: added latency per Bash call ----------------------------------------

CLAUDE_VERSION = "2.1.332"
CLAUDE = os.path.join(os.environ.get("YARP_TEST_CACHE") or "/tmp/yarp-test-cache", f"claude-code-{CLAUDE_VERSION}",
                      "node_modules", ".bin", "claude")
#: Bash calls in one `claude -p` run.
BASH_CALLS = int(os.environ.get("YARP_BENCH_CLAUDE_CALLS", "30"))


def _claude_run(claude_env: dict, cwd: str) -> tuple[list[float], float]:
    """One whole `claude -p` run of `BASH_CALLS` Bash calls: the seconds from each scripted Bash
    answer to the request that carries its result, and the run's wall time.

    Claude Code and the scripted server run in a loopback-only network namespace, as in the tests.
    """
    from netns import loopback_namespace
    from scripted_anthropic import ScriptedAnthropic, Text, ToolUse

    class Timed(ScriptedAnthropic):
        def _answer(self, body):
            answer = super()._answer(body)
            if body.get("tools"):
                self.times.append(time.monotonic())
            return answer

    steps = [ToolUse(f"toolu_b{i}", "Bash", {"command": "grep -rn needle .", "description": "find"})
             for i in range(BASH_CALLS)] + [Text("done")]
    server = Timed(steps)
    server.times = []
    with loopback_namespace(), server:
        env = dict(claude_env, ANTHROPIC_BASE_URL=server.base_url)
        started = time.monotonic()
        proc = subprocess.run([CLAUDE, "-p", "find the needles", "--model", "claude-sonnet-4-5", "--output-format",
                               "json", "--allowedTools", "Bash"], env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=600)
        wall = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr[-800:]
    assert json.loads(proc.stdout)["result"] == "done"
    assert len(server.times) == BASH_CALLS + 1
    return [b - a for a, b in zip(server.times, server.times[1:])], wall


def _base_yarp(root: str, src: str) -> str:
    """A `yarp` console script, like the installed one, that runs the YARP of another tree (`src`)."""
    folder = os.path.join(root, "base-bin")
    os.makedirs(folder, exist_ok=True)
    script = os.path.join(folder, "yarp")
    with open(script, "w") as handle:
        handle.write(f"#!{PY}\nimport sys\nsys.path.insert(0, {os.path.abspath(src)!r})\n"
                     "from yarp.cli import main\nsys.exit(main())\n")
    os.chmod(script, 0o755)
    return script


@pytest.mark.skipif(not os.access(CLAUDE, os.X_OK), reason="the real Claude Code is not installed in the test cache")
def test_real_claude_code_added_latency_per_bash_call(benchmark, warm, tmp_path):
    """Whole `claude -p` runs of `BASH_CALLS` Bash calls with YARP's hooks, with no-op hooks and with
    none (and, with `YARP_BENCH_BASE_SRC=OTHER/src`, with the hooks of another tree), interleaved.

    With YARP's hooks each call pays for two hook processes and `yarp run`
    (the command is rewritten); the difference of the median turnarounds from
    the run without hooks is the end-to-end latency YARP adds to one Bash call,
    and the difference of the runs' wall times over `BASH_CALLS` says the same
    for the whole run. No-op hooks (`true` for the same events) show what
    Claude Code's own hook machinery costs whatever the hook does. The other
    tree runs with its own archive and broker, through a console script like
    the installed one.
    """
    home = tmp_path / "home"
    home.mkdir()
    base_env = dict(warm.environ, HOME=str(home), ANTHROPIC_API_KEY="sk-dummy",
                    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_AUTOUPDATER="1", DISABLE_TELEMETRY="1",
                    PATH=os.path.dirname(_SCRIPT) + os.pathsep + os.environ.get("PATH", ""))
    settings = home / ".claude" / "settings.json"
    installed = subprocess.run([*YARP, "hook", "install", "claude-code"], env=base_env, capture_output=True)
    assert installed.returncode == 0, installed.stderr
    hooked = settings.read_text()

    def commands(value: str) -> str:
        changed = json.loads(hooked)
        for groups in changed["hooks"].values():
            for group in groups:
                for entry in group["hooks"]:
                    entry["command"] = value if value == "true" else entry["command"].replace(YARP[0], value)
        return json.dumps(changed)

    arms: dict[str, tuple[str, dict]] = {"YARP hooks": (hooked, base_env)}
    other = os.environ.get("YARP_BENCH_BASE_SRC")
    if other:
        script = _base_yarp(str(tmp_path), other)
        folder = tmp_path / "base-archive"
        folder.mkdir(mode=0o700)
        arms["base tree's hooks"] = (commands(script), dict(
            base_env, YARP_ARCHIVE=str(folder / "tool-calls.sqlite3"),
            PATH=os.path.dirname(script) + os.pathsep + os.environ.get("PATH", "")))
    arms["no-op hooks"] = (commands("true"), base_env)
    arms["no hooks"] = ("{}\n", base_env)
    turnarounds: dict[str, list[float]] = {name: [] for name in arms}
    walls: dict[str, list[float]] = {name: [] for name in arms}

    rounds = iter(range(10**6))

    def one_round() -> None:
        # Each round starts with the next arm, so no arm always runs first (or right after another).
        names = list(arms)
        shift = next(rounds) % len(names)
        for name in names[shift:] + names[:shift]:
            text, env = arms[name]
            settings.write_text(text)
            times, wall = _claude_run(env, warm.work)
            turnarounds[name].extend(times)
            walls[name].append(wall)

    try:
        benchmark.pedantic(one_round, rounds=int(os.environ.get("YARP_BENCH_CLAUDE_ROUNDS", "3")), warmup_rounds=0)
    finally:
        if other:
            from run_helpers import kill_pid

            for pid in broker_pids(arms["base tree's hooks"][1]["YARP_ARCHIVE"]):
                kill_pid(pid)
    none = statistics.median(turnarounds["no hooks"])
    none_wall = statistics.median(walls["no hooks"])
    print(f"\nreal Claude Code {CLAUDE_VERSION}, {BASH_CALLS} Bash calls per run, "
          f"{len(walls['no hooks'])} runs per arm, interleaved:")
    for name in arms:
        added = statistics.median(turnarounds[name]) - none
        per_call = (statistics.median(walls[name]) - none_wall) / BASH_CALLS
        benchmark.extra_info[f"{name}: added ms per Bash call (turnaround median)"] = round(added * 1000, 1)
        benchmark.extra_info[f"{name}: added ms per Bash call (run wall median / calls)"] = round(per_call * 1000, 1)
        print(f"  {name:18} turnaround {_ms(turnarounds[name])}; run wall median "
              f"{statistics.median(walls[name]):6.2f} s; added per call: {added * 1000:5.1f} ms (turnaround), "
              f"{per_call * 1000:5.1f} ms (wall)")


# --- Codex: one PreToolUse and one PostToolUse beside the floor --------------------------------


def _codex_event(name: str, call_id: str, transcript: str, cwd: str, **extra) -> bytes:
    event = {"session_id": "bench-codex-session", "turn_id": "turn-1", "transcript_path": transcript, "cwd": cwd,
             "hook_event_name": name, "model": "scripted-model", "permission_mode": "bypassPermissions",
             "tool_name": "Bash", "tool_input": {"command": "seq 1 10000"}, "tool_use_id": call_id}
    event.update(extra)
    return json.dumps(event).encode()


def _append(path: str, *records: dict) -> None:
    with open(path, "a", encoding="utf-8") as handle:
        handle.write("".join(json.dumps(record) + "\n" for record in records))


def test_codex_hook_latency_beside_the_floor(benchmark, warm):
    """`yarp hook codex` for one call of the recorded shape, with `python -c pass` in the same rounds.

    Each round: the model's `function_call` is appended to a Codex transcript,
    the PreToolUse runs (begins the call), the `CommandExecution` (the
    48,894-byte output of `seq 1 10000`, exit 0) is appended, the PostToolUse
    runs (archives the output from the transcript and answers with YARP's
    capped view), and the tool output the model got is appended, as Codex
    writes them. Reports the hook processes' wall time and own CPU, and the
    broker's CPU per Codex event.
    """
    env, cwd = warm.environ, warm.work
    transcript = os.path.join(warm.root, f"rollout-{os.getpid()}.jsonl")
    _append(transcript, {"type": "session_meta", "payload": {"id": "bench-codex-session", "cli_version": "0.171.0"}})
    output = "".join(f"{i}\n" for i in range(1, 10001))
    floor, pre, post = Clock(), Clock(), Clock()
    hook = [*YARP, "hook", "codex"]
    broker_ticks = 0
    events = 0
    counter = iter(range(10**6))

    def one_round() -> None:
        nonlocal broker_ticks, events
        n = next(counter)
        call_id = f"call_{os.getpid()}_{n}"
        floor.run([PY, "-c", "pass"], env)
        _append(transcript, {"type": "response_item", "payload": {
            "type": "function_call", "name": "exec_command", "call_id": call_id,
            "arguments": json.dumps({"cmd": "seq 1 10000", "yield_time_ms": 10000})}})
        ticks = _broker_ticks(warm.archive)
        proc = pre.run(hook, env, _codex_event("PreToolUse", call_id, transcript, cwd), cwd)
        assert proc.returncode == 0 and proc.stdout == b"" and proc.stderr == b"", proc.stderr
        broker_ticks += _broker_ticks(warm.archive) - ticks
        _append(transcript, {"type": "event_msg", "payload": {"type": "item_completed", "item": {
            "type": "CommandExecution", "id": call_id, "command": ["/bin/bash", "-lc", "seq 1 10000"],
            "status": "completed", "aggregated_output": output, "exit_code": 0}}})
        ticks = _broker_ticks(warm.archive)
        proc = post.run(hook, env, _codex_event("PostToolUse", call_id, transcript, cwd,
                                                tool_response=output[:5000] + "\n…truncated…\n" + output[-5000:]), cwd)
        assert proc.returncode == 0 and proc.stderr == b"", proc.stderr
        broker_ticks += _broker_ticks(warm.archive) - ticks
        events += 2
        view = json.loads(proc.stdout)
        assert view["decision"] == "block"
        _append(transcript, {"type": "response_item", "payload": {
            "type": "function_call_output", "call_id": call_id, "output": view["reason"]}})

    benchmark.pedantic(one_round, rounds=ROUNDS, warmup_rounds=2)
    _skip_warmup(floor, pre, post)
    tick = os.sysconf("SC_CLK_TCK")
    base, low = statistics.median(floor.wall), min(floor.wall)
    rows = [("python -c pass (floor)", floor), ("hook codex PreToolUse", pre),
            ("hook codex PostToolUse (replaced)", post)]
    over = {
        "codex_pre_over_floor_min_ms": (min(pre.wall) - low) * 1000,
        "codex_post_over_floor_min_ms": (min(post.wall) - low) * 1000,
        "codex_pre_over_floor_ms": (statistics.median(pre.wall) - base) * 1000,
        "codex_post_over_floor_ms": (statistics.median(post.wall) - base) * 1000,
        "broker_cpu_per_codex_event_ms": broker_ticks / tick / max(1, events) * 1000,
        "codex_hook_cpu_per_event_ms": statistics.median(pre.cpu + post.cpu) * 1000,
    }
    _report(benchmark, rows, over)


# --- Gemini CLI: BeforeTool and AfterTool beside the floor -------------------------------------


def _gemini_event(name: str, project: str, tool: str, tool_input: dict, **extra) -> bytes:
    event = {"session_id": "bench-gemini-session",
             "transcript_path": os.path.join(project, "chats", "session-2026-12-04T18-23-benchgem.jsonl"),
             "cwd": project, "hook_event_name": name, "timestamp": "2026-12-04T18:23:36.358Z", "tool_name": tool,
             "tool_input": tool_input}
    event.update(extra)
    return json.dumps(event).encode()


def test_gemini_hook_latency_beside_the_floor(benchmark, warm):
    """`yarp hook gemini` for the recorded shapes, with `python -c pass` in the same rounds.

    Each round: a `read_file` call (BeforeTool begins it; AfterTool with a small
    result finishes it, no answer), a shell `grep` BeforeTool (rewritten to
    `yarp run`; the rewritten command runs untimed between the events, as
    Gemini would run it) and its AfterTool, and a shell call Gemini runs itself
    whose AfterTool carries the 168,967-character output of `seq 1 30000`
    (archived, capped, the view written for Gemini's tail call). Reports the
    hook processes' wall time and own CPU, and the broker's CPU per event.
    """
    env, cwd = warm.environ, warm.work
    project = os.path.join(warm.root, "gemini-tmp", "bench")
    os.makedirs(os.path.join(project, "chats"), exist_ok=True)
    big = "<untrusted_context>\nOutput: " + "".join(f"{i}\n" for i in range(1, 30001)) \
        + "Process Group PGID: 1\n</untrusted_context>"
    floor, before, after, shell_pre, large_after = Clock(), Clock(), Clock(), Clock(), Clock()
    hook = [*YARP, "hook", "gemini"]
    broker_ticks = 0
    events = 0
    counter = iter(range(10**6))

    def one_round() -> None:
        nonlocal broker_ticks, events
        n = next(counter)
        floor.run([PY, "-c", "pass"], env)
        ticks = _broker_ticks(warm.archive)
        read = {"file_path": f"notes-{n}.txt"}
        proc = before.run(hook, env, _gemini_event("BeforeTool", project, "read_file", read), cwd)
        assert proc.returncode == 0 and proc.stdout == b"" and proc.stderr == b"", proc.stderr
        proc = after.run(hook, env, _gemini_event("AfterTool", project, "read_file", read, tool_response={
            "llmContent": "line 1: needle 1\n", "returnDisplay": ""}), cwd)
        assert proc.returncode == 0 and proc.stdout == b"", proc.stderr
        grep = {"command": f"grep -rn needle{n} .", "description": "find"}
        proc = shell_pre.run(hook, env, _gemini_event("BeforeTool", project, "run_shell_command", grep), cwd)
        rewritten = json.loads(proc.stdout)["hookSpecificOutput"]["tool_input"]
        ran = subprocess.run(["bash", "-c", rewritten["command"]], env=env, cwd=cwd, capture_output=True)
        subprocess.run(hook, env=env, cwd=cwd, capture_output=True, input=_gemini_event(
            "AfterTool", project, "run_shell_command", rewritten, tool_response={
                "llmContent": f"<untrusted_context>\nOutput: {ran.stdout.decode() or '(empty)'}\n</untrusted_context>",
                "returnDisplay": ran.stdout.decode()}))
        seq = {"command": f"seq 1 30000 # {n}"}
        subprocess.run(hook, env=env, cwd=cwd, capture_output=True,
                       input=_gemini_event("BeforeTool", project, "run_shell_command", seq))
        proc = large_after.run(hook, env, _gemini_event("AfterTool", project, "run_shell_command", seq, tool_response={
            "llmContent": big, "returnDisplay": big[28:-46]}), cwd)
        assert "tailToolCallRequest" in json.loads(proc.stdout)["hookSpecificOutput"], proc.stderr
        broker_ticks += _broker_ticks(warm.archive) - ticks
        events += 6

    benchmark.pedantic(one_round, rounds=ROUNDS, warmup_rounds=2)
    _skip_warmup(floor, before, after, shell_pre, large_after)
    tick = os.sysconf("SC_CLK_TCK")
    base, low = statistics.median(floor.wall), min(floor.wall)
    rows = [("python -c pass (floor)", floor), ("hook gemini BeforeTool read_file", before),
            ("hook gemini AfterTool read_file", after), ("hook gemini BeforeTool (rewritten)", shell_pre),
            ("hook gemini AfterTool (capped view)", large_after)]
    over = {
        "gemini_before_over_floor_min_ms": (min(before.wall) - low) * 1000,
        "gemini_after_over_floor_min_ms": (min(after.wall) - low) * 1000,
        "gemini_rewrite_over_floor_min_ms": (min(shell_pre.wall) - low) * 1000,
        "gemini_view_over_floor_min_ms": (min(large_after.wall) - low) * 1000,
        "gemini_before_over_floor_ms": (statistics.median(before.wall) - base) * 1000,
        "gemini_view_over_floor_ms": (statistics.median(large_after.wall) - base) * 1000,
        "broker_cpu_per_gemini_event_ms": broker_ticks / tick / max(1, events) * 1000,
        "gemini_hook_cpu_per_event_ms": statistics.median(before.cpu + after.cpu + shell_pre.cpu) * 1000,
    }
    _report(benchmark, rows, over)


# --- opencode: the plugin's hooks per call, beside the floor and a process per event ------------

OPENCODE = os.path.join(os.environ.get("YARP_TEST_CACHE") or "/tmp/yarp-test-cache", "opencode-1.18.33",
                        "node_modules", ".bin", "opencode")
DRIVER = os.path.join(HERE, "opencode_driver.ts")


@pytest.mark.skipif(not os.access(OPENCODE, os.X_OK), reason="the real opencode is not installed in the test cache")
def test_opencode_plugin_latency_beside_the_floor(benchmark, warm):
    """What each tool call pays in the plugin's hooks, in opencode's own runtime, against a warm broker.

    The driver (bench/opencode_driver.ts, run by opencode's embedded Bun) fires
    the hooks as opencode does; each call's time is its before plus its after
    hook. Beside it, in the same run: the floor (`python -c pass`) and a Read
    `PreToolUse` + `PostToolUse` of `yarp hook claude-code`, the thin-client
    transport a `yarp hook opencode` process per event would use (two
    processes per call).
    """
    env, cwd = warm.environ, warm.work
    with open(os.path.join(cwd, "big.txt"), "w") as handle:
        handle.write("".join(f"row {i} lorem ipsum dolor sit amet\n" for i in range(3000)))
    floor, pair = Clock(), Clock()
    hook = [*YARP, "hook", "claude-code"]
    counter = iter(range(10**6))

    def one_round() -> None:
        n = next(counter)
        floor.run([PY, "-c", "pass"], env)
        started = len(pair.wall)
        for name, extra in (("PreToolUse", {}), ("PostToolUse", {"tool_response": {"file": {"content": "line\n"}}})):
            proc = pair.run(hook, env, _event(name, "Read", {"file_path": f"{cwd}/notes.txt"}, f"oc-read-{n}", cwd,
                                              **extra), cwd)
            assert proc.returncode == 0 and proc.stderr == b"", proc.stderr
        pair.wall[started:] = [sum(pair.wall[started:])]
        pair.cpu[started:] = [sum(pair.cpu[started:])]

    benchmark.pedantic(one_round, rounds=ROUNDS, warmup_rounds=2)
    _skip_warmup(floor, pair)
    driver_env = dict(env, BUN_BE_BUN="1", DRIVER_ROUNDS=str(ROUNDS), DRIVER_WORK=cwd, YARP_BIN=YARP[0],
                      PATH=os.path.dirname(_SCRIPT) + os.pathsep + os.environ.get("PATH", ""))
    assert len(YARP) == 1, "the plugin runs one executable: the bench needs the console script"
    ran = subprocess.run([OPENCODE, DRIVER], env=driver_env, cwd=cwd, capture_output=True, text=True, timeout=600)
    assert ran.returncode == 0, ran.stderr[-2000:]
    calls = {name: [t / 1000 for t in values] for name, values in json.loads(ran.stdout).items()}
    base, low = statistics.median(floor.wall), min(floor.wall)
    rows = [("python -c pass (floor)", floor.wall), ("process per event: Read pre + post", pair.wall),
            ("plugin: read", calls["read"]), ("plugin: read, capped (3,000 lines)", calls["readCapped"]),
            ("plugin: bash, not wrapped", calls["bashOriginal"]), ("plugin: bash, wrapped", calls["bashWrapped"]),
            ("  its yarp run (the tool itself)", calls["wrappedRun"])]
    lines = [f"{name:38s} {_ms(values)}" for name, values in rows]
    over = {
        "opencode_read_ms": statistics.median(calls["read"]) * 1000,
        "opencode_read_min_ms": min(calls["read"]) * 1000,
        "opencode_bash_original_over_floor_ms": (statistics.median(calls["bashOriginal"]) - base) * 1000,
        "opencode_bash_original_over_floor_min_ms": (min(calls["bashOriginal"]) - low) * 1000,
        "opencode_bash_wrapped_over_floor_ms": (statistics.median(calls["bashWrapped"]) - base) * 1000,
        "opencode_read_capped_ms": statistics.median(calls["readCapped"]) * 1000,
        "process_per_event_pair_over_2floor_ms": (statistics.median(pair.wall) - 2 * base) * 1000,
        "process_per_event_pair_over_2floor_min_ms": (min(pair.wall) - 2 * low) * 1000,
    }
    lines += [f"{key:38s} {value:6.1f}" for key, value in over.items()]
    benchmark.extra_info.update({k: round(v, 2) for k, v in over.items()})
    print("\n" + "\n".join(lines))


def _opencode_turnarounds(env: dict, cwd: str, calls: int) -> tuple[list[float], list[float]]:
    """Seconds from each scripted answer to the request carrying its result: `calls` reads, then as many
    wrapped bash calls. opencode and the scripted server run in a loopback-only network namespace."""
    from agent_packages import opencode_config
    from netns import loopback_namespace
    from scripted_model import ScriptedModel, Text, ToolCall

    class Timed(ScriptedModel):
        def answer(self, path, body):
            if body.get("tools"):
                self.times.append(time.monotonic())
            return super().answer(path, body)

    steps = ([ToolCall(f"call_r{i}", "read", {"filePath": "notes.txt"}) for i in range(calls)]
             + [ToolCall(f"call_b{i}", "bash", {"command": "grep -rn needle .", "description": "find"})
                for i in range(calls)] + [Text("done")])
    server = Timed(steps)
    server.times = []
    with loopback_namespace(), server:
        proc = subprocess.run([OPENCODE, "run", "find the needles"], cwd=cwd, stdin=subprocess.DEVNULL,
                              env=dict(env, OPENCODE_CONFIG_CONTENT=opencode_config(server.base_url)),
                              capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("done"), proc.stderr[-800:]
    gaps = [b - a for a, b in zip(server.times, server.times[1:])]
    return gaps[:calls], gaps[calls:]


@pytest.mark.skipif(not os.access(OPENCODE, os.X_OK), reason="the real opencode is not installed in the test cache")
def test_real_opencode_added_latency_per_call(benchmark, warm, tmp_path):
    """The same script (reads, then bash calls `yarp plan` wraps) with the plugin installed and without, alternated.

    The difference of the median turnarounds is what the plugin adds to one call
    of each kind, end to end: its hooks, and for bash `yarp plan` and `yarp run`.
    """
    from agent_packages import seed_opencode_config

    home = tmp_path / "home"
    env = {key: value for key, value in warm.environ.items() if not key.startswith(("XDG_CONFIG", "XDG_DATA"))}
    env.update(HOME=str(home), PWD=warm.work, XDG_CONFIG_HOME=str(home / ".config"),
               XDG_DATA_HOME=str(home / ".local" / "share"),
               PATH=os.path.dirname(_SCRIPT) + os.pathsep + os.environ.get("PATH", ""))
    installed = subprocess.run([*YARP, "hook", "install", "opencode"], env=env, capture_output=True)
    assert installed.returncode == 0, installed.stderr
    config = home / ".config" / "opencode"
    seed_opencode_config(config)
    entry = config / "plugin" / "yarp.ts"
    text = entry.read_bytes()
    subprocess.run(["git", "init", "-q"], cwd=warm.work, check=True)
    turnarounds = {(kind, plugin): [] for kind in ("read", "bash") for plugin in (True, False)}
    calls = 5

    def one_pair() -> None:
        for plugin in (True, False):
            if plugin:
                entry.write_bytes(text)
            else:
                entry.unlink()
            reads, bashes = _opencode_turnarounds(env, warm.work, calls)
            turnarounds[("read", plugin)].extend(reads)
            turnarounds[("bash", plugin)].extend(bashes)
        entry.write_bytes(text)

    benchmark.pedantic(one_pair, rounds=int(os.environ.get("YARP_BENCH_OPENCODE_ROUNDS", "3")), warmup_rounds=0)
    lines = ["real opencode, turnaround per call:"]
    for kind in ("read", "bash"):
        with_plugin, without = turnarounds[(kind, True)], turnarounds[(kind, False)]
        added = statistics.median(with_plugin) - statistics.median(without)
        benchmark.extra_info[f"{kind}_added_ms"] = round(added * 1000, 1)
        lines += [f"  {kind}, plugin     {_ms(with_plugin)}", f"  {kind}, no plugin  {_ms(without)}",
                  f"  {kind}, each (ms): {[round(t * 1000) for t in with_plugin]} / {[round(t * 1000) for t in without]}",
                  f"  {kind}: added by the plugin (median) {added * 1000:.1f} ms"]
    print("\n" + "\n".join(lines))
