"""`result_text` with `capBytes`: the view under the cap, made by the broker after the commit.

Driven through the real `yarp archive ingest` child, the real broker and a
real archive: the acknowledgement carries the view the hooks' function
(`yarp.view.host.text_view`) makes of the committed text with the call's
reference, made on the loop for a small text and in the preparation pool
(threads, and forkserver processes) for a large one; a text that fits, a cap
of 0 and a request without `capBytes` (every adapter written for the
reference) get the acknowledgement they always had, and a text that was not
committed gets no view.
"""

from __future__ import annotations

import pytest

from ingest_helpers import Sandbox, begin_call, result_before, result_text, session
from yarp.view.host import text_view

CAP = 5120
SEQ = "".join(f"{i}\n" for i in range(1, 100_001))  # `seq 1 100000`: 588,895 bytes, prepared in the pool
SMALL = "".join(f"line {i}\n" for i in range(2_000)) + "error: the step failed\n"  # 19 KB: on the loop


@pytest.fixture(params=["thread", "process"])
def sandbox(request, tmp_path):
    sb = Sandbox.create(tmp_path / "sb")
    sb.extra_env["YARP_BROKER_POOL"] = request.param
    yield sb
    sb.close()


def with_cap(req: dict, cap) -> dict:
    return {**req, "capBytes": cap}


def expected_view(text: str, ref: str, completeness: str, cap: int = CAP) -> str:
    view = text_view(text.encode(), cap=cap, archive_ref=ref, source="result_text", completeness=completeness)
    assert view is not None
    return view.decode()


def stored_text(sb: Sandbox, ref: str) -> tuple[bytes, str] | None:
    import zstandard

    rows = sb.query(
        "SELECT p.compression, p.body, p.uncompressed_byte_length, s.source_completeness FROM snapshots s"
        " JOIN tool_calls c ON c.id = s.tool_call_id JOIN payloads p ON p.sha256 = s.payload_sha256"
        " WHERE c.archive_ref = ? AND s.subject = 'result_text'", (ref,))
    if not rows:
        return None
    compression, body, length, completeness = rows[0]
    data = zstandard.ZstdDecompressor().decompress(body, max_output_size=length) if compression == "zstd" else body
    return bytes(data), completeness


def begun(ing, sess: dict, call_id: str) -> str:
    ref = ing.request(begin_call(sess, call_id))["archiveRef"]
    assert ing.request(result_before(sess, call_id, {"content": []}))["ok"] is True
    return ref


def test_the_acknowledgement_carries_the_view_of_the_committed_text(sandbox):
    sess = session("view-1")
    ing = sandbox.ingest()
    cases = [("large", SEQ, "complete"), ("small", SMALL, "incomplete"), ("wide", "é€𝄞 " * 3000 + "\n", "unknown")]
    for call_id, text, completeness in cases:
        ref = begun(ing, sess, call_id)
        ack = ing.request(with_cap(result_text(sess, call_id, text, completeness), CAP))
        assert set(ack) == {"requestId", "ok", "archiveRef", "view"}, call_id
        assert ack["ok"] is True and ack["archiveRef"] == ref
        # The hooks' own view of the text, naming this call and the recovery source.
        assert ack["view"] == expected_view(text, ref, completeness), call_id
        assert len(ack["view"].encode()) <= CAP
        assert f"ref={ref}; result_text {completeness}" in ack["view"]
        # The exact text was committed: what the view leaves out can be found again.
        assert stored_text(sandbox, ref) == (text.encode(), completeness)
    # A replay of the identical request is the same commit and the same view.
    again = ing.request(with_cap(result_text(sess, "large", SEQ, "complete"), CAP))
    assert again["view"] == expected_view(SEQ, again["archiveRef"], "complete")
    assert ing.wait() == 0 and ing.stderr_text() == ""


def test_the_cap_is_the_one_asked_for(sandbox):
    sess = session("view-caps")
    ing = sandbox.ingest()
    for cap in (1024, 65_536):
        ref = begun(ing, sess, f"c{cap}")
        ack = ing.request(with_cap(result_text(sess, f"c{cap}", SEQ), cap))
        assert ack["view"] == expected_view(SEQ, ref, "complete", cap)
        assert f"capped at {cap};" in ack["view"] and len(ack["view"].encode()) <= cap
    assert ing.wait() == 0


def test_no_view_without_a_cap_that_cuts(sandbox):
    sess = session("view-none")
    ing = sandbox.ingest()
    requests = {
        "fits": with_cap(result_text(sess, "fits", "a" * CAP), CAP),  # at the cap: nothing changes
        "wide-fits": with_cap(result_text(sess, "wide-fits", "é" * (CAP // 2)), CAP),
        "zero": with_cap(result_text(sess, "zero", SEQ), 0),
        "null": with_cap(result_text(sess, "null", SEQ), None),
        "reference": result_text(sess, "reference", SEQ),  # an adapter written for the reference
    }
    for call_id, request in requests.items():
        ref = begun(ing, sess, call_id)
        assert ing.request(request) == {"requestId": ing.next_id - 1, "ok": True, "archiveRef": ref}, call_id
        assert stored_text(sandbox, ref)[0] == request["text"].encode()
    assert ing.wait() == 0


def test_a_text_that_was_not_committed_gets_no_view(sandbox):
    sess = session("view-refused")
    ing = sandbox.ingest()
    never = ing.request(with_cap(result_text(sess, "never-begun", SEQ), CAP))
    assert never["ok"] is False and "view" not in never and "not been begun" in never["error"]
    # A different text for a call whose text is stored conflicts: refused, no view of either.
    begun(ing, sess, "c1")
    assert "view" in ing.request(with_cap(result_text(sess, "c1", SEQ), CAP))
    other = ing.request(with_cap(result_text(sess, "c1", SEQ + "more\n"), CAP))
    assert other["ok"] is False and "view" not in other and "different" in other["error"]
    assert ing.wait() == 0
