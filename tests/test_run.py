"""`yarp run` end to end: real commands, a real broker started on demand, a real archive.

Each test runs `python -m yarp run` as a child process in an isolated HOME /
XDG tree with a short private runtime directory, then reads the archive back
read-only and compares exact bytes (SHA-256) with what the command wrote.
"""

from __future__ import annotations

import importlib.util
import os
import re
import signal
import sqlite3
import stat
import subprocess
import sys
import textwrap
import time

import orjson
import pytest
from run_helpers import (
    STREAM_KEYS,
    ArchiveView,
    close_run_env,
    file_sha,
    make_run_env,
    only_call,
    sha,
    yarp,
    yrun,
)

from yarp.wire import operations as ops

PY = sys.executable
REF_RE = re.compile(rb"ref=(yr_[0-9a-f]{32})")
HAVE_SEARCH = importlib.util.find_spec("yarp.commands.search") is not None
HAVE_READ = importlib.util.find_spec("yarp.commands.read") is not None


@pytest.fixture
def renv():
    benv = make_run_env()
    try:
        yield benv
    finally:
        close_run_env(benv)


def assert_streams_archived(view: ArchiveView, call_id: int, stdout: bytes, stderr: bytes) -> None:
    assert view.snapshot_keys(call_id) >= set(STREAM_KEYS)
    assert view.snapshot_sha(call_id, "stdout", "before") == sha(stdout)
    assert view.snapshot_sha(call_id, "stderr", "before") == sha(stderr)


# --- exact bytes -------------------------------------------------------------------


def test_binary_and_invalid_utf8_streams_are_archived_and_shown_exactly(renv):
    out = bytes(range(256)) * 4 + b"\xff\xfe\xc3(\x00end"
    err = b"caf\xc3\xa9 \xe2\x82 broken\r\n\x1b[31mred\x1b[0m"
    script = f"import sys; sys.stdout.buffer.write({out!r}); sys.stderr.buffer.write({err!r})"
    proc = yrun(renv, PY, "-c", script)
    assert proc.returncode == 0
    assert proc.stdout == out
    assert proc.stderr == err
    call_id, ref, status, executed, is_error, requires = only_call(renv)
    assert (status, executed, is_error, requires) == ("finished", 1, 0, 1)
    with ArchiveView(renv) as view:
        assert_streams_archived(view, call_id, out, err)
        # Nothing was pruned, so before and after share one payload.
        assert view.snapshot_sha(call_id, "stdout", "after") == sha(out)
        assert view.snapshot(call_id, "stdout", "before") == out
        assert view.snapshot(call_id, "stderr", "before") == err
        result = orjson.loads(view.snapshot(call_id, "result", "before"))
        assert result == {"exitCode": 0, "signal": None}
        inputs = orjson.loads(view.snapshot(call_id, "input", "before"))
        assert inputs["argv"] == [PY, "-c", script]
        assert inputs["cwd"] == os.getcwd()


@pytest.mark.parametrize("code", [0, 1, 255])
def test_exit_status_is_the_commands(renv, code):
    proc = yrun(renv, "sh", "-c", f"echo out; echo err >&2; exit {code}")
    assert proc.returncode == code
    assert (proc.stdout, proc.stderr) == (b"out\n", b"err\n")
    _, _, status, executed, is_error, _ = only_call(renv)
    assert (status, executed, is_error) == ("finished", 1, int(code != 0))


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT])
def test_death_by_signal_is_128_plus_n_and_archived(renv, signum):
    proc = yrun(renv, "sh", "-c", f"echo before; kill -{int(signum)} $$")
    # The runner dies by the command's signal: its caller sees what a shell would.
    assert proc.returncode == -signum
    assert proc.stdout == b"before\n"
    call_id, *_ = only_call(renv)
    with ArchiveView(renv) as view:
        assert orjson.loads(view.snapshot(call_id, "result", "before")) == {
            "exitCode": 128 + signum, "signal": int(signum)}
        assert_streams_archived(view, call_id, b"before\n", b"")


def test_interleaved_stdout_and_stderr_stay_separate_and_exact(renv):
    script = textwrap.dedent("""
        import os
        for i in range(400):
            os.write(1 if i % 3 else 2, b"line %d on %s\\n" % (i, b"out" if i % 3 else b"err"))
    """)
    proc = yrun(renv, PY, "-c", script)
    expected_out = b"".join(b"line %d on out\n" % i for i in range(400) if i % 3)
    expected_err = b"".join(b"line %d on err\n" % i for i in range(400) if not i % 3)
    call_id, ref, *_ = only_call(renv)
    with ArchiveView(renv) as view:
        assert_streams_archived(view, call_id, expected_out, expected_err)
        after_out = view.snapshot(call_id, "stdout", "after")
        after_err = view.snapshot(call_id, "stderr", "after")
    # Over the 5,120-byte cap: the visible form is exactly the archived after form.
    assert len(expected_out) + len(expected_err) > 5120
    assert (proc.stdout, proc.stderr) == (after_out, after_err)
    assert len(proc.stdout) + len(proc.stderr) <= 5120
    assert expected_out.startswith(proc.stdout.split(b"\n[yarp:")[0])
    assert ref.encode() in proc.stdout + proc.stderr


def test_stdin_is_passed_through(renv):
    data = os.urandom(3000) + b"\nlast line"
    proc = yrun(renv, "cat", input=data)
    assert proc.returncode == 0
    assert proc.stdout == data
    call_id, *_ = only_call(renv)
    with ArchiveView(renv) as view:
        assert view.snapshot(call_id, "stdout", "before") == data


def test_quotes_and_pipes_run_as_given(renv):
    script = """printf '%s|%s\\n' "a b" "c'd" | tr a-z A-Z; echo "$1" >&2"""
    proc = yrun(renv, "sh", "-c", script, "sh", "x y 'z'")
    assert proc.returncode == 0
    assert proc.stdout == b"A B|C'D\n"
    assert proc.stderr == b"x y 'z'\n"
    call_id, *_ = only_call(renv)
    with ArchiveView(renv) as view:
        assert orjson.loads(view.snapshot(call_id, "input", "before"))["argv"] == ["sh", "-c", script, "sh", "x y 'z'"]


def test_child_that_closes_its_streams_early(renv):
    proc = yrun(renv, "sh", "-c", "echo out; echo err >&2; exec 1>&- 2>&-; sleep 0.1; exit 4")
    assert proc.returncode == 4
    assert (proc.stdout, proc.stderr) == (b"out\n", b"err\n")
    call_id, *_ = only_call(renv)
    with ArchiveView(renv) as view:
        assert_streams_archived(view, call_id, b"out\n", b"err\n")


def test_child_gets_default_sigpipe(renv):
    # Python ignores SIGPIPE; a shell pipeline under the runner must still end.
    proc = yrun(renv, "sh", "-c", "yes | head -n 3", timeout=30)
    assert proc.returncode == 0
    assert proc.stdout == b"y\ny\ny\n"


def test_spool_files_are_private_and_removed(renv):
    # The command writes into pipes, which the runner pumps into its spool files.
    probe = ('[ -p /dev/stdout ] && [ -p /dev/stderr ] && echo pipes; cd "$TMPDIR"; ls; '
             'stat -c "%a %F" yarp-run-*.stdout yarp-run-*.stderr')
    proc = yrun(renv, "sh", "-c", probe)
    assert proc.returncode == 0
    kind, out_name, err_name, *modes = proc.stdout.decode().splitlines()
    assert kind == "pipes"
    assert out_name.startswith("yarp-run-") and out_name.endswith(".stderr")
    assert err_name == out_name[:-len(".stderr")] + ".stdout", "an exclusive name in the temporary directory"
    assert [m.split()[0] for m in modes] == ["600", "600"] and all("regular" in m for m in modes)
    assert os.listdir(renv.environ["TMPDIR"]) == []
    # A pruned and capped view is written by the broker into files it creates
    # 0600 beside them; they are removed with the rest.
    proc = yrun(renv, "seq", "1", "20000")
    assert proc.returncode == 0 and b"byte(s) capped at 5120; ref=yr_" in proc.stdout
    assert os.listdir(renv.environ["TMPDIR"]) == []


# --- what could not run ------------------------------------------------------------


def test_command_not_found_is_127_and_finishes_not_executed(renv):
    proc = yrun(renv, "yarp-test-no-such-command")
    assert proc.returncode == 127
    assert proc.stdout == b""
    assert proc.stderr == b"yarp: yarp-test-no-such-command: command not found\n"
    _, _, status, executed, is_error, _ = only_call(renv)
    assert (status, executed, is_error) == ("finished", 0, 1)


def test_not_executable_is_126(renv, tmp_path):
    script = tmp_path / "script.sh"
    script.write_text("echo never\n")
    os.chmod(script, 0o644)
    proc = yrun(renv, str(script))
    assert proc.returncode == 126
    assert proc.stdout == b""


@pytest.mark.parametrize("args", [(), ("--",), ("--archive-agent", "pi", "--", "true")])
def test_usage_errors_exit_64(renv, args):
    proc = yarp(renv, "run", *args)
    assert proc.returncode == 64
    assert proc.stderr.startswith(b"yarp: ")
    assert not os.path.exists(renv.archive)


# --- pruning, cap and recovery -----------------------------------------------------------


def test_long_output_is_capped_and_the_marker_recovers_it(renv):
    proc = yrun(renv, "seq", "1", "100000")
    expected = b"".join(b"%d\n" % i for i in range(1, 100001))
    assert proc.returncode == 0
    assert len(proc.stdout) <= 5120
    assert proc.stdout.startswith(b"1\n2\n3\n")
    assert proc.stdout.endswith(b"99999\n100000\n")
    match = REF_RE.search(proc.stdout)
    assert match is not None
    ref = match.group(1).decode()
    assert f"[yarp: {len(expected)} byte(s) capped at 5120; ref={ref}; stdout complete]".encode() in proc.stdout
    call_id, archived_ref, *_ = only_call(renv)
    assert archived_ref == ref
    with ArchiveView(renv) as view:
        assert_streams_archived(view, call_id, expected, b"")
        assert view.snapshot(call_id, "stdout", "after") == proc.stdout
    if HAVE_SEARCH:
        found = yarp(renv, "search", ref, "^77777$")
        assert found.returncode == 0, found.stderr
        assert b"stdout:77777:77777" in found.stdout
    if HAVE_READ:
        read = yarp(renv, "read", ref, "stdout", "77777:77779")
        assert read.returncode == 0, read.stderr
        assert read.stdout == b"77777\n77778\n77779\n"


def test_a_reduce_rule_prunes_with_markers(renv, tmp_path):
    # A program named `git` selects the shipped `git log` rule by its name.
    fake = tmp_path / "git"
    lines = []
    for n in range(200):
        lines += [f"commit {n:040x}", "Author: A <a@example.com>", "Date:   today", "", f"    change {n}", ""]
    log = ("\n".join(lines) + "\n").encode()
    (tmp_path / "log.txt").write_bytes(log)
    fake.write_text(f"#!/bin/sh\ncat '{tmp_path / 'log.txt'}'\n")
    os.chmod(fake, 0o755)
    proc = yrun(renv, str(fake), "log")
    assert proc.returncode == 0
    assert proc.stdout.startswith(b"[yarp summary: log; source_lines=1200")
    assert len(proc.stdout) <= 5120
    refs = set(REF_RE.findall(proc.stdout))
    call_id, ref, *_ = only_call(renv)
    assert refs == {ref.encode()}
    assert f"Search omitted output: yarp search {ref} 'commit|Author'".encode() in proc.stdout
    with ArchiveView(renv) as view:
        assert_streams_archived(view, call_id, log, b"")
        assert view.snapshot(call_id, "stdout", "after") == proc.stdout


def test_pruning_disabled_keeps_exact_output_under_the_cap(renv, tmp_path):
    config_dir = os.path.join(renv.environ["XDG_CONFIG_HOME"], "yarp")
    os.makedirs(config_dir)
    with open(os.path.join(config_dir, "config.toml"), "w") as handle:
        handle.write("version = 1\n[pruning]\nenabled = false\n[output]\ncap_bytes = 0\n")
    proc = yrun(renv, "seq", "1", "20000")
    assert proc.stdout == b"".join(b"%d\n" % i for i in range(1, 20001))
    call_id, *_ = only_call(renv)
    with ArchiveView(renv) as view:
        assert view.snapshot_sha(call_id, "stdout", "after") == sha(proc.stdout)


def test_a_broken_rule_pack_costs_the_pruning_not_the_archive(renv, tmp_path):
    pack = tmp_path / "broken.toml"
    pack.write_text('version = 1\n[[rule]]\nid = "Not An Id"\nprogram = ["sh"]\naction = "passthrough"\n')
    config_dir = os.path.join(renv.environ["XDG_CONFIG_HOME"], "yarp")
    os.makedirs(config_dir)
    with open(os.path.join(config_dir, "config.toml"), "w") as handle:
        handle.write(f'version = 1\n[rules]\npacks = ["{pack}"]\n')
    proc = yrun(renv, "sh", "-c", "echo out; echo err >&2; exit 3")
    assert proc.returncode == 3
    assert proc.stdout == b"out\n"
    assert proc.stderr.count(b"yarp: rules not applied: invalid rule file (rules.packs[0], rule 1)") == 1
    assert proc.stderr.endswith(b"err\n") and b"archive failed" not in proc.stderr
    call_id, *_ = only_call(renv)
    with ArchiveView(renv) as view:
        assert_streams_archived(view, call_id, b"out\n", b"err\n")


# --- huge output ---------------------------------------------------------------------------


def _peak_rss_kib(benv, argv: list[str]) -> tuple[int, subprocess.CompletedProcess]:
    """Run `yarp run -- argv` under a tiny parent and return the runner's peak RSS."""
    wrapper = textwrap.dedent("""
        import resource, subprocess, sys
        proc = subprocess.run(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
        sys.stderr.write("%d %d %d\\n" % (resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
                                          proc.returncode, len(proc.stdout)))
    """)
    proc = subprocess.run([PY, "-c", wrapper, PY, "-m", "yarp", "run", "--", *argv],
                          env=benv.environ, capture_output=True, timeout=600)
    rss, returncode, visible = (int(x) for x in proc.stderr.split()[-3:])
    assert returncode == 0, proc.stderr
    return rss, proc


def _huge(renv, tmp_path, size: int) -> None:
    big = tmp_path / "big.txt"
    line = b"%08d the quick brown fox jumps over the lazy dog, again and again\n"
    with open(big, "wb") as handle:
        n = 0
        written = 0
        while written < size:
            chunk = b"".join(line % i for i in range(n, n + 10000))
            handle.write(chunk)
            written += len(chunk)
            n += 10000
    small_rss, _ = _peak_rss_kib(renv, ["cat", "/etc/hostname"])
    big_rss, proc = _peak_rss_kib(renv, ["cat", str(big)])
    # The runner never holds the stream: its peak stays near a tiny run's.
    assert big_rss - small_rss < 16 * 1024, (small_rss, big_rss)
    with ArchiveView(renv) as view:
        calls = view.calls()
        call_id = calls[-1][0]
        assert view.snapshot_sha(call_id, "stdout", "before") == file_sha(str(big))
        assert view.snapshot(call_id, "stdout", "after") is not None
        row = view.conn.execute(
            "SELECT uncompressed_byte_length FROM payloads p JOIN snapshots s ON s.payload_sha256 = p.sha256"
            " WHERE s.tool_call_id = ? AND s.subject = 'stdout' AND s.stage = 'before'", (call_id,)).fetchone()
        assert row[0] == os.path.getsize(big)


def test_huge_output_30mb_in_constant_memory(renv, tmp_path):
    _huge(renv, tmp_path, 30 * 1024 * 1024)


@pytest.mark.soak
def test_huge_output_200mb_in_constant_memory(renv, tmp_path, request):
    if "soak" not in (request.config.option.markexpr or ""):
        pytest.skip("soak test: run with -m soak")
    _huge(renv, tmp_path, 200 * 1024 * 1024)


# --- archive failure -------------------------------------------------------------------


SCRIPT_300_LINES = "seq 1 30000; echo problem >&2; exit 3"
RAW_OUT = b"".join(b"%d\n" % i for i in range(1, 30001))


def _assert_raw_fallback(proc) -> None:
    assert proc.returncode == 3
    assert proc.stdout == RAW_OUT
    assert proc.stderr.startswith(b"problem\n")
    lines = proc.stderr.splitlines()
    assert len(lines) == 2
    assert lines[1].startswith(b"yarp: archive failed after command execution: ")
    assert len(lines[1]) < 1200


def test_archive_directory_is_a_file_raw_bytes_and_status_kept(renv):
    blocker = os.path.join(renv.root, "blocker")
    with open(blocker, "w") as handle:
        handle.write("not a directory")
    env = renv.with_env(YARP_ARCHIVE=os.path.join(blocker, "tool-calls.sqlite3"))
    proc = yrun(renv, "sh", "-c", SCRIPT_300_LINES, env=env)
    _assert_raw_fallback(proc)
    with open(blocker) as handle:
        assert handle.read() == "not a directory"


def test_unsupported_archive_version_raw_bytes_and_status_kept(renv):
    # A real archive, written by a first run, then marked as a newer schema
    # once its broker has gone: the next broker must refuse to start.
    assert yrun(renv, "true").returncode == 0
    end = time.monotonic() + 20
    while os.path.lexists(renv.paths.socket):
        assert time.monotonic() < end
        time.sleep(0.05)
    conn = sqlite3.connect(renv.archive)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    proc = yrun(renv, "sh", "-c", SCRIPT_300_LINES)
    _assert_raw_fallback(proc)
    assert b"version" in proc.stderr.splitlines()[1]
    conn = sqlite3.connect(f"file:{renv.archive}?mode=ro", uri=True)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 99
    conn.close()


def test_adapter_call_never_begun_raw_bytes_and_status_kept(renv):
    flags = ("--archive-agent", "pi", "--archive-account", "me", "--archive-session", "s1", "--archive-call", "nope")
    # Begin some other call so the archive exists and the broker runs.
    renv.request(ops.BeginCall(ops.Session("pi", "me", "s1"), ops.CallMeta("other", "bash", 1, True), {}, {}, 1))
    proc = yrun(renv, "sh", "-c", SCRIPT_300_LINES, flags=flags)
    _assert_raw_fallback(proc)
    with ArchiveView(renv) as view:
        assert [c[2] for c in view.calls("pi")] == ["started"]


def test_background_writer_is_waited_for_and_archived(renv):
    # A process the command left behind holds its stdout: the run waits for it
    # as a shell pipe would, and archives everything it wrote.
    script = "timeout 1 sh -c 'while :; do echo bg; done' & sleep 0.05; echo fg"
    started = time.monotonic()
    proc = yrun(renv, "sh", "-c", script)
    assert time.monotonic() - started >= 0.9
    assert proc.returncode == 0
    assert proc.stdout.startswith(b"bg\n")
    assert b"archive failed" not in proc.stderr
    call_id, ref, status, *_ = only_call(renv)
    assert status == "finished"
    assert ref.encode() in proc.stdout  # capped, with a marker
    with ArchiveView(renv) as view:
        archived = view.snapshot(call_id, "stdout", "before")
    assert b"fg\n" in archived and archived.endswith(b"bg\n") and len(archived) > 100_000
    assert os.listdir(renv.environ["TMPDIR"]) == []


# --- adapter mode -------------------------------------------------------------------------


def test_adapter_flags_capture_into_the_begun_call(renv):
    session = ops.Session("pi", "me", "session-7", 1_700_000_000_000)
    meta = ops.CallMeta("call-1", "bash", 1_700_000_000_000, True, working_directory="/w")
    reply = renv.request(ops.BeginCall(session, meta, {"command": "seq 1 30000"},
                                       {"command": "yarp run ... -- seq 1 30000"}, 1_700_000_000_000))
    ref = reply["archiveRef"]
    flags = ("--archive-agent", "pi", "--archive-account", "me", "--archive-session", "session-7",
             "--archive-call", "call-1")
    proc = yrun(renv, "seq", "1", "30000", flags=flags)
    assert proc.returncode == 0
    assert len(proc.stdout) <= 5120
    assert REF_RE.findall(proc.stdout) == [ref.encode()]
    with ArchiveView(renv) as view:
        assert view.calls() == []  # no standalone call of its own
        call_id = view.call_id(ref)
        assert_streams_archived(view, call_id, RAW_OUT, b"")
        assert view.snapshot(call_id, "stdout", "after") == proc.stdout
        assert view.conn.execute("SELECT status FROM tool_calls WHERE id = ?", (call_id,)).fetchone() == ("started",)
    # The adapter can now finish an executed wrapped call: every stream snapshot is there.
    renv.request(ops.ResultBefore(session, "call-1", {"content": "x"}, 1_700_000_000_500))
    renv.request(ops.FinishCall(session, "call-1", {"content": "x"}, False, True, 1_700_000_001_000))
    with ArchiveView(renv) as view:
        assert view.conn.execute("SELECT status, executed FROM tool_calls WHERE archive_ref = ?",
                                 (ref,)).fetchone() == ("finished", 1)


def test_adapter_flags_small_output_needs_no_reference_lookup(renv):
    session = ops.Session("pi", "me", "session-8")
    renv.request(ops.BeginCall(session, ops.CallMeta("c", "bash", 5, True), {}, {}, 5))
    flags = ("--archive-agent", "pi", "--archive-account", "me", "--archive-session", "session-8",
             "--archive-call", "c")
    proc = subprocess.run([PY, "-X", "importtime", "-m", "yarp", "run", *flags, "--", "echo", "hello"],
                          env=renv.environ, capture_output=True, stdin=subprocess.DEVNULL, timeout=60)
    assert proc.returncode == 0
    assert proc.stdout == b"hello\n"
    imported = {line.split("|")[-1].strip() for line in proc.stderr.decode().splitlines() if "import time" in line}
    assert "sqlite3" not in imported


# --- signals ----------------------------------------------------------------------------


def _start_sleeper(renv, tmp_path, script: str):
    mark = tmp_path / "pid"
    env = renv.with_env(MARK=str(mark))
    proc = subprocess.Popen([PY, "-m", "yarp", "run", "--", "sh", "-c", script], env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    end = time.monotonic() + 60
    while not (mark.exists() and mark.read_text().endswith("\n")):
        assert time.monotonic() < end, "the command never started"
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.02)
    return proc, int(mark.read_text())


SLEEPER = 'echo partial; echo "$$" > "$MARK"; exec sleep 30'


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_signal_to_the_runner_reaches_the_child_and_the_archive_is_kept(renv, tmp_path, signum):
    proc, _child = _start_sleeper(renv, tmp_path, SLEEPER)
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == -signum
    assert out == b"partial\n"
    call_id, _, status, executed, *_ = only_call(renv)
    assert (status, executed) == ("finished", 1)
    with ArchiveView(renv) as view:
        assert_streams_archived(view, call_id, b"partial\n", b"")
        assert orjson.loads(view.snapshot(call_id, "result", "before"))["signal"] == signum


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_signal_to_the_child_keeps_its_status(renv, tmp_path, signum):
    proc, child = _start_sleeper(renv, tmp_path, SLEEPER)
    os.kill(child, signum)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == -signum
    assert out == b"partial\n"
    _, _, status, *_ = only_call(renv)
    assert status == "finished"


def test_child_that_handles_the_signal_keeps_its_own_status(renv, tmp_path):
    script = 'trap "echo caught; exit 7" TERM; echo "$$" > "$MARK"; while :; do sleep 0.05; done'
    proc, _child = _start_sleeper(renv, tmp_path, script)
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 7
    assert out == b"caught\n"


# --- archive disabled -----------------------------------------------------------------------


def test_archive_disabled_runs_the_command_untouched(renv):
    config_dir = os.path.join(renv.environ["XDG_CONFIG_HOME"], "yarp")
    os.makedirs(config_dir)
    with open(os.path.join(config_dir, "config.toml"), "w") as handle:
        handle.write("version = 1\n[archive]\nenabled = false\n")
    script = '[ -p /dev/stdout ] && echo stdout-is-a-pipe; cat; seq 1 30000; exit 5'
    proc = yrun(renv, "sh", "-c", script, input=b"from stdin\n")
    assert proc.returncode == 5
    assert proc.stdout == b"stdout-is-a-pipe\nfrom stdin\n" + RAW_OUT
    assert not os.path.exists(renv.archive)
    assert not os.path.exists(renv.paths.socket)
    assert os.listdir(renv.environ["TMPDIR"]) == []


def test_archive_disabled_keeps_signal_status(renv):
    config_dir = os.path.join(renv.environ["XDG_CONFIG_HOME"], "yarp")
    os.makedirs(config_dir)
    with open(os.path.join(config_dir, "config.toml"), "w") as handle:
        handle.write("version = 1\n[archive]\nenabled = false\n")
    assert yrun(renv, "sh", "-c", "kill -TERM $$").returncode == -signal.SIGTERM
    assert yrun(renv, "yarp-test-no-such-command").returncode == 127


def test_spool_is_private_even_with_a_permissive_umask(renv):
    env = renv.with_env()
    proc = subprocess.run(["sh", "-c", 'umask 000; exec "$@"', "sh", PY, "-m", "yarp", "run", "--", "sh", "-c",
                           'stat -c %a "$TMPDIR"/yarp-run-*'],
                          env=env, capture_output=True, stdin=subprocess.DEVNULL, timeout=60)
    assert proc.stdout.split() == [b"600", b"600"]
    call_id, *_ = only_call(renv)
    mode = stat.S_IMODE(os.stat(renv.archive).st_mode)
    assert mode == 0o600


def test_the_broker_refuses_spool_files_that_are_not_the_runners(renv):
    # The broker writes the view and snapshots the streams from paths a client
    # names: each must be a private regular file of this user, as declared.
    from yarp.errors import UnsafePath
    from yarp.paths import resolve_archive
    from yarp.clients.broker import BrokerClient
    from yarp.clients.broker import service_request

    session = ops.Session("pi", "me", "spool-checks")
    renv.request(ops.BeginCall(session, ops.CallMeta("c1", "bash", 1, True), {}, {}, 1))
    spool = os.path.join(renv.environ["TMPDIR"], "yarp-run-0123456789abcdef")
    for suffix, mode in ((".stdout", 0o600), (".stderr", 0o644)):
        fd = os.open(spool + suffix, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.write(fd, b"data\n")
        os.close(fd)
        os.chmod(spool + suffix, mode)

    def declared(path: str, **change) -> dict:
        st = os.lstat(path)
        return dict({"path": path, "device": st.st_dev, "inode": st.st_ino, "size": st.st_size}, **change)

    def capture(stdout: dict, stderr: dict, after_dir: str = renv.environ["TMPDIR"]) -> None:
        fields = {"step": "capture", "target": {"agent": "pi", "account": "me", "session": "spool-checks",
                                                "call": "c1"},
                  "argv": ["true"], "status": 0, "signal": None, "pruning": True, "rulePacks": [], "capBytes": 5120,
                  "spool": {"stdout": stdout, "stderr": stderr,
                            "stdoutAfter": os.path.join(after_dir, "v.stdout"),
                            "stderrAfter": os.path.join(after_dir, "v.stderr")}}
        with BrokerClient(resolve_archive(renv.archive, renv.environ), renv.environ) as client:
            client.ask(service_request("run", fields), time.monotonic() + 10)

    out = declared(spool + ".stdout")
    refused = [
        ((out, declared(spool + ".stderr")), {}, "broader than 0600"),
        ((declared(spool + ".stdout", size=1), out), {}, "not the file that was declared"),
        ((out, out), {"after_dir": "/tmp"}, "one directory"),
    ]
    for streams, where, refusal in refused:
        with pytest.raises(UnsafePath) as caught:
            capture(*streams, **where)
        assert refusal in caught.value.message
    with ArchiveView(renv) as view:
        call_id = view.calls("pi")[0][0]
        assert view.snapshot_keys(call_id) == {("input", "before"), ("input", "after")}, "nothing was captured"
    for suffix in (".stdout", ".stderr"):
        os.unlink(spool + suffix)


def test_a_whole_run_process_ends_without_teardown_and_keeps_its_output_and_status(renv):
    # An exit hook stands for the interpreter's teardown: a whole `yarp run` process never reaches it,
    # yet its output is flushed whole and the command's status is its own; `main(argv)` in a process
    # of its caller returns instead.
    script = textwrap.dedent("""
        import atexit, sys
        atexit.register(lambda: sys.stderr.write("teardown ran\\n"))
        from yarp.cli import main
        if sys.argv[1] == "whole":
            sys.argv = ["yarp", "run", "--", "sh", "-c", "seq 1 20000; exit 7"]
            sys.exit(main())
        status = main(["run", "--", "sh", "-c", "exit 5"])
        sys.stderr.write(f"returned {status}\\n")
    """)
    whole = subprocess.run([sys.executable, "-c", script, "whole"], env=renv.environ, capture_output=True,
                           stdin=subprocess.DEVNULL, timeout=120)
    assert whole.returncode == 7 and b"teardown ran" not in whole.stderr
    assert whole.stdout.startswith(b"1\n2\n") and whole.stdout.rstrip().endswith(b"20000")
    inner = subprocess.run([sys.executable, "-c", script, "inner"], env=renv.environ, capture_output=True,
                           stdin=subprocess.DEVNULL, timeout=120)
    assert inner.returncode == 0 and b"returned 5" in inner.stderr and b"teardown ran" in inner.stderr
