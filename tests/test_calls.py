"""`yarp calls` and `yarp show REF` as a person runs them: real archives, real processes, a real terminal.

The archive holds calls of five agents whose shell tools are named five ways, a read, a search still
running, a preflight failure, and one of `yarp doctor`'s probe calls; each test asks the real CLI.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import time

import pytest
from archive_factory import ArchiveFactory, run_yarp, yarp_env
from broker_helpers import broker_env  # noqa: F401  (fixture)
from terminal import on_a_terminal

from yarp.archive.calls.selection import DRIVER_ROWS, PROBE_AGENT, CallFilter, select
from yarp.wire import operations as ops

NOW = int(time.time() * 1000)
MIN = 60_000
HOME = "/home/tester"
ZONE = "Asia/Kolkata"  # +05:30 all year: local times are not UTC in these tests


def _session(agent: str, session: str) -> ops.Session:
    return ops.Session(agent, "tester", session, NOW - 600 * MIN)


def _call(f: ArchiveFactory, session: ops.Session, call_id: str, tool: str, value: object, *, ago_min: int,
          took_ms: int | None = 1500, cwd: str | None = f"{HOME}/proj", stdout: bytes | None = None,
          stdout_after: bytes | None = None, result: object = None, is_error: bool = False,
          executed: bool = True) -> str:
    """One call from begin to finish (`took_ms` None: left started); its archive reference."""
    f.session = session
    started = NOW - ago_min * MIN
    meta = ops.CallMeta(call_id, tool, started, stdout is not None, "prov", "model-1", cwd)
    ref = f.store.apply_operation(ops.BeginCall(session, meta, value, value, started)).archive_ref
    if took_ms is None:
        return ref
    if stdout is not None:
        files = [f._file(data) for data in (stdout, b"", stdout if stdout_after is None else stdout_after, b"")]
        f.store.apply_operation(ops.CaptureStreams(session, call_id, started + 1, *files))
    body = {"content": [{"type": "text", "text": "done"}]} if result is None else result
    if executed:
        f.store.apply_operation(ops.ResultBefore(session, call_id, body, started + 2))
    f.store.apply_operation(ops.FinishCall(session, call_id, body, is_error, executed, started + took_ms))
    return ref


@pytest.fixture(scope="module")
def arch(tmp_path_factory):
    root = tmp_path_factory.mktemp("calls")
    path = root / "archive" / "tool-calls.sqlite3"
    refs = {}
    pi, claude = _session("pi", "pi-1111"), _session("claude-code", "cc-abcdef-0001")
    gemini, person = _session("gemini", "gm-1"), _session("yarp-run", "run-host-1")
    with ArchiveFactory(path) as f:
        refs["pytest"] = _call(f, pi, "p1", "bash", {"command": "cd proj && pytest -q tests"}, ago_min=300,
                               took_ms=83_000, stdout=b"F\n" * 4000 + b"zq-needle-7731 failed\n",
                               stdout_after=b"1 failed\n", is_error=True,
                               result={"content": [{"type": "text", "text": "1 failed\nCommand exited with code 1"}]})
        refs["ls"] = _call(f, claude, "c1", "Bash", {"command": "ls -la", "description": "list"}, ago_min=200,
                           took_ms=40, cwd=f"{HOME}/proj/sub", result={"stdout": "a\nb\n", "stderr": ""})
        refs["read"] = _call(f, claude, "c2", "Read", {"file_path": f"{HOME}/proj/a.py"}, ago_min=100, took_ms=5)
        refs["make"] = _call(f, gemini, "g1", "run_shell_command", {"command": "make build"}, ago_min=50,
                             is_error=True, cwd="/srv/build",
                             result={"llmContent": "Command: make build\nExit Code: 2\nerror: boom"})
        refs["echo"] = _call(f, person, "1", "shell", {"argv": ["echo", "hi"], "cwd": "/tmp/x"}, ago_min=20,
                             cwd="/tmp/x", stdout=b"hi\n")
        refs["grep"] = _call(f, claude, "c3", "Grep", {"pattern": "TODO", "path": f"{HOME}/proj"}, ago_min=10,
                             took_ms=None)
        refs["blocked"] = _call(f, pi, "p2", "bash", {"command": "rm -rf /"}, ago_min=5, executed=False,
                                is_error=True, result={"error": "blocked"})
        refs["probe"] = _call(f, _session(PROBE_AGENT, "doctor"), "capture/1-2", "shell", {"argv": ["true"]},
                              ago_min=1, stdout=b"")
    home = root / "home"
    home.mkdir()
    return path, refs, home


def calls(arch, *args, env: dict | None = None):
    path, _, home = arch
    if env is None:
        return run_yarp("calls", *args, "--archive", str(path), home=home)
    import subprocess

    return subprocess.run([sys.executable, "-m", "yarp", "calls", *args, "--archive", str(path)],
                          env={**yarp_env(home), **env}, capture_output=True, timeout=60)


def _refs_of(result) -> list[str]:
    return [line.split()[0] for line in result.stdout.decode().splitlines()]


def _json(result) -> list[dict]:
    return [json.loads(line) for line in result.stdout.decode().splitlines()]


# --- the list ------------------------------------------------------------------------------------------


def test_one_line_per_call_newest_first_with_what_tells_them_apart(arch):
    _, refs, _ = arch
    done = calls(arch, env={"TZ": ZONE, "HOME": HOME})
    assert done.returncode == 0 and done.stderr == b""
    lines = done.stdout.decode().splitlines()
    order = ["blocked", "grep", "echo", "make", "read", "ls", "pytest"]  # the probe is not the user's
    assert [line.split()[0] for line in lines] == [refs[name] for name in order]
    by_name = dict(zip(order, lines))
    # reference, local start time, agent, tool, status, duration, output size, cut, directory, gist
    pytest_line = by_name["pytest"].split()
    assert pytest_line[1:] == [*_local(NOW - 300 * MIN), "pi", "bash", "exit", "1", "1m23s", "7.8K", "cut",
                               "~/proj", "cd", "proj", "&&", "pytest", "-q", "tests"]
    assert by_name["ls"].split()[3:] == ["claude-code", "Bash", "ok", "40ms", "31B", "~/proj/sub", "ls", "-la"]
    assert by_name["read"].split()[3:] == ["claude-code", "Read", "ok", "5ms", "43B", "~/proj", "~/proj/a.py"
                                           .replace("~", HOME)]
    assert by_name["make"].split()[3:8] == ["gemini", "run_shell_command", "exit", "2", "1.5s"]
    assert by_name["echo"].split()[3:] == ["yarp-run", "shell", "ok", "1.5s", "3B", "/tmp/x", "echo", "hi"]
    assert by_name["grep"].split()[3:] == ["claude-code", "Grep", "incomplete", "-", "-", "~/proj", "TODO",
                                           f"{HOME}/proj"]
    assert by_name["blocked"].split()[3:6] == ["pi", "bash", "not-run"]
    # Columns line up: after the widest agent (claude-code) and tool (run_shell_command), every status
    # starts in one column.
    column = len(refs["pytest"]) + 1 + 19 + 1 + len("claude-code") + 1 + len("run_shell_command") + 1
    assert [line[column:].split()[0] for line in lines] == ["not-run", "incomplete", "ok", "exit", "ok", "ok", "exit"]


def _local(ms: int) -> list[str]:
    code = f"from yarp.times import format_local; print(format_local({ms}))"
    import subprocess

    return subprocess.run([sys.executable, "-c", code], env={**os.environ, "TZ": ZONE}, capture_output=True,
                          text=True, check=True).stdout.split()


def test_json_lines_carry_raw_values(arch):
    _, refs, _ = arch
    rows = {row["ref"]: row for row in _json(calls(arch, "--json"))}
    row = rows[refs["pytest"]]
    assert row == {"ref": refs["pytest"], "agent": "pi", "account": "tester", "session": "pi-1111", "tool": "bash",
                   "gist": "cd proj && pytest -q tests", "cwd": f"{HOME}/proj", "started_at_ms": NOW - 300 * MIN,
                   "finished_at_ms": NOW - 300 * MIN + 83_000, "duration_ms": 83_000, "status": "error",
                   "exit_code": 1, "output_bytes": 8022, "view_bytes": 9, "cut": True}
    assert rows[refs["grep"]]["finished_at_ms"] is None and rows[refs["grep"]]["status"] == "incomplete"
    assert rows[refs["blocked"]]["status"] == "not-run"
    assert refs["probe"] not in rows


@pytest.mark.parametrize(("args", "expected"), [
    (("--tool", "shell"), ["blocked", "echo", "make", "ls", "pytest"]),  # every agent's shell tool
    (("--tool", "bash"), ["blocked", "echo", "make", "ls", "pytest"]),  # the name people say for it
    (("--tool", "READ"), ["read"]),  # any case
    (("--tool", "grep", "--tool", "read"), ["grep", "read"]),
    (("--tool", "nosuchtool"), []),
    (("--agent", "claude-code"), ["grep", "read", "ls"]),
    (("--agent", "Pi", "--agent", "gemini"), ["blocked", "make", "pytest"]),
    (("--session", "cc-abc"), ["grep", "read", "ls"]),  # the beginning of an id
    (("--session", "pi-1111"), ["blocked", "pytest"]),
    (("--status", "error"), ["make", "pytest"]),
    (("--status", "ok"), ["echo", "read", "ls"]),
    (("--status", "incomplete"), ["grep"]),
    (("--status", "not-run"), ["blocked"]),
    (("--cwd", f"{HOME}/proj"), ["blocked", "grep", "read", "ls", "pytest"]),  # the directory and below it
    (("--cwd", f"{HOME}/proj/sub/"), ["ls"]),
    (("--cwd", f"{HOME}/pro"), []),  # a directory, not a prefix of a name
    (("--since", "60m"), ["blocked", "grep", "echo", "make"]),
    (("--since", "4h", "--until", "90m"), ["read", "ls"]),
    (("--until", "2h", "--tool", "shell", "--agent", "claude-code"), ["ls"]),
    (("-n", "2"), ["blocked", "grep"]),
    (("--agent", PROBE_AGENT), ["probe"]),  # the probes, asked for by name
])
def test_filters(arch, args, expected):
    _, refs, _ = arch
    done = calls(arch, *args)
    assert _refs_of(done) == [refs[name] for name in expected]
    assert done.returncode == (0 if expected else 1)


def test_cwd_is_relative_to_here(arch):
    path, refs, home = arch
    import subprocess

    os.makedirs(f"{home}/srv/build", exist_ok=True)
    done = subprocess.run([sys.executable, "-m", "yarp", "calls", "--cwd", ".", "--archive", str(path)],
                          env=yarp_env(home), capture_output=True, cwd="/srv" if os.path.isdir("/srv") else "/",
                          timeout=60)
    if os.path.isdir("/srv"):
        assert _refs_of(done) == [refs["make"]]
    else:  # at / every absolute directory is below
        assert len(_refs_of(done)) == 7


def test_text_finds_calls_by_their_output(arch):
    _, refs, _ = arch
    done = calls(arch, "--text", "ZQ-NEEDLE-\\d+", "-i")
    assert _refs_of(done) == [refs["pytest"]] and done.returncode == 0
    assert calls(arch, "--text", "zq-needle", "--agent", "gemini").returncode == 1
    # -m's twin: at -n matching calls it stops and says what it did not search.
    stopped = calls(arch, "--text", "i", "-n", "1")
    assert len(_refs_of(stopped)) == 1
    assert stopped.stderr.decode().startswith("yarp calls: stopped at 1 matching call(s) (-n 1); searched the newest")


def test_usage_errors(arch):
    for args in (("--status", "fine"), ("--since", "soon"), ("--since", "1h", "--until", "2h"), ("-n", "-1"),
                 ("-F",), ("--color", "sometimes")):
        done = calls(arch, *args)
        assert done.returncode == 64, args
        assert done.stderr.startswith(b"yarp: ") and done.stderr.count(b"\n") == 1


def test_colour_and_width_on_a_terminal_plain_in_a_pipe(arch):
    path, refs, home = arch
    argv = [sys.executable, "-m", "yarp", "calls", "--archive", str(path)]
    _, screen = on_a_terminal(argv, yarp_env(home), columns=140)
    lines = screen.decode().splitlines()
    assert "\033[33m" + refs["pytest"] + "\033[0m" in screen.decode()  # the reference in yellow
    assert "\033[31mexit 1\033[0m" in screen.decode() and "\033[32mok\033[0m" in screen.decode()
    assert len(lines) == 7 and all(_visible(line) <= 140 for line in lines)
    assert any(line.rstrip("\r").endswith("\u2026") for line in lines)  # the pytest line's gist gave way
    _, plain = on_a_terminal(argv, {**yarp_env(home), "NO_COLOR": "1"}, columns=140)
    assert b"\033[" not in plain
    piped = calls(arch)
    assert b"\033[" not in piped.stdout
    forced = calls(arch, "--color", "always")
    assert b"\033[33m" in forced.stdout


def _visible(line: str) -> int:
    import re

    return len(re.sub(r"\033\[[0-9;]*m", "", line.rstrip("\r")))


def test_search_listing_uses_the_same_tool_names_and_leaves_the_probe_out(arch):
    path, refs, home = arch
    listed = run_yarp("search", "--tool", "shell", "--json", "--archive", str(path), home=home)
    found = [c["ref"] for c in json.loads(listed.stdout)["calls"]]
    assert found == [refs[n] for n in ("blocked", "echo", "make", "ls", "pytest")]
    everything = run_yarp("search", "-m", "100", "--json", "--archive", str(path), home=home)
    assert refs["probe"] not in everything.stdout.decode()


# --- one call ------------------------------------------------------------------------------------------


def test_show_prints_the_whole_record(arch):
    path, refs, home = arch
    import subprocess

    done = subprocess.run([sys.executable, "-m", "yarp", "show", refs["pytest"], "--archive", str(path)],
                          env={**yarp_env(home), "TZ": ZONE}, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    text = done.stdout.decode()
    assert text.startswith(f"{refs['pytest']}  exit 1\n")
    for expected in ("agent:    pi (account tester)\n", "session:  pi-1111\n", "call id:  p1\n",
                     "tool:     bash (wrapped: exact streams)\n", "model:    prov model-1\n", f"cwd:      {HOME}/proj\n",
                     "+05:30 (1m23s)\n", '"command": "cd proj && pytest -q tests"',
                     "  stdout           7.8K  complete=true\n",
                     f"  yarp read {refs['pytest']} stdout 1:40\n",
                     "view (what the agent was shown); cut\n", "  [stdout, 9B]\n  1 failed\n\nsnapshots\n",
                     "  stdout/before            7.8K  zstd"):
        assert expected in text, expected
    assert "zq-needle" not in text  # the exact output is read with yarp read, not shown here


def test_show_json_and_errors(arch):
    path, refs, home = arch
    shown = run_yarp("show", refs["make"], "--json", "--archive", str(path), home=home)
    record = json.loads(shown.stdout)
    assert record["ref"] == refs["make"] and record["exit_code"] == 2 and record["input"] == {"command": "make build"}
    assert [s["subject"] + "/" + s["stage"] for s in record["snapshots"]] == \
        ["input/before", "input/after", "result/before", "result/after"]
    assert record["view"][0]["name"] == "result" and "Exit Code: 2" in record["view"][0]["text"]
    assert run_yarp("show", "yr_nothex", "--archive", str(path), home=home).returncode == 65
    unknown = run_yarp("show", "yr_" + "0" * 32, "--archive", str(path), home=home)
    assert unknown.returncode == 65 and unknown.stderr == b"yarp: no archived call has this reference\n"


# --- the index each filter walks ----------------------------------------------------------------------


def test_a_rare_filter_walks_its_own_index_a_common_one_the_start_times(tmp_path):
    path = tmp_path / "big" / "tool-calls.sqlite3"
    session = _session("pi", "big")
    with ArchiveFactory(path, session=session) as f:
        pending = []
        for n in range(DRIVER_ROWS + 50):
            tool = "rare" if n % 1000 == 0 else "bash"
            meta = ops.CallMeta(f"c{n}", tool, NOW - n * 1000, False, None, None, "/w")
            pending.append(_prepared(ops.BeginCall(session, meta, {"command": f"c{n}"}, {"command": f"c{n}"},
                                                   NOW - n * 1000)))
            if len(pending) == 512:
                f.store.apply_batch(pending)
                pending = []
        f.store.apply_batch(pending)
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        plans = {}
        for name, flt in (("all", CallFilter()), ("rare", CallFilter(tools=("rare",))),
                          ("common", CallFilter(tools=("shell",))), ("recent", CallFilter(since_ms=NOW - 60_000,
                                                                                           tools=("shell",)))):
            selection = select(conn, flt, limit=21)
            clauses, params = selection.where()
            sql = (f"SELECT id FROM tool_calls WHERE {' AND '.join(clauses) or '1'} {selection.order_by()} LIMIT 21")
            plans[name] = (selection.driver, " ".join(r[3] for r in conn.execute("EXPLAIN QUERY PLAN " + sql, params)))
    finally:
        conn.close()
    assert plans["all"][0] == "time" and "tool_calls_started_at_idx" in plans["all"][1]
    assert "TEMP B-TREE" not in plans["all"][1]
    assert plans["rare"][0] == "tool" and "tool_calls_tool_name_idx" in plans["rare"][1]
    assert plans["common"][0] == "time" and "TEMP B-TREE" not in plans["common"][1]
    assert plans["recent"][0] == "time" and "started_at_ms>?" in plans["recent"][1]


def _prepared(operation):
    from yarp.archive.prepare import prepare

    return prepare(operation)


# --- yarp doctor's probe -------------------------------------------------------------------------------


def test_doctor_probe_is_archived_as_the_probes_and_neither_listed_nor_counted(broker_env):  # noqa: F811
    import subprocess

    env = broker_env.with_env(YARP_ARCHIVE=broker_env.archive)

    def yarp(*argv: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "yarp", *argv], env=env, capture_output=True, text=True,
                              timeout=120)

    for _ in range(2):  # every run of doctor archives one more probe call
        checks = json.loads(yarp("doctor", "--json").stdout)["checks"]
        assert [c["status"] for c in checks if c["name"] == "capture"] == ["ok"]
    assert yarp("run", "--", "echo", "mine").returncode == 0
    listed = yarp("calls", "--json")
    assert [json.loads(line)["gist"] for line in listed.stdout.splitlines()] == ["echo mine"]
    probes = [json.loads(line) for line in yarp("calls", "--agent", PROBE_AGENT, "--json").stdout.splitlines()]
    assert [(p["agent"], p["session"], p["gist"], p["status"]) for p in probes] == [(PROBE_AGENT, "doctor", "true",
                                                                                      "ok")] * 2
    assert json.loads(yarp("archive", "savings", "--json").stdout)["total"]["calls"] == 1
    searched = json.loads(yarp("search", "--json").stdout)["calls"]
    assert len(searched) == 1
