"""Admission, ordering, backpressure, batching and commit behaviour of a real broker."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import struct
import subprocess
import sys
import tempfile
import threading
import time

import orjson
import pytest
import rfc8785

from broker_helpers import (
    BrokerProcess,
    RawConn,
    WriteLock,
    begin,
    cleanup_broker_env,
    count_rows,
    finish,
    make_broker_env,
    pipeline,
    result_before,
    session,
    wait_for,
)
from broker_helpers import broker, broker_env  # noqa: F401  (fixtures)
from yarp.wire import protocol
from yarp.errors import DeadlineExceeded
from yarp.limits import MAX_ADMITTED_TOTAL, MAX_BATCH_REQUESTS, MAX_SEQUENCE_CACHE_KEYS


def _ref(benv, call: str):
    db = benv.db()
    try:
        row = db.execute("SELECT archive_ref FROM tool_calls WHERE source_call_id = ?", (call,)).fetchone()
        return row and row[0]
    finally:
        db.close()


def test_sequence_regression_is_rejected_and_finish_clears_the_key(broker_env, broker):
    with RawConn.ready(broker_env) as conn:
        conn.send_op(begin("seq"))
        ref = conn.recv_obj()["archiveRef"]
        conn.send_op(result_before("seq", {"out": 1}))
        assert conn.recv_obj() == {"ok": True, "archiveRef": ref}
        keys = broker_env.status()["sequenceCacheKeys"]
        conn.send_op(begin("seq"))
        reply = conn.recv_obj()
        assert reply["ok"] is False and reply["code"] == "validation"
        assert "arrived after a later operation" in reply["error"]
        conn.send_op(finish("seq", {"final": 1}))
        assert conn.recv_obj()["ok"] is True
        assert broker_env.status()["sequenceCacheKeys"] == keys - 1
        # With the key gone, the durable rows decide: an identical replay is idempotent.
        conn.send_op(begin("seq"))
        assert conn.recv_obj() == {"ok": True, "archiveRef": ref}


def test_sequence_cache_is_bounded(broker_env, broker):
    first = [begin("old-0"), result_before("old-0", {"r": 0})]
    assert [r["ok"] for r in pipeline(broker_env, first, connections=1)] == [True, True]
    many = [begin(f"k-{i}", session("bulk")) for i in range(MAX_SEQUENCE_CACHE_KEYS + 8)]
    replies = pipeline(broker_env, many, connections=32)
    assert all(r["ok"] for r in replies)
    status = broker_env.status()
    assert status["sequenceCacheKeys"] == MAX_SEQUENCE_CACHE_KEYS
    # Batching really happened under concurrency.
    assert status["batches"] < status["requests"]
    # The oldest key was evicted: its regression is no longer visible to the
    # cache, and the durable rows accept an identical replay.
    (reply,) = pipeline(broker_env, [begin("old-0")], connections=1)
    assert reply["ok"] is True and reply["archiveRef"] == _ref(broker_env, "old-0")


def test_round_robin_a_pipelining_client_cannot_starve_another(broker_env, broker):
    broker_env.request(begin("warm"))
    lock = WriteLock(broker_env.archive)
    a_replies: list = []
    a_count_when_b_done: list = []
    try:
        a = RawConn.ready(broker_env, timeout=30)
        b = RawConn.ready(broker_env, timeout=30)
        frames = b"".join(
            struct.pack(">Q", len(f)) + f
            for f in (protocol.envelope(begin(f"a-{i}", session("A")), a.correlation_id, 20_000) for i in range(40))
        )
        a.send_raw(frames)

        def read_a():
            for _ in range(40):
                a_replies.append(a.recv_obj())

        reader = threading.Thread(target=read_a)
        reader.start()
        wait_for(lambda: broker_env.status()["admitted"] >= 1)
        b.send_op(begin("b-0", session("B")), 20_000)
        wait_for(lambda: broker_env.status()["admitted"] >= 2)
        assert broker_env.status()["admitted"] == 2, "one admitted request per client"
    finally:
        lock.release()
    assert b.recv_obj()["ok"] is True
    a_count_when_b_done.append(len(a_replies))
    reader.join(30)
    assert len(a_replies) == 40 and all(r["ok"] for r in a_replies)
    # Fairness is about commit order, which the rows record: B's one request
    # committed within A's first few, not after A's 40. (When this thread saw
    # B's reply depends on thread scheduling on a loaded machine.)
    db = broker_env.db()
    order = [row[0] for row in db.execute("SELECT source_call_id FROM tool_calls ORDER BY id")]
    db.close()
    a_before_b = sum(1 for cid in order[: order.index("b-0")] if cid.startswith("a-"))
    assert a_before_b <= 3, (a_before_b, a_count_when_b_done)
    a.close()
    b.close()


def test_busy_archive_is_retried_within_the_deadline(broker_env, broker):
    broker_env.request(begin("busy-warm"))
    lock = WriteLock(broker_env.archive)
    try:
        with RawConn.ready(broker_env, timeout=20) as short, RawConn.ready(broker_env, timeout=20) as long:
            long.send_op(begin("busy-long"), deadline_ms=15_000)
            short.send_op(begin("busy-short"), deadline_ms=700)
            started = time.monotonic()
            reply = short.recv_obj()
            assert reply["ok"] is False and reply["code"] == "deadline"
            assert time.monotonic() - started < 10
            assert broker_env.status()["retries"] >= 1
            lock.release()
            assert long.recv_obj()["ok"] is True
    finally:
        lock.release()
    assert _ref(broker_env, "busy-long") and not _ref(broker_env, "busy-short")
    # The client library reports the same outcome as a typed error.
    lock = WriteLock(broker_env.archive)
    try:
        with pytest.raises(DeadlineExceeded):
            broker_env.request(begin("busy-client"), timeout=0.6)
    finally:
        lock.release()


def test_savepoint_isolation_inside_one_batch(broker_env, broker):
    broker_env.request(begin("iso-existing"))
    broker_env.request(result_before("iso-existing", {"out": "first"}))
    before = broker_env.status()
    lock = WriteLock(broker_env.archive)
    conns = [RawConn.ready(broker_env, timeout=30) for _ in range(4)]
    shared = {"shared": "payload", "n": 42}
    try:
        conns[0].send_op(begin("iso-0", input_obj={"first": True}))
        wait_for(lambda: broker_env.status()["retries"] > before["retries"])
        conns[1].send_op(begin("iso-1", input_obj=shared))
        # A conflict: different result bytes for a snapshot that already exists.
        conns[2].send_op(result_before("iso-existing", {"out": "different", **shared}))
        conns[3].send_op(begin("iso-3", input_obj=shared))
        # All four are prepared and waiting: queued, or already topped up into
        # the batch the broker keeps retrying while the lock is held.
        wait_for(lambda: (lambda st: st["queueDepth"] + st["batchRequests"] >= 4)(broker_env.status()))
    finally:
        lock.release()
    replies = [c.recv_obj() for c in conns]
    for c in conns:
        c.close()
    assert [r["ok"] for r in replies] == [True, True, False, True]
    assert replies[2]["code"] == "conflict"
    after = broker_env.status()
    # Four ordered requests in at most two batches: whatever the split, the
    # conflicting third request shared its batch with a good one.
    assert after["batches"] - before["batches"] in (1, 2)
    db = broker_env.db()
    try:
        assert db.execute("PRAGMA foreign_key_check").fetchall() == []
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        shared_sha = hashlib.sha256(rfc8785.dumps(shared)).digest()
        conflict_sha = hashlib.sha256(rfc8785.dumps({"out": "different", **shared})).digest()
        assert db.execute("SELECT count(*) FROM payloads WHERE sha256 = ?", (shared_sha,)).fetchone()[0] == 1
        assert db.execute("SELECT count(*) FROM payloads WHERE sha256 = ?", (conflict_sha,)).fetchone()[0] == 0
        orphans = db.execute(
            "SELECT count(*) FROM snapshots s LEFT JOIN payloads p ON p.sha256 = s.payload_sha256 WHERE p.sha256 IS NULL"
        ).fetchone()[0]
        assert orphans == 0
    finally:
        db.close()


def test_full_queue_pauses_reading_and_deadlines_still_apply(broker_env, broker):
    broker_env.request(begin("q-warm"))
    extra = 4
    lock = WriteLock(broker_env.archive)
    conns = [RawConn.ready(broker_env, timeout=60) for _ in range(MAX_ADMITTED_TOTAL + extra)]
    try:
        for i, c in enumerate(conns[:MAX_ADMITTED_TOTAL]):
            c.send_op(begin(f"q-{i}"), deadline_ms=30_000)
        wait_for(lambda: broker_env.status()["admitted"] == MAX_ADMITTED_TOTAL, 20)
        for i, c in enumerate(conns[MAX_ADMITTED_TOTAL:]):
            c.send_op(begin(f"late-{i}"), deadline_ms=800)
        status = wait_for(lambda: (s := broker_env.status())["waitingClients"] == extra and s, 10)
        assert status["admitted"] == MAX_ADMITTED_TOTAL
        time.sleep(1.0)  # past the late requests' deadline, still blocked
    finally:
        lock.release()
    replies = [c.recv_obj() for c in conns]
    for c in conns:
        c.close()
    assert all(r["ok"] for r in replies[:MAX_ADMITTED_TOTAL])
    assert [r["code"] for r in replies[MAX_ADMITTED_TOTAL:]] == ["deadline"] * extra
    assert count_rows(broker_env, "tool_calls") == MAX_ADMITTED_TOTAL + 1
    final = broker_env.status()
    assert final["admitted"] == 0 and final["waitingClients"] == 0
    assert final["batches"] <= (MAX_ADMITTED_TOTAL + 1) // 2


def test_batches_never_exceed_the_request_bound(broker_env, broker):
    lock = WriteLock(broker_env.archive)
    try:
        ops_ = [begin(f"b-{i}") for i in range(MAX_BATCH_REQUESTS * 2 + 1)]
        result: list = []
        t = threading.Thread(target=lambda: result.extend(pipeline(broker_env, ops_, connections=len(ops_))))
        t.start()
        wait_for(lambda: broker_env.status()["admitted"] == len(ops_), 20)
    finally:
        lock.release()
    t.join(60)
    assert all(r["ok"] for r in result) and len(result) == len(ops_)
    # 65 requests: at least three batches of at most 32 each.
    assert broker_env.status()["batches"] >= 3


@pytest.fixture
def tiny_fs():
    mnt = tempfile.mkdtemp(prefix="yrfs", dir="/tmp")
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m,mode=0700", "tmpfs", mnt], capture_output=True)
    if proc.returncode != 0:
        os.rmdir(mnt)
        pytest.skip("cannot mount a 1 MiB tmpfs here (needs root and mount permission)")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", mnt])
        os.rmdir(mnt)


def test_outer_commit_failure_acknowledges_nothing(tiny_fs):
    benv = make_broker_env(idle_ms=60_000)
    from yarp.paths import ArchiveLocation

    benv.location = ArchiveLocation(os.path.join(tiny_fs, "tool-calls.sqlite3"), False)
    proc = BrokerProcess(benv).wait_ready()
    try:
        assert benv.request(begin("fs-first"))["ok"] is True
        filler = os.path.join(tiny_fs, "filler")
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            while True:
                os.write(fd, b"\0" * 4096)
        except OSError:
            pass
        finally:
            os.close(fd)
        blobs = [os.urandom(48 * 1024).hex() for _ in range(4)]
        replies = pipeline(benv, [begin(f"fs-{i}", input_obj={"blob": b}) for i, b in enumerate(blobs)], connections=4)
        assert all(r["ok"] is False for r in replies), replies
        assert {r["code"] for r in replies} == {"disk_full"}
        for r in replies:
            assert not any(b[:64] in r["error"] for b in blobs)
        assert count_rows(benv, "tool_calls") == 1
        os.unlink(filler)
        replies = pipeline(benv, [begin(f"fs-{i}", input_obj={"blob": b[:2048]}) for i, b in enumerate(blobs)], connections=4)
        assert all(r["ok"] for r in replies)
    finally:
        proc.stop()
    db = sqlite3.connect(benv.archive)
    try:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert db.execute("SELECT count(*) FROM tool_calls").fetchone()[0] == 5
        assert db.execute("PRAGMA foreign_key_check").fetchall() == []
    finally:
        db.close()
        cleanup_broker_env(benv)


def test_status_command_human_and_json(broker_env):
    def run(*args):
        return subprocess.run(
            [sys.executable, "-m", "yarp", "archive", "broker", "status", "--archive", broker_env.archive, *args],
            env=broker_env.environ, capture_output=True, text=True, timeout=30,
        )

    out = run()
    assert out.returncode == 0 and out.stdout.strip() == "broker: not running"
    assert orjson.loads(run("--json").stdout) == {"running": False}
    proc = BrokerProcess(broker_env).wait_ready()
    try:
        broker_env.request(begin("status-cmd"))
        data = orjson.loads(run("--json").stdout)
        assert data["running"] is True and data["pid"] == proc.pid
        assert data["requests"] >= 1 and data["batches"] >= 1
        human = run().stdout.splitlines()
        assert "running: True" in human and f"pid: {proc.pid}" in human
        assert any(line.startswith("commitLatencyMsP99: ") for line in human)
    finally:
        proc.stop()
