"""The broker's wire contract against a real broker process: handshake and envelopes.

Every malformed handshake or request gets a bounded error (never an echo of
its payload) or a closed connection, and the broker keeps serving everyone else.
"""

from __future__ import annotations

import struct
import time

import orjson
import pytest

from broker_helpers import BrokerProcess, RawConn, begin, cleanup_broker_env, make_broker_env, result_before
from yarp.wire import operations as ops
from yarp.wire import protocol
from yarp._version import __version__
from yarp.limits import MAX_ERROR_CHARS, MAX_FRAME_BYTES, MAX_HANDSHAKE_BYTES

SECRET = "s3cr3t-payload-marker-7f1c"


@pytest.fixture(scope="module")
def served():
    benv = make_broker_env(idle_ms=60_000)
    proc = BrokerProcess(benv).wait_ready()
    try:
        yield benv, proc
    finally:
        proc.stop()
        cleanup_broker_env(benv)


def _still_serving(benv, call: str) -> None:
    reply = benv.request(begin(call))
    assert reply["ok"] is True and reply["archiveRef"].startswith("yr_")


def _hello(benv, **changes):
    obj = {
        "schema": protocol.SCHEMA,
        "binaryVersion": __version__,
        "archiveId": benv.paths.archive_id,
        "correlationId": "c-handshake-1",
    }
    for key, value in changes.items():
        if value is _DROP:
            obj.pop(key)
        else:
            obj[key] = value
    return obj


_DROP = object()


@pytest.mark.parametrize(
    "changes, wording",
    [
        ({"schema": "yarp.archive-broker.v2"}, "schema"),
        ({"binaryVersion": "0.0.0-other"}, "binary version"),
        ({"archiveId": "0" * 32}, "another archive"),
        ({"archiveId": "not-hex"}, "archive id is malformed"),
        ({"correlationId": "bad id with spaces"}, "correlation id"),
        ({"correlationId": "x" * 65}, "correlation id"),
        ({"correlationId": ""}, "correlation id"),
        ({"correlationId": 7}, "correlation id"),
        ({"correlationId": _DROP}, "fields"),
        ({"extra": True}, "fields"),
    ],
)
def test_bad_handshake_is_refused_and_connection_closed(served, changes, wording):
    benv, _ = served
    with RawConn(benv.paths.socket) as conn:
        conn.send_obj(_hello(benv, **changes))
        reply = conn.recv_obj()
        assert reply["ok"] is False
        assert reply["code"] == "handshake"
        assert wording in reply["error"]
        assert len(reply["error"]) <= MAX_ERROR_CHARS
        assert conn.at_eof()
    _still_serving(benv, f"after-handshake-{wording}")


def test_handshake_reply_carries_the_connection_fields(served):
    benv, _ = served
    with RawConn(benv.paths.socket) as conn:
        reply = conn.handshake(benv.paths.archive_id, "c-abc.1:2")
    assert reply == {
        "schema": protocol.SCHEMA,
        "binaryVersion": __version__,
        "archiveId": benv.paths.archive_id,
        "correlationId": "c-abc.1:2",
        "ok": True,
    }


def test_oversize_handshake_frame_is_refused_before_reading_it(served):
    benv, _ = served
    with RawConn(benv.paths.socket) as conn:
        conn.send_raw(struct.pack(">Q", MAX_HANDSHAKE_BYTES + 1))
        assert conn.at_eof()
    _still_serving(benv, "after-big-handshake")


def test_handshake_that_is_not_json_closes_the_connection(served):
    benv, _ = served
    with RawConn(benv.paths.socket) as conn:
        conn.send_frame(b"\xff\xfe not json " + SECRET.encode())
        reply = conn.recv_obj()
        assert reply["ok"] is False and SECRET not in orjson.dumps(reply).decode()
        assert conn.at_eof()


def _good_envelope(conn: RawConn, operation) -> dict:
    return orjson.loads(protocol.envelope(operation, conn.correlation_id, 5_000))


def _mutations():
    op = result_before("env-call", {"out": SECRET})
    other = result_before("env-other", {"out": SECRET})
    prune = ops.PruneBefore(1)

    def m(fn):
        return fn

    return [
        ("unknown field", m(lambda e: e.update(extra=1))),
        ("missing field", m(lambda e: e.pop("deadlineMs"))),
        ("schema", m(lambda e: e.update(schema="yarp.archive-broker.v0"))),
        ("correlation id", m(lambda e: e.update(correlationId="c-someone-else"))),
        ("operation id malformed", m(lambda e: e.update(operationId="ABC"))),
        ("operation id mismatched", m(lambda e: e.update(operationId=ops.operation_id(other)))),
        ("operation id of another kind", m(lambda e: e.update(operationId=ops.operation_id(prune)))),
        ("source key malformed", m(lambda e: e.update(sourceKey="z" * 64))),
        ("source key mismatched", m(lambda e: e.update(sourceKey=ops.source_key(other)))),
        ("sequence not the operation's", m(lambda e: e.update(sequence=0))),
        ("sequence unknown", m(lambda e: e.update(sequence=9))),
        ("sequence bool", m(lambda e: e.update(sequence=True))),
        ("deadline zero", m(lambda e: e.update(deadlineMs=0))),
        ("deadline too long", m(lambda e: e.update(deadlineMs=30_001))),
        ("deadline float", m(lambda e: e.update(deadlineMs=10.5))),
        ("unknown operation", m(lambda e: e["operation"].update(operation="drop_table"))),
        ("unknown operation field", m(lambda e: e["operation"].update(sneaky=SECRET))),
        ("operation not an object", m(lambda e: e.update(operation=[SECRET]))),
        ("bad operation data", m(lambda e: e["operation"].update(capturedAtMs=-1))),
        ("unknown control", m(lambda e: e.clear() or e.update(schema=protocol.SCHEMA, correlationId="x", control="drop"))),
    ], op


def test_every_invalid_envelope_gets_a_bounded_error_without_echo(served):
    benv, _ = served
    mutations, op = _mutations()
    with RawConn.ready(benv) as conn:
        # The call exists so that a valid envelope would succeed.
        conn.send_op(begin("env-call"))
        assert conn.recv_obj()["ok"] is True
        for name, mutate in mutations:
            env = _good_envelope(conn, op)
            if name == "unknown control":
                env = {"schema": protocol.SCHEMA, "correlationId": conn.correlation_id, "control": "drop"}
            else:
                mutate(env)
            conn.send_obj(env)
            reply = conn.recv_obj()
            assert reply is not None, name
            assert reply["ok"] is False, name
            # What the operation itself holds breaks the adapter contract (a
            # relay ends with 74 for it); what routes it is the envelope's.
            expected = "contract" if name in ("unknown operation field", "bad operation data") else "validation"
            assert reply["code"] == expected, (name, reply)
            text = orjson.dumps(reply).decode()
            assert SECRET not in text, name
            assert len(reply["error"]) <= MAX_ERROR_CHARS
        # The same connection still works for a valid request afterwards.
        conn.send_obj(_good_envelope(conn, op))
        assert conn.recv_obj() == {"ok": True, "archiveRef": conn_ref(benv, "env-call")}


def conn_ref(benv, call: str) -> str:
    db = benv.db()
    try:
        return db.execute("SELECT archive_ref FROM tool_calls WHERE source_call_id = ?", (call,)).fetchone()[0]
    finally:
        db.close()


def test_invalid_json_and_non_object_envelopes(served):
    benv, _ = served
    with RawConn.ready(benv) as conn:
        for body in (b"{not json " + SECRET.encode(), b"[1, 2]", b'"text"', b"\xff\xfe"):
            conn.send_frame(body)
            reply = conn.recv_obj()
            if reply is None:  # closing the connection is an allowed answer
                break
            assert reply["ok"] is False and SECRET not in orjson.dumps(reply).decode()
    _still_serving(benv, "after-bad-json")


def test_zero_length_frame_closes_the_connection(served):
    benv, _ = served
    with RawConn.ready(benv) as conn:
        conn.send_raw(struct.pack(">Q", 0))
        reply = conn.recv_obj()
        assert reply is not None and reply["ok"] is False and reply["code"] == "frame"
        assert conn.at_eof()
    _still_serving(benv, "after-empty-frame")


def _rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_oversize_frame_is_refused_before_allocation(served):
    benv, proc = served
    before = _rss_kib(proc.pid)
    with RawConn.ready(benv) as conn:
        conn.send_raw(struct.pack(">Q", MAX_FRAME_BYTES + 1) + b"x" * 1024)
        reply = conn.recv_obj()
        assert reply["ok"] is False and reply["code"] == "frame_too_large"
        assert str(MAX_FRAME_BYTES) in reply["error"]
        assert conn.at_eof()
    # A legal but huge declared length must not be allocated up front either.
    with RawConn.ready(benv) as conn:
        conn.send_raw(struct.pack(">Q", MAX_FRAME_BYTES) + b"{")
        time.sleep(0.2)
        assert _rss_kib(proc.pid) - before < 64 * 1024
    _still_serving(benv, "after-oversize")


def test_request_before_handshake_reply_and_garbage_prefix(served):
    benv, _ = served
    with RawConn(benv.paths.socket) as conn:
        # An envelope in place of a handshake is a handshake failure.
        conn.send_frame(protocol.envelope(begin("x"), "c-1", 1000))
        reply = conn.recv_obj()
        assert reply["ok"] is False and reply["code"] == "handshake"
        assert conn.at_eof()


def test_pipelined_frames_get_ordered_replies(served):
    benv, _ = served
    with RawConn.ready(benv) as conn:
        frames = b"".join(
            struct.pack(">Q", len(f)) + f
            for f in (
                protocol.envelope(begin("pipe-1"), conn.correlation_id, 5000),
                protocol.envelope(result_before("pipe-1", {"n": 1}), conn.correlation_id, 5000),
                protocol.envelope(begin("pipe-2"), conn.correlation_id, 5000),
            )
        )
        conn.send_raw(frames)
        replies = [conn.recv_obj() for _ in range(3)]
    assert [r["ok"] for r in replies] == [True, True, True]
    assert replies[0]["archiveRef"] == replies[1]["archiveRef"] == conn_ref(benv, "pipe-1")
    assert replies[2]["archiveRef"] == conn_ref(benv, "pipe-2")


def test_replay_is_idempotent_and_conflicting_reuse_fails(served):
    benv, _ = served
    first = benv.request(begin("replay-1"))
    again = benv.request(begin("replay-1"))
    assert first == again
    with pytest.raises(Exception) as info:
        benv.request(begin("replay-1", tool="edit"))
    assert getattr(info.value, "code", None) == "conflict"
    db = benv.db()
    try:
        assert db.execute("SELECT count(*) FROM tool_calls WHERE source_call_id = 'replay-1'").fetchone()[0] == 1
    finally:
        db.close()


def test_status_control_reports_counters(served):
    benv, _ = served
    status = benv.status()
    for key in ("pid", "clients", "admitted", "queueDepth", "requests", "failures", "batches", "retries",
                "commitLatencyMsP50", "commitLatencyMsP99", "sequenceCacheKeys", "pool", "idleMs"):
        assert key in status
    assert status["requests"] >= 1 and status["clients"] >= 1
