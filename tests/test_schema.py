"""Schema v1 on real SQLite files: DDL text, constraints, settings and migrations."""

from __future__ import annotations

import hashlib
import os
import re
import sqlite3
import stat
from pathlib import Path

import pytest

from yarp.archive import schema
from yarp.errors import UnsupportedSchema
from yarp.paths import ArchiveLocation
from yarp.archive.sqlite import open_readonly, open_writer

from shared_data import shared_path

SPEC = shared_path("spec", "tool-call-archive.md")


def _norm(sql: str) -> str:
    sql = re.sub(r"\s+", " ", sql).strip().rstrip(";").strip()
    return re.sub(r"\s*([(),])\s*", r"\1", sql)


def _spec_statements() -> list[str]:
    if not SPEC.exists():
        pytest.skip("archive specification is not available here")
    match = re.search(r"```sql\n(PRAGMA user_version = 1;.*?)```", SPEC.read_text(), re.S)
    if match is None:
        pytest.skip("specification has no version 1 DDL block")
    return [s for s in (_norm(x) for x in match.group(1).split(";")) if s and not s.startswith("PRAGMA")]


@pytest.fixture
def archive(tmp_path):
    directory = tmp_path / "arch"
    directory.mkdir(mode=0o700)
    location = ArchiveLocation(str(directory / "tool-calls.sqlite3"), False)
    conn = open_writer(location)
    yield conn, location
    conn.close()


def test_sqlite_master_matches_spec_ddl(archive):
    conn, _ = archive
    stored = [_norm(r[0]) for r in conn.execute(
        "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid")]
    assert stored == _spec_statements()


def test_module_ddl_matches_spec():
    ours = [s for s in (_norm(x) for x in schema.SCHEMA_V1.split(";")) if s]
    assert ours == _spec_statements()


def test_fresh_archive_settings(archive):
    conn, _ = archive
    one = lambda sql: conn.execute(sql).fetchone()[0]  # noqa: E731
    assert one("PRAGMA user_version") == 1
    assert one("PRAGMA auto_vacuum") == 2
    assert one("PRAGMA journal_mode") == "wal"
    assert one("PRAGMA synchronous") == 2
    assert one("PRAGMA foreign_keys") == 1
    assert one("PRAGMA busy_timeout") == 250


def test_reopen_keeps_version_and_mode(archive):
    conn, location = archive
    conn.close()
    again = open_writer(location)
    try:
        assert schema.user_version(again) == 1
        assert again.execute("PRAGMA auto_vacuum").fetchone()[0] == 2
    finally:
        again.close()
    reader = open_readonly(location)
    try:
        with pytest.raises(sqlite3.OperationalError):
            reader.execute("INSERT INTO sessions (agent, account, source_session_id) VALUES ('a','b','c')")
    finally:
        reader.close()


def test_create_runs_under_begin_exclusive(tmp_path):
    conn = sqlite3.connect(str(tmp_path / "x.sqlite3"), isolation_level=None)
    statements: list[str] = []
    conn.set_trace_callback(lambda s: statements.append(s.strip()))
    schema.create(conn)
    begins = [s for s in statements if s.upper().startswith("BEGIN")]
    assert begins == ["BEGIN EXCLUSIVE"]
    first_ddl = next(i for i, s in enumerate(statements) if s.startswith("CREATE"))
    assert statements.index("BEGIN EXCLUSIVE") < first_ddl
    assert schema.user_version(conn) == 1
    conn.close()


def _ids(conn):
    conn.execute("INSERT INTO sessions (agent, account, source_session_id) VALUES ('pi','me','s')")
    conn.execute(
        "INSERT INTO tool_calls (session_id, source_call_id, archive_ref, tool_name, started_at_ms,"
        " requires_streams, status) VALUES (1, 'c', ?, 'bash', 1, 0, 'started')", ("yr_" + "a" * 32,))
    conn.execute("INSERT INTO payloads VALUES (?, 'none', 1, x'41')", (hashlib.sha256(b"A").digest(),))
    return hashlib.sha256(b"A").digest()


def _snap(conn, digest, subject="input", stage="before", completeness=None, call=1):
    conn.execute(
        "INSERT INTO snapshots VALUES (?, ?, ?, 'text/plain', ?, 1, ?)",
        (call, subject, stage, completeness, digest))


@pytest.mark.parametrize("ref", ["yr_" + "A" * 32, "yr_" + "a" * 31, "xx_" + "a" * 32, "yr_" + "g" * 32])
def test_archive_ref_check(archive, ref):
    conn, _ = archive
    _ids(conn)
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute(
            "INSERT INTO tool_calls (session_id, source_call_id, archive_ref, tool_name, started_at_ms,"
            " requires_streams, status) VALUES (1, 'd', ?, 'bash', 1, 0, 'started')", (ref,))


def test_unique_constraints(archive):
    conn, _ = archive
    _ids(conn)
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute("INSERT INTO sessions (agent, account, source_session_id) VALUES ('pi','me','s')")
    with pytest.raises(sqlite3.IntegrityError):  # same (session, call)
        conn.execute(
            "INSERT INTO tool_calls (session_id, source_call_id, archive_ref, tool_name, started_at_ms,"
            " requires_streams, status) VALUES (1, 'c', ?, 'bash', 1, 0, 'started')", ("yr_" + "b" * 32,))
    with pytest.raises(sqlite3.IntegrityError):  # same archive_ref
        conn.execute(
            "INSERT INTO tool_calls (session_id, source_call_id, archive_ref, tool_name, started_at_ms,"
            " requires_streams, status) VALUES (1, 'd', ?, 'bash', 1, 0, 'started')", ("yr_" + "a" * 32,))


@pytest.mark.parametrize("column, value", [("status", "done"), ("requires_streams", 2), ("is_error", 3),
                                           ("executed", -1)])
def test_call_checks(archive, column, value):
    conn, _ = archive
    _ids(conn)
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute(f"UPDATE tool_calls SET {column} = ? WHERE id = 1", (value,))


def test_payload_checks(archive):
    conn, _ = archive
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute("INSERT INTO payloads VALUES (x'00', 'none', 0, x'')")
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute("INSERT INTO payloads VALUES (?, 'gzip', 0, x'')", (bytes(32),))
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute("INSERT INTO payloads VALUES (?, 'none', -1, x'')", (bytes(32),))


def test_foreign_keys_reject_bad_references(archive):
    conn, _ = archive
    digest = _ids(conn)
    with pytest.raises(sqlite3.IntegrityError):
        _snap(conn, bytes(32))  # unknown payload
    with pytest.raises(sqlite3.IntegrityError):
        _snap(conn, digest, call=99)  # unknown call
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute(
            "INSERT INTO tool_calls (session_id, source_call_id, archive_ref, tool_name, started_at_ms,"
            " requires_streams, status) VALUES (42, 'x', ?, 'bash', 1, 0, 'started')", ("yr_" + "c" * 32,))
    with pytest.raises(sqlite3.IntegrityError):
        _snap(conn, digest, subject="stdin")
    with pytest.raises(sqlite3.IntegrityError):
        _snap(conn, digest, stage="during")


def test_result_text_completeness_rule(archive):
    conn, _ = archive
    digest = _ids(conn)
    with pytest.raises(sqlite3.IntegrityError):
        _snap(conn, digest, "result_text", "before", None)
    with pytest.raises(sqlite3.IntegrityError):
        _snap(conn, digest, "result_text", "after", "complete")
    with pytest.raises(sqlite3.IntegrityError):
        _snap(conn, digest, "result", "before", "complete")
    with pytest.raises(sqlite3.IntegrityError):
        _snap(conn, digest, "result_text", "before", "partial")
    _snap(conn, digest, "result_text", "before", "incomplete")
    _snap(conn, digest, "result", "before", None)
    assert conn.execute("SELECT count(*) FROM snapshots").fetchone()[0] == 2


def test_deleting_call_cascades_to_snapshots(archive):
    conn, _ = archive
    digest = _ids(conn)
    _snap(conn, digest, "input", "before")
    _snap(conn, digest, "input", "after")
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute("DELETE FROM payloads")  # still referenced
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute("DELETE FROM sessions")  # calls still reference it
    conn.execute("DELETE FROM tool_calls")
    assert conn.execute("SELECT count(*) FROM snapshots").fetchone()[0] == 0
    conn.execute("DELETE FROM payloads")
    assert conn.execute("PRAGMA foreign_key_check").fetchall() == []


def test_incremental_vacuum_really_frees_pages(archive):
    conn, location = archive
    conn.execute("BEGIN")
    for i in range(200):
        conn.execute("INSERT INTO payloads VALUES (?, 'none', 4096, ?)",
                     (hashlib.sha256(str(i).encode()).digest(), os.urandom(4096)))
    conn.execute("COMMIT")
    conn.execute("DELETE FROM payloads")
    assert conn.execute("PRAGMA freelist_count").fetchone()[0] > 100
    conn.executescript("PRAGMA incremental_vacuum")
    assert conn.execute("PRAGMA freelist_count").fetchone()[0] == 0


# --- migrations -------------------------------------------------------------


def _v0_fixture(path: Path) -> None:
    conn = sqlite3.connect(str(path), isolation_level=None)
    conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
    conn.execute("CREATE TABLE legacy_calls (ref TEXT, tool TEXT)")
    conn.execute("INSERT INTO legacy_calls VALUES ('yr_" + "d" * 32 + "', 'bash')")
    conn.close()
    os.chmod(path, 0o600)


def _migrate_v0(conn: sqlite3.Connection) -> None:
    for statement in schema.SCHEMA_V1.split(";"):
        if statement.strip():
            conn.execute(statement)
    conn.execute("INSERT INTO sessions (agent, account, source_session_id) VALUES ('legacy', 'local', 'v0')")
    conn.execute(
        "INSERT INTO tool_calls (session_id, source_call_id, archive_ref, tool_name, started_at_ms,"
        " requires_streams, status) SELECT 1, ref, ref, tool, 0, 0, 'started' FROM legacy_calls")
    conn.execute("DROP TABLE legacy_calls")


def test_older_version_migrates_in_one_exclusive_transaction_after_backup(tmp_path):
    db = tmp_path / "old.sqlite3"
    _v0_fixture(db)
    conn = sqlite3.connect(str(db), isolation_level=None)
    statements: list[str] = []
    conn.set_trace_callback(lambda s: statements.append(s.strip()))
    found = schema.ensure_current(conn, str(db), migrations={0: _migrate_v0})
    assert found == 0
    assert schema.user_version(conn) == 1
    assert conn.execute("SELECT tool_name FROM tool_calls").fetchall() == [("bash",)]
    assert [s for s in statements if s.upper().startswith(("BEGIN", "COMMIT"))] == ["BEGIN EXCLUSIVE", "COMMIT"]
    conn.close()
    backups = sorted(p for p in tmp_path.iterdir() if p.name.endswith(".backup"))
    assert len(backups) == 1
    assert stat.S_IMODE(backups[0].stat().st_mode) == 0o600
    old = sqlite3.connect(str(backups[0]))
    assert old.execute("SELECT count(*) FROM legacy_calls").fetchone()[0] == 1
    assert old.execute("PRAGMA user_version").fetchone()[0] == 0
    old.close()


def test_failed_migration_step_rolls_back_everything(tmp_path):
    db = tmp_path / "old.sqlite3"
    _v0_fixture(db)

    def broken(conn):
        _migrate_v0(conn)
        raise RuntimeError("step failed")

    conn = sqlite3.connect(str(db), isolation_level=None)
    with pytest.raises(RuntimeError):
        schema.ensure_current(conn, str(db), migrations={0: broken})
    assert schema.user_version(conn) == 0
    assert conn.execute("SELECT name FROM sqlite_master").fetchall() == [("legacy_calls",)]
    conn.close()


def test_older_version_without_migration_is_refused(tmp_path):
    db = tmp_path / "old.sqlite3"
    _v0_fixture(db)
    before = db.read_bytes()
    conn = sqlite3.connect(str(db), isolation_level=None)
    with pytest.raises(UnsupportedSchema):
        schema.ensure_current(conn, str(db))
    conn.close()
    assert db.read_bytes() == before
    assert not any(p.name.endswith(".backup") for p in tmp_path.iterdir())


def test_newer_version_refused_and_file_untouched(tmp_path):
    directory = tmp_path / "arch"
    directory.mkdir(mode=0o700)
    location = ArchiveLocation(str(directory / "tool-calls.sqlite3"), False)
    open_writer(location).close()
    conn = sqlite3.connect(location.path, isolation_level=None)
    conn.execute("PRAGMA user_version = 2")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    before = Path(location.path).read_bytes()
    with pytest.raises(UnsupportedSchema):
        open_writer(location)
    with pytest.raises(UnsupportedSchema):
        open_readonly(location)
    assert Path(location.path).read_bytes() == before
    assert not any(p.name.endswith(".backup") for p in directory.iterdir())


def test_garbage_file_is_reported_corrupt_and_left_alone(tmp_path):
    from yarp.errors import CorruptArchive

    directory = tmp_path / "arch"
    directory.mkdir(mode=0o700)
    location = ArchiveLocation(str(directory / "tool-calls.sqlite3"), False)
    Path(location.path).write_bytes(b"not a database at all" * 100)
    os.chmod(location.path, 0o600)
    before = Path(location.path).read_bytes()
    with pytest.raises(CorruptArchive):
        open_writer(location)
    with pytest.raises(CorruptArchive):
        open_readonly(location)
    assert Path(location.path).read_bytes() == before


def test_reader_companion_files_stay_private(archive):
    conn, location = archive
    conn.execute("INSERT INTO sessions (agent, account, source_session_id) VALUES ('a','b','c')")
    conn.close()
    reader = open_readonly(location)
    try:
        assert reader.execute("SELECT count(*) FROM sessions").fetchone()[0] == 1
        for suffix in ("-wal", "-shm"):
            if os.path.exists(location.path + suffix):
                assert stat.S_IMODE(os.stat(location.path + suffix).st_mode) == 0o600
    finally:
        reader.close()


def test_empty_database_claiming_a_newer_version_is_refused(tmp_path):
    # No tables, but user_version says a newer binary owns it: never build v1 over it.
    directory = tmp_path / "a"
    directory.mkdir(mode=0o700)
    path = directory / "tool-calls.sqlite3"
    os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    before = path.read_bytes()
    with pytest.raises(UnsupportedSchema):
        open_writer(ArchiveLocation(str(path), False))
    assert path.read_bytes() == before
