"""Resource exhaustion against a live broker: idle connections, slowloris, clients that never read.

The broker's resident memory (VmRSS from /proc) is read before and after each
attack, and an ordinary client is served while the attack is still in place.
No timing assertions: "served" means a real capture is acknowledged and stored
within a generous deadline.
"""

from __future__ import annotations

import resource
import socket
import struct
import time

import orjson
import pytest

from broker_helpers import BrokerProcess, RawConn, begin
from reliability_helpers import broker_status, cleanup_broker_env, make_env, rss_kib, wait_for
from yarp._version import __version__
from yarp.wire import protocol

#: Growth of the broker's resident memory an attack may cause before we call it unbounded.
RSS_BUDGET_KIB = 48 * 1024


@pytest.fixture
def raised_nofile():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, 8192) if hard != resource.RLIM_INFINITY else 8192
    if want < 4200:
        pytest.skip(f"RLIMIT_NOFILE hard limit {hard} is too low for 2,000 connections on both ends")
    resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


@pytest.fixture
def live(fastframe_impl):
    benv = make_env(idle_ms=600_000)
    if fastframe_impl.IMPLEMENTATION == "py":
        benv.environ["YARP_NO_EXTENSIONS"] = "1"
    proc = BrokerProcess(benv).wait_ready()
    try:
        yield benv, proc, fastframe_impl.IMPLEMENTATION
    finally:
        proc.stop()
        cleanup_broker_env(benv)


def _served(benv, call: str) -> None:
    assert benv.request(begin(call), timeout=20)["ok"] is True


def _connect(path: str) -> socket.socket:
    end = time.monotonic() + 30
    while True:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(10)
        try:
            s.connect(path)
            return s
        except BlockingIOError:
            # The listen backlog is full until the broker accepts: that is
            # backpressure, not refusal.
            s.close()
            if time.monotonic() > end:
                raise
            time.sleep(0.005)


def test_two_thousand_idle_connections(raised_nofile):
    idle_connections(2000)


@pytest.mark.soak
def test_eight_thousand_idle_connections_soak():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 8400:
        pytest.skip(f"RLIMIT_NOFILE hard limit {hard} is too low for 8,000 connections")
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard if hard != resource.RLIM_INFINITY else 16384, hard))
    try:
        idle_connections(8000)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def idle_connections(count: int) -> None:
    # The broker inherits the raised limit from this process.
    benv = make_env(idle_ms=600_000)
    proc = BrokerProcess(benv).wait_ready()
    conns: list[socket.socket] = []
    try:
        _served(benv, "warm")
        before = rss_kib(proc.pid)
        for i in range(count):
            s = _connect(benv.paths.socket)
            if i % 2:
                # Half of them handshake and then say nothing more.
                hello = orjson.dumps({"schema": protocol.SCHEMA, "binaryVersion": __version__,
                                      "archiveId": benv.paths.archive_id, "correlationId": f"idle-{i}"})
                s.sendall(struct.pack(">Q", len(hello)) + hello)
            conns.append(s)
        wait_for(lambda: broker_status(benv)["clients"] >= count, 60, 0.2)
        _served(benv, "among-idle")
        grown = rss_kib(proc.pid) - before
        print(f"{count} idle connections: broker RSS {before} -> {before + grown} KiB")
        assert grown < RSS_BUDGET_KIB * max(1, count // 2000), f"{grown} KiB for {count} idle connections"
    finally:
        for s in conns:
            s.close()
    try:
        wait_for(lambda: broker_status(benv)["clients"] == 1, 30, 0.1)
        status = broker_status(benv)
        assert status["admitted"] == 0 and status["admittedBytes"] == 0
        _served(benv, "after-idle")
    finally:
        proc.stop()
        cleanup_broker_env(benv)


def test_slowloris_half_frames_do_not_hold_memory_or_block_others(live):
    benv, proc, impl = live
    _served(benv, "warm")
    before = rss_kib(proc.pid)
    loris = []
    try:
        for i in range(8):
            conn = RawConn.ready(benv)
            # Declares 32 MiB, sends 100 bytes, then nothing.
            conn.send_raw(struct.pack(">Q", 32 * 1024 * 1024) + b"x" * 100)
            loris.append(conn)
        # Another header trickled one byte at a time, never finished.
        trickle = RawConn.ready(benv)
        for b in struct.pack(">Q", 1000)[:5]:
            trickle.send_raw(bytes([b]))
        loris.append(trickle)
        time.sleep(0.3)
        _served(benv, "beside-loris")
        grown = rss_kib(proc.pid) - before
        status = broker_status(benv)
        # Half frames are never admitted: they hold no admission budget.
        assert status["admitted"] == 0 and status["admittedBytes"] == 0
    finally:
        for conn in loris:
            conn.close()
    print(f"slowloris ({impl}): broker RSS {before} -> {before + grown} KiB")
    assert grown < RSS_BUDGET_KIB, f"{grown} KiB held for 8 half-sent frames"
    wait_for(lambda: broker_status(benv)["clients"] == 1, 30, 0.1)


def test_a_client_that_never_reads_its_replies_is_bounded(live):
    benv, proc, _impl = live
    _served(benv, "warm")
    before = rss_kib(proc.pid)
    deaf = RawConn.ready(benv)
    body = protocol.control(deaf.correlation_id, "status")
    burst = (struct.pack(">Q", len(body)) + body) * 500
    deaf.sock.settimeout(2)
    try:
        for _ in range(400):  # 200,000 requests, about 20 MB, never reading a reply
            deaf.sock.sendall(burst)
    except socket.timeout:
        pass  # the broker stopped reading us: the bound we want
    try:
        _served(benv, "beside-deaf")
        grown = rss_kib(proc.pid) - before
    finally:
        deaf.close()
    print(f"unread replies: broker RSS {before} -> {before + grown} KiB")
    assert grown < RSS_BUDGET_KIB, f"{grown} KiB of unread replies"


def test_a_client_that_never_reads_its_acknowledgements_does_not_block_others(live):
    benv, proc, _impl = live
    deaf = RawConn.ready(benv)
    try:
        for i in range(200):
            deaf.send_op(begin(f"deaf-{i}"))
        # Every pipelined request is applied even though no reply is read.
        db = benv.db
        wait_for(lambda: _count(db, "deaf-%") == 200, 60, 0.05)
        _served(benv, "beside-deaf-acks")
        assert proc.proc.poll() is None
    finally:
        deaf.close()
    wait_for(lambda: broker_status(benv)["admitted"] == 0, 30, 0.1)


def _count(db_factory, pattern: str) -> int:
    conn = db_factory()
    try:
        return conn.execute("SELECT count(*) FROM tool_calls WHERE source_call_id LIKE ?", (pattern,)).fetchone()[0]
    finally:
        conn.close()
