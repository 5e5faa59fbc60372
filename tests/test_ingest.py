"""`yarp archive ingest` driven as a real child process against a real broker and archive.

Covers the adapter-facing contract: every operation and its acknowledgement
shape (archiveRef exactly on begin_call and result_text, prunedCalls on
prune_before), the stored rows read back read-only, and every malformed input
with its documented exit status, bounded stderr line and redaction.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
import zstandard

from ingest_helpers import (
    Sandbox,
    begin_call,
    capture_passthrough,
    capture_streams,
    encode,
    finish_call,
    frame,
    now_ms,
    private_file,
    prune_before,
    result_before,
    result_text,
    session,
    stage_result,
    update_final_result,
)
from yarp.clients import ingest
from yarp.wire import validation as validate
from yarp.limits import MAX_ERROR_CHARS, MAX_FRAME_BYTES

REF_KEYS = {"requestId", "ok", "archiveRef"}
PLAIN_KEYS = {"requestId", "ok"}


@pytest.fixture
def sandbox(tmp_path):
    sb = Sandbox.create(tmp_path / "sb")
    yield sb
    sb.close()


@pytest.fixture(scope="module")
def shared_sandbox(tmp_path_factory):
    """One archive (and broker) for the malformed-input cases, which store nothing."""
    sb = Sandbox.create(tmp_path_factory.mktemp("malformed"), idle_ms=5000)
    yield sb
    sb.close()


def snapshot_bytes(sb: Sandbox, ref: str, subject: str, stage: str) -> tuple[bytes, str, str | None]:
    row = sb.query(
        "SELECT p.compression, p.body, p.uncompressed_byte_length, s.media_type, s.source_completeness"
        " FROM snapshots s JOIN tool_calls c ON c.id = s.tool_call_id JOIN payloads p ON p.sha256 = s.payload_sha256"
        " WHERE c.archive_ref = ? AND s.subject = ? AND s.stage = ?", (ref, subject, stage))
    assert len(row) == 1, (subject, stage, row)
    compression, body, length, media, completeness = row[0]
    data = zstandard.ZstdDecompressor().decompress(body, max_output_size=length) if compression == "zstd" else body
    assert len(data) == length
    return bytes(data), media, completeness


def canonical(value) -> bytes:
    import rfc8785

    return rfc8785.dumps(value)


# --- the whole contract, operation by operation ------------------------------------------


def test_every_operation_through_ingest_frames(sandbox, tmp_path):
    sess = session("sess-all")
    ing = sandbox.ingest()
    acks = []

    def call(req):
        reply = ing.request(req)
        acks.append((req["operation"], reply))
        return reply

    # A wrapped shell call: every stream, source output, text, stage, finish, update.
    streams = {name: private_file(tmp_path / name, data) for name, data in (
        ("stdoutBeforePath", b"line 1\nline 2\n" * 100), ("stderrBeforePath", b"warn\x1b[31m red\n"),
        ("stdoutAfterPath", b"line 1\n[pruned]\n"), ("stderrAfterPath", b"warn\x1b[31m red\n"))}
    full_output = tmp_path / "full-output.log"
    full_output.write_bytes(b"\x00\xffexact bytes of the full output\r\n")
    shell_input = {"command": "make test"}
    rewritten = {"command": "yarp run -- make test"}
    result = {"content": [{"type": "text", "text": "line 1\n[pruned]\n"}], "details": {"exit": 0}, "isError": False}

    begun = call(begin_call(sess, "call-shell", input_before=shell_input, input_after=rewritten,
                            requires_streams=True, deadline_in_ms=2000, provider="anthropic", model="m-1",
                            workingDirectory="/work"))
    assert begun["ok"] is True, begun
    ref = begun["archiveRef"]
    assert ref.startswith("yr_") and len(ref) == 35
    assert call(capture_streams(sess, "call-shell", streams)) == {"requestId": 2, "ok": True}
    assert call(result_before(sess, "call-shell", result, str(full_output)))["ok"] is True
    text_ack = call(result_text(sess, "call-shell", "line 1\nline 2\n" * 100, "complete"))
    assert text_ack["archiveRef"] == ref
    assert call(stage_result(sess, "call-shell", result))["ok"] is True
    finished_at = now_ms()
    assert call(finish_call(sess, "call-shell", result, finished_at_ms=finished_at))["ok"] is True
    assert call(update_final_result(sess, "call-shell", result, finished_at_ms=finished_at))["ok"] is True
    different = call(update_final_result(sess, "call-shell", {"content": [], "details": None, "isError": True},
                                         is_error=True))
    assert different["ok"] is False and "different" in different["error"]

    # An ordinary call without deadlineAtMs: passthrough streams, incomplete text, update as finish.
    out = private_file(tmp_path / "out", b"same before and after\n")
    err = private_file(tmp_path / "err", b"")
    plain = call(begin_call(sess, "call-plain", tool="read", input_before={"path": "/a"}))
    assert set(plain) == REF_KEYS and plain["archiveRef"] != ref
    assert call(capture_passthrough(sess, "call-plain", out, err))["ok"] is True
    assert call(result_before(sess, "call-plain", {"content": []}))["ok"] is True
    assert call(result_text(sess, "call-plain", "partial", "incomplete"))["archiveRef"] == plain["archiveRef"]
    assert call(update_final_result(sess, "call-plain", {"content": []}))["ok"] is True

    # Unknown completeness; a preflight failure that never ran; an interrupted call.
    unknown = call(begin_call(sess, "call-unknown", tool="grep"))
    assert call(result_before(sess, "call-unknown", {"n": 1}))["ok"] is True
    assert call(result_text(sess, "call-unknown", "t\u00e9xt", "unknown"))["archiveRef"] == unknown["archiveRef"]
    assert call(finish_call(sess, "call-unknown", {"n": 1}))["ok"] is True
    call(begin_call(sess, "call-preflight", tool="nope"))
    assert call(finish_call(sess, "call-preflight", {"error": "unknown tool"}, is_error=True, executed=False))["ok"]
    call(begin_call(sess, "call-interrupted", tool="bash", started_at_ms=1))

    # archiveRef appears exactly on begin_call and result_text acknowledgements.
    for kind, reply in acks:
        if reply["ok"]:
            assert set(reply) == (REF_KEYS if kind in ("begin_call", "result_text") else PLAIN_KEYS), (kind, reply)
        else:
            assert set(reply) == {"requestId", "ok", "error"}, (kind, reply)
    assert [r["requestId"] for _, r in acks] == list(range(1, len(acks) + 1))

    # The rows, read back read-only.
    rows = dict(((r[0], r[1:]) for r in sandbox.query(
        "SELECT source_call_id, status, is_error, executed, requires_streams, provider, model, working_directory"
        " FROM tool_calls")))
    assert rows == {
        "call-shell": ("finished", 0, 1, 1, "anthropic", "m-1", "/work"),
        "call-plain": ("finished", 0, 1, 0, None, None, None),
        "call-unknown": ("finished", 0, 1, 0, None, None, None),
        "call-preflight": ("finished", 1, 0, 0, None, None, None),
        "call-interrupted": ("started", None, None, 0, None, None, None),
    }
    assert snapshot_bytes(sandbox, ref, "input", "before")[0] == canonical(shell_input)
    assert snapshot_bytes(sandbox, ref, "input", "after")[0] == canonical(rewritten)
    for name, (subject, stage) in {"stdoutBeforePath": ("stdout", "before"), "stderrBeforePath": ("stderr", "before"),
                                   "stdoutAfterPath": ("stdout", "after"), "stderrAfterPath": ("stderr", "after")}.items():
        with open(streams[name], "rb") as fh:
            assert snapshot_bytes(sandbox, ref, subject, stage)[0] == fh.read()
    # The full output is stored in the same operation as result/before, byte-exact.
    assert snapshot_bytes(sandbox, ref, "source_output", "before") == (
        full_output.read_bytes(), "application/octet-stream", None)
    assert snapshot_bytes(sandbox, ref, "result", "before")[0] == canonical(result)
    assert snapshot_bytes(sandbox, ref, "result_text", "before") == (
        b"line 1\nline 2\n" * 100, "text/plain; charset=utf-8", "complete")
    assert snapshot_bytes(sandbox, ref, "result", "after")[0] == canonical(result)
    assert snapshot_bytes(sandbox, plain["archiveRef"], "result_text", "before")[2] == "incomplete"
    assert snapshot_bytes(sandbox, unknown["archiveRef"], "result_text", "before")[2] == "unknown"
    assert snapshot_bytes(sandbox, plain["archiveRef"], "stdout", "after")[0] == b"same before and after\n"
    # Before and after that are equal share one payload row.
    (shared,) = sandbox.query(
        "SELECT count(DISTINCT s.payload_sha256) FROM snapshots s JOIN tool_calls c ON c.id = s.tool_call_id"
        " WHERE c.archive_ref = ? AND s.subject = 'input'", (plain["archiveRef"],))
    assert shared == (1,)

    # prune_before reports the deleted count; the started call survives however old it is.
    pruned = ing.request(prune_before(now_ms() + 60_000))
    assert pruned == {"requestId": pruned["requestId"], "ok": True, "prunedCalls": 4}
    assert sandbox.query("SELECT source_call_id, status FROM tool_calls") == [("call-interrupted", "started")]
    assert ing.request(prune_before(now_ms() + 60_000))["prunedCalls"] == 0
    assert ing.wait() == 0
    assert ing.stderr_text() == ""


def test_broker_rejections_answer_ok_false_and_the_bridge_goes_on(sandbox):
    sess = session("sess-reject")
    ing = sandbox.ingest()
    missing = ing.request(result_before(sess, "never-begun", {"x": 1}))
    assert missing["ok"] is False and "not been begun" in missing["error"]
    ref = ing.request(begin_call(sess, "c1"))["archiveRef"]
    again = ing.request(begin_call(sess, "c1"))
    assert again == {"requestId": again["requestId"], "ok": True, "archiveRef": ref}
    other = ing.request(begin_call(sess, "c1", tool="edit"))
    assert other["ok"] is False and "different metadata" in other["error"]
    assert "archiveRef" not in other
    not_ready = ing.request(stage_result(sess, "c1", {"x": 1}))
    assert not_ready["ok"] is False and "result/before" in not_ready["error"]
    assert ing.request(result_before(sess, "c1", {"x": 1}))["ok"] is True
    assert ing.wait() == 0
    assert sandbox.query("SELECT count(*) FROM tool_calls") == [(1,)]


# --- malformed input and its exit statuses ---------------------------------------------------


def run_bridge(sb: Sandbox, data: bytes):
    ing = sb.ingest()
    ing.send_raw(data)
    status = ing.wait()
    out = ing.rest_of_stdout()
    err = ing.stderr_text()
    return status, [json.loads(line) for line in out.splitlines()], err, ing


def assert_one_bounded_line(err: str) -> str:
    assert err.endswith("\n") and err.count("\n") == 1, err
    line = err[:-1]
    assert line.startswith("yarp: archive ingest: ")
    assert len(line) <= len("yarp: archive ingest: ") + MAX_ERROR_CHARS
    assert all(ch.isprintable() for ch in line)
    return line


def good(request_id: int = 1, call_id: str = "ok-call") -> dict:
    return {"requestId": request_id, "schemaVersion": 1, **begin_call(session("sess-m"), call_id)}


def test_eof_at_a_frame_boundary_exits_zero(shared_sandbox):
    assert run_bridge(shared_sandbox, b"")[:3] == (0, [], "")
    status, acks, err, _ = run_bridge(shared_sandbox, encode(good()))
    assert (status, err) == (0, "")
    assert len(acks) == 1 and acks[0]["ok"] is True and acks[0]["requestId"] == 1


@pytest.mark.parametrize("data, fragment", [
    (frame(b""), "zero"),
    (b"\x00\x00\x00", "inside a frame"),
    ((100).to_bytes(8, "big") + b'{"requestId":', "inside a frame"),
    (frame(b'{"requestId": 1, "schemaVersion": 1'), "JSON"),
    (frame(b'"\xff\xfe"'), "JSON"),
    (frame(b"[1, 2, 3]"), "object"),
    (frame(b"null"), "object"),
    (frame(b'{"requestId": -1, "schemaVersion": 1, "operation": "prune_before", "timestampMs": 1}'), "requestId"),
    (frame(b'{"requestId": "1", "schemaVersion": 1, "operation": "prune_before", "timestampMs": 1}'), "requestId"),
    (frame(b'{"requestId": true, "schemaVersion": 1, "operation": "prune_before", "timestampMs": 1}'), "requestId"),
], ids=["zero-length", "truncated-header", "truncated-body", "invalid-json", "invalid-utf8", "array", "null",
        "negative-id", "string-id", "bool-id"])
def test_malformed_frames_exit_74_without_an_ack(shared_sandbox, data, fragment):
    # A valid request after a bad frame must never be processed (a truncated frame ends the input).
    truncated = "inside a frame" in fragment
    status, acks, err, _ = run_bridge(shared_sandbox, data + (b"" if truncated else encode(good(7, "after-bad-frame"))))
    assert status == 74
    line = assert_one_bounded_line(err)
    assert fragment.lower() in line.lower()
    assert acks == []
    assert shared_sandbox.query("SELECT count(*) FROM tool_calls WHERE source_call_id = 'after-bad-frame'") == [(0,)]


def bad(**changes) -> dict:
    req = good(5, "bad-call")
    for key, value in changes.items():
        if value is KeyError:
            req.pop(key)
        else:
            req[key] = value
    return req


@pytest.mark.parametrize("request_obj, fragment", [
    (bad(schemaVersion=2), "schemaVersion"),
    (bad(schemaVersion=KeyError), "schemaVersion"),
    (bad(schemaVersion="1"), "schemaVersion"),
    (bad(extra=1), "unknown field"),
    (bad(operation="delete_everything"), "unknown operation"),
    (bad(operation=7), "unknown operation"),
    (bad(capturedAtMs="yesterday"), "capturedAtMs"),
    (bad(capturedAtMs=-5), "capturedAtMs"),
    (bad(call={"sourceCallId": "bad-call", "toolName": "bash", "startedAtMs": 1, "requiresStreams": "yes"}),
     "requiresStreams"),
    (bad(session={"agent": "pi", "account": 7, "sourceSessionId": "s"}), "account"),
    (bad(inputBefore=KeyError), "inputBefore"),
    (lambda: bad(deadlineAtMs=now_ms() - 1), "deadlineAtMs"),
    (lambda: bad(deadlineAtMs=now_ms() + 31_000), "deadlineAtMs"),
    (bad(deadlineAtMs="soon"), "deadlineAtMs"),
    ({"requestId": 5, "schemaVersion": 1, "operation": "result_text", "session": session(), "sourceCallId": "x",
      "text": "t", "sourceCompleteness": "mostly", "capturedAtMs": 1}, "sourceCompleteness"),
    ({"requestId": 5, "schemaVersion": 1, "operation": "capture_streams", "session": session(), "sourceCallId": "x",
      "capturedAtMs": 1, "stdoutBeforePath": 1, "stderrBeforePath": "/b", "stdoutAfterPath": "/c",
      "stderrAfterPath": "/d"}, "stdoutBeforePath"),
], ids=["schema-2", "schema-missing", "schema-string", "unknown-field", "unknown-operation", "operation-int",
        "time-string", "time-negative", "flag-string", "account-int", "missing-input", "deadline-expired",
        "deadline-too-far", "deadline-string", "completeness", "path-int"])
def test_contract_violations_ack_once_then_exit_74(shared_sandbox, request_obj, fragment):
    if callable(request_obj):  # deadlines are relative to the moment the test runs
        request_obj = request_obj()
    payload = json.dumps(request_obj).encode()
    status, acks, err, _ = run_bridge(shared_sandbox, frame(payload) + encode(good(6, "after-violation")))
    assert status == 74
    assert len(acks) == 1, acks
    assert acks[0]["requestId"] == 5 and acks[0]["ok"] is False and set(acks[0]) == {"requestId", "ok", "error"}
    assert fragment in acks[0]["error"]
    line = assert_one_bounded_line(err)
    assert fragment in line
    assert shared_sandbox.query("SELECT count(*) FROM tool_calls WHERE source_call_id IN ('bad-call', 'after-violation')") == [(0,)]


def test_deadline_within_bounds_is_accepted(shared_sandbox):
    req = bad(deadlineAtMs=now_ms() + 29_000)
    req["call"]["sourceCallId"] = "in-bounds"
    status, acks, err, _ = run_bridge(shared_sandbox, encode(req))
    assert (status, err) == (0, ""), acks
    assert acks[0]["ok"] is True and acks[0]["archiveRef"].startswith("yr_"), acks


@pytest.mark.parametrize("declared", [MAX_FRAME_BYTES + 1, 2**64 - 1])
def test_oversized_length_is_refused_before_allocation(shared_sandbox, declared):
    status, acks, err, ing = run_bridge(shared_sandbox, declared.to_bytes(8, "big") + b"{" * 4096)
    assert status == 74 and acks == []
    line = assert_one_bounded_line(err)
    assert str(MAX_FRAME_BYTES) in line
    # ru_maxrss (KiB on Linux) carries the high-water mark a child inherits from the
    # forking test process, so compare with a trivial child started the same way:
    # the bridge never came near the 256 MiB it was asked for.
    baseline = subprocess.Popen([sys.executable, "-c", "pass"])
    _, _, usage = os.wait4(baseline.pid, 0)
    assert ing.rusage.ru_maxrss - usage.ru_maxrss < 128 * 1024, (ing.rusage.ru_maxrss, usage.ru_maxrss)


def test_largest_legal_frame_is_accepted(shared_sandbox):
    # Just under the limit is legal; the reply may be a broker rejection but never a frame error.
    text = "x" * (1024 * 1024)
    req = {"requestId": 1, "schemaVersion": 1, **begin_call(session("sess-big"), "big", input_before={"t": text})}
    status, acks, err, _ = run_bridge(shared_sandbox, encode(req))
    assert (status, err) == (0, "")
    assert acks[0]["ok"] is True


# --- errors: bounded, no control characters, identities redacted -----------------------------


def test_redact_replaces_identities_controls_and_bounds_length():
    ids = ("acct-secret-name", "session-42")
    text = "call session-42 of acct-secret-name failed\n\x1b[31mred\x00" + "y" * 5000
    out = ingest.redact(text, ids)
    assert "session-42" not in out and "acct-secret-name" not in out
    assert out.startswith("call <source> of <source> failed")
    assert all(ch.isprintable() for ch in out)
    assert len(out) <= MAX_ERROR_CHARS


def test_redact_replaces_a_cut_identity():
    # Errors name unknown fields by their first 40 characters and bound their text:
    # a long identity cut short must not leak either.
    identity = "session-" + "0123456789abcdef" * 4
    assert ingest.redact(f"unknown field(s): {identity[:40]}", (identity,)) == "unknown field(s): <source>"
    tail = ingest.redact("x" * (MAX_ERROR_CHARS - 30) + identity, (identity,))
    assert identity[:16] not in tail and tail.endswith("<source>")


def test_identities_in_a_real_error_are_redacted(shared_sandbox):
    sess = {"agent": "agent-name-xyz", "account": "account-owner-abc", "sourceSessionId": "session-" + "9f" * 30}
    req = {"requestId": 3, "schemaVersion": 1, **result_text(sess, "call-id-777", "t")}
    # The request repeats its own identities as unknown field names, so the error would name them.
    for value in (sess["sourceSessionId"], "call-id-777", "agent-name-xyz\u0007"):
        req[value] = 1
    status, acks, err, _ = run_bridge(shared_sandbox, encode(req))
    assert status == 74
    line = assert_one_bounded_line(err)
    for text in (acks[0]["error"], line):
        assert "<source>" in text
        for secret in ("9f9f9f9f", "call-id-777", "agent-name-xyz", "\u0007"):
            assert secret not in text, text


def test_an_adapter_that_closed_stdout_ends_the_bridge_with_74(shared_sandbox):
    ing = shared_sandbox.ingest()
    ing.proc.stdout.close()
    ing.send(good(1, "stdout-closed"))
    assert ing.wait() == 74
    line = assert_one_bounded_line(ing.stderr_text())
    assert "adapter stream failed" in line and "Traceback" not in line


def test_the_example_client_captures_a_call(sandbox):
    import subprocess
    import sys

    from ingest_helpers import ROOT

    env = sandbox.env() | {"YARP": f"{sys.executable} -m yarp"}
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "ingest_client.py")], env=env,
                          capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    ref = done.stdout.decode().strip().splitlines()[-1].removeprefix("archived as ")
    assert sandbox.query("SELECT status, executed, tool_name FROM tool_calls WHERE archive_ref = ?", (ref,)) == [
        ("finished", 1, "read")]


def test_the_protocol_document_shows_every_operation_with_a_valid_example():
    import re

    from ingest_helpers import ROOT
    from yarp.wire import operations as ops

    text = (ROOT / "docs" / "ingest-protocol.md").read_text(encoding="utf-8")
    examples = {}
    for block in re.findall(r"```json\n(.*?)```", text, re.S):
        if block.startswith('{"requestId"') and '"operation"' in block:
            obj = json.loads(block)
            examples[obj["operation"]] = obj
    assert set(examples) == set(ops.OPERATIONS_BY_KIND)
    for kind, obj in examples.items():
        assert f"### `{kind}`" in text
        assert obj["schemaVersion"] == 1
        body = {k: v for k, v in obj.items() if k not in ("requestId", "schemaVersion", "deadlineAtMs")}
        assert type(validate.parse_operation(body)).kind == kind


def test_an_integer_beyond_64_bits_is_refused_not_rounded(shared_sandbox):
    # orjson alone reads a 25-digit literal as a float; the bridge must never
    # archive 1e+24 for it. Canonical JSON cannot hold it, so it is refused.
    req = {"requestId": 1, "schemaVersion": 1, **begin_call(session("sess-bignum"), "bignum-call", input_before={"n": 1})}
    frame = encode(req).replace(b'"n":1', b'"n":1000000000000000000000001').replace(b'"n": 1', b'"n": 1000000000000000000000001')
    body = frame[8:]
    frame = len(body).to_bytes(8, "big") + body
    assert b"1000000000000000000000001" in frame
    status, acks, err, _ = run_bridge(shared_sandbox, frame)
    assert status == 0 and acks[0]["ok"] is False
    assert "integer" in acks[0]["error"]


# --- the relay's own cost: its imports and its system calls ------------------------------------------

#: Modules only the broker needs. The bridge relays; it never validates,
#: canonicalises, hashes payloads or writes SQLite, and starts for every session.
#: It splits frames with the frame kernel and never loads the payload kernel.
BRIDGE_FORBIDDEN = ("uvloop", "asyncio", "concurrent.futures", "sqlite3", "_sqlite3", "yarp.broker", "yarp.archive.store",
                    "yarp.archive.prepare", "yarp.archive.codec", "rfc8785", "zstandard", "orjson", "dataclasses", "argparse",
                    "json", "re", "hashlib", "_hashlib", "threading", "subprocess", "typing", "enum",
                    "yarp.archive.payload_kernel", "yarp._payload_kernel", "yarp._payload_kernel_py")
#: How the installed console script starts.
CONSOLE_SCRIPT = "import sys; from yarp.cli import main; sys.exit(main())"


def test_the_bridge_imports_only_what_relaying_needs(shared_sandbox):
    ing = shared_sandbox.ingest()
    assert ing.request(good(1, "imports-warm"))["ok"] is True  # a broker is running
    assert ing.wait() == 0
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c", CONSOLE_SCRIPT, "archive", "ingest"],
                          env=shared_sandbox.env(), input=encode(good(1, "imports-call")), capture_output=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout)["ok"] is True
    names = {line.rsplit("|", 1)[1].strip() for line in proc.stderr.decode().splitlines()
             if line.startswith("import time:") and "|" in line}
    assert {"yarp.clients.ingest", "yarp.clients.broker", "yarp.wire.protocol", "yarp.wire.frames"} <= names  # the list is real
    assert sorted(set(BRIDGE_FORBIDDEN) & names) == []


@pytest.mark.skipif(not shutil.which("strace"), reason="needs strace")
def test_the_bridge_makes_at_most_five_system_calls_per_request(shared_sandbox, tmp_path):
    """Steady state, traced: from the first acknowledgement's write to the last one."""
    ing = shared_sandbox.ingest()
    assert ing.request(good(1, "strace-warm"))["ok"] is True
    assert ing.wait() == 0
    count = 40
    requests = b"".join(encode({"requestId": i + 1, "schemaVersion": 1,
                                **result_text(session("sess-m"), "strace-warm", text=f"line {i}\n")})
                        for i in range(count))
    trace = tmp_path / "trace"
    # Frames arrive one at a time, each after the previous acknowledgement,
    # as an adapter sends them: a coalesced write would flatter the read count.
    proc = subprocess.Popen(["strace", "-f", "-qq", "-o", str(trace), sys.executable, "-c", CONSOLE_SCRIPT,
                             "archive", "ingest"], env=shared_sandbox.env(), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE)
    for i in range(count):
        size = int.from_bytes(requests[:8], "big")
        proc.stdin.write(requests[:8 + size])
        proc.stdin.flush()
        requests = requests[8 + size:]
        assert json.loads(proc.stdout.readline())["requestId"] == i + 1
    proc.stdin.close()
    assert proc.wait(60) == 0
    lines = trace.read_text().splitlines()
    ack_writes = [n for n, line in enumerate(lines) if ' write(1, "{\\"requestId\\"' in line]
    assert len(ack_writes) == count, lines[-20:]
    between = lines[ack_writes[0] + 1: ack_writes[-1] + 1]
    per_request = len(between) / (count - 1)
    assert per_request <= 5, (per_request, between[:12])
    print(f"bridge system calls per request: {per_request:.2f}")


def test_the_relay_forwards_the_adapter_operation_unchanged_with_its_identities():
    from yarp.wire import operations as ops
    from yarp.wire import protocol
    from yarp.wire.validation import check_operation, parse_request

    request = {"requestId": 9, "schemaVersion": 1,
               **begin_call(session("relay-s"), "relay-c", deadline_in_ms=1500, provider="p", extraCallField=[1])}
    now = now_ms()  # after the deadline was drawn, so at most 1500 ms remain
    relayed = ingest.parse_request(json.dumps(request).encode(), now)
    assert relayed.request_id == 9 and relayed.kind == "begin_call"
    assert 0 < relayed.deadline_ms <= 1500
    forwarded = json.loads(relayed.outgoing.body)
    expected = {k: v for k, v in request.items() if k not in ("requestId", "schemaVersion", "deadlineAtMs")}
    assert forwarded == expected  # tolerated unknown call fields included
    # The broker proves the routing the relay derived.
    frame = protocol.envelope_frame(relayed.outgoing, "c-relay", 1000)
    env = parse_request(frame[8:], "c-relay")
    operation = check_operation(env)
    assert (env.operation_id, env.source_key) == (ops.operation_id(operation), ops.source_key(operation))


def test_a_replay_splices_the_same_operation_bytes_into_a_new_envelope():
    from yarp.wire import protocol

    relayed = ingest.parse_request(encode({"requestId": 1, "schemaVersion": 1,
                                           **result_text(session("s"), "c", "t")})[8:], now_ms())
    first = protocol.envelope_frame(relayed.outgoing, "c-first", 30_000)
    again = protocol.envelope_frame(relayed.outgoing, "c-second-connection", 1_234)
    body = relayed.outgoing.body
    assert first.endswith(body + b"}") and again.endswith(body + b"}")
    assert json.loads(first[8:])["operation"] == json.loads(again[8:])["operation"]
    assert json.loads(again[8:])["deadlineMs"] == 1_234
    assert int.from_bytes(again[:8], "big") == len(again) - 8
