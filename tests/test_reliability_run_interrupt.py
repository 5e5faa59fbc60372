"""`yarp run` interrupted while the archive side is in trouble.

Signal forwarding to the child and 128+N statuses are covered by test_run.py;
these tests combine signals with archive faults: the broker stalled (SIGSTOP)
or killed (SIGKILL) while the runner waits for its stream-capture
acknowledgement, SIGINT/SIGTERM sent to the runner during that wait, and the
runner itself killed while its child runs. The child's exact bytes and status
must survive every case, and the archive must stay whole.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from broker_helpers import begin, broker_pids, wait_for
from reliability_helpers import archive_invariants, cleanup_broker_env, make_env, run_verify, stored_payload_sha

OUT = b"exact stdout \x00\xff bytes\n" * 50
ERR = b"exact stderr\n"


@pytest.fixture
def env():
    benv = make_env(idle_ms=600_000)
    try:
        yield benv
    finally:
        cleanup_broker_env(benv)


def _child_script(marker: str, status: int) -> str:
    out = OUT.decode("latin-1").encode("unicode_escape").decode().replace("'", "")
    return (f"import os,sys,time; open({marker!r},'w').close(); time.sleep(0.3);"
            f" sys.stdout.buffer.write(b'{out}'.decode('unicode_escape').encode('latin-1'));"
            f" sys.stderr.buffer.write({ERR!r}); sys.exit({status})")


def _start_run(env, marker: str, status: int) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "yarp", "run", "--", sys.executable, "-c",
                             _child_script(marker, status)],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env.environ)


def _stall_after_child(env, marker: str, broker: int) -> None:
    wait_for(lambda: os.path.exists(marker), 20)
    os.kill(broker, signal.SIGSTOP)


def _streams_of_last_run(env):
    db = env.db()
    try:
        row = db.execute("SELECT source_call_id FROM tool_calls WHERE tool_name = 'shell'"
                         " ORDER BY id DESC LIMIT 1").fetchone()
        return row[0], stored_payload_sha(db, row[0], "stdout", "before")
    finally:
        db.close()


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_signal_to_runner_waiting_on_a_stalled_broker_keeps_output_and_status(env, signum):
    import hashlib

    assert env.request(begin("warm"))["ok"] is True
    (broker,) = broker_pids(env.archive)
    marker = os.path.join(env.root, f"child-started-{time.monotonic_ns()}")
    run = _start_run(env, marker, 5)
    try:
        _stall_after_child(env, marker, broker)
        time.sleep(0.6)  # the child has exited; the runner waits on the stalled broker
        run.send_signal(signum)
        time.sleep(0.2)
        assert run.poll() is None, "the runner obeyed a signal before emitting the child's output"
    finally:
        os.kill(broker, signal.SIGCONT)
    out, err = run.communicate(timeout=60)
    assert run.returncode == 5
    assert out == OUT and err.startswith(ERR), err
    assert b"yarp: archive failed" not in err
    call, stored = _streams_of_last_run(env)
    assert stored == hashlib.sha256(OUT).hexdigest()


def test_broker_killed_while_runner_waits_is_replayed_exactly_once(env):
    import hashlib

    assert env.request(begin("warm"))["ok"] is True
    (broker,) = broker_pids(env.archive)
    marker = os.path.join(env.root, f"child-started-{time.monotonic_ns()}")
    run = _start_run(env, marker, 3)
    _stall_after_child(env, marker, broker)
    time.sleep(0.6)
    os.kill(broker, signal.SIGKILL)
    os.kill(broker, signal.SIGCONT)
    out, err = run.communicate(timeout=60)
    assert run.returncode == 3
    assert out == OUT and err.startswith(ERR)
    assert b"yarp: archive failed" not in err, err
    _call, stored = _streams_of_last_run(env)
    assert stored == hashlib.sha256(OUT).hexdigest()
    archive_invariants(env.archive)


def test_archive_unreachable_after_broker_death_emits_raw_bytes_and_status(env):
    assert env.request(begin("warm"))["ok"] is True
    (broker,) = broker_pids(env.archive)
    marker = os.path.join(env.root, f"child-started-{time.monotonic_ns()}")
    run = _start_run(env, marker, 9)
    _stall_after_child(env, marker, broker)
    # The next broker cannot start: the override archive directory is no longer private.
    archive_dir = os.path.dirname(env.archive)
    os.chmod(archive_dir, 0o755)
    try:
        os.kill(broker, signal.SIGKILL)
        os.kill(broker, signal.SIGCONT)
        out, err = run.communicate(timeout=90)
    finally:
        os.chmod(archive_dir, 0o700)
    assert run.returncode == 9
    assert out == OUT, "raw stdout, exactly"
    assert err.startswith(ERR)
    assert err[len(ERR):].count(b"yarp: archive failed after command execution:") == 1, err
    archive_invariants(env.archive)


def test_runner_killed_while_its_child_runs_leaves_only_a_started_call(env):
    assert env.request(begin("warm"))["ok"] is True
    marker = os.path.join(env.root, f"child-started-{time.monotonic_ns()}")
    run = _start_run(env, marker, 0)
    wait_for(lambda: os.path.exists(marker), 20)
    run.send_signal(signal.SIGKILL)
    run.communicate(timeout=30)
    assert run.returncode == -signal.SIGKILL
    assert env.request(begin("after-runner-death"))["ok"] is True
    counts = archive_invariants(env.archive)
    assert counts["started"] >= 1  # the run's own call stays started: incomplete, never half-written
    verify = run_verify(env)
    assert verify.returncode == 0 and b"archive: ok" in verify.stdout


@pytest.mark.soak
@pytest.mark.parametrize("round_", range(10))
def test_broker_killed_while_runner_waits_soak(round_):
    benv = make_env(idle_ms=600_000)
    try:
        test_broker_killed_while_runner_waits_is_replayed_exactly_once(benv)
        test_signal_to_runner_waiting_on_a_stalled_broker_keeps_output_and_status(
            benv, (signal.SIGINT, signal.SIGTERM)[round_ % 2])
    finally:
        cleanup_broker_env(benv)
