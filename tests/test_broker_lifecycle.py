"""Broker start-up, survival and shutdown races with real processes."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time

from broker_helpers import (
    BrokerProcess,
    begin,
    broker_pids,
    count_rows,
    pid_alive,
    wait_for,
    wait_gone,
)
from broker_helpers import broker_env  # noqa: F401  (fixture)

_CLIENT = """
import os, sys, time
from yarp.clients.broker import BrokerClient
from yarp.paths import ArchiveLocation
from yarp.wire import operations as ops
archive, start_at, call = sys.argv[1], float(sys.argv[2]), sys.argv[3]
while time.time() < start_at:
    time.sleep(0.001)
c = BrokerClient(ArchiveLocation(archive, False))
s = ops.Session("pi", "me", "race")
reply = c.request(ops.BeginCall(s, ops.CallMeta(call, "bash", 1, False), {"c": call}, {"c": call}, 1), time.monotonic() + 20)
print(reply["archiveRef"], c.status(time.monotonic() + 5)["pid"])
"""


def _spawn_client(benv, call: str, start_at: float = 0.0, env=None) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", _CLIENT, benv.archive, str(start_at), call],
        env=env or benv.environ, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def test_thirty_simultaneous_clients_start_exactly_one_broker(broker_env):
    start_at = time.time() + 2.5
    procs = [_spawn_client(broker_env, f"race-{i}", start_at) for i in range(30)]
    outputs = [p.communicate(timeout=60) for p in procs]
    for p, (out, err) in zip(procs, outputs):
        assert p.returncode == 0, err[-2000:]
    pids = {int(out.split()[1]) for out, _ in outputs}
    refs = {out.split()[0] for out, _ in outputs}
    assert len(pids) == 1, pids
    assert len(refs) == 30
    assert broker_pids(broker_env.archive) == list(pids)
    assert count_rows(broker_env, "tool_calls") == 30


def test_broker_outlives_the_client_that_started_it(broker_env):
    proc = _spawn_client(broker_env, "outlive")
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    pid = int(out.split()[1])
    broker_env.track(pid)
    assert pid_alive(pid)
    assert os.getsid(pid) == pid, "the broker runs in its own session"
    assert broker_env.status()["pid"] == pid


def test_stale_socket_after_kill_9_is_cleaned_up(broker_env):
    broker_env.request(begin("before-crash"))
    (old,) = wait_for(lambda: broker_pids(broker_env.archive))
    sock = broker_env.paths.socket
    os.kill(old, signal.SIGKILL)
    assert wait_gone(old, 5)
    assert os.path.exists(sock), "kill -9 leaves the socket behind"
    reply = broker_env.request(begin("after-crash"))
    assert reply["ok"] is True
    (new,) = broker_pids(broker_env.archive)
    assert new != old
    assert count_rows(broker_env, "tool_calls") == 2


def test_second_broker_never_removes_a_live_socket(broker_env):
    first = BrokerProcess(broker_env).wait_ready()
    try:
        inode = os.lstat(broker_env.paths.socket).st_ino
        second = subprocess.run(
            [sys.executable, "-m", "yarp", "archive", "broker", "--archive", broker_env.archive],
            env=broker_env.environ, capture_output=True, text=True, timeout=30,
        )
        assert second.returncode != 0
        assert "another broker already owns this archive" in second.stderr
        assert os.lstat(broker_env.paths.socket).st_ino == inode
        assert broker_env.request(begin("still-first"))["ok"] is True
        assert broker_env.status()["pid"] == first.pid
    finally:
        first.stop()


def test_idle_shutdown_removes_socket_and_checkpoints(broker_env):
    env = broker_env.with_env(YARP_BROKER_IDLE_MS=300)
    proc = BrokerProcess(broker_env, env=env).wait_ready()
    with broker_env.client() as client:
        for i in range(20):
            client.request(begin(f"idle-{i}", input_obj={"blob": "x" * 4096, "i": i}), time.monotonic() + 10)
        assert os.path.getsize(broker_env.archive + "-wal") > 0
        time.sleep(0.5)
        assert proc.proc.poll() is None, "a connected client keeps the broker alive"
    assert proc.wait_exit(10) == 0
    assert not os.path.exists(broker_env.paths.socket)
    wal = broker_env.archive + "-wal"
    assert not os.path.exists(wal) or os.path.getsize(wal) == 0
    events = [e["event"] for e in proc.events()]
    assert "shutdown" in events and "checkpoint_failed" not in events
    db = sqlite3.connect(broker_env.archive)
    try:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert db.execute("SELECT count(*) FROM tool_calls").fetchone()[0] == 20
    finally:
        db.close()


def test_a_broker_whose_runtime_directory_was_removed_stops_at_idle(broker_env):
    # Logout (or a cleaner) can remove the runtime directory under a running broker: no client can
    # reach it again, so at idle it stops instead of waiting for a startup lock that is gone.
    import shutil

    env = broker_env.with_env(YARP_BROKER_IDLE_MS=300)
    proc = BrokerProcess(broker_env, env=env).wait_ready()
    with broker_env.client() as client:
        client.request(begin("before-logout"), time.monotonic() + 10)
        shutil.rmtree(os.path.dirname(broker_env.paths.socket))
        time.sleep(0.5)
        assert proc.proc.poll() is None, "a connected client keeps the broker alive"
        client.request(begin("after-logout"), time.monotonic() + 10)  # the open connection still works
    assert proc.wait_exit(10) == 0
    assert '"reason":"unreachable"' in proc.log_text()
    assert count_rows(broker_env, "tool_calls") == 2


def test_a_complete_checkpoint_is_not_repeated_for_every_later_batch(broker_env):
    # SQLite starts the log again at the file's head after a complete checkpoint and, without
    # a size limit, keeps the file at its largest: a policy that reads the file's size would
    # then checkpoint (and sync the database) after every batch from there on.
    from yarp.limits import WAL_CHECKPOINT_BYTES, WAL_RESET_BYTES

    proc = BrokerProcess(broker_env).wait_ready()
    wal = broker_env.archive + "-wal"
    try:
        with broker_env.client() as client:
            n = 0
            while os.path.getsize(wal) < WAL_CHECKPOINT_BYTES:  # random hex: zstd saves half at most
                client.request(begin(f"big-{n}", input_obj={"blob": os.urandom(1 << 20).hex()}),
                               time.monotonic() + 30)
                n += 1
            client.request(begin("past-the-threshold"), time.monotonic() + 10)  # checkpointed after
            assert broker_env.status()["checkpoints"] == 1
            for i in range(5):
                client.request(begin(f"small-{i}"), time.monotonic() + 10)
            assert broker_env.status()["checkpoints"] == 1
            assert os.path.getsize(wal) <= WAL_RESET_BYTES + 1024 * 1024  # cut back, then a few small frames
    finally:
        proc.stop()
    db = sqlite3.connect(broker_env.archive)
    try:
        assert db.execute("SELECT count(*) FROM tool_calls").fetchone()[0] == n + 6
    finally:
        db.close()


def test_clients_arriving_during_idle_shutdown_succeed(broker_env):
    broker_env.environ["YARP_BROKER_IDLE_MS"] = "20"
    pids = set()
    for i in range(25):
        reply = broker_env.request(begin(f"churn-{i}"), timeout=15)
        assert reply["ok"] is True
        pids.update(broker_pids(broker_env.archive))
        time.sleep((i % 5) * 0.006)
    assert count_rows(broker_env, "tool_calls") == 25
    assert len(pids) >= 2, "the idle grace should have ended at least one broker"
    assert len(broker_pids(broker_env.archive)) <= 1


def test_foreground_broker_stops_cleanly_on_sigterm(broker_env):
    proc = BrokerProcess(broker_env).wait_ready()
    broker_env.request(begin("term"))
    proc.proc.send_signal(signal.SIGTERM)
    assert proc.wait_exit(10) == 0
    assert not os.path.exists(broker_env.paths.socket)
    assert '"reason":"signal"' in proc.log_text()
