"""The archive store on real SQLite files: payloads, idempotency, lifecycle, batches, prune."""

from __future__ import annotations

import hashlib
import os
import re
import sqlite3
import subprocess

import pytest
import rfc8785

from yarp.wire import operations as ops
from yarp.archive.codec import MEDIA_BINARY, MEDIA_JSON, MEDIA_TEXT, decode_body, json_payload
from yarp.errors import (
    ArchiveBusy,
    ArchiveError,
    ConflictError,
    DiskFull,
    LifecycleError,
    NotFound,
    UnsafePath,
    ValidationError,
    YarpError,
)
from yarp.paths import resolve_archive
from yarp.archive.prepare import Prepared, SnapshotSpec, prepare
from yarp.archive.store import ArchiveStore, Outcome

REF = re.compile(r"^yr_[0-9a-f]{32}$")
TABLES = ("sessions", "tool_calls", "payloads", "snapshots")
SESSION = ops.Session("pi", "acct", "sess-1", 1_000)


def _location(tmp_path, name="arch"):
    directory = tmp_path / name
    directory.mkdir(mode=0o700)
    return resolve_archive(str(directory / "tool-calls.sqlite3"))


@pytest.fixture
def store(tmp_path):
    s = ArchiveStore.open(_location(tmp_path))
    yield s
    s.close()


def counts(store) -> dict[str, int]:
    return {t: store.conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}


def begin(call="c1", inp=None, out=None, *, streams=False, session=SESSION, tool="bash", **meta):
    inp = {"command": f"echo {call}"} if inp is None else inp
    return ops.BeginCall(session, ops.CallMeta(call, tool, 1_000, streams, **meta), inp,
                         inp if out is None else out, 1_001)


def result_before(call="c1", result="raw", full_output=None):
    return ops.ResultBefore(SESSION, call, {"content": result}, 1_002, full_output)


def finish(call="c1", result="final", *, is_error=False, executed=True, at=5_000):
    return ops.FinishCall(SESSION, call, {"content": result}, is_error, executed, at)


def snapshot(store, call_ref, subject, stage):
    return store.conn.execute(
        "SELECT s.media_type, s.source_completeness, p.compression, p.body, p.uncompressed_byte_length, p.sha256"
        " FROM snapshots s JOIN tool_calls c ON c.id = s.tool_call_id JOIN payloads p ON p.sha256 = s.payload_sha256"
        " WHERE c.archive_ref = ? AND s.subject = ? AND s.stage = ?", (call_ref, subject, stage)).fetchone()


def stored_bytes(store, ref, subject, stage) -> bytes:
    row = snapshot(store, ref, subject, stage)
    data = decode_body(row[2], row[3], row[4])
    assert len(data) == row[4]
    assert hashlib.sha256(data).digest() == bytes(row[5])
    return data


def call_row(store, ref):
    return store.conn.execute(
        "SELECT status, is_error, executed, finished_at_ms FROM tool_calls WHERE archive_ref = ?", (ref,)).fetchone()


def spool(tmp_path, name, data: bytes, mode=0o600):
    path = tmp_path / name
    path.write_bytes(data)
    os.chmod(path, mode)
    return ops.StreamFile(str(path))


def streams_op(tmp_path, call="c1", data=(b"out\r\n\x1b[1m", b"\xff\xfeerr", b"out", b"")):
    files = [spool(tmp_path, f"{call}-{i}", d) for i, d in enumerate(data)]
    return ops.CaptureStreams(SESSION, call, 1_003, *files)


# --- payloads -------------------------------------------------------------------


def test_begin_call_stores_canonical_json_and_shares_unchanged_input(store):
    inp = {"z": [1, 2.5, "é\u2028"], "a": {"y": None, "b": True}}
    ref = store.apply_operation(begin(inp=inp)).archive_ref
    assert REF.match(ref)
    assert stored_bytes(store, ref, "input", "before") == rfc8785.dumps(inp)
    before, after = snapshot(store, ref, "input", "before"), snapshot(store, ref, "input", "after")
    assert before[0] == after[0] == MEDIA_JSON
    assert before[5] == after[5]
    assert counts(store)["payloads"] == 1


def test_rewritten_input_gets_its_own_payload(store):
    # 1 == True in Python; canonical JSON tells them apart.
    ref = store.apply_operation(begin(inp={"n": 1}, out={"n": True})).archive_ref
    assert stored_bytes(store, ref, "input", "after") == b'{"n":true}'
    assert counts(store)["payloads"] == 2


def test_identical_snapshots_share_one_payload_row(store):
    for call in ("a", "b", "c"):
        store.apply_operation(begin(call, inp={"same": "input"}))
    assert counts(store) == {"sessions": 1, "tool_calls": 3, "payloads": 1, "snapshots": 6}


def test_large_payload_is_compressed_and_hashed_uncompressed(store):
    inp = {"text": "line of repetitive output\n" * 20_000}
    ref = store.apply_operation(begin(inp=inp)).archive_ref
    row = snapshot(store, ref, "input", "before")
    canonical = rfc8785.dumps(inp)
    assert row[2] == "zstd" and len(row[3]) < len(canonical) // 10
    assert bytes(row[5]) == hashlib.sha256(canonical).digest()
    assert stored_bytes(store, ref, "input", "before") == canonical


def test_streams_keep_exact_bytes_and_media_types(store, tmp_path):
    ref = store.apply_operation(begin(streams=True)).archive_ref
    op = streams_op(tmp_path)
    store.apply_operation(op)
    assert stored_bytes(store, ref, "stdout", "before") == b"out\r\n\x1b[1m"
    assert snapshot(store, ref, "stdout", "before")[0] == MEDIA_TEXT
    assert stored_bytes(store, ref, "stderr", "before") == b"\xff\xfeerr"
    assert snapshot(store, ref, "stderr", "before")[0] == MEDIA_BINARY
    assert stored_bytes(store, ref, "stderr", "after") == b""
    assert snapshot(store, ref, "stderr", "after")[0] == MEDIA_TEXT


def test_passthrough_streams_share_before_and_after(store, tmp_path):
    ref = store.apply_operation(begin(streams=True)).archive_ref
    op = ops.CapturePassthroughStreams(SESSION, "c1", 1_003, spool(tmp_path, "o", b"hello\n"),
                                       spool(tmp_path, "e", b"\x00\x01"))
    store.apply_operation(op)
    for subject in ("stdout", "stderr"):
        assert snapshot(store, ref, subject, "before")[5] == snapshot(store, ref, subject, "after")[5]
    assert stored_bytes(store, ref, "stdout", "after") == b"hello\n"


def test_result_text_and_source_output(store, tmp_path):
    ref = store.apply_operation(begin()).archive_ref
    log = spool(tmp_path, "pi-bash.log", b"full\noutput\n", mode=0o644)
    store.apply_operation(result_before(full_output=log))
    assert stored_bytes(store, ref, "source_output", "before") == b"full\noutput\n"
    assert snapshot(store, ref, "source_output", "before")[0] == MEDIA_TEXT
    store.apply_operation(ops.ResultText(SESSION, "c1", "part one\npart two", "incomplete", 1_004))
    row = snapshot(store, ref, "result_text", "before")
    assert row[:2] == (MEDIA_TEXT, "incomplete")
    assert stored_bytes(store, ref, "result_text", "before") == b"part one\npart two"


def test_symlinked_source_output_refused(store, tmp_path):
    store.apply_operation(begin())
    real = spool(tmp_path, "real.log", b"x", mode=0o644)
    os.symlink(real.path, tmp_path / "link.log")
    with pytest.raises(UnsafePath):
        store.apply_operation(result_before(full_output=ops.StreamFile(str(tmp_path / "link.log"))))
    assert snapshot(store, store.conn.execute("SELECT archive_ref FROM tool_calls").fetchone()[0],
                    "result", "before") is None


def test_archive_refs_are_random_distinct_and_well_formed(store):
    calls = [prepare(begin(f"call-{i}", inp={"i": i})) for i in range(2_000)]
    refs = []
    for start in range(0, len(calls), 32):
        refs += [o.archive_ref for o in store.apply_batch(calls[start:start + 32])]
    assert len(set(refs)) == 2_000
    assert all(REF.match(r) for r in refs)
    stored = {r[0] for r in store.conn.execute("SELECT archive_ref FROM tool_calls")}
    assert stored == set(refs)


# --- idempotency -----------------------------------------------------------------


def _full_lifecycle(tmp_path):
    return [
        begin(streams=True),
        streams_op(tmp_path),
        result_before(),
        ops.ResultText(SESSION, "c1", "raw text", "complete", 1_004),
        ops.StageResult(SESSION, "c1", {"content": "final"}, False, 1_005),
        finish(),
        ops.UpdateFinalResult(SESSION, "c1", {"content": "final"}, False, 6_000),
    ]


def test_every_operation_replays_identically_without_new_rows(store, tmp_path):
    sequence = _full_lifecycle(tmp_path)
    outcomes = [store.apply_operation(op) for op in sequence]
    ref = outcomes[0].archive_ref
    assert all(o.archive_ref == ref for o in outcomes)
    settled = counts(store)
    status = call_row(store, ref)
    for op in sequence:
        assert store.apply_operation(op) == Outcome(archive_ref=ref), op.kind
        assert counts(store) == settled, op.kind
    assert call_row(store, ref) == status == ("finished", 0, 1, 5_000)
    assert store.apply_operation(ops.PruneBefore(0)) == Outcome(pruned_calls=0)
    assert counts(store) == settled


def test_each_step_replayed_immediately(store, tmp_path):
    for op in _full_lifecycle(tmp_path):
        first = store.apply_operation(op)
        settled = counts(store)
        assert store.apply_operation(op) == first
        assert counts(store) == settled


def test_replay_inside_one_batch(store):
    out = store.apply_batch([prepare(begin()), prepare(begin())])
    assert out[0].archive_ref == out[1].archive_ref
    assert counts(store)["tool_calls"] == 1


@pytest.mark.parametrize("change", [
    dict(tool="read"), dict(provider="openai"), dict(model="m"), dict(working_directory="/tmp"),
    dict(streams=True), dict(inp={"command": "other"}), dict(out={"command": "rewritten"}),
])
def test_begin_call_identity_reuse_with_different_content_conflicts(store, change):
    store.apply_operation(begin())
    settled = counts(store)
    with pytest.raises(ConflictError):
        store.apply_operation(begin(**change))
    assert counts(store) == settled


def test_begin_call_started_time_is_metadata(store):
    store.apply_operation(begin())
    changed = ops.BeginCall(SESSION, ops.CallMeta("c1", "bash", 2_000, False), {"command": "echo c1"},
                            {"command": "echo c1"}, 1_001)
    with pytest.raises(ConflictError, match="different metadata"):
        store.apply_operation(changed)


def test_snapshot_keys_conflict_on_different_content(store, tmp_path):
    store.apply_operation(begin(streams=True))
    store.apply_operation(streams_op(tmp_path))
    store.apply_operation(result_before())
    store.apply_operation(ops.ResultText(SESSION, "c1", "raw", "complete", 1_004))
    settled = counts(store)
    conflicting = [
        result_before(result="other"),
        ops.ResultText(SESSION, "c1", "raw", "unknown", 1_004),
        ops.ResultText(SESSION, "c1", "raw!", "complete", 1_004),
        streams_op(tmp_path, data=(b"out\r\n\x1b[1m", b"\xff\xfeerr", b"changed", b"")),
    ]
    for op in conflicting:
        with pytest.raises(ConflictError):
            store.apply_operation(op)
        assert counts(store) == settled, op.kind


def test_replayed_source_output_with_changed_bytes_conflicts(store, tmp_path):
    store.apply_operation(begin())
    log = spool(tmp_path, "pi.log", b"v1", mode=0o644)
    store.apply_operation(result_before(full_output=log))
    (tmp_path / "pi.log").write_bytes(b"v2")
    with pytest.raises(ConflictError):
        store.apply_operation(result_before(full_output=log))


def test_session_is_upserted(store):
    store.apply_operation(begin("a", session=ops.Session("pi", "acct", "s2")))
    store.apply_operation(begin("b", session=ops.Session("pi", "acct", "s2", 77)))
    assert store.conn.execute("SELECT started_at_ms FROM sessions WHERE source_session_id='s2'").fetchall() == [(77,)]
    store.apply_operation(begin("c", session=ops.Session("pi", "acct", "s2", 99)))
    assert store.conn.execute("SELECT started_at_ms FROM sessions WHERE source_session_id='s2'").fetchall() == [(77,)]


# --- lifecycle ----------------------------------------------------------------------


def test_operations_on_unknown_calls_are_not_found(store, tmp_path):
    store.apply_operation(begin())
    for op in (result_before("nope"), finish("nope"), streams_op(tmp_path, "nope"),
               ops.ResultText(ops.Session("pi", "acct", "other"), "c1", "x", "complete", 1)):
        with pytest.raises(NotFound):
            store.apply_operation(op)


def test_executed_finish_requires_result_before(store):
    store.apply_operation(begin())
    with pytest.raises(LifecycleError):
        store.apply_operation(finish())
    with pytest.raises(LifecycleError):
        store.apply_operation(ops.StageResult(SESSION, "c1", {"x": 1}, False, 2))
    assert call_row(store, store.conn.execute("SELECT archive_ref FROM tool_calls").fetchone()[0])[0] == "started"


def test_preflight_failure_finishes_without_result_before(store):
    ref = store.apply_operation(begin()).archive_ref
    store.apply_operation(finish(result="blocked", is_error=True, executed=False))
    assert call_row(store, ref) == ("finished", 1, 0, 5_000)
    assert snapshot(store, ref, "result", "before") is None
    assert stored_bytes(store, ref, "result", "after") == b'{"content":"blocked"}'


def test_wrapped_call_needs_all_four_streams(store, tmp_path):
    ref = store.apply_operation(begin(streams=True)).archive_ref
    store.apply_operation(result_before())
    with pytest.raises(LifecycleError, match="stream"):
        store.apply_operation(ops.StageResult(SESSION, "c1", {"content": "final"}, False, 1_005))
    with pytest.raises(LifecycleError, match="stream"):
        store.apply_operation(finish())
    store.apply_operation(streams_op(tmp_path))
    store.apply_operation(ops.StageResult(SESSION, "c1", {"content": "final"}, False, 1_005))
    store.apply_operation(finish())
    assert call_row(store, ref)[0] == "finished"


def test_wrapped_preflight_failure_needs_no_streams(store):
    ref = store.apply_operation(begin(streams=True)).archive_ref
    store.apply_operation(finish(executed=False))
    assert call_row(store, ref)[:3] == ("finished", 0, 0)


def test_new_content_on_a_finished_call_is_a_lifecycle_error(store, tmp_path):
    store.apply_operation(begin(streams=True))
    store.apply_operation(finish(executed=False))
    settled = counts(store)
    for op in (result_before(), ops.ResultText(SESSION, "c1", "t", "complete", 1), streams_op(tmp_path)):
        with pytest.raises(LifecycleError):
            store.apply_operation(op)
        assert counts(store) == settled
    # Staging exactly the stored final result is a replay; anything else conflicts.
    store.apply_operation(ops.StageResult(SESSION, "c1", {"content": "final"}, False, 2))
    with pytest.raises(ConflictError):
        store.apply_operation(ops.StageResult(SESSION, "c1", {"content": "other"}, False, 2))
    assert counts(store) == settled


def test_finish_replay_with_different_flags_or_result_conflicts(store):
    store.apply_operation(begin())
    store.apply_operation(result_before())
    store.apply_operation(finish())
    for op in (finish(is_error=True), finish(executed=False), finish(result="changed")):
        with pytest.raises(ConflictError):
            store.apply_operation(op)
    assert store.apply_operation(finish(at=9_999)).archive_ref  # a later timestamp is still a replay


def test_stage_then_finish_with_a_different_result_conflicts(store):
    store.apply_operation(begin())
    store.apply_operation(result_before())
    store.apply_operation(ops.StageResult(SESSION, "c1", {"content": "staged"}, False, 1_005))
    with pytest.raises(ConflictError):
        store.apply_operation(finish(result="other"))
    store.apply_operation(finish(result="staged"))


def test_update_final_result(store):
    ref = store.apply_operation(begin()).archive_ref
    store.apply_operation(result_before())
    store.apply_operation(finish())
    same = ops.UpdateFinalResult(SESSION, "c1", {"content": "final"}, False, 7_000)
    assert store.apply_operation(same).archive_ref == ref
    with pytest.raises(ConflictError):
        store.apply_operation(ops.UpdateFinalResult(SESSION, "c1", {"content": "new"}, False, 7_000))
    with pytest.raises(ConflictError):
        store.apply_operation(ops.UpdateFinalResult(SESSION, "c1", {"content": "final"}, True, 7_000))
    assert call_row(store, ref) == ("finished", 0, 1, 5_000)


def test_update_final_result_finishes_a_started_call(store):
    ref = store.apply_operation(begin()).archive_ref
    store.apply_operation(ops.UpdateFinalResult(SESSION, "c1", {"content": "x"}, True, 7_000))
    assert call_row(store, ref) == ("finished", 1, 0, 7_000)
    ref2 = store.apply_operation(begin("c2")).archive_ref
    store.apply_operation(result_before("c2"))
    store.apply_operation(ops.UpdateFinalResult(SESSION, "c2", {"content": "x"}, False, 7_001))
    assert call_row(store, ref2) == ("finished", 0, 1, 7_001)


# --- prune -------------------------------------------------------------------------


def test_prune_deletes_only_old_finished_calls_and_orphan_payloads(store):
    shared = {"command": "shared"}
    store.apply_operation(begin("old", inp=shared))
    store.apply_operation(ops.ResultBefore(SESSION, "old", {"only": "old" * 5_000}, 1))
    store.apply_operation(finish("old", at=100))
    store.apply_operation(begin("new", inp=shared))
    store.apply_operation(finish("new", executed=False, at=10_000))
    store.apply_operation(begin("running", inp={"command": "still running"}))  # started at 1_000
    assert store.apply_operation(ops.PruneBefore(5_000)) == Outcome(pruned_calls=1)
    names = {r[0] for r in store.conn.execute("SELECT source_call_id FROM tool_calls")}
    assert names == {"new", "running"}
    assert store.conn.execute(
        "SELECT count(*) FROM payloads p WHERE NOT EXISTS"
        " (SELECT 1 FROM snapshots s WHERE s.payload_sha256 = p.sha256)").fetchone()[0] == 0
    assert store.conn.execute("SELECT count(*) FROM payloads WHERE sha256 = ?",
                              (json_payload(shared).sha256,)).fetchone()[0] == 1
    assert counts(store)["sessions"] == 1
    assert store.conn.execute("PRAGMA foreign_key_check").fetchall() == []
    assert store.conn.execute("PRAGMA freelist_count").fetchone()[0] == 0
    assert store.last_vacuum_error is None
    # The boundary is strict and started calls are never pruned, however old.
    assert store.apply_operation(ops.PruneBefore(10_000)) == Outcome(pruned_calls=0)
    assert store.apply_operation(ops.PruneBefore(2**62)) == Outcome(pruned_calls=1)
    assert [r[0] for r in store.conn.execute("SELECT status FROM tool_calls")] == ["started"]


def test_vacuum_and_checkpoint_refused_inside_a_transaction(store):
    store.conn.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(ArchiveError):
            store.incremental_vacuum()
        with pytest.raises(ArchiveError):
            store.wal_checkpoint()
        assert store.conn.in_transaction
    finally:
        store.conn.execute("ROLLBACK")
    store.apply_operation(begin())
    busy, log, done = store.wal_checkpoint("TRUNCATE")
    assert busy == 0 and log == done == 0
    with pytest.raises(ValueError):
        store.wal_checkpoint("bogus")


# --- batches ---------------------------------------------------------------------


def test_savepoint_isolation(store):
    store.apply_operation(begin("existing"))
    store.apply_operation(result_before("existing", "first"))
    shared = {"shared": "payload"}
    conflict = result_before("existing", "never stored")
    batch = [prepare(begin("good-1", inp=shared)), prepare(conflict), prepare(begin("good-2", inp=shared))]
    out = store.apply_batch(batch)
    assert isinstance(out[0], Outcome) and isinstance(out[2], Outcome)
    assert isinstance(out[1], ConflictError)
    assert store.conn.execute("SELECT count(*) FROM payloads WHERE sha256 = ?",
                              (batch[1].snapshots[0].payload.sha256,)).fetchone()[0] == 0
    assert store.conn.execute("SELECT count(*) FROM payloads WHERE sha256 = ?",
                              (json_payload(shared).sha256,)).fetchone()[0] == 1
    assert store.conn.execute("PRAGMA foreign_key_check").fetchall() == []


def test_a_failed_request_leaves_its_neighbours_exactly_as_if_each_ran_alone(store):
    """A batch is tried whole first; one failure makes it run request by request, so a request that
    needs an earlier one of the same batch still sees it, and the references returned are the stored ones."""
    store.apply_operation(begin("existing"))
    store.apply_operation(result_before("existing", "first"))
    batch = [prepare(begin("new")), prepare(result_before("existing", "other")), prepare(result_before("new", "r")),
             prepare(finish("new"))]
    out = store.apply_batch(batch)
    assert [type(o) for o in out] == [Outcome, ConflictError, Outcome, Outcome]
    stored = store.conn.execute("SELECT archive_ref, status FROM tool_calls WHERE source_call_id = 'new'").fetchone()
    assert out[0].archive_ref == out[2].archive_ref == out[3].archive_ref == stored[0] and stored[1] == "finished"
    whole = store.apply_batch([prepare(begin("n2")), prepare(result_before("n2", "r")), prepare(finish("n2"))])
    assert [type(o) for o in whole] == [Outcome] * 3
    assert {o.archive_ref for o in whole} == {store.conn.execute(
        "SELECT archive_ref FROM tool_calls WHERE source_call_id = 'n2'").fetchone()[0]}
    assert store.conn.execute("PRAGMA foreign_key_check").fetchall() == []


def test_failed_request_rolls_back_rows_it_already_wrote(store):
    """A request that fails after inserting a session, a call and a payload leaves none of them."""
    store.apply_operation(begin("before"))
    settled = counts(store)
    own = json_payload({"only": "this request"})
    op = begin("doomed", inp={"only": "this request"}, session=ops.Session("pi", "acct", "fresh"))
    # result_text/after breaks the completeness CHECK on the last insert.
    bad = Prepared(op, (SnapshotSpec("input", "before", own), SnapshotSpec("input", "after", own),
                        SnapshotSpec("result_text", "after", own)))
    out = store.apply_batch([bad, prepare(begin("after"))])
    assert isinstance(out[0], ValidationError) and isinstance(out[1], Outcome)
    assert counts(store) == {**settled, "tool_calls": settled["tool_calls"] + 1,
                             "snapshots": settled["snapshots"] + 2, "payloads": settled["payloads"] + 1}
    assert store.conn.execute("SELECT count(*) FROM sessions WHERE source_session_id = 'fresh'").fetchone()[0] == 0
    assert store.conn.execute("SELECT count(*) FROM payloads WHERE sha256 = ?", (own.sha256,)).fetchone()[0] == 0
    assert store.conn.execute("PRAGMA foreign_key_check").fetchall() == []


def test_busy_outer_begin_commits_nothing(store):
    other = sqlite3.connect(store.location.path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        settled = counts(store)
        with pytest.raises(ArchiveBusy) as info:
            store.apply_batch([prepare(begin("x")), prepare(begin("y"))])
        assert info.value.retryable
        assert not store.conn.in_transaction
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert counts(store) == settled
    assert [type(o) for o in store.apply_batch([prepare(begin("x"))])] == [Outcome]


@pytest.fixture
def tiny_fs(tmp_path):
    mount_point = tmp_path / "tiny"
    mount_point.mkdir(mode=0o700)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m,mode=0700", "tmpfs", str(mount_point)],
                          capture_output=True)
    if done.returncode != 0:
        pytest.skip("cannot mount a small tmpfs here")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)


def test_commit_failure_on_a_full_disk_commits_nothing(tiny_fs):
    location = resolve_archive(str(tiny_fs / "tool-calls.sqlite3"))
    store = ArchiveStore.open(location)
    try:
        store.apply_operation(begin("small"))
        store.wal_checkpoint("TRUNCATE")
        settled = counts(store)
        filler = tiny_fs / "filler"
        free = os.statvfs(tiny_fs).f_bavail * os.statvfs(tiny_fs).f_frsize
        filler.write_bytes(b"\0" * max(0, free - 64 * 1024))
        big = {"blob": os.urandom(200_000).hex()}
        with pytest.raises(DiskFull):
            store.apply_batch([prepare(begin("a")), prepare(begin("big", inp=big)), prepare(begin("b"))])
        assert not store.conn.in_transaction
        filler.unlink()
        reader = sqlite3.connect(f"file:{location.path}?mode=ro", uri=True)
        try:
            assert {t: reader.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES} == settled
        finally:
            reader.close()
        assert counts(store) == settled
        assert isinstance(store.apply_batch([prepare(begin("a"))])[0], Outcome)
    finally:
        store.close()


def test_apply_raises_the_request_error(store):
    with pytest.raises(NotFound):
        store.apply(prepare(finish("missing")))
    result = store.apply_batch([prepare(finish("missing"))])
    assert isinstance(result[0], NotFound) and isinstance(result[0], YarpError)
    assert store.apply_batch([]) == []


# --- batches of begins, table by table, and what the store remembers between batches ----------


def _rows(store) -> dict[str, list]:
    """Every row of the archive without its random references and row ids, in a stable order."""
    calls = store.conn.execute(
        "SELECT s.agent, s.account, s.source_session_id, s.started_at_ms, c.source_call_id, c.tool_name, c.provider,"
        " c.model, c.working_directory, c.started_at_ms, c.requires_streams, c.status FROM tool_calls c"
        " JOIN sessions s ON s.id = c.session_id ORDER BY c.source_call_id").fetchall()
    snaps = store.conn.execute(
        "SELECT c.source_call_id, s.subject, s.stage, s.media_type, s.source_completeness, s.captured_at_ms,"
        " s.payload_sha256 FROM snapshots s JOIN tool_calls c ON c.id = s.tool_call_id ORDER BY 1, 2, 3").fetchall()
    payloads = store.conn.execute("SELECT * FROM payloads ORDER BY sha256").fetchall()
    return {"calls": calls, "snapshots": snaps, "payloads": payloads}


def _begins() -> list:
    other = ops.Session("pi", "acct", "s2", 42)
    return [begin(f"b{n}", {"command": f"echo {n % 3}"}, {"command": f"yarp run -- echo {n % 3}"} if n % 2 else None,
                  session=other if n % 4 == 0 else SESSION, streams=bool(n % 3))
            for n in range(12)]


def test_a_batch_of_begins_writes_what_the_same_begins_write_one_by_one(tmp_path):
    together = ArchiveStore.open(_location(tmp_path, "together"))
    alone = ArchiveStore.open(_location(tmp_path, "alone"))
    try:
        outcomes = together.apply_batch([prepare(op) for op in _begins()])
        for op in _begins():
            alone.apply_operation(op)
        assert _rows(together) == _rows(alone)
        refs = [o.archive_ref for o in outcomes]
        assert len(set(refs)) == 12 and all(re.fullmatch(r"yr_[0-9a-f]{32}", r) for r in refs)
        stored = dict(together.conn.execute("SELECT source_call_id, archive_ref FROM tool_calls"))
        assert [stored[f"b{n}"] for n in range(12)] == refs, "each request gets its own call's reference"
        # Replayed as a batch: the same references, nothing new (the batch goes request by request).
        before = counts(together)
        again = together.apply_batch([prepare(op) for op in _begins()])
        assert [o.archive_ref for o in again] == refs and counts(together) == before
    finally:
        together.close()
        alone.close()


def test_a_conflict_in_a_batch_of_begins_fails_only_its_own_request(store):
    store.apply_operation(begin("b0"))
    batch = [begin("b1"), begin("b0", {"command": "changed"}), begin("b2")]
    outcomes = store.apply_batch([prepare(op) for op in batch])
    assert isinstance(outcomes[1], ConflictError)
    assert all(isinstance(o, Outcome) for o in (outcomes[0], outcomes[2]))
    assert counts(store)["tool_calls"] == 3


def test_a_session_created_by_a_rolled_back_batch_is_not_remembered(store):
    # The first request creates session s9; the second fails, so the batch is undone and applied again
    # request by request: s9's row must be written again, not taken from what the undone attempt saw.
    fresh = ops.Session("pi", "acct", "s9", 5)
    outcomes = store.apply_batch([prepare(begin("n1", session=fresh)),
                                  prepare(begin("n1", {"command": "x"}, session=fresh))])
    assert isinstance(outcomes[0], Outcome) and isinstance(outcomes[1], ConflictError)
    stored = store.conn.execute("SELECT c.session_id, s.id FROM tool_calls c LEFT JOIN sessions s ON s.id = c.session_id"
                                " WHERE c.archive_ref = ?", (outcomes[0].archive_ref,)).fetchone()
    assert stored[1] is not None and stored[0] == stored[1]
    # Remembered once committed: the next batch of that session asks nothing and lands on the same row.
    out = store.apply_batch([prepare(begin("n2", session=fresh)), prepare(begin("n3", session=fresh))])
    assert all(isinstance(o, Outcome) for o in out)
    assert {r[0] for r in store.conn.execute("SELECT session_id FROM tool_calls")} == {stored[1]}


def test_an_undone_request_leaves_no_remembered_session_or_payload(store):
    # Within one batch: request 1 creates session s7 and a payload, request 2 fails, the batch is undone
    # and applied request by request: every row request 1 needs is written again, not assumed.
    fresh = ops.Session("pi", "acct", "s7", 5)
    store.apply_operation(begin("x0"))
    outcomes = store.apply_batch([prepare(begin("x1", {"command": "unique payload"}, session=fresh)),
                                  prepare(begin("x0", {"command": "conflict"}))])
    assert isinstance(outcomes[0], Outcome) and isinstance(outcomes[1], ConflictError)
    ref = outcomes[0].archive_ref
    assert stored_bytes(store, ref, "input", "before") == rfc8785.dumps({"command": "unique payload"})
    integrity = store.conn.execute("PRAGMA foreign_key_check").fetchall()
    assert integrity == []


def test_a_prune_forgets_the_payloads_it_may_have_deleted(store):
    store.apply_operation(begin("p1", {"command": "shared"}))
    store.apply_operation(ops.FinishCall(SESSION, "p1", {"content": "x"}, False, False, 2_000))
    store.apply_operation(ops.PruneBefore(10_000))
    assert counts(store)["payloads"] == 0
    # The same payload again: it must be written again, though the store saw it before.
    ref = store.apply_operation(begin("p2", {"command": "shared"})).archive_ref
    assert stored_bytes(store, ref, "input", "before") == rfc8785.dumps({"command": "shared"})


def test_a_composite_that_ends_in_a_begin_is_applied_part_by_part(store):
    # A service's composite (one request: earlier calls' operations, then this call's begin) stands where a
    # prepared operation does; a batch of them is not a batch of plain begins.
    from yarp.broker.services.shared import PreparedParts

    store.apply_operation(begin("done"))
    composites = [PreparedParts((prepare(finish("done", executed=False)), prepare(begin("k1")))),
                  PreparedParts((prepare(begin("k2")),))]
    outcomes = store.apply_batch([*composites, prepare(begin("k3"))])
    assert all(isinstance(o, Outcome) for o in outcomes), outcomes
    assert call_row(store, store.conn.execute("SELECT archive_ref FROM tool_calls WHERE source_call_id = 'done'")
                    .fetchone()[0])[0] == "finished"
    assert counts(store)["tool_calls"] == 4
