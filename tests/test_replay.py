"""Replay after transport failures, with real brokers killed by real signals.

`SafeReplay` captures are re-sent on a new connection (the bridge starts a new
broker) within their original deadline and land exactly once; a conflicting
replay is refused; a prune whose acknowledgement is lost is reported as an
unknown outcome and never re-sent; a stopped broker makes the bridge give up
at the request's deadline with exit status 74.
"""

from __future__ import annotations

import base64
import dataclasses
import os
import signal
import time

import pytest

from ingest_helpers import (
    Sandbox,
    begin_call,
    finish_call,
    prune_before,
    result_before,
    result_text,
    session,
)
from yarp.wire import operations as ops
from yarp.wire import validation as validate


@pytest.fixture
def sandbox(tmp_path):
    sb = Sandbox.create(tmp_path / "sb")
    yield sb
    sb.close()


def counts(sb: Sandbox) -> tuple[int, int, int]:
    return sb.query("SELECT (SELECT count(*) FROM tool_calls), (SELECT count(*) FROM snapshots),"
                    " (SELECT count(*) FROM payloads)")[0]


def stop(pid: int) -> None:
    os.kill(pid, signal.SIGSTOP)
    # SIGSTOP is asynchronous: wait until the kernel reports the process stopped.
    end = time.monotonic() + 5
    while time.monotonic() < end:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            if fh.read().rsplit(b")", 1)[1].split()[0] == b"T":
                return
        time.sleep(0.005)
    raise AssertionError("broker did not stop")


# --- the policy is exhaustive -------------------------------------------------------------


SAMPLES = {
    "begin_call": begin_call(session(), "c"),
    "capture_streams": {"operation": "capture_streams", "session": session(), "sourceCallId": "c", "capturedAtMs": 1,
                        "stdoutBeforePath": "/a", "stderrBeforePath": "/b", "stdoutAfterPath": "/c",
                        "stderrAfterPath": "/d"},
    "capture_passthrough_streams": {"operation": "capture_passthrough_streams", "session": session(),
                                    "sourceCallId": "c", "capturedAtMs": 1, "stdoutPath": "/a", "stderrPath": "/b"},
    "result_before": result_before(session(), "c", {}),
    "result_text": result_text(session(), "c", "t"),
    "stage_result": {"operation": "stage_result", "session": session(), "sourceCallId": "c", "result": {},
                     "isError": False, "capturedAtMs": 1},
    "finish_call": finish_call(session(), "c", {}),
    "update_final_result": {"operation": "update_final_result", "session": session(), "sourceCallId": "c",
                            "result": {}, "isError": False, "finishedAtMs": 1},
    "prune_before": prune_before(1),
    "import_calls": ops.operation_to_json(ops.import_calls(
        [ops.ImportedCall(ops.Session("pi", "me", "s"), ops.CallMeta("c", "bash", 1, False), {})], 1)),
}


def test_every_operation_type_has_an_explicit_replay_policy():
    assert {t.kind for t in ops.OPERATION_TYPES} == set(SAMPLES) == set(ops.OPERATIONS_BY_KIND)
    for op_type in ops.OPERATION_TYPES:
        operation = validate.parse_operation(SAMPLES[op_type.kind])
        assert type(operation) is op_type
        expected = (ops.ReplayPolicy.UNKNOWN_ON_DISCONNECT if op_type is ops.PruneBefore
                    else ops.ReplayPolicy.SAFE_REPLAY)
        assert ops.replay_policy(operation) is expected, op_type.__name__
    assert {p.value for p in ops.REPLAY_POLICIES} == {"SafeReplay", "UnknownOnDisconnect"}


def test_a_new_operation_without_a_policy_raises():
    @dataclasses.dataclass(frozen=True)
    class ForgetCall:
        source_call_id: str
        kind = "forget_call"
        sequence = 7

    with pytest.raises(TypeError, match="ForgetCall"):
        ops.replay_policy(ForgetCall("c"))


# --- SafeReplay: kill -9 between send and acknowledgement ---------------------------------------


def test_kill9_while_a_large_request_is_in_flight_replays_exactly_once(sandbox):
    sess = session("sess-replay")
    ing = sandbox.ingest()
    ref = ing.request(begin_call(sess, "c1", tool="read"))["archiveRef"]
    before = counts(sandbox)
    first = sandbox.wait_broker()
    stop(first)
    # 8 MiB cannot sit in the socket buffer: the bridge is mid-send when the broker dies.
    big = {"content": [{"type": "text", "text": base64.b64encode(os.urandom(6 * 1024 * 1024)).decode()}]}
    request_id = ing.send(result_before(sess, "c1", big))
    time.sleep(0.3)
    os.kill(first, signal.SIGKILL)
    reply = ing.ack(timeout=30)
    assert reply == {"requestId": request_id, "ok": True}
    second = sandbox.wait_broker()
    assert second != first
    assert counts(sandbox) == (before[0], before[1] + 1, before[2] + 1)
    # The same call, the same reference, after the new broker took over.
    assert ing.request(result_text(sess, "c1", "text"))["archiveRef"] == ref
    assert ing.wait() == 0


def test_kill9_with_a_request_queued_in_the_socket_replays_it(sandbox):
    sess = session("sess-queued")
    warm = sandbox.ingest()
    warm.request(begin_call(sess, "warm"))
    ing = sandbox.ingest()
    assert ing.request(begin_call(sess, "warm"))["ok"] is True  # connected to the running broker
    first = sandbox.wait_broker()
    stop(first)
    request_id = ing.send(begin_call(sess, "c2", input_before={"command": "ls"}, deadline_in_ms=20_000))
    time.sleep(0.2)
    os.kill(first, signal.SIGKILL)
    reply = ing.ack(timeout=30)
    assert reply["requestId"] == request_id and reply["ok"] is True
    # Identical replay from a fresh process (what the bridge re-sends): same ref, nothing new stored.
    stored = counts(sandbox)
    again = sandbox.ingest()
    assert again.request(begin_call(sess, "c2", input_before={"command": "ls"}))["archiveRef"] == reply["archiveRef"]
    assert again.request(result_before(sess, "c2", {"n": 1}))["ok"] is True
    assert again.request(result_before(sess, "c2", {"n": 1}))["ok"] is True
    assert counts(sandbox) == (stored[0], stored[1] + 1, stored[2] + 1)
    for proc in (warm, ing, again):
        assert proc.wait() == 0
    assert sandbox.query("SELECT count(*) FROM tool_calls WHERE source_call_id = 'c2'") == [(1,)]


def test_conflicting_replay_is_refused(sandbox):
    sess = session("sess-conflict")
    ing = sandbox.ingest()
    ref = ing.request(begin_call(sess, "c1", input_before={"command": "ls"}))["archiveRef"]
    other = sandbox.ingest()
    meta = other.request(begin_call(sess, "c1", input_before={"command": "ls"}, started_at_ms=5))
    assert meta["ok"] is False and "different metadata" in meta["error"] and "archiveRef" not in meta
    content = other.request(begin_call(sess, "c1", input_before={"command": "rm -rf /"}))
    assert content["ok"] is False and "different content" in content["error"]
    assert other.request(begin_call(sess, "c1", input_before={"command": "ls"}))["archiveRef"] == ref
    assert ing.request(result_before(sess, "c1", {"out": "a"}))["ok"] is True
    stored = counts(sandbox)
    result = other.request(result_before(sess, "c1", {"out": "b"}))
    assert result["ok"] is False and "different content" in result["error"]
    # A rejection is not a transport failure: the bridge goes on.
    assert other.request(result_before(sess, "c1", {"out": "a"}))["ok"] is True
    assert counts(sandbox) == stored
    assert other.wait() == 0 and ing.wait() == 0


# --- UnknownOnDisconnect: prune is never re-sent ----------------------------------------------


def populate(ing, sess, calls: int, *, blob_bytes: int, cut: int) -> None:
    """`calls` finished calls with distinct incompressible results, alternately before and after `cut`."""
    for i in range(calls):
        cid = f"c{i}"
        ing.request(begin_call(sess, cid, tool="read", input_before={"i": i}))
        ing.request(result_before(sess, cid, {"blob": base64.b64encode(os.urandom(blob_bytes)).decode()}))
        ing.request(finish_call(sess, cid, {"i": i}, finished_at_ms=cut - 1000 if i % 2 == 0 else cut + 1000))


def test_lost_prune_acknowledgement_after_commit_is_an_unknown_outcome(sandbox):
    sess = session("sess-prune")
    cut = 1_700_000_500_000
    ing = sandbox.ingest()
    # Interleaved old and new payloads make the vacuum steps after the deletions move
    # pages, which holds the acknowledgement back long enough to kill the broker in between.
    populate(ing, sess, 100, blob_bytes=200_000, cut=cut)
    broker = sandbox.wait_broker()
    conn = sandbox.ro()
    request_id = ing.send(prune_before(cut))
    while conn.execute("SELECT count(*) FROM tool_calls").fetchone()[0] == 100:
        pass
    os.kill(broker, signal.SIGKILL)
    conn.close()
    reply = ing.ack(timeout=30)
    assert reply["requestId"] == request_id and reply["ok"] is False and "prunedCalls" not in reply, reply
    assert "unknown" in reply["error"]
    assert "yarp archive stats" in reply["error"] and "yarp archive verify" in reply["error"]
    # Not re-sent: no broker was started again for it; the steps that committed stand.
    assert sandbox.brokers() == []
    (left,) = sandbox.query("SELECT count(*) FROM tool_calls")[0]
    assert 50 <= left < 100
    # The bridge itself goes on; the same prune again deletes exactly what the first left.
    assert ing.request(prune_before(cut))["prunedCalls"] == left - 50
    stats = sandbox.yarp("archive", "stats")
    assert stats.returncode == 0 and b"calls: 50" in stats.stdout
    assert ing.wait() == 0


def test_prune_lost_before_the_broker_read_it_is_not_re_sent(sandbox):
    sess = session("sess-prune-stopped")
    cut = 1_700_000_500_000
    ing = sandbox.ingest()
    populate(ing, sess, 4, blob_bytes=100, cut=cut)
    broker = sandbox.wait_broker()
    stop(broker)
    request_id = ing.send(prune_before(cut))
    time.sleep(0.2)
    os.kill(broker, signal.SIGKILL)
    reply = ing.ack(timeout=30)
    assert reply["requestId"] == request_id and reply["ok"] is False
    assert "unknown" in reply["error"]
    # A re-sent prune would have deleted the two old calls.
    assert sandbox.query("SELECT count(*) FROM tool_calls") == [(4,)]
    assert sandbox.brokers() == []
    assert ing.wait() == 0


# --- deadlines -----------------------------------------------------------------------------


def test_a_stopped_broker_makes_the_bridge_exit_74_at_the_deadline(sandbox):
    sess = session("sess-deadline")
    ing = sandbox.ingest()
    ing.request(begin_call(sess, "c1"))
    broker = sandbox.wait_broker()
    stop(broker)
    sent = time.monotonic()
    request_id = ing.send(begin_call(sess, "c2", deadline_in_ms=1500))
    reply = ing.ack(timeout=20)
    waited = time.monotonic() - sent
    assert reply["requestId"] == request_id and reply["ok"] is False and "deadline" in reply["error"]
    assert ing.wait(timeout=10) == 74
    err = ing.stderr_text()
    assert err.count("\n") == 1 and "deadline" in err
    # It waited for its deadline, not for the 30 s default, and not less.
    assert 1.3 <= waited < 10, waited
    os.kill(broker, signal.SIGKILL)


def test_a_client_that_gave_up_on_a_request_does_not_read_its_late_reply(sandbox):
    from yarp.clients.broker import BrokerClient
    from yarp.errors import DeadlineExceeded
    from yarp.paths import ArchiveLocation

    sess = session("sess-late")
    with BrokerClient(ArchiveLocation(str(sandbox.archive), False), sandbox.env()) as client:
        client.request(validate.parse_operation(begin_call(sess, "warm")), time.monotonic() + 10)
        broker = sandbox.wait_broker()
        stop(broker)
        with pytest.raises(DeadlineExceeded):
            client.request(validate.parse_operation(begin_call(sess, "abandoned")), time.monotonic() + 0.5)
        os.kill(broker, signal.SIGCONT)
        reply = client.request(validate.parse_operation(begin_call(sess, "next")), time.monotonic() + 10)
    end = time.monotonic() + 10
    while not (rows := sandbox.query("SELECT archive_ref FROM tool_calls WHERE source_call_id = 'next'")):
        assert time.monotonic() < end, "the next call was never stored"
        time.sleep(0.05)
    assert reply["archiveRef"] == rows[0][0]
