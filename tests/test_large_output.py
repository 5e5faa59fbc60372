"""Large outputs: prepared and stored in chunks in bounded memory, and what happens past the payload limit.

In-process, the chunked preparation (`yarp.archive.file_payload`) is crossed
with `bytes_payload` of the same bytes (digest, compression decision, media
type, length, the decompressed body) and stored through a real `ArchiveStore`.
End to end, real `yarp run` processes and a real broker: the broker's peak
resident size (`VmHWM` of its process, reset with `/proc/PID/clear_refs`)
stays bounded while an output many times larger is archived, `yarp restore`
gives back exactly the bytes, and past a lowered payload limit the agent gets
the capped view, the archive keeps the first bytes and the call is finished
with its reason. The internal settings `YARP_BROKER_CHUNKED_BYTES`,
`YARP_BROKER_CHUNK_BYTES` and `YARP_BROKER_PAYLOAD_LIMIT` force the chunked
path and the over-limit path with small files; the 1 GiB case is `soak`.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
import time

import pytest
from run_helpers import ArchiveView, close_run_env, make_run_env, only_call, yarp, yrun

from yarp.archive import file_payload
from yarp.archive.codec import MEDIA_BINARY, MEDIA_TEXT, bytes_payload, decode_body
from yarp.archive.prepare import prepare, prepare_capture, snapshot_payload
from yarp.archive.store import ArchiveStore
from yarp.archive.verify import verify_archive
from yarp.errors import DeadlineExceeded, ValidationError
from yarp.paths import ArchiveLocation
from yarp.wire import operations as ops

MiB = 1 << 20
SESSION = ops.Session("t", "me", "s")


def text_bytes(size: int, seed: int = 0) -> bytes:
    """Log-like lines, every one different, cut to `size` bytes."""
    out, total, line = [], 0, seed * 10_000_000
    while total < size:
        line += 1
        text = b"%09d worker=%d GET /api/items/%d status=%d took=%dms\n" % (
            line, line % 7, line * 7919 % 100_003, 200 + line % 3 * 100, line * 31 % 997)
        out.append(text)
        total += len(text)
    return b"".join(out)[:size]


def letters(size: int) -> bytes:
    """Random ASCII letters in lines of about 64: text that Zstandard shrinks by about a fifth, never to a third."""
    alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    table = bytes(alphabet[i % 64] if i < 252 else 10 for i in range(256))
    return os.urandom(size).translate(table)


@pytest.fixture
def knobs(monkeypatch):
    """Set the module's settings for this process: (chunked from, chunk, payload limit)."""
    sqlite_limit = file_payload._load_settings()[2]

    def apply(chunked: int = 64 * 1024, chunk: int = 16 * 1024, limit: int | None = None) -> None:
        monkeypatch.setattr(file_payload, "_settings", (chunked, chunk, min(limit or sqlite_limit, sqlite_limit)))

    return apply


def declared(tmp_path, name: str, data: bytes) -> ops.StreamFile:
    path = tmp_path / name
    path.write_bytes(data)
    os.chmod(path, 0o600)
    st = os.stat(path)
    return ops.StreamFile(str(path), st.st_dev, st.st_ino, st.st_size)


def body_bytes(payload) -> bytes:
    body = payload.body
    stored = b"".join(body.chunks()) if isinstance(body, file_payload.FileBody) else body
    return decode_body(payload.compression, stored, payload.length)


# --- in-process: the chunked path is the whole-buffer path, chunk by chunk -------------------

CASES = {
    "empty": b"",
    "tiny": b"abc\n" * 20,
    "below the probe": text_bytes(100_000),
    "text over many chunks": text_bytes(3 * MiB),
    "random (the probe says incompressible)": os.urandom(2 * MiB),
    "random head, then zeros (the probe says compressible)": os.urandom(300_000) + bytes(2 * MiB),
    "UTF-8 characters across chunk edges": "é✓𝄞 naïve — ".encode() * 150_000,
    "valid UTF-8 up to a bad last byte": "é✓".encode() * 200_000 + b"\xff",
    "zeros then random (compression given up on the way)": bytes(40_000) + os.urandom(MiB),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_chunked_payload_is_the_payload_of_the_same_bytes(tmp_path, knobs, name):
    knobs(chunked=1, chunk=16 * 1024 + 1)  # an odd chunk: character and slice edges fall inside chunks
    data = CASES[name]
    chunked = snapshot_payload(declared(tmp_path, "f", data), private=True)
    whole = bytes_payload(data)
    assert (chunked.sha256, chunked.compression, chunked.length, chunked.media_type) == (
        whole.sha256, whole.compression, whole.length, whole.media_type)
    assert body_bytes(chunked) == data
    if len(data) >= 1:
        assert isinstance(chunked.body, file_payload.FileBody)


def test_media_types_follow_utf8_validity_of_the_kept_bytes(tmp_path, knobs):
    knobs(chunked=1, chunk=7)
    assert snapshot_payload(declared(tmp_path, "a", "ab✓".encode() * 50), private=True).media_type == MEDIA_TEXT
    assert snapshot_payload(declared(tmp_path, "b", "ab✓".encode()[:-1] * 50), private=True).media_type == MEDIA_BINARY


def test_kept_length_never_cuts_a_utf8_character(tmp_path, knobs):
    knobs(limit=10)
    cases = {b"abcdefghij" + b"klm": 10, b"abcdefghi" + "é".encode() + b"z": 9,
             b"abcdefgh" + "✓".encode() + b"z": 8, b"abcdefg" + "𝄞".encode() + b"z": 7,
             b"abcdefghij" + b"\x80\x80\x80\x80": 10, b"abcdefghi\xc3" + b"\xa9" * 4: 9}
    for data, kept in cases.items():
        fd = os.open(declared(tmp_path, "k", data).path, os.O_RDONLY)
        try:
            assert file_payload.kept_length(fd, len(data)) == kept, data
        finally:
            os.close(fd)
        os.unlink(tmp_path / "k")


@pytest.mark.parametrize("chunked", [1, 1 << 30], ids=["chunked", "whole"])
def test_past_the_limit_a_stream_keeps_its_first_bytes_and_an_adapters_capture_is_refused(tmp_path, knobs, chunked):
    knobs(chunked=chunked, limit=64 * 1024)
    data = letters(300_000)
    out, err = declared(tmp_path, "out", data), declared(tmp_path, "err", b"")
    capture = ops.CapturePassthroughStreams(SESSION, "c", 1, out, err)
    with pytest.raises(ValidationError, match="does not fit in one archive payload"):
        prepare(capture)
    kept = prepare_capture(capture, {}).snapshots[0].payload
    assert kept.length == 64 * 1024 and kept.compression == "zstd"
    assert body_bytes(kept) == data[:64 * 1024]


@pytest.mark.parametrize("chunked", [1, 1 << 30], ids=["chunked", "whole"])
def test_past_the_limit_a_stream_that_compresses_under_it_is_kept_whole(tmp_path, knobs, chunked):
    knobs(chunked=chunked, limit=64 * 1024)
    data = b"y\n" * 500_000
    capture = ops.CapturePassthroughStreams(SESSION, "c", 1, declared(tmp_path, "o", data), declared(tmp_path, "e", b""))
    payload = prepare(capture).snapshots[0].payload
    assert payload.length == len(data) and len(payload.body) <= 64 * 1024
    assert body_bytes(payload) == data


def test_chunked_payloads_are_stored_through_blob_writes_and_verify(tmp_path, knobs):
    knobs(chunked=1, chunk=64 * 1024 + 3)
    root = tmp_path / "arch"
    root.mkdir(mode=0o700)
    location = ArchiveLocation(str(root / "a.sqlite3"), False)
    outputs = {"text": text_bytes(2 * MiB), "random": os.urandom(MiB + 5)}
    store = ArchiveStore.open(location)
    try:
        for name, data in outputs.items():
            store.apply_operation(ops.BeginCall(SESSION, ops.CallMeta(name, "shell", 1, True), {}, {}, 1))
            capture = ops.CapturePassthroughStreams(SESSION, name, 2, declared(tmp_path, name, data),
                                                    declared(tmp_path, name + ".err", b""))
            store.apply_operation(capture)
            store.apply_operation(capture)  # a replay stores nothing twice
    finally:
        store.close()
    conn = sqlite3.connect(f"file:{location.path}?mode=ro", uri=True)
    try:
        for data in outputs.values():
            row = conn.execute("SELECT compression, body, uncompressed_byte_length FROM payloads WHERE sha256 = ?",
                               (hashlib.sha256(data).digest(),)).fetchone()
            assert decode_body(*row) == data
        # The two outputs, the empty stderr and the input `{}`: the replays added none.
        assert conn.execute("SELECT count(*) FROM payloads").fetchone()[0] == 4
    finally:
        conn.close()
    report = verify_archive(location)
    assert report.ok, report.to_json()


def test_a_stream_too_large_to_be_tried_whole_keeps_its_first_bytes_at_once(tmp_path, knobs, monkeypatch):
    from yarp import limits

    knobs(chunked=1, limit=64 * 1024)
    monkeypatch.setattr(limits, "MAX_WHOLE_FILE_BYTES", 200_000)
    data = b"y\n" * 150_000  # 300,000 bytes that would compress under the limit
    sf = declared(tmp_path, "y", data)
    fd = os.open(sf.path, os.O_RDONLY)
    try:
        assert file_payload.planned_length(fd, len(data)) == 64 * 1024
    finally:
        os.close(fd)
    kept = snapshot_payload(sf, private=True, cut=True)
    assert kept.length == 64 * 1024 and body_bytes(kept) == data[:64 * 1024]
    with pytest.raises(ValidationError, match="of a file of 200000 at most"):
        snapshot_payload(sf, private=False)


def test_a_body_past_its_deadline_is_not_committed(tmp_path, knobs):
    knobs(chunked=1, chunk=64 * 1024)
    root = tmp_path / "arch"
    root.mkdir(mode=0o700)
    location = ArchiveLocation(str(root / "a.sqlite3"), False)
    data = os.urandom(MiB)
    store = ArchiveStore.open(location)
    try:
        store.apply_operation(ops.BeginCall(SESSION, ops.CallMeta("c", "shell", 1, True), {}, {}, 1))
        capture = ops.CapturePassthroughStreams(SESSION, "c", 2, declared(tmp_path, "o", data),
                                                declared(tmp_path, "e", b""))
        prepared = prepare(capture)
        prepared.snapshots[0].payload.body.deadline = time.monotonic() - 1
        with pytest.raises(DeadlineExceeded):
            store.apply(prepared)
        assert store.conn.execute("SELECT count(*) FROM snapshots WHERE subject = 'stdout'").fetchone()[0] == 0
        assert store.conn.execute("SELECT count(*) FROM payloads WHERE sha256 = ?",
                                  (hashlib.sha256(data).digest(),)).fetchone()[0] == 0
    finally:
        store.close()


def test_a_source_file_changed_after_preparation_is_refused_at_the_write(tmp_path, knobs):
    knobs(chunked=1)
    sf = declared(tmp_path, "r", os.urandom(300_000))
    payload = snapshot_payload(sf, private=True)
    assert payload.compression == "none"
    with open(sf.path, "ab") as f:
        f.write(b"more")
    with pytest.raises(ValidationError, match="changed after it was prepared"):
        b"".join(payload.body.chunks())


# --- end to end: a real broker process ------------------------------------------------------


def _kib(pid: int, key: str) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise KeyError(key)


@pytest.fixture
def renv():
    benv = make_run_env(idle_ms=60_000)
    try:
        yield benv
    finally:
        close_run_env(benv, timeout=0)


def _warm_broker(renv) -> tuple[int, int]:
    """Start the broker with a small run; (its pid, its resident KiB), its peak reset to that."""
    assert yrun(renv, "true").returncode == 0
    pid = renv.status()["pid"]
    idle = _kib(pid, "VmRSS")
    with open(f"/proc/{pid}/clear_refs", "w") as f:
        f.write("5")
    return pid, idle


def _restored(renv, ref: str, path: str) -> None:
    """`yarp restore REF stdout` is exactly the file at `path` (compared as it streams)."""
    proc = subprocess.Popen([sys.executable, "-m", "yarp", "restore", ref, "stdout"], env=renv.environ,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    with open(path, "rb") as original:
        while True:
            got = proc.stdout.read(MiB)
            assert got == original.read(len(got)), "restore differs from the original"
            if not got:
                break
        assert original.read(1) == b"", "restore is shorter than the original"
    assert proc.wait(120) == 0, proc.stderr.read()


def _run_and_measure(renv, path: str, *flags: str) -> tuple[subprocess.CompletedProcess, int]:
    pid, idle = _warm_broker(renv)
    started = time.monotonic()
    run = yrun(renv, "cat", path, flags=flags, timeout=600)
    assert time.monotonic() - started < 300
    peak_mib = (_kib(pid, "VmHWM") - idle) // 1024
    print(f"broker peak over idle: {peak_mib} MiB ({idle // 1024} MiB idle)")
    return run, peak_mib


@pytest.mark.parametrize("kind", ["text", "random"])
def test_a_large_output_is_archived_exactly_in_bounded_broker_memory(renv, tmp_path, kind):
    renv.environ.update(YARP_BROKER_CHUNKED_BYTES=str(MiB), YARP_BROKER_CHUNK_BYTES=str(256 * 1024))
    path = tmp_path / "out.bin"
    size = 64 * MiB
    path.write_bytes(text_bytes(size) if kind == "text" else os.urandom(size))
    run, peak_mib = _run_and_measure(renv, str(path))
    assert run.returncode == 0 and b"archive failed" not in run.stderr, run.stderr
    assert len(run.stdout) < 16 * 1024  # the capped view
    # Reading the output whole would hold all 64 MiB (and its compressed copy) at once.
    assert peak_mib < 24, f"broker peak grew by {peak_mib} MiB for a {size >> 20} MiB output"
    _, ref, status, *_ = _last_call(renv)
    assert status == "finished"
    _restored(renv, ref, str(path))
    assert yarp(renv, "archive", "verify").returncode == 0


def _last_call(renv) -> tuple:
    """The call of the measured run (the warm-up run's is the first)."""
    with ArchiveView(renv) as view:
        return view.calls()[-1]


def _result(renv, ref: str) -> dict:
    with ArchiveView(renv) as view:
        return json.loads(view.snapshot(view.call_id(ref), "result", "before"))


@pytest.mark.parametrize("kind", ["letters", "random"])
def test_past_the_payload_limit_the_agent_gets_the_view_and_the_call_is_finished(renv, tmp_path, kind):
    # Letters shrink, yet not enough: only their whole compression tells, and the view is made again from
    # what is kept; random bytes are known not to fit from the probe, before the view.
    limit = 256 * 1024
    renv.environ.update(YARP_BROKER_PAYLOAD_LIMIT=str(limit), YARP_BROKER_CHUNKED_BYTES=str(64 * 1024))
    # Random lines may be one byte long, so the output ends in a line that no kept line can hold by chance.
    end = b"the output's own last line"
    data = letters(3 * MiB) + b"\n" + end + b"\n" if kind == "letters" else os.urandom(3 * MiB)
    path = tmp_path / "big.txt"
    path.write_bytes(data)
    run = yrun(renv, "cat", str(path))
    assert run.returncode == 0, run.stderr
    assert len(run.stdout) < 8 * 1024 and b"stdout incomplete" in run.stdout  # the capped view, never the raw bytes
    _, ref, status, executed, is_error, _ = only_call(renv)
    assert (status, executed, is_error) == ("finished", 1, 0)
    with ArchiveView(renv) as view:
        kept = view.snapshot(view.call_id(ref), "stdout", "before")
    assert limit - 3 <= len(kept) <= limit and data.startswith(kept)
    reason = f"the archive keeps the first {len(kept)} of {len(data)} bytes of stdout"
    assert run.stderr.decode().startswith(f"yarp: {reason}") and run.stderr.count(b"\n") == 1
    result = _result(renv, ref)
    assert result["exitCode"] == 0 and reason in result["incomplete"]
    if kind == "letters":
        # The view is made from the kept bytes: their last line is shown, the output's own last line is not.
        assert kept.rsplit(b"\n", 2)[-2] in run.stdout and end not in run.stdout
    _restored(renv, ref, str(_prefix(tmp_path, kept)))
    assert yarp(renv, "archive", "verify").returncode == 0


def _prefix(tmp_path, data: bytes):
    path = tmp_path / "prefix"
    path.write_bytes(data)
    return path


def test_past_the_payload_limit_a_passed_through_output_reaches_its_reader_whole(renv, tmp_path):
    limit = 256 * 1024
    renv.environ.update(YARP_BROKER_PAYLOAD_LIMIT=str(limit))
    data = os.urandom(MiB)
    path = tmp_path / "big.bin"
    path.write_bytes(data)
    run = yrun(renv, "cat", str(path), flags=("--pass",))
    assert run.returncode == 0 and run.stdout == data
    assert b"of 1048576 bytes of stdout" in run.stderr
    _, ref, status, *_ = only_call(renv)
    assert status == "finished"
    with ArchiveView(renv) as view:
        kept = view.snapshot(view.call_id(ref), "stdout", "before")
    assert limit - 3 <= len(kept) <= limit and data.startswith(kept)


def test_past_the_payload_limit_an_output_that_compresses_under_it_is_archived_whole(renv, tmp_path):
    renv.environ.update(YARP_BROKER_PAYLOAD_LIMIT=str(64 * 1024), YARP_BROKER_CHUNKED_BYTES=str(64 * 1024))
    path = tmp_path / "yes.txt"
    path.write_bytes(b"y\n" * MiB)
    run = yrun(renv, "cat", str(path))
    assert run.returncode == 0 and run.stderr == b"", run.stderr
    _, ref, status, *_ = only_call(renv)
    assert status == "finished" and "incomplete" not in _result(renv, ref)
    _restored(renv, ref, str(path))


@pytest.mark.soak
def test_a_one_gib_output_is_archived_exactly_within_64_mib_of_broker_memory(renv, tmp_path):
    path = tmp_path / "gib.txt"
    with open(path, "wb") as f:
        for block in range(256):
            f.write(text_bytes(4 * MiB, seed=block))
    run, peak_mib = _run_and_measure(renv, str(path))
    assert run.returncode == 0 and b"archive failed" not in run.stderr, run.stderr
    assert peak_mib < 64, f"broker peak grew by {peak_mib} MiB for a 1 GiB output"
    _, ref, status, *_ = _last_call(renv)
    assert status == "finished"
    _restored(renv, ref, str(path))
