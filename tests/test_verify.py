"""`yarp archive verify` against real archives damaged in exactly one way each."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import sys

import pytest
from archive_factory import ArchiveFactory, build_sample, run_yarp, yarp_env
from terminal import on_a_terminal

from yarp.archive import verify
from yarp.paths import resolve_archive


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    root = tmp_path_factory.mktemp("verify")
    path = root / "archive" / "tool-calls.sqlite3"
    refs = build_sample(path)
    return path, refs


@pytest.fixture
def archive(pristine, tmp_path):
    """A private copy of the sample archive that a test may damage."""
    source, refs = pristine
    directory = tmp_path / "copy"
    shutil.copytree(source.parent, directory)
    os.chmod(directory, 0o700)
    return directory / source.name, refs


def damage(path, *statements, params=()):
    """Apply raw SQL outside YARP, with the schema's guards off as a damaged file would be."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("PRAGMA foreign_keys = OFF")
        conn.execute("PRAGMA ignore_check_constraints = ON")
        for statement in statements:
            conn.execute(statement, params if "?" in statement else ())
    finally:
        conn.close()


def call_id(path, ref):
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT id FROM tool_calls WHERE archive_ref = ?", (ref,)).fetchone()[0]
    finally:
        conn.close()


def run_verify(path, home, *extra):
    return run_yarp("archive", "verify", "--archive", str(path), *extra, home=home)


def failures(result) -> list[str]:
    lines = result.stderr.decode().splitlines()
    assert all(line.startswith("yarp: archive verification failed: ") for line in lines), lines
    return [line.removeprefix("yarp: archive verification failed: ") for line in lines]


def assert_fails_with(path, home, *needles):
    result = run_verify(path, home)
    assert result.returncode == 65, result
    assert b"Traceback" not in result.stderr
    problems = failures(result)
    for needle in needles:
        assert any(needle in p for p in problems), (needle, problems)
    assert b"archive: ok" not in result.stdout
    return problems


def test_clean_archive_passes_and_reports_incomplete_calls(archive, tmp_path):
    path, _ = archive
    result = run_verify(path, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.decode() == "incomplete_calls: 1\narchive: ok\n"
    assert result.stderr == b""


def test_json_report(archive, tmp_path):
    path, _ = archive
    result = run_verify(path, tmp_path, "--json")
    report = json.loads(result.stdout)
    assert result.returncode == 0
    assert report["ok"] is True and report["problems"] == []
    assert report["incomplete_calls"] == 1
    assert report["payloads_checked"] == 14


def test_integrity_check_failure(archive, tmp_path):
    path, _ = archive
    # Point an index's definition at another column: its rows no longer match the table.
    damage(path, "PRAGMA writable_schema = ON",
           "UPDATE sqlite_master SET sql = 'CREATE INDEX tool_calls_tool_name_idx ON tool_calls(source_call_id)'"
           " WHERE name = 'tool_calls_tool_name_idx'")
    assert_fails_with(path, tmp_path, "SQLite integrity check", "tool_calls_tool_name_idx")


def test_foreign_key_failure(archive, tmp_path):
    path, refs = archive
    damage(path, "UPDATE snapshots SET payload_sha256 = zeroblob(32) WHERE subject = 'input' AND stage = 'after'"
                 f" AND tool_call_id = {call_id(path, refs['plain'])}")
    assert_fails_with(path, tmp_path, "snapshots row", "references a missing payloads row")


def test_unsupported_user_version(archive, tmp_path):
    path, _ = archive
    damage(path, "PRAGMA user_version = 2")
    assert_fails_with(path, tmp_path, "schema version 2 is not supported")


@pytest.mark.parametrize("assignment, needle", [
    ("status = 'paused'", "has an invalid status"),
    ("requires_streams = 7", "invalid requires_streams"),
    ("is_error = 3", "invalid is_error"),
    ("executed = NULL", "is finished without finished_at_ms, is_error and executed"),
])
def test_lifecycle_values(archive, tmp_path, assignment, needle):
    path, refs = archive
    damage(path, f"UPDATE tool_calls SET {assignment} WHERE archive_ref = ?", params=(refs["plain"],))
    problems = assert_fails_with(path, tmp_path, needle)
    assert any(refs["plain"] in p for p in problems)


def test_started_call_with_finish_values(archive, tmp_path):
    path, refs = archive
    damage(path, "UPDATE tool_calls SET executed = 1 WHERE archive_ref = ?", params=(refs["incomplete"],))
    assert_fails_with(path, tmp_path, "is started but carries finish values")


@pytest.mark.parametrize("assignment, where, needle", [
    ("subject = 'thoughts'", "subject = 'result' AND stage = 'before'", "invalid subject"),
    ("stage = 'during'", "subject = 'result' AND stage = 'after'", "invalid stage"),
    ("media_type = 'text/html'", "subject = 'input' AND stage = 'before'", "not application/json"),
])
def test_snapshot_values(archive, tmp_path, assignment, where, needle):
    path, refs = archive
    damage(path, f"UPDATE snapshots SET {assignment} WHERE {where} AND tool_call_id = {call_id(path, refs['plain'])}")
    assert_fails_with(path, tmp_path, needle)


def test_malformed_archive_ref(archive, tmp_path):
    path, refs = archive
    damage(path, "UPDATE tool_calls SET archive_ref = 'yr_NOT-HEX' WHERE archive_ref = ?", params=(refs["plain"],))
    assert_fails_with(path, tmp_path, "has a malformed archive_ref")


def test_duplicate_archive_ref(archive, tmp_path):
    path, refs = archive
    # A unique index cannot hold duplicates, so drop UNIQUE from the schema first, as a
    # damaged file might. SQLite numbers automatic indexes by constraint position, so
    # the last one becomes the orphan; integrity_check reports the mismatch as well.
    conn = sqlite3.connect(path, isolation_level=None)
    sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'tool_calls'").fetchone()[0]
    conn.execute("PRAGMA writable_schema = ON")
    conn.execute("UPDATE sqlite_master SET sql = ? WHERE name = 'tool_calls'",
                 (sql.replace("archive_ref TEXT NOT NULL UNIQUE", "archive_ref TEXT NOT NULL"),))
    conn.execute("DELETE FROM sqlite_master WHERE name = 'sqlite_autoindex_tool_calls_2'")
    conn.close()
    damage(path, "UPDATE tool_calls SET archive_ref = ? WHERE archive_ref = ?", params=(refs["shell"], refs["plain"]))
    assert_fails_with(path, tmp_path, f"archive_ref {refs['shell']} is used by 2 calls")


@pytest.mark.parametrize("value", ["NULL", "'maybe'"])
def test_result_text_completeness(archive, tmp_path, value):
    path, _ = archive
    damage(path, f"UPDATE snapshots SET source_completeness = {value} WHERE subject = 'result_text'")
    assert_fails_with(path, tmp_path, "result_text without a valid source completeness")


def test_completeness_on_other_subject(archive, tmp_path):
    path, _ = archive
    damage(path, "UPDATE snapshots SET source_completeness = 'complete' WHERE subject = 'stdout'")
    assert_fails_with(path, tmp_path, "source completeness on a snapshot other than result_text")


def test_flipped_payload_byte(archive, tmp_path):
    path, _ = archive
    damage(path, "UPDATE payloads SET body = CAST(replace(CAST(body AS TEXT), 'bad thing', 'bad thinG') AS BLOB)"
                 " WHERE compression = 'none' AND instr(body, CAST('bad thing' AS BLOB)) > 0")
    assert_fails_with(path, tmp_path, "does not match its SHA-256 digest")


def test_wrong_length(archive, tmp_path):
    path, _ = archive
    damage(path, "UPDATE payloads SET uncompressed_byte_length = uncompressed_byte_length + 5"
                 " WHERE rowid = (SELECT min(rowid) FROM payloads)")
    assert_fails_with(path, tmp_path, "bytes but records")


def test_undecompressable_payload(tmp_path):
    path = tmp_path / "z" / "tool-calls.sqlite3"
    with ArchiveFactory(path) as factory:
        factory.shell_call("big", b"compressible line\n" * 4000)
    damage(path, "UPDATE payloads SET body = substr(body, 1, 20) || zeroblob(40) WHERE compression = 'zstd'")
    assert_fails_with(path, tmp_path, "cannot be decompressed")


def test_text_payload_that_is_not_utf8(tmp_path):
    path = tmp_path / "b" / "tool-calls.sqlite3"
    with ArchiveFactory(path) as factory:
        factory.shell_call("bin", b"\xff\xfe binary \x80\n", b"")
    damage(path, "UPDATE snapshots SET media_type = 'text/plain; charset=utf-8' WHERE subject = 'stdout'")
    assert_fails_with(path, tmp_path, "is declared UTF-8 text but is not valid UTF-8")


@pytest.mark.parametrize("which, subject, stage", [
    ("plain", "input", "after"),
    ("plain", "result", "after"),
    ("plain", "result", "before"),
    ("shell", "stdout", "after"),
    ("shell", "stderr", "before"),
    ("incomplete", "input", "before"),
])
def test_missing_required_snapshots(archive, tmp_path, which, subject, stage):
    path, refs = archive
    damage(path, f"DELETE FROM snapshots WHERE tool_call_id = {call_id(path, refs[which])}"
                 f" AND subject = '{subject}' AND stage = '{stage}'")
    assert_fails_with(path, tmp_path, f"call {refs[which]} is missing its required {subject}/{stage} snapshot")


def test_preflight_failure_needs_no_result_before(archive, tmp_path):
    path, refs = archive
    conn = sqlite3.connect(path)
    rows = conn.execute("SELECT subject FROM snapshots WHERE tool_call_id = ? AND stage = 'before'",
                        (call_id(path, refs["preflight"]),)).fetchall()
    conn.close()
    assert rows == [("input",)]  # finished, not executed: no result/before and no streams
    assert run_verify(path, tmp_path).returncode == 0


def test_unreferenced_payload_is_reported_without_failing(archive, tmp_path):
    path, _ = archive
    damage(path, "INSERT INTO payloads VALUES (?, 'none', 3, CAST('abc' AS BLOB))",
           params=(__import__("hashlib").sha256(b"abc").digest(),))
    result = run_verify(path, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.decode() == "incomplete_calls: 1\nunreferenced_payloads: 1\narchive: ok\n"


@pytest.mark.parametrize("target, mode, needle", [
    ("db", 0o644, "archive database permissions are 0644, expected 0600"),
    ("dir", 0o755, "archive directory permissions are 0755, expected 0700"),
    ("wal", 0o644, "archive wal file permissions are 0644, expected 0600"),
    ("shm", 0o640, "archive shm file permissions are 0640, expected 0600"),
])
def test_permissions(tmp_path, target, mode, needle):
    path = tmp_path / "p" / "tool-calls.sqlite3"
    factory = ArchiveFactory(path)  # held open so -wal and -shm exist, as under a live broker
    try:
        factory.shell_call("c", b"out\n")
        os.chmod({"db": path, "dir": path.parent, "wal": f"{path}-wal", "shm": f"{path}-shm"}[target], mode)
        before = path.read_bytes()
        assert_fails_with(path, tmp_path, needle)
        assert path.read_bytes() == before
        # verify checks and never repairs
        assert os.stat({"db": path, "dir": path.parent, "wal": f"{path}-wal", "shm": f"{path}-shm"}[target]).st_mode & 0o777 == mode
    finally:
        factory.close()


def test_symlinked_database(archive, tmp_path):
    path, _ = archive
    link = path.parent / "link.sqlite3"
    link.symlink_to(path)
    assert_fails_with(link, tmp_path, "archive database is a symbolic link")


def test_truncated_file(archive, tmp_path):
    path, _ = archive
    size = path.stat().st_size
    with open(path, "r+b") as handle:
        handle.truncate(size // 2)
    result = run_verify(path, tmp_path)
    assert result.returncode == 65
    assert failures(result), result
    assert b"Traceback" not in result.stderr


def test_not_a_database(archive, tmp_path):
    path, _ = archive
    path.write_bytes(b"this is not sqlite" * 100)
    assert_fails_with(path, tmp_path, "corrupt or not a database")


def test_missing_archive_is_an_io_error(tmp_path):
    directory = tmp_path / "none"
    directory.mkdir(mode=0o700)
    result = run_verify(directory / "tool-calls.sqlite3", tmp_path)
    assert result.returncode == 74
    assert result.stderr.decode().count("\n") == 1 and b"does not exist" in result.stderr
    assert not (directory / "tool-calls.sqlite3").exists()


def test_progress_on_a_terminal_only(archive, tmp_path):
    path, _ = archive
    for extra, expect in (((), True), (("--json",), False)):
        proc, seen = on_a_terminal([sys.executable, "-m", "yarp", "archive", "verify", "--archive", str(path), *extra],
                                   yarp_env(tmp_path), stream="stderr")
        assert proc.returncode == 0
        assert (b"verifying payloads 14/14" in seen) is expect, seen


def test_library_report_counts_streamed_bytes(archive):
    path, _ = archive
    calls = []
    report = verify.verify_archive(resolve_archive(str(path), {}), progress=lambda *a: calls.append(a))
    assert report.ok
    conn = sqlite3.connect(path)
    total = conn.execute("SELECT sum(uncompressed_byte_length), count(*) FROM payloads").fetchone()
    conn.close()
    assert report.payload_bytes_checked == total[0]
    assert calls[-1] == (total[1], total[1], total[0], total[0])


def test_a_payload_too_large_to_check_whole_is_streamed_and_a_changed_byte_is_found(tmp_path):
    from yarp.limits import VERIFY_INLINE_BYTES

    path = tmp_path / "large" / "tool-calls.sqlite3"
    with ArchiveFactory(path) as factory:  # incompressible, so stored as it is and larger than a whole check
        factory.shell_call("big", os.urandom(VERIFY_INLINE_BYTES + 4096))
    clean = run_verify(path, tmp_path, "--json")
    assert json.loads(clean.stdout)["ok"] is True, clean
    damage(path, "UPDATE payloads SET body = substr(body, 1, 100) || X'00' || substr(body, 102)"
                 f" WHERE length(body) > {VERIFY_INLINE_BYTES}")
    assert_fails_with(path, tmp_path, "does not match its SHA-256 digest")


def test_a_zstd_frame_declaring_more_bytes_than_recorded_is_refused_unread(tmp_path):
    path = tmp_path / "frame" / "tool-calls.sqlite3"
    with ArchiveFactory(path) as factory:
        factory.shell_call("log", b"a compressible log line\n" * 2000)
    damage(path, "UPDATE payloads SET uncompressed_byte_length = 10 WHERE compression = 'zstd'")
    assert_fails_with(path, tmp_path, "decompresses to more than its recorded 10 bytes")


def test_a_binary_payload_is_not_text_unless_a_snapshot_says_so(tmp_path):
    path = tmp_path / "bin" / "tool-calls.sqlite3"
    with ArchiveFactory(path) as factory:
        factory.shell_call("bin", b"\xff\xfe binary \x80\n" * 500, b"")
    assert run_verify(path, tmp_path).returncode == 0  # application/octet-stream: any bytes
    damage(path, "UPDATE snapshots SET media_type = 'text/plain; charset=utf-8' WHERE subject = 'stdout'")
    assert_fails_with(path, tmp_path, "is declared UTF-8 text but is not valid UTF-8")


def test_every_step_shows_on_a_terminal_and_nothing_in_a_pipe(archive, tmp_path):
    path, _ = archive
    proc, seen = on_a_terminal([sys.executable, "-m", "yarp", "archive", "verify", "--archive", str(path)],
                               yarp_env(tmp_path), stream="stderr")
    assert proc.returncode == 0
    assert seen.startswith(b"\r\x1b[Kverifying: checking SQLite integrity, calls and snapshots"), seen
    assert seen.endswith(b"\r\x1b[K")  # removed before the result
    piped = run_verify(path, tmp_path)
    assert (piped.returncode, piped.stderr) == (0, b"")


def test_problems_of_several_checks_come_in_the_order_of_the_checks(archive, tmp_path):
    path, refs = archive
    damage(path, f"DELETE FROM snapshots WHERE tool_call_id = {call_id(path, refs['plain'])}"
                 " AND subject = 'input' AND stage = 'after'",
           "UPDATE tool_calls SET status = 'paused' WHERE archive_ref = ?", params=(refs["shell"],))
    damage(path, "UPDATE payloads SET uncompressed_byte_length = uncompressed_byte_length + 5"
                 " WHERE rowid = (SELECT min(rowid) FROM payloads)")
    problems = assert_fails_with(path, tmp_path, "has an invalid status", "bytes but records",
                                 "missing its required input/after")
    order = [next(i for i, p in enumerate(problems) if needle in p)
             for needle in ("has an invalid status", "bytes but records", "missing its required input/after")]
    assert order == sorted(order), problems
