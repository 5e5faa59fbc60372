"""The savings projection: kept between reports, private, never trusted beyond what it can prove.

Each report here is a real `yarp archive savings` process (or the library on a
real archive file), compared with a report computed from scratch in memory.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import subprocess
import sys

import pytest
from archive_factory import ArchiveFactory, run_yarp, yarp_env

from yarp.wire import operations as ops
from yarp.archive.savings import projection as savings_projection
from yarp.archive.savings.report import compute, compute_for
from yarp.paths import resolve_archive

LINES = b"".join(b"   Compiling crate%03d v0.1.0\n" % i for i in range(30))


def _fill(path, first: int, count: int, *, unfinished: bool = True) -> None:
    with ArchiveFactory(path) as f:
        for n in range(first, first + count):
            if n % 3 == 2:
                f.tool_call(f"read-{n}", result={"content": [{"type": "text", "text": "x" * (100 + n)}]})
            else:
                f.shell_call(f"sh-{n}", LINES[: 200 + n], b"warning\n", stdout_after=LINES[:40])
        if unfinished:
            f.begin(f"open-{first}", requires_streams=True)  # never projected


def _report(path, home, *args: str) -> dict:
    result = run_yarp("archive", "savings", "--json", "--by", "program", *args, "--archive", str(path), home=home)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def _from_scratch(path) -> dict:
    conn = savings_projection.connect(resolve_archive(str(path), {}), persistent=False)
    try:
        return compute(conn, by="program").as_dict()
    finally:
        conn.close()


def _projection_file(path, home) -> str:
    return savings_projection.projection_path(resolve_archive(str(path), {}), yarp_env(home))


@pytest.fixture
def archive(tmp_path):
    path = tmp_path / "a" / "tool-calls.sqlite3"
    _fill(path, 0, 12)
    return path, tmp_path


def test_a_report_keeps_private_rows_that_the_next_report_reads(archive):
    path, home = archive
    first = _report(path, home)
    assert first == _from_scratch(path) and first["total"]["calls"] == 12
    projection = _projection_file(path, home)
    assert stat.S_IMODE(os.stat(projection).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(os.path.dirname(projection)).st_mode) == 0o700
    with sqlite3.connect(projection) as conn:
        assert conn.execute("SELECT count(*) FROM call_savings").fetchone()[0] == 12  # finished calls only
        assert conn.execute("SELECT count(*) FROM call_savings WHERE program IS NOT NULL").fetchone()[0] == 8
        # The next report reads the sums rather than computing them again: a changed size shows.
        assert conn.execute("SELECT sum(calls) FROM sums_by_day WHERE kind = 'counted'").fetchone()[0] == 12
        assert conn.execute("SELECT sum(calls) FROM sums_total WHERE kind = 'counted'").fetchone()[0] == 12
        changed = conn.execute("UPDATE sums_total SET produced = produced + 1000 WHERE kind = 'counted'").rowcount
    second = _report(path, home)
    assert second["total"]["bytes_produced"] == first["total"]["bytes_produced"] + changed * 1000


def test_new_calls_and_reused_ids_get_rows_of_their_own(archive):
    path, home = archive
    _report(path, home)
    _fill(path, 100, 5, unfinished=False)
    assert _report(path, home) == _from_scratch(path)
    # Prune every call, then record others: SQLite hands their ids out again, never their references.
    with sqlite3.connect(_projection_file(path, home)) as conn:
        projected = dict(conn.execute("SELECT id, archive_ref FROM call_savings"))
    with ArchiveFactory(path) as f:
        f.store.apply_operation(ops.PruneBefore(2**62))
    _fill(path, 200, 4, unfinished=False)
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as archive_conn:
        now = dict(archive_conn.execute("SELECT id, archive_ref FROM tool_calls WHERE status = 'finished'"))
    reused = [i for i in now if i in projected]
    assert reused and all(now[i] != projected[i] for i in reused)
    after = _report(path, home)
    assert after == _from_scratch(path) and after["total"]["calls"] == 4


def test_stale_rows_of_pruned_calls_are_dropped(archive, monkeypatch):
    path, home = archive
    monkeypatch.setattr(savings_projection, "STALE_SLACK", 0)
    location = resolve_archive(str(path), {})
    environ = yarp_env(home)

    def report() -> dict:
        conn = savings_projection.connect(location, environ=environ)
        try:
            assert savings_projection.is_persistent(conn)
            return compute(conn, by="program").as_dict()
        finally:
            conn.close()

    report()
    with ArchiveFactory(path) as f:
        f.store.apply_operation(ops.PruneBefore(2**62))
    _fill(path, 300, 2)
    assert report() == _from_scratch(path)
    with sqlite3.connect(_projection_file(path, home)) as conn:
        assert conn.execute("SELECT count(*) FROM call_savings").fetchone()[0] == 2


def test_a_damaged_or_older_projection_is_made_anew(archive):
    path, home = archive
    expected = _report(path, home)
    projection = _projection_file(path, home)
    with open(projection, "r+b") as handle:
        handle.write(b"not a database at all" * 10)
    assert _report(path, home) == expected
    with sqlite3.connect(projection) as conn:
        assert conn.execute("SELECT count(*) FROM call_savings").fetchone()[0] == 12
        # Rows of another format (or another YARP version) are never read.
        conn.execute("UPDATE projection_meta SET value = '0/0' WHERE key = 'format'")
        conn.execute("UPDATE call_savings SET produced = 0")
    assert _report(path, home) == expected


def test_an_unsafe_projection_path_is_not_followed_and_the_report_still_counts(archive, tmp_path):
    path, home = archive
    expected = _from_scratch(path)
    projection = _projection_file(path, home)
    os.makedirs(os.path.dirname(projection), mode=0o700)
    target = tmp_path / "elsewhere"
    target.write_bytes(b"keep me")
    os.symlink(target, projection)
    assert _report(path, home) == expected
    assert target.read_bytes() == b"keep me" and os.path.islink(projection)
    os.unlink(projection)
    # A file others may read is left as it is, and not used.
    fd = os.open(projection, os.O_CREAT | os.O_WRONLY, 0o644)
    os.close(fd)
    os.chmod(projection, 0o644)
    assert _report(path, home) == expected
    assert os.path.getsize(projection) == 0


def test_a_locked_projection_gives_way_to_one_in_memory(archive, monkeypatch):
    path, home = archive
    _report(path, home)
    monkeypatch.setattr(savings_projection, "BUSY_MS", 50)
    holder = sqlite3.connect(_projection_file(path, home), isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        conn = savings_projection.connect(resolve_archive(str(path), {}), environ=yarp_env(home))
        try:
            assert not savings_projection.is_persistent(conn)
            assert compute(conn, by="program").as_dict() == _from_scratch(path)
        finally:
            conn.close()
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_concurrent_first_reports_agree(archive):
    path, home = archive
    env = yarp_env(home)
    command = [sys.executable, "-m", "yarp", "archive", "savings", "--json", "--by", "program", "--archive", str(path)]
    procs = [subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(3)]
    outputs = [proc.communicate(timeout=60) for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0, 0], [err for _, err in outputs]
    assert all(json.loads(out) == _from_scratch(path) for out, _ in outputs)


def test_no_projection_file_for_an_archive_that_is_not_there(tmp_path):
    missing = tmp_path / "none" / "tool-calls.sqlite3"
    result = run_yarp("archive", "savings", "--archive", str(missing), home=tmp_path)
    assert result.returncode == 74
    assert not os.path.exists(_projection_file(missing, tmp_path))


def test_a_projection_busy_past_its_wait_gives_way_to_one_in_memory(archive, monkeypatch):
    """Another report starts reading the file after this one opened it: this report keeps its rows in memory."""
    path, home = archive
    _report(path, home)
    _fill(path, 400, 3)  # rows to add: the report must write
    monkeypatch.setattr(savings_projection, "BUSY_MS", 50)
    reader = sqlite3.connect(_projection_file(path, home), isolation_level=None)
    opened = []
    connect = savings_projection.connect

    def connect_then_read(location, **kwargs):
        conn = connect(location, **kwargs)
        opened.append(savings_projection.is_persistent(conn))
        if opened == [True]:  # the file is open: now another report reads it (a shared lock)
            reader.execute("BEGIN")
            reader.execute("SELECT count(*) FROM call_savings").fetchone()
        return conn

    monkeypatch.setattr(savings_projection, "connect", connect_then_read)
    try:
        location = resolve_archive(str(path), {})
        assert compute_for(location, environ=yarp_env(home), by="program").as_dict() == _from_scratch(path)
    finally:
        reader.execute("ROLLBACK")
        reader.close()
    assert opened[:1] == [True] and opened[-1] is False  # the file first, then memory
    with sqlite3.connect(_projection_file(path, home)) as conn:  # nothing of the busy attempt was kept
        assert conn.execute("SELECT count(*) FROM call_savings").fetchone()[0] == 12


# --- the sums a report reads instead of the rows ------------------------------------------------

GROUPINGS = ("tool", "program", "command", "rule", "day", "session")
DAY = 86_400_000


def _reports(location, environ, windows) -> dict:
    """Every grouping over every window, from the kept projection (its marks and sums) and from scratch."""
    kept, fresh = {}, {}
    for by in GROUPINGS:
        for since, until in windows:
            key = (by, since, until)
            kept[key] = compute_for(location, environ=environ, by=by, since_ms=since, until_ms=until,
                                    top=100).as_dict()
            conn = savings_projection.connect(location, persistent=False)
            try:
                fresh[key] = compute(conn, by=by, since_ms=since, until_ms=until, top=100).as_dict()
            finally:
                conn.close()
    return kept, fresh


def test_kept_sums_equal_a_report_from_scratch_as_calls_arrive_and_go(tmp_path):
    """Over two generated days: whole days from the sums, parts of days from the rows, new calls, an old
    call recovered long after, open calls finishing, and a prune, each grouping and window."""
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "bench"))
    from archive_gen import BASE_MS, extend, generate

    path = tmp_path / "gen" / "tool-calls.sqlite3"
    generate(path, 2500, seed=3, start_ms=BASE_MS + 14 * 3_600_000)  # an afternoon, and the next day
    location = resolve_archive(str(path), {})
    environ = yarp_env(tmp_path)
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        first, last = conn.execute("SELECT min(started_at_ms), max(started_at_ms) FROM tool_calls").fetchone()
        capped = conn.execute("SELECT c.archive_ref FROM tool_calls c JOIN sessions s ON s.id = c.session_id"
                              " WHERE s.agent = 'pi' AND c.requires_streams = 1 AND c.status = 'finished'"
                              " AND EXISTS (SELECT 1 FROM snapshots a JOIN snapshots b ON b.tool_call_id ="
                              " a.tool_call_id AND b.subject = 'stdout' AND b.stage = 'before'"
                              " WHERE a.tool_call_id = c.id AND a.subject = 'stdout' AND a.stage = 'after'"
                              " AND a.payload_sha256 <> b.payload_sha256) ORDER BY c.id LIMIT 1").fetchone()[0]
    day = first // DAY
    assert last > (day + 1) * DAY, "the archive spans at least two days"
    windows = [(None, None), (day * DAY - 1000, (day + 1) * DAY + 7_200_000), (first + 3_600_000, None),
               (None, (day + 1) * DAY), (first + 1000, first + 3_600_000)]
    kept, fresh = _reports(location, environ, windows)
    assert kept == fresh
    projection = _projection_file(path, tmp_path)
    with sqlite3.connect(projection) as conn:
        marks = json.loads(conn.execute("SELECT value FROM projection_meta WHERE key = 'marks'").fetchone()[0])
    assert marks["open"], "the generator leaves calls open"
    # New calls, and a Pi call that reads the first capped call back a day later: an old call's numbers change.
    extend(path, 300, seed=5)
    with ArchiveFactory(path, ops.Session("pi", "me", "late-session", last + DAY)) as f:
        f.begin("late-1", tool="bash", input_before={"command": f"yarp read {capped} stdout 1:40"},
                started_at_ms=last + DAY)
        f.result_before("late-1", {"content": [{"type": "text", "text": "read back\n" * 40}]})
        f.finish("late-1", {"content": [{"type": "text", "text": "read back\n" * 40}]})
    with sqlite3.connect(path) as conn:  # an open call finishes (as the broker would write it)
        conn.execute("UPDATE tool_calls SET status = 'finished', finished_at_ms = started_at_ms + 5, is_error = 0,"
                     " executed = 0 WHERE id = ?", (marks["open"][0],))
        conn.execute("INSERT OR IGNORE INTO payloads VALUES (?, 'none', 2, CAST('{}' AS BLOB))",
                     (__import__("hashlib").sha256(b"{}").digest(),))
        conn.execute("INSERT INTO snapshots SELECT ?, 'result', 'after', 'application/json', NULL, 1, ?"
                     " WHERE NOT EXISTS (SELECT 1 FROM snapshots WHERE tool_call_id = ? AND subject = 'result'"
                     " AND stage = 'after')", (marks["open"][0], __import__("hashlib").sha256(b"{}").digest(),
                                               marks["open"][0]))
    kept, fresh = _reports(location, environ, windows)
    assert kept == fresh
    assert kept[("tool", None, None)]["total"]["bytes_recovered"] > 0
    # A prune of most of the first day: its rows no longer count, and the sums are made again.
    with ArchiveFactory(path) as f:
        f.store.apply_operation(ops.PruneBefore(first + 6 * 3_600_000))
    kept, fresh = _reports(location, environ, windows)
    assert kept == fresh
