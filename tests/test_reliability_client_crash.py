"""Clients killed with SIGKILL mid-frame, mid-request and while waiting for their acknowledgement.

Victims are real processes: raw socket clients, `yarp archive ingest` bridges
and `yarp run`. While a write lock held by another process keeps requests
admitted, each victim is killed at the chosen point. The broker must keep
serving everyone else, return its admission counters (`admitted`,
`admittedBytes`) to 0, leave the archive whole, and still shut down on its
normal idle grace afterwards.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import orjson
import pytest

from broker_helpers import BrokerProcess, begin, wait_for
from ingest_helpers import begin_call, encode, session
from reliability_helpers import archive_invariants, broker_status, cleanup_broker_env, make_env, run_verify
from test_reliability_busy import LockHolder
from yarp.wire import protocol

_RAW_VICTIM = """
import socket, struct, sys, time
sys.path.insert(0, sys.argv[4])
from yarp.wire import protocol
from yarp.wire import operations as ops
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
def frame(b): return struct.pack(">Q", len(b)) + b
hello = {"schema": protocol.SCHEMA, "binaryVersion": __import__("yarp").__version__, "archiveId": sys.argv[2],
         "correlationId": "victim"}
s.sendall(frame(protocol.json_text.dumps(hello)))
s.recv(4096)
op = ops.BeginCall(ops.Session("pi", "victim", "v"), ops.CallMeta(sys.argv[5], "bash", 1, False),
                   {"blob": "v" * 200000}, {"blob": "v" * 200000}, 1)
body = protocol.envelope(op, "victim", 20000)
mode = sys.argv[3]
if mode == "mid-frame":
    s.sendall(struct.pack(">Q", len(body)) + body[: len(body) // 2])
else:
    s.sendall(frame(body))
print("sent", flush=True)
time.sleep(600)
"""


def _raw_victim(benv, mode: str, call: str) -> subprocess.Popen:
    from broker_helpers import SRC

    proc = subprocess.Popen([sys.executable, "-c", _RAW_VICTIM, benv.paths.socket, benv.paths.archive_id, mode, SRC,
                             call], stdout=subprocess.PIPE, env=benv.environ)
    _VICTIMS.append(proc)
    assert proc.stdout.readline() == b"sent\n"
    return proc


def _ingest_victim(benv, data: bytes) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-m", "yarp", "archive", "ingest"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=benv.environ)
    _VICTIMS.append(proc)
    proc.stdin.write(data)
    proc.stdin.flush()
    return proc


def _kill(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)


def _others_served(benv, tag: str) -> None:
    assert benv.request(begin(tag), timeout=20)["ok"] is True


@pytest.fixture
def env():
    benv = make_env(idle_ms=800)
    try:
        yield benv
    finally:
        cleanup_broker_env(benv)


def _wait_admitted(benv, at_least: int) -> dict:
    def check():
        status = broker_status(benv)
        return status if status["admitted"] >= at_least else None
    return wait_for(check, 20, 0.02)


_VICTIMS: list[subprocess.Popen] = []


@pytest.fixture(autouse=True)
def _reap_victims():
    yield
    while _VICTIMS:
        proc = _VICTIMS.pop()
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


def test_killed_clients_release_admission_and_the_broker_idles_out(env):
    broker = BrokerProcess(env).wait_ready()
    sess = session("crash-sess")
    killed = 0
    try:
        _others_served(env, "first")

        # Mid-frame: half a body, then death. Nothing is admitted for it.
        for mode_call in ("mf-1", "mf-2"):
            _kill(_raw_victim(env, "mid-frame", mode_call))
            killed += 1
        big = {"blob": "i" * 150000}
        data = encode({"requestId": 1, "schemaVersion": 1, **begin_call(sess, "ingest-mf", input_before=big)})
        victim = _ingest_victim(env, data[: len(data) // 2])
        time.sleep(0.3)
        _kill(victim)
        killed += 1
        _others_served(env, "after-mid-frame")

        # Mid-request and waiting for the acknowledgement: admitted, stuck behind a foreign write lock.
        holder = LockHolder(env.archive, "BEGIN IMMEDIATE")
        try:
            raw = _raw_victim(env, "whole", "raw-waiting")
            ing = _ingest_victim(env, encode({"requestId": 1, "schemaVersion": 1,
                                              **begin_call(sess, "ingest-waiting", input_before=big)}))
            run = subprocess.Popen([sys.executable, "-m", "yarp", "run", "--", "sh", "-c", "echo run-victim"],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env.environ)
            _VICTIMS.append(run)
            status = _wait_admitted(env, 2)
            assert status["admittedBytes"] > 0
            for victim in (raw, ing):
                _kill(victim)
                killed += 1
            # The runner is killed while it waits on the archive (begin or stream capture).
            time.sleep(0.3)
            _kill(run)
            killed += 1
        finally:
            holder.release()
            holder.kill()
        _others_served(env, "after-waiting")
        wait_for(lambda: (s := broker_status(env))["admitted"] == 0 and s["admittedBytes"] == 0
                 and s["clients"] == 1, 30, 0.05)
    except BaseException:
        broker.stop()
        raise
    # Nobody left: the broker shuts down on its idle grace, cleanly, and removes its socket.
    assert broker.wait_exit(30) == 0
    assert not os.path.lexists(env.paths.socket)
    events = [e["event"] for e in broker.events()]
    assert "shutdown" in events and "internal_error" not in events
    counts = archive_invariants(env.archive)
    assert run_verify(env).returncode == 0
    db = env.db()
    try:
        ids = {r[0] for r in db.execute("SELECT source_call_id FROM tool_calls")}
    finally:
        db.close()
    # Half frames never became calls; whole requests of dead clients may have committed (unacknowledged).
    assert not ids & {"mf-1", "mf-2", "ingest-mf"}
    assert {"first", "after-mid-frame", "after-waiting"} <= ids
    print("client crash:", {"killed": killed, **counts})


def test_handshake_then_death_loop_leaves_no_client_behind(env):
    broker = BrokerProcess(env).wait_ready()
    try:
        for i in range(20):
            proc = subprocess.Popen(
                [sys.executable, "-c", "import socket,struct,sys,time;s=socket.socket(socket.AF_UNIX);"
                 "s.connect(sys.argv[1]);b=sys.argv[2].encode();s.sendall(struct.pack('>Q',len(b))+b[:len(b)//2]);"
                 "print('x',flush=True);time.sleep(60)",
                 env.paths.socket, orjson.dumps({"schema": protocol.SCHEMA, "archiveId": env.paths.archive_id}).decode()],
                stdout=subprocess.PIPE)
            _VICTIMS.append(proc)
            assert proc.stdout.readline() == b"x\n"
            _kill(proc)
        _others_served(env, "after-handshake-deaths")
        wait_for(lambda: broker_status(env)["clients"] == 1, 20, 0.05)
    except BaseException:
        broker.stop()
        raise
    assert broker.wait_exit(30) == 0


@pytest.mark.soak
@pytest.mark.parametrize("round_", range(20))
def test_killed_clients_soak(round_):
    benv = make_env(idle_ms=800)
    try:
        test_killed_clients_release_admission_and_the_broker_idles_out(benv)
    finally:
        cleanup_broker_env(benv)
