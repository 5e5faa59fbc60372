"""`yarp run` as transparent as the shell it stands in for.

Every test runs real processes: `python -m yarp run` as a child, the command
it runs, a broker started on demand over its Unix socket, and the SQLite
archive read back read-only (helpers in run_helpers.py). Shell forms that need
redirections or pipes around the runner itself (`>&-`, `2>&1`, `| head`) are
written as `sh -c` / `bash -c` lines that call it.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import textwrap
import time

import orjson
import pytest
from run_helpers import STREAM_KEYS, ArchiveView, close_run_env, make_run_env, only_call, sha, yarp, yrun

from yarp.wire import operations as ops

PY = sys.executable
YARP = f"{shlex.quote(PY)} -m yarp"
REF_RE = re.compile(rb"ref=(yr_[0-9a-f]{32})")


@pytest.fixture
def renv():
    benv = make_run_env()
    try:
        yield benv
    finally:
        close_run_env(benv)


def shell(renv, line: str, *, timeout: float = 60, **kwargs) -> subprocess.CompletedProcess:
    """Run a bash line in which `$YARP` is `python -m yarp`."""
    return subprocess.run(["bash", "-c", line], env=renv.with_env(YARP=YARP), capture_output=True,
                          stdin=subprocess.DEVNULL, timeout=timeout, **kwargs)


def snapshots(renv, call_id: int) -> dict:
    with ArchiveView(renv) as view:
        return {key: view.snapshot(call_id, *key) for key in STREAM_KEYS}


# --- A. pass-through -----------------------------------------------------------------------------


def test_pass_mode_streams_live_and_archives_exactly(renv):
    script = "printf first; sleep 1; printf ' second'; printf oops >&2; seq 1 20000; exit 7"
    proc = subprocess.Popen([PY, "-m", "yarp", "run", "--pass", "--", "sh", "-c", script], env=renv.environ,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        first = os.read(proc.stdout.fileno(), 5)
        assert first == b"first"
        assert proc.poll() is None, "the first bytes arrive while the command still runs"
        rest, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    expected = b"first second" + b"".join(b"%d\n" % i for i in range(1, 20001))
    assert proc.returncode == 7
    assert first + rest == expected, "no view: nothing pruned, capped or marked"
    assert err == b"oops"
    call_id, *_ = only_call(renv)
    streams = snapshots(renv, call_id)
    assert streams[("stdout", "before")] == streams[("stdout", "after")] == expected
    assert streams[("stderr", "before")] == streams[("stderr", "after")] == b"oops"


def test_pass_mode_reader_that_closes_stops_the_producer(renv):
    proc = shell(renv, '$YARP run --pass -- yes | head -n 1; echo "status ${PIPESTATUS[0]}"', timeout=60)
    assert proc.stdout == b"y\nstatus 141\n"  # yes died by SIGPIPE, and so did the runner
    call_id, *_ = only_call(renv)
    with ArchiveView(renv) as view:
        assert orjson.loads(view.snapshot(call_id, "result", "before")) == {"exitCode": 141, "signal": 13}
        out = view.snapshot(call_id, "stdout", "before")
    assert out.startswith(b"y\ny\n") and set(out) <= set(b"y\n"), "what the command wrote is archived"


def test_pass_mode_into_a_file_leaves_the_file_to_the_command(renv, tmp_path):
    """`cat f >> f` is refused as a shell would run it, and a program that seeks in its output
    writes where it seeks; what the command wrote is archived from the file."""
    big = tmp_path / "big"
    big.write_bytes(b"".join(b"%d\n" % i for i in range(1, 20001)))
    proc = shell(renv, f"$YARP run --pass -- cat {big} >> {big}; echo status $?", timeout=60)
    assert proc.stdout == b"status 1\n" and b"input file is output file" in proc.stderr
    assert big.stat().st_size == len(b"".join(b"%d\n" % i for i in range(1, 20001)))
    target = tmp_path / "f"
    target.write_bytes(b"hello world")
    proc = shell(renv, f"printf '%s' 'HELLO' | $YARP run --pass -- dd conv=notrunc bs=1 seek=6 count=5 1<>{target} "
                       f"2>/dev/null", timeout=60)
    assert target.read_bytes() == b"hello HELLO"
    out = tmp_path / "out"
    proc = shell(renv, f"$YARP run --pass -- sh -c 'seq 1 3000; echo e >&2' > {out} 2>&1", timeout=60)
    assert proc.returncode == 0
    with ArchiveView(renv) as view:
        call_id = view.conn.execute("SELECT max(id) FROM tool_calls").fetchone()[0]
        assert view.snapshot(call_id, "stdout", "before") == out.read_bytes()


# --- B. merged streams --------------------------------------------------------------------------------


MERGED = "for i in 1 2 3 4 5 6; do echo out $i; echo err $i >&2; done"
MERGED_BYTES = b"".join(b"out %d\nerr %d\n" % (i, i) for i in range(1, 7))


@pytest.mark.parametrize("flags", ["", "--pass"])
def test_merged_streams_keep_their_interleaving(renv, flags):
    proc = shell(renv, f"$YARP run {flags} -- sh -c {shlex.quote(MERGED)} 2>&1 | cat")
    assert proc.returncode == 0
    assert proc.stdout == MERGED_BYTES
    call_id, *_ = only_call(renv)
    streams = snapshots(renv, call_id)
    assert streams[("stdout", "before")] == MERGED_BYTES, "the merged stream is stored as stdout"
    assert streams[("stderr", "before")] == b""


def test_separate_streams_stay_separate(renv):
    proc = shell(renv, f"$YARP run -- sh -c {shlex.quote(MERGED)} 2>/dev/null | cat")
    assert proc.stdout == b"".join(b"out %d\n" % i for i in range(1, 7))
    call_id, *_ = only_call(renv)
    assert snapshots(renv, call_id)[("stderr", "before")] == b"".join(b"err %d\n" % i for i in range(1, 7))


# --- C. segment calls --------------------------------------------------------------------------------


SEGMENT_FLAGS = ("--archive-agent", "pi", "--archive-account", "me", "--archive-session", "S1",
                 "--archive-parent", "C1")


def _begin_parent(renv) -> str:
    session = ops.Session("pi", "me", "S1", 1_700_000_000_000)
    meta = ops.CallMeta("C1", "bash", 1_700_000_000_000, False, working_directory="/w")
    return renv.request(ops.BeginCall(session, meta, {"command": "x"}, {"command": "y"}, 1_700_000_000_000))[
        "archiveRef"]


def test_segment_calls_are_calls_of_their_own_in_the_adapters_session(renv, tmp_path):
    parent_ref = _begin_parent(renv)
    flags = " ".join(SEGMENT_FLAGS)
    line = (f"cd {shlex.quote(str(tmp_path))} && for i in 1 2; do $YARP run {flags} -- sh -c 'echo seg $0; exit 3' $i;"
            f" done; $YARP run {flags} -- seq 1 30000 | grep -o 'ref=yr_[0-9a-f]*'")
    proc = shell(renv, line)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(b"seg 1\nseg 2\n")
    with ArchiveView(renv) as view:
        rows = view.conn.execute(
            "SELECT c.id, c.source_call_id, c.tool_name, c.status, c.executed, c.is_error, c.requires_streams,"
            " c.working_directory, c.archive_ref FROM tool_calls c JOIN sessions s ON s.id = c.session_id"
            " WHERE s.agent = 'pi' AND s.account = 'me' AND s.source_session_id = 'S1' ORDER BY c.id").fetchall()
        assert [r[1] for r in rows][0] == "C1" and rows[0][8] == parent_ref and rows[0][3] == "started"
        segments = rows[1:]
        assert len(segments) == 3
        for index, row in enumerate(segments[:2], 1):
            call_id, source_id, tool, status, executed, is_error, requires, cwd, _ = row
            assert re.fullmatch(rf"C1/\d{{13}}-\d+", source_id)
            assert (tool, status, executed, is_error, requires, cwd) == ("shell", "finished", 1, 1, 1, str(tmp_path))
            assert view.snapshot(call_id, "stdout", "before") == b"seg %d\n" % index
            assert orjson.loads(view.snapshot(call_id, "result", "before")) == {"exitCode": 3, "signal": None}
            assert orjson.loads(view.snapshot(call_id, "input", "before")) == {
                "argv": ["sh", "-c", "echo seg $0; exit 3", str(index)], "cwd": str(tmp_path)}
        assert len({r[1] for r in segments}) == 3, "unique ids, even in a loop"
        # The capped one's markers name the segment call's own reference.
        assert REF_RE.findall(proc.stdout) == [segments[2][8].encode()]
        assert segments[2][3] == "finished"


@pytest.mark.parametrize("args", [
    ("--archive-agent", "pi", "--archive-account", "me", "--archive-session", "S1", "--archive-parent", "C1",
     "--archive-call", "C1"),
    ("--archive-agent", "pi", "--archive-parent", "C1"),
    ("--archive-agent", "pi", "--archive-account", "me", "--archive-session", "S1", "--archive-parent", "C" * 1020),
])
def test_segment_flag_usage_errors_exit_64(renv, args):
    proc = yarp(renv, "run", *args, "--", "true")
    assert proc.returncode == 64, proc.stderr
    assert proc.stderr.startswith(b"yarp: run: ") or proc.stderr.startswith(b"yarp: yarp run: ")
    assert b"Traceback" not in proc.stderr and not os.path.exists(renv.archive)


def test_segment_usage_errors_take_the_fast_path(renv):
    proc = subprocess.run([PY, "-X", "importtime", "-m", "yarp", "run", "--archive-agent", "pi", "--archive-parent",
                           "C", "--", "true"], env=renv.environ, capture_output=True, stdin=subprocess.DEVNULL,
                          timeout=60)
    assert proc.returncode == 64
    assert b"argparse" not in proc.stderr, "usage errors of the known flags are the fast path's"


def test_begin_with_a_full_identity_is_validated_strictly(renv):
    from yarp.clients.broker import BrokerClient, service_request
    from yarp.errors import ValidationError
    from yarp.paths import resolve_archive

    _begin_parent(renv)
    base = {"step": "begin", "startedAtMs": 1, "argv": ["true"], "cwd": "/"}
    target = {"agent": "pi", "account": "me", "session": "S1", "call": "C1/1-2"}
    bad = [dict(base, target=target),  # a begin names a call of its own
           dict(base, target=dict(target, own=False)),
           dict(base, target=dict(target, own=True, extra=1)),
           dict(base, target={"session": "x", "own": True}),
           dict(base, target=dict(target, own=True), session="x")]
    with BrokerClient(resolve_archive(renv.archive, renv.environ), renv.environ) as client:
        for fields in bad:
            with pytest.raises(ValidationError):
                client.ask(service_request("run", fields), time.monotonic() + 10)
        reply = client.ask(service_request("run", dict(base, target=dict(target, own=True))), time.monotonic() + 10)
        assert reply["archiveRef"].startswith("yr_")


# --- 1. processes left behind -------------------------------------------------------------------


def test_output_of_a_background_child_is_kept(renv):
    script = "(for i in $(seq 1 50); do echo bg $i; sleep 0.01; done) & echo fg"
    proc = yrun(renv, "sh", "-c", script)
    lines = proc.stdout.splitlines()
    assert proc.returncode == 0 and len(lines) == 51, proc.stdout
    assert sorted(lines) == sorted([b"fg"] + [b"bg %d" % i for i in range(1, 51)])
    call_id, _, status, *_ = only_call(renv)
    assert status == "finished"
    assert snapshots(renv, call_id)[("stdout", "before")] == proc.stdout


def test_a_process_left_holding_the_output_does_not_hold_up_the_shell(renv):
    """`./start.sh && curl …` where start.sh leaves a server writing to its stdout: the next
    command runs after a bounded wait, and what the server writes later still reaches the reader."""
    started = time.monotonic()
    proc = shell(renv, '$YARP run -- sh -c "(sleep 4; echo late) & echo fg"; echo next; sleep 0.1', timeout=60)
    lines = proc.stdout.splitlines()
    assert lines[:2] == [b"fg", b"next"] and lines[-1] == b"late"
    assert b"not archived" in proc.stderr
    assert time.monotonic() - started >= 4  # the reader (here bash's caller) still waited for the late bytes
    call_id, *_ = only_call(renv)
    assert snapshots(renv, call_id)[("stdout", "before")] == b"fg\n"


def test_a_detached_server_does_not_delay_the_run(renv, tmp_path):
    log = tmp_path / "server.log"
    started = time.monotonic()
    proc = yrun(renv, "sh", "-c", f"nohup sleep 5 >{log} 2>&1 & echo started")
    assert proc.returncode == 0 and proc.stdout == b"started\n"
    assert time.monotonic() - started < 4


# --- 2. closed standard descriptors ------------------------------------------------------------


def test_closed_stdin_and_stdout_stay_closed_for_the_command(renv):
    probe = ("for fd in 0 1; do [ -e /proc/$$/fd/$fd ] && echo fd $fd open >&2; done; echo err >&2")
    proc = shell(renv, f"$YARP run -- sh -c {shlex.quote(probe)} <&- >&-")
    assert proc.returncode == 0
    assert proc.stderr == b"err\n"
    call_id, *_ = only_call(renv)
    streams = snapshots(renv, call_id)
    assert (streams[("stdout", "before")], streams[("stderr", "before")]) == (b"", b"err\n")


# --- 3. death by signal ------------------------------------------------------------------------


def test_ctrl_c_stops_a_calling_loop(renv):
    loop = subprocess.Popen(["bash", "-c", 'for i in 1 2 3; do $YARP run -- sleep 3; echo "next $?"; done; echo end'],
                            env=renv.with_env(YARP=YARP), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    time.sleep(1.5)
    os.killpg(loop.pid, signal.SIGINT)  # what a terminal's Ctrl-C does, to the foreground group
    out, _ = loop.communicate(timeout=60)
    assert out == b"" and loop.returncode == -signal.SIGINT
    _, _, status, *_ = only_call(renv)
    assert status == "finished"


def test_segfault_is_reported_by_the_calling_shell(renv, tmp_path):
    # Core files allowed for the runner, not for the command (which would write one of the same name).
    proc = shell(renv, "ulimit -c unlimited; $YARP run -- sh -c 'ulimit -c 0; echo before; kill -SEGV $$';"
                 " echo \"status $?\"", cwd=tmp_path)
    assert proc.stdout == b"before\nstatus 139\n"
    assert b"Segmentation fault" in proc.stderr
    assert not [name for name in os.listdir(tmp_path) if name.startswith("core")], "no core file of the runner"


# --- 4. a signal reaches the command once ---------------------------------------------------------


#: A command that traps SIGTERM and counts every delivery: it takes each one with
#: `sigtimedwait` as it arrives, so two deliveries are never folded into one
#: (a handler that only sets a flag, as Python's and the shells' do, would fold them).
COUNTER = textwrap.dedent("""
    import os, signal, sys, time
    count, seconds = sys.argv[1], float(sys.argv[2])
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    with open(count + ".pid", "w") as handle:
        handle.write("%d\\n" % os.getpid())
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        if signal.sigtimedwait({signal.SIGTERM}, left) is not None:
            with open(count, "a") as handle:
                handle.write("TERM\\n")
""")


def _deliveries(path) -> int:
    return path.read_text().count("TERM") if path.exists() else 0


def _wait_started(path, proc) -> None:
    end = time.monotonic() + 60
    while not (path.exists() and path.read_text().endswith("\n")):
        assert time.monotonic() < end and proc.poll() is None, "the command never started"
        time.sleep(0.02)


def test_a_signal_to_the_runner_reaches_a_trapping_command_once(renv, tmp_path):
    count = tmp_path / "count"
    proc = subprocess.Popen([PY, "-m", "yarp", "run", "--", PY, "-c", COUNTER, str(count), "1.5"],
                            env=renv.environ, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    _wait_started(tmp_path / "count.pid", proc)
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=60)
    assert proc.returncode == 0
    assert _deliveries(count) == 1


def test_timeout_reaches_a_trapping_command_once(renv, tmp_path):
    count = tmp_path / "count"
    # `timeout` signals its child (the runner) directly, then its whole process group, the command included.
    proc = subprocess.run(["timeout", "-s", "TERM", "1", PY, "-m", "yarp", "run", "--", PY, "-c", COUNTER, str(count),
                           "2.5"], env=renv.environ, stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    assert proc.returncode == 124  # timed out; the command trapped TERM and ended by itself
    assert _deliveries(count) == 1


# --- 5. closed stdout or stderr keep the status ----------------------------------------------------


def test_closed_stdout_keeps_the_status(renv):
    proc = shell(renv, "$YARP run -- sh -c 'exit 5' >&-")
    assert proc.returncode == 5
    assert b"Traceback" not in proc.stderr and proc.stderr == b""


@pytest.mark.parametrize("script", ["echo hi", "echo hi; echo lost >&2"])
def test_closed_stderr_keeps_the_status(renv, script):
    proc = shell(renv, f"$YARP run -- sh -c {shlex.quote(script)} 2>&-")
    bare = shell(renv, f"sh -c {shlex.quote(script)} 2>&-")
    assert proc.returncode == bare.returncode  # 0, or the shell's own failure to write to a closed stderr
    assert proc.stdout == bare.stdout == b"hi\n"


# --- 6, 7, 10. launching -------------------------------------------------------------------------


def test_empty_command_name_is_127_and_finishes_not_executed(renv):
    proc = yrun(renv, "")
    assert proc.returncode == 127
    assert proc.stderr == b"yarp: : command not found\n"
    _, _, status, executed, is_error, _ = only_call(renv)
    assert (status, executed, is_error) == ("finished", 0, 1)


def test_a_script_without_shebang_runs_with_the_calling_bash(renv, tmp_path):
    """bash runs a script without `#!` itself; so does `yarp run` started by that bash."""
    script = tmp_path / "plain"
    script.write_text('echo "bash=${BASH_VERSION:+yes}"\n')
    os.chmod(script, 0o755)
    plain = shell(renv, f"{script}; true")
    wrapped = shell(renv, f"$YARP run -- {script}; true")
    assert plain.stdout == wrapped.stdout == b"bash=yes\n"


def test_a_script_without_shebang_runs_with_sh(renv, tmp_path):
    script = tmp_path / "plain"
    script.write_text('echo "ran with $# args: $1"\n')
    os.chmod(script, 0o755)
    proc = yrun(renv, str(script), "one")
    assert proc.returncode == 0
    assert proc.stdout == b"ran with 1 args: one\n"


@pytest.mark.parametrize("case", ["missing-name", "missing-path", "directory", "not-executable"])
def test_launch_errors_read_like_bash(renv, tmp_path, case):
    plain = tmp_path / "plain"
    plain.write_text("echo never\n")
    os.chmod(plain, 0o644)
    name, status, message = {
        "missing-name": ("yarp-test-missing", 127, "command not found"),
        "missing-path": (str(tmp_path / "missing"), 127, "No such file or directory"),
        "directory": (str(tmp_path), 126, "Is a directory"),
        "not-executable": (str(plain), 126, "Permission denied"),
    }[case]
    proc = yrun(renv, name)
    assert proc.returncode == status
    assert proc.stderr == f"yarp: {name}: {message}\n".encode()
    bash = subprocess.run(["bash", "-c", shlex.quote(name)], capture_output=True, stdin=subprocess.DEVNULL)
    assert bash.returncode == status and bash.stderr.endswith(f"{name}: {message}\n".encode())


# --- 8. the reader of our stdout goes away ------------------------------------------------------------


def test_view_mode_reader_gone_stops_the_producer(renv):
    proc = shell(renv, '$YARP run -- yes | (exec 0<&-; sleep 0.5); echo "status ${PIPESTATUS[0]}"', timeout=60)
    assert proc.stdout == b"status 141\n"
    call_id, *_ = only_call(renv)
    with ArchiveView(renv) as view:
        assert orjson.loads(view.snapshot(call_id, "result", "before"))["signal"] == 13


def test_a_standalone_run_piped_into_a_reader_of_its_shell_line_passes_through(renv):
    """`yarp run -- yes | head -1` typed at a shell ends as `yes | head -1` does."""
    proc = shell(renv, '$YARP run -- yes | head -n 2; echo "status ${PIPESTATUS[0]}"', timeout=60)
    assert proc.stdout == b"y\ny\nstatus 141\n"
    call_id, *_ = only_call(renv)
    with ArchiveView(renv) as view:
        assert orjson.loads(view.snapshot(call_id, "result", "before"))["signal"] == 13
        out = view.snapshot(call_id, "stdout", "before")
        assert view.snapshot(call_id, "stdout", "after") == out, "passed through: the view is the stream"
    assert len(out) >= 1 << 20 and set(out) <= set(b"y\n")


def test_a_command_substitution_gets_the_exact_output(renv):
    proc = shell(renv, 'x=$($YARP run -- seq 1 20000); printf %s "$x" | wc -c', timeout=60)
    assert proc.stdout.strip() == str(len(b"".join(b"%d\n" % i for i in range(1, 20001))) - 1).encode()


def test_a_slow_producer_reaches_its_pipe_reader_before_it_ends(renv):
    proc = subprocess.Popen(["bash", "-c", "$YARP run -- sh -c 'echo first; sleep 4; echo second' | cat"],
                            env=renv.with_env(YARP=YARP), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
    try:
        assert os.read(proc.stdout.fileno(), 6) == b"first\n"
        assert proc.poll() is None, "the first line arrives while the command still runs"
        assert proc.communicate(timeout=60)[0] == b"second\n"
    finally:
        proc.kill()


def test_a_program_that_reads_the_run_itself_keeps_the_view(renv):
    """An agent's host starts `yarp run` and reads its output: it gets the view, not the raw bytes."""
    proc = yrun(renv, "seq", "1", "300000")
    assert proc.returncode == 0 and len(proc.stdout) <= 6 * 1024 and REF_RE.search(proc.stdout)


# --- 9. a person's terminal -------------------------------------------------------------------------


def test_a_prompt_shows_on_a_terminal_before_the_command_ends(renv):
    import pty

    leader, follower = pty.openpty()
    script = 'import sys; print("name? ", end="", flush=True); name = sys.stdin.readline(); print("hi", name.strip())'
    proc = subprocess.Popen([PY, "-m", "yarp", "run", "--", PY, "-c", script], env=renv.environ,
                            stdin=subprocess.PIPE, stdout=follower, stderr=subprocess.PIPE)
    os.close(follower)
    try:
        import select

        seen = b""
        end = time.monotonic() + 60
        while b"name? " not in seen:
            assert time.monotonic() < end and proc.poll() is None, ("the prompt never showed", seen)
            if select.select([leader], [], [], 0.1)[0]:
                seen += os.read(leader, 1024)
        assert proc.poll() is None, "the prompt shows while the command waits"
        proc.stdin.write(b"ann\n")
        proc.stdin.close()
        proc.wait(timeout=60)
        while True:
            try:
                chunk = os.read(leader, 1024)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
    finally:
        os.close(leader)
        proc.kill()
    assert proc.returncode == 0
    assert seen == b"name? hi ann\r\n", "everything once, no view afterwards"
    call_id, *_ = only_call(renv)
    assert snapshots(renv, call_id)[("stdout", "before")] == b"name? hi ann\n", "archived exactly"


# --- around the archive ---------------------------------------------------------------------------


def test_a_signal_after_the_command_ends_the_wait_for_what_it_left_behind(renv):
    proc = subprocess.Popen([PY, "-m", "yarp", "run", "--", "sh", "-c", "sleep 30 & echo fg"], env=renv.environ,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        time.sleep(1.5)
        assert proc.poll() is None, "the run waits for the process holding its pipe"
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the sleep left behind
    assert proc.returncode == 0, err  # the command's status
    assert out == b"fg\n"
    call_id, _, status, *_ = only_call(renv)
    assert status == "finished"


def test_pass_mode_archive_failure_shows_the_bytes_once(renv):
    renv.request(ops.BeginCall(ops.Session("pi", "me", "s1"), ops.CallMeta("other", "bash", 1, True), {}, {}, 1))
    flags = ("--pass", "--archive-agent", "pi", "--archive-account", "me", "--archive-session", "s1",
             "--archive-call", "never-begun")
    proc = yrun(renv, "sh", "-c", "echo out; echo err >&2; exit 3", flags=flags)
    assert proc.returncode == 3
    assert proc.stdout == b"out\n"
    assert proc.stderr.startswith(b"err\nyarp: archive failed after command execution: ")
    assert proc.stderr.count(b"err\n") == 1
