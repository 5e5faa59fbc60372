"""Every tool call of the recorded Pi sessions, captured through `yarp archive ingest`.

Each call goes through the adapter contract (begin_call → result_before →
result_text when the result has text → finish_call; calls the log never
answered stay `started`). Afterwards the archive must verify, and every input
and result must read back byte-exact as RFC 8785 canonical JSON (result text as
its exact UTF-8 bytes). Skips cleanly when the recorded sessions are absent.
"""

from __future__ import annotations

import hashlib
import importlib.util
import threading

import pytest
import rfc8785
import zstandard

from ingest_helpers import Sandbox, load_pi_calls, pi_requests, pi_session_files

SESSION_FILES = pi_session_files()
pytestmark = pytest.mark.skipif(not SESSION_FILES, reason="recorded Pi sessions are not available")


def replay(sb: Sandbox, path, errors: list) -> None:
    try:
        sess = {"agent": "pi", "account": "local", "sourceSessionId": path.stem}
        ing = sb.ingest()
        refs = {}
        for call in load_pi_calls(path):
            for req in pi_requests(call, sess):
                reply = ing.request(req)
                if not reply["ok"]:
                    errors.append((path.name, call.call_id, req["operation"], reply))
                    continue
                if req["operation"] == "begin_call":
                    refs[call.call_id] = reply["archiveRef"]
                elif "archiveRef" in reply and reply["archiveRef"] != refs[call.call_id]:
                    errors.append((path.name, call.call_id, "archiveRef changed"))
        status = ing.wait()
        if status != 0:
            errors.append((path.name, "exit", status, ing.stderr_text()))
    except BaseException as exc:  # surfaced by the main thread
        errors.append((path.name, repr(exc)))


def stored(sb: Sandbox) -> dict:
    """(session, call, subject, stage) -> (bytes, media type, completeness), checking every payload."""
    conn = sb.ro()
    out = {}
    payloads = {}
    for sha, compression, length, body in conn.execute(
            "SELECT sha256, compression, uncompressed_byte_length, body FROM payloads"):
        data = zstandard.ZstdDecompressor().decompress(body, max_output_size=length) if compression == "zstd" else body
        assert len(data) == length and hashlib.sha256(data).digest() == sha
        payloads[bytes(sha)] = bytes(data)
    for sid, cid, subject, stage, media, completeness, sha in conn.execute(
            "SELECT se.source_session_id, c.source_call_id, s.subject, s.stage, s.media_type, s.source_completeness,"
            " s.payload_sha256 FROM snapshots s JOIN tool_calls c ON c.id = s.tool_call_id"
            " JOIN sessions se ON se.id = c.session_id"):
        out[(sid, cid, subject, stage)] = (payloads[bytes(sha)], media, completeness)
    conn.close()
    return out


def check_integrity(sb: Sandbox) -> None:
    """What `yarp archive verify` checks, for trees where that command is not built yet."""
    assert sb.query("PRAGMA integrity_check") == [("ok",)]
    assert sb.query("PRAGMA foreign_key_check") == []
    assert sb.query("PRAGMA user_version") == [(1,)]
    assert sb.query("SELECT count(*) FROM payloads WHERE sha256 NOT IN (SELECT payload_sha256 FROM snapshots)") == [(0,)]
    assert sb.query("SELECT count(DISTINCT archive_ref) = count(*) FROM tool_calls") == [(1,)]
    missing = sb.query(
        "SELECT c.source_call_id FROM tool_calls c WHERE"
        " (SELECT count(*) FROM snapshots s WHERE s.tool_call_id = c.id AND s.subject = 'input') <> 2"
        " OR (c.status = 'finished' AND NOT EXISTS (SELECT 1 FROM snapshots s WHERE s.tool_call_id = c.id"
        "     AND s.subject = 'result' AND s.stage = 'after'))"
        " OR (c.executed = 1 AND NOT EXISTS (SELECT 1 FROM snapshots s WHERE s.tool_call_id = c.id"
        "     AND s.subject = 'result' AND s.stage = 'before'))")
    assert missing == []


def test_recorded_pi_sessions_round_trip_through_ingest(tmp_path):
    sb = Sandbox.create(tmp_path / "sb", idle_ms=1000)
    try:
        errors: list = []
        threads = [threading.Thread(target=replay, args=(sb, path, errors)) for path in SESSION_FILES]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        assert errors == []

        calls = {(path.stem, c.call_id): c for path in SESSION_FILES for c in load_pi_calls(path)}
        unanswered = sum(1 for c in calls.values() if c.result is None)
        assert sb.query("SELECT count(*) FROM tool_calls") == [(len(calls),)]
        assert sb.query("SELECT count(*) FROM tool_calls WHERE status = 'started'") == [(unanswered,)]

        if importlib.util.find_spec("yarp.commands.archive_verify") is not None:
            verify = sb.yarp("archive", "verify")
            assert verify.returncode == 0, verify.stderr
            assert f"incomplete_calls: {unanswered}\n".encode() in verify.stdout
            assert verify.stdout.endswith(b"archive: ok\n")
        check_integrity(sb)

        snaps = stored(sb)
        for (sid, cid), call in calls.items():
            canon_input = rfc8785.dumps(call.arguments)
            assert snaps[(sid, cid, "input", "before")][0] == canon_input
            assert snaps[(sid, cid, "input", "after")][0] == canon_input
            if call.result is None:
                assert (sid, cid, "result", "before") not in snaps
                continue
            canon_result = rfc8785.dumps(call.result)
            assert snaps[(sid, cid, "result", "before")] == (canon_result, "application/json", None)
            assert snaps[(sid, cid, "result", "after")][0] == canon_result
            if call.text is not None:
                assert snaps[(sid, cid, "result_text", "before")] == (
                    call.text.encode("utf-8"), "text/plain; charset=utf-8", call.completeness)
            else:
                assert (sid, cid, "result_text", "before") not in snaps
    finally:
        sb.close()
