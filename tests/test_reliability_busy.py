"""Busy and locked archives: another process holds SQLite locks behind the broker's back.

A separate process (not a thread of the test) opens the archive and holds
`BEGIN IMMEDIATE`, or a long read transaction. Only busy/locked outcomes are
retried, and only within each request's own deadline: a short deadline ends
with a bounded `deadline` error while the lock is still held (no success
acknowledged, nothing stored), a long one succeeds once the lock goes. A
malformed request that arrives while the archive is locked is refused at once,
not retried.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

from broker_helpers import BrokerProcess, RawConn, begin, count_rows
from reliability_helpers import archive_invariants, cleanup_broker_env, make_env, run_verify
from yarp.errors import DeadlineExceeded

_HOLDER = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=10)
conn.execute(sys.argv[2])
conn.execute("SELECT count(*) FROM tool_calls").fetchone()
sys.stdout.write("held\\n"); sys.stdout.flush()
sys.stdin.readline()
conn.execute("ROLLBACK")
sys.stdout.write("released\\n"); sys.stdout.flush()
"""


class LockHolder:
    """A child process holding `statement` on the archive until `release()`."""

    def __init__(self, path: str, statement: str) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", _HOLDER, path, statement],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        line = self.proc.stdout.readline()
        assert line == b"held\n", (line, self.proc.stderr.read())

    def release(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.write(b"\n")
            self.proc.stdin.flush()
            assert self.proc.stdout.readline() == b"released\n"
            self.proc.wait(10)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


@pytest.fixture
def live():
    benv = make_env(idle_ms=600_000)
    proc = BrokerProcess(benv).wait_ready()
    try:
        yield benv, proc
    finally:
        proc.stop()
        cleanup_broker_env(benv)


def test_write_lock_held_by_another_process_retries_only_within_deadlines(live):
    benv, proc = live
    assert benv.request(begin("warm"))["ok"] is True
    holder = LockHolder(benv.archive, "BEGIN IMMEDIATE")
    patient: dict = {}
    try:
        def long_request() -> None:
            try:
                patient["reply"] = benv.request(begin("patient"), timeout=25)
            except Exception as exc:  # asserted below
                patient["error"] = exc
            patient["at"] = time.monotonic()

        waiter = threading.Thread(target=long_request)
        waiter.start()
        # Short deadlines expire cleanly while the lock is held.
        for i in range(3):
            t0 = time.monotonic()
            with pytest.raises(DeadlineExceeded):
                benv.request(begin(f"impatient-{i}"), timeout=0.4)
            assert time.monotonic() - t0 >= 0.35
        # A request that is refused for its content is not retried: answered at once, while locked.
        with RawConn.ready(benv) as conn:
            conn.send_obj({"schema": "yarp.archive-broker.v1", "correlationId": conn.correlation_id,
                           "operationId": "0" * 64, "sourceKey": "0" * 64, "sequence": 0, "deadlineMs": 20_000,
                           "operation": {"operation": "begin_call"}})
            reply = conn.recv_obj()
            # A malformed operation breaks the adapter contract: its own code, a ValidationError.
            assert reply["ok"] is False and reply["code"] == "contract"
        assert "at" not in patient, "the patient request finished while the lock was held"
        retries_locked = benv.status()["retries"]
        assert retries_locked > 0
        released_at = time.monotonic()
        holder.release()
        waiter.join(30)
    finally:
        holder.kill()
    assert "error" not in patient, patient.get("error")
    assert patient["reply"]["ok"] is True and patient["at"] >= released_at
    db = benv.db()
    stored = sorted(r[0] for r in db.execute("SELECT source_call_id FROM tool_calls"))
    db.close()
    assert stored == ["patient", "warm"], stored  # no impatient call committed after its deadline
    status = benv.status()
    assert status["admitted"] == 0 and status["admittedBytes"] == 0
    archive_invariants(benv.archive)


def test_a_request_past_its_deadline_is_never_committed(live):
    benv, proc = live
    assert benv.request(begin("warm"))["ok"] is True
    holder = LockHolder(benv.archive, "BEGIN IMMEDIATE")
    try:
        with pytest.raises(DeadlineExceeded):
            benv.request(begin("expired"), timeout=0.1)
        # Released while the broker's first attempt is still inside SQLite's busy wait.
        holder.release()
    finally:
        holder.kill()
    time.sleep(0.5)
    db = benv.db()
    try:
        stored = {r[0] for r in db.execute("SELECT source_call_id FROM tool_calls")}
    finally:
        db.close()
    assert "expired" not in stored


def test_long_read_transaction_does_not_block_captures(live):
    benv, proc = live
    assert benv.request(begin("warm"))["ok"] is True
    reader = LockHolder(benv.archive, "BEGIN")
    try:
        for i in range(20):
            assert benv.request(begin(f"under-reader-{i}"), timeout=10)["ok"] is True
        assert benv.status()["retries"] == 0
    finally:
        reader.release()
    assert count_rows(benv, "tool_calls") == 21
    assert run_verify(benv).returncode == 0


def test_idle_shutdown_checkpoint_blocked_by_a_reader_is_visible():
    benv = make_env(idle_ms=300)
    proc = BrokerProcess(benv).wait_ready()
    reader = None
    try:
        assert benv.request(begin("before-reader"))["ok"] is True
        reader = LockHolder(benv.archive, "BEGIN")
        assert benv.request(begin("after-reader"))["ok"] is True
        assert proc.wait_exit(30) == 0
        # The data is durable either way; what must not happen is a silent "clean" checkpoint.
        assert os.path.getsize(benv.archive + "-wal") > 0
        events = [e["event"] for e in proc.events()]
        assert "checkpoint_failed" in events, events
    finally:
        if reader is not None:
            reader.kill()
        proc.stop()
        cleanup_broker_env(benv)


@pytest.mark.soak
@pytest.mark.parametrize("round_", range(20))
def test_deadline_under_foreign_lock_soak(live, round_):
    benv, _proc = live
    holder = LockHolder(benv.archive, "BEGIN IMMEDIATE")
    try:
        with pytest.raises(DeadlineExceeded):
            benv.request(begin(f"expired-{round_}"), timeout=0.05 + round_ * 0.01)
        holder.release()
    finally:
        holder.kill()
    assert benv.request(begin(f"fresh-{round_}"), timeout=10)["ok"] is True
    db = benv.db()
    try:
        assert db.execute("SELECT count(*) FROM tool_calls WHERE source_call_id LIKE 'expired-%'").fetchone()[0] == 0
    finally:
        db.close()
