"""Preparation before the write lock: canonical payloads and checked file snapshots."""

from __future__ import annotations

import hashlib
import os
import threading

import pytest
import rfc8785

from yarp.wire import operations as ops
from yarp.archive.codec import MEDIA_BINARY, MEDIA_JSON, MEDIA_TEXT
from yarp.errors import UnsafePath, ValidationError
from yarp.archive.prepare import Prepared, prepare, prepare_json, read_snapshot_file

SESSION = ops.Session("pi", "me", "s")
NOBODY = 65534


def spool(tmp_path, name="spool", data=b"bytes\n", mode=0o600):
    path = tmp_path / name
    path.write_bytes(data)
    os.chmod(path, mode)
    st = os.stat(path)
    return ops.StreamFile(str(path), st.st_dev, st.st_ino, st.st_size)


def test_private_spool_read_exactly(tmp_path):
    data = os.urandom(3 * 1024 * 1024 + 7)
    assert read_snapshot_file(spool(tmp_path, data=data), private=True) == data
    assert read_snapshot_file(ops.StreamFile(str(tmp_path / "spool")), private=True) == data


@pytest.mark.parametrize("private", [True, False])
def test_symlink_refused(tmp_path, private):
    target = spool(tmp_path, "target")
    os.symlink(target.path, tmp_path / "link")
    with pytest.raises(UnsafePath, match="symbolic link"):
        read_snapshot_file(ops.StreamFile(str(tmp_path / "link")), private=private)


def test_world_readable_spool_refused_but_source_output_accepted(tmp_path):
    sf = spool(tmp_path, mode=0o644)
    with pytest.raises(UnsafePath, match="permissions"):
        read_snapshot_file(sf, private=True)
    assert read_snapshot_file(sf, private=False) == b"bytes\n"
    os.chmod(sf.path, 0o620)
    with pytest.raises(UnsafePath):
        read_snapshot_file(sf, private=True)


def test_foreign_owned_spool_refused(tmp_path):
    sf = spool(tmp_path)
    os.chown(sf.path, NOBODY, NOBODY)
    with pytest.raises(UnsafePath, match="another user"):
        read_snapshot_file(sf, private=True)


def test_declared_identity_must_match(tmp_path):
    sf = spool(tmp_path)
    with pytest.raises(UnsafePath, match="size"):
        read_snapshot_file(ops.StreamFile(sf.path, sf.device, sf.inode, sf.size + 1), private=True)
    with pytest.raises(UnsafePath, match="declared"):
        read_snapshot_file(ops.StreamFile(sf.path, sf.device, sf.inode + 1, sf.size), private=True)
    with pytest.raises(UnsafePath, match="declared"):
        read_snapshot_file(ops.StreamFile(sf.path, sf.device + 1, sf.inode, sf.size), private=True)
    # The same name now pointing at a different file (replaced spool) is refused.
    os.unlink(sf.path)
    spool(tmp_path, "other")
    spool(tmp_path, data=b"replacement bytes\n")
    with pytest.raises(UnsafePath):
        read_snapshot_file(sf, private=True)


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs Linux /proc")
def test_bytes_beyond_the_size_seen_at_open_are_refused():
    # A /proc file is a regular file whose size reads as 0 while it has content:
    # exactly a file that grew after it was checked. Only the mode-tolerant
    # source-output rules let it get that far (it is not private).
    assert os.stat("/proc/self/status").st_size == 0
    with pytest.raises(ValidationError, match="changed while it was read"):
        read_snapshot_file(ops.StreamFile("/proc/self/status"), private=False)


def test_empty_spool_reads_as_empty(tmp_path):
    assert read_snapshot_file(spool(tmp_path, data=b""), private=True) == b""


def test_fifo_refused_without_blocking(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo, 0o600)
    outcome = []
    worker = threading.Thread(target=lambda: outcome.append(_try(ops.StreamFile(str(fifo)))), daemon=True)
    worker.start()
    worker.join(5)
    assert not worker.is_alive(), "opening a FIFO blocked"
    assert outcome == [UnsafePath]


def _try(sf):
    try:
        read_snapshot_file(sf, private=True)
    except Exception as exc:  # noqa: BLE001 - the test inspects the type
        return type(exc)
    return None


def test_directory_missing_and_oversize(tmp_path):
    os.mkdir(tmp_path / "d", 0o700)
    with pytest.raises(UnsafePath, match="regular file"):
        read_snapshot_file(ops.StreamFile(str(tmp_path / "d")), private=True)
    with pytest.raises(ValidationError, match="does not exist"):
        read_snapshot_file(ops.StreamFile(str(tmp_path / "absent")), private=True)
    sf = spool(tmp_path, data=b"x" * 11)
    with pytest.raises(ValidationError, match="larger"):
        read_snapshot_file(sf, private=True, limit=10)
    assert read_snapshot_file(sf, private=True, limit=11) == b"x" * 11


def test_errors_do_not_name_the_path(tmp_path):
    secret = tmp_path / "customer-secret-name"
    with pytest.raises(ValidationError) as info:
        read_snapshot_file(ops.StreamFile(str(secret)), private=True)
    assert "customer-secret-name" not in str(info.value)


def test_begin_call_payloads():
    prepared = prepare(ops.BeginCall(SESSION, ops.CallMeta("c", "bash", 1, False), {"b": 1, "a": "é"},
                                     {"b": 1, "a": "é"}, 2))
    before, after = prepared.snapshots
    assert (before.subject, before.stage, after.subject, after.stage) == ("input", "before", "input", "after")
    assert before.payload is after.payload
    assert before.payload.media_type == MEDIA_JSON
    canonical = rfc8785.dumps({"a": "é", "b": 1})
    assert before.payload.sha256 == hashlib.sha256(canonical).digest()
    assert before.payload.length == len(canonical)
    assert prepared.payload_bytes == 2 * len(before.payload.body)


def test_inputs_equal_in_python_but_not_in_json_get_two_payloads():
    # 1 == True == 1.0 in Python; as JSON `1` and `true` differ, so the
    # rewritten input must not be taken for the original.
    prepared = prepare(ops.BeginCall(SESSION, ops.CallMeta("c", "bash", 1, False), {"x": 1}, {"x": True}, 2))
    before, after = prepared.snapshots
    assert before.payload is not after.payload
    assert before.payload.sha256 == hashlib.sha256(b'{"x":1}').digest()
    assert after.payload.sha256 == hashlib.sha256(b'{"x":true}').digest()


@pytest.mark.parametrize("bad", [float("nan"), 2**53, {"k": float("inf")}])
def test_values_canonical_json_cannot_hold_are_refused(bad):
    with pytest.raises(ValidationError):
        prepare(ops.StageResult(SESSION, "c", bad, False, 1))


def test_result_text_is_exact_utf8_text():
    prepared = prepare(ops.ResultText(SESSION, "c", "a\r\nb\x1b[0m", "complete", 1))
    (snap,) = prepared.snapshots
    assert (snap.subject, snap.stage, snap.source_completeness) == ("result_text", "before", "complete")
    assert snap.payload.media_type == MEDIA_TEXT
    assert snap.payload.body == "a\r\nb\x1b[0m".encode()


def test_streams_and_source_output(tmp_path):
    files = [spool(tmp_path, f"s{i}", d) for i, d in enumerate((b"o", b"\xff", b"", b"e"))]
    prepared = prepare(ops.CaptureStreams(SESSION, "c", 1, *files))
    keys = [(s.subject, s.stage) for s in prepared.snapshots]
    assert keys == [("stdout", "before"), ("stderr", "before"), ("stdout", "after"), ("stderr", "after")]
    assert [s.payload.media_type for s in prepared.snapshots] == [MEDIA_TEXT, MEDIA_BINARY, MEDIA_TEXT, MEDIA_TEXT]
    passthrough = prepare(ops.CapturePassthroughStreams(SESSION, "c", 1, files[0], files[1]))
    assert passthrough.snapshots[0].payload is passthrough.snapshots[2].payload
    log = spool(tmp_path, "pi.log", b"full", mode=0o644)
    result = prepare(ops.ResultBefore(SESSION, "c", {"r": 1}, 1, log))
    assert [(s.subject, s.stage) for s in result.snapshots] == [("result", "before"), ("source_output", "before")]
    assert result.snapshots[1].payload.body == b"full"


def test_stream_capture_refuses_a_public_spool(tmp_path):
    files = [spool(tmp_path, f"s{i}") for i in range(4)]
    os.chmod(files[3].path, 0o604)
    with pytest.raises(UnsafePath):
        prepare(ops.CaptureStreams(SESSION, "c", 1, *files))


def test_prepare_json_validates_first():
    prepared = prepare_json({"operation": "prune_before", "timestampMs": 9})
    assert isinstance(prepared, Prepared) and prepared.snapshots == () and prepared.payload_bytes == 0
    with pytest.raises(ValidationError):
        prepare_json({"operation": "prune_before", "timestampMs": 9, "x": 1})
