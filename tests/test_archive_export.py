"""`yarp archive export --format parquet`: DuckDB reads the files back and agrees with the archive."""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import stat
import subprocess
import sys

import duckdb
import pytest
from archive_factory import BASE_MS, ArchiveFactory, build_sample, run_yarp, yarp_env

from yarp.wire import operations as ops
from yarp.archive.codec import decode_body

BINARY = bytes(range(256)) * 4 + b"\xff\xfe not utf-8"
TABLES = ("sessions", "calls", "snapshots", "payloads")


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    root = tmp_path_factory.mktemp("export")
    path = root / "a" / "tool-calls.sqlite3"
    refs = build_sample(path)
    with ArchiveFactory(path, ops.Session("claude-code", "tester", "cc-2", None)) as f:
        f._clock = iter(range(BASE_MS + 100_000, BASE_MS + 200_000, 1000))
        refs["binary"] = f.shell_call("bin-1", BINARY, b"", tool="Bash")
        refs["big"] = f.shell_call("big-1", b"log line with some words\n" * 40_000, b"", tool="Bash")
    return path, root, refs


def export(archive, directory, *args: str):
    path, root, _ = archive
    return run_yarp("archive", "export", "--format", "parquet", str(directory), "--json", *args,
                    "--archive", str(path), home=root)


def sqlite_rows(archive, sql: str, params=()):
    import sqlite3

    conn = sqlite3.connect(f"file:{archive[0]}?mode=ro", uri=True)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


@pytest.fixture(scope="module")
def exported(archive, tmp_path_factory):
    out = tmp_path_factory.mktemp("out") / "full"
    result = export(archive, out)
    assert result.returncode == 0, result.stderr
    return out, json.loads(result.stdout)


def test_counts_match_the_archive(archive, exported):
    out, summary = exported
    con = duckdb.connect()
    archive_counts = {
        "sessions": "SELECT count(*) FROM sessions", "calls": "SELECT count(*) FROM tool_calls",
        "snapshots": "SELECT count(*) FROM snapshots", "payloads": "SELECT count(*) FROM payloads",
    }
    for table in TABLES:
        count = con.execute(f"SELECT count(*) FROM read_parquet('{out / (table + '.parquet')}')").fetchone()[0]
        assert count == sqlite_rows(archive, archive_counts[table])[0][0] == summary["tables"][table]["rows"], table
    assert summary["payload_bytes"] == sqlite_rows(
        archive, "SELECT sum(p.uncompressed_byte_length) FROM snapshots s JOIN payloads p ON p.sha256 = s.payload_sha256"
    )[0][0]


def test_joins_agree_with_the_archive(archive, exported):
    out, _ = exported
    con = duckdb.connect()
    for table in TABLES:
        con.execute(f"CREATE VIEW {table} AS SELECT * FROM read_parquet('{out / (table + '.parquet')}')")
    per_tool = con.execute(
        "SELECT c.tool_name, s.subject, s.stage, count(*), sum(p.byte_length) FROM calls c"
        " JOIN snapshots s ON s.tool_call_id = c.id JOIN payloads p ON p.sha256 = s.payload_sha256"
        " GROUP BY ALL ORDER BY ALL").fetchall()
    expected = sqlite_rows(
        archive,
        "SELECT c.tool_name, s.subject, s.stage, count(*), sum(p.uncompressed_byte_length) FROM tool_calls c"
        " JOIN snapshots s ON s.tool_call_id = c.id JOIN payloads p ON p.sha256 = s.payload_sha256"
        " GROUP BY 1, 2, 3 ORDER BY 1, 2, 3")
    assert per_tool == expected
    by_agent = con.execute("SELECT se.agent, count(*) FROM calls c JOIN sessions se ON se.id = c.session_id"
                           " GROUP BY 1 ORDER BY 1").fetchall()
    assert by_agent == sqlite_rows(archive, "SELECT se.agent, count(*) FROM tool_calls c JOIN sessions se"
                                            " ON se.id = c.session_id GROUP BY 1 ORDER BY 1")
    # Snapshot sizes agree with the payload table; every digest resolves.
    assert con.execute("SELECT count(*) FROM snapshots s LEFT JOIN payloads p ON p.sha256 = s.payload_sha256"
                       " WHERE p.sha256 IS NULL OR p.byte_length <> s.byte_length").fetchone()[0] == 0


def test_text_bytes_types_and_timestamps(archive, exported):
    out, _ = exported
    _, _, refs = archive
    con = duckdb.connect()
    snapshots, calls = out / "snapshots.parquet", out / "calls.parquet"
    # Text is the exact decoded payload; non-UTF-8 output keeps its exact bytes instead.
    for ref, subject in ((refs["shell"], "stdout"), (refs["big"], "stdout"), (refs["binary"], "stdout")):
        sha, compression, length, body = sqlite_rows(
            archive, "SELECT p.sha256, p.compression, p.uncompressed_byte_length, p.body FROM tool_calls c"
            " JOIN snapshots s ON s.tool_call_id = c.id JOIN payloads p ON p.sha256 = s.payload_sha256"
            " WHERE c.archive_ref = ? AND s.subject = ? AND s.stage = 'before'", (ref, subject))[0]
        data = decode_body(compression, body, length)
        text, raw, digest = con.execute(
            f"SELECT s.text, s.body, s.payload_sha256 FROM '{snapshots}' s JOIN '{calls}' c ON c.id = s.tool_call_id"
            " WHERE c.archive_ref = ? AND s.subject = ? AND s.stage = 'before'", [ref, subject]).fetchone()
        assert digest == sha.hex() == hashlib.sha256(data).hexdigest()
        if ref == refs["binary"]:
            assert text is None and bytes(raw) == data == BINARY
        else:
            assert raw is None and text.encode() == data
    types = dict(con.execute(f"SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM '{calls}')").fetchall())
    assert types["started_at"] == types["finished_at"] == "TIMESTAMP WITH TIME ZONE"
    assert types["is_error"] == types["executed"] == types["requires_streams"] == "BOOLEAN"
    assert types["id"] == "BIGINT"
    import pyarrow.parquet as pq

    schema = pq.read_schema(calls)  # NOT NULL in the archive is non-nullable in the file, and only there
    assert [f.name for f in schema if not f.nullable] == [
        "id", "session_id", "source_call_id", "archive_ref", "tool_name", "started_at", "requires_streams", "status"]
    exported_times = con.execute(f"SELECT archive_ref, epoch_ms(started_at), epoch_ms(finished_at), executed"
                                 f" FROM '{calls}' ORDER BY id").fetchall()
    archived = sqlite_rows(archive, "SELECT archive_ref, started_at_ms, finished_at_ms, executed FROM tool_calls"
                                    " ORDER BY id")
    assert exported_times == [(r, s, f, None if e is None else bool(e)) for r, s, f, e in archived]


def test_files_are_private_and_never_replaced(archive, exported, tmp_path):
    out, _ = exported
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o700
    for table in TABLES:
        assert stat.S_IMODE(os.stat(out / f"{table}.parquet").st_mode) == 0o600
    assert sorted(os.listdir(out)) == sorted(f"{t}.parquet" for t in TABLES)  # no temporary file left
    before = {t: (out / f"{t}.parquet").read_bytes() for t in TABLES}
    again = export(archive, out)
    assert again.returncode == 64 and b"already exists" in again.stderr
    assert {t: (out / f"{t}.parquet").read_bytes() for t in TABLES} == before
    link = tmp_path / "link"
    link.symlink_to(tmp_path)
    refused = export(archive, link)
    assert refused.returncode == 74 and b"symbolic link" in refused.stderr
    assert not list(tmp_path.glob("*.parquet"))
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    os.chmod(shared, 0o755)
    broad = export(archive, shared)
    assert broad.returncode == 74 and b"broader than 0700" in broad.stderr and not os.listdir(shared)


def test_windows_partition_finished_calls(archive, tmp_path):
    path, root, _ = archive
    con = duckdb.connect()
    received = sqlite_rows(archive, "SELECT c.archive_ref, max(c.finished_at_ms, (SELECT max(captured_at_ms)"
                                    " FROM snapshots s WHERE s.tool_call_id = c.id)) FROM tool_calls c"
                                    " WHERE c.status = 'finished' ORDER BY 2")
    middle = received[len(received) // 2][1]
    first, second = tmp_path / "w1", tmp_path / "w2"
    assert export(archive, first, "--since", "0", "--until", str(middle)).returncode == 0
    assert export(archive, second, "--since", str(middle), "--until", str(received[-1][1] + 1)).returncode == 0
    refs = []
    for directory in (first, second):
        refs.append({r for (r,) in con.execute(f"SELECT archive_ref FROM '{directory / 'calls.parquet'}'").fetchall()})
        # Each window's snapshots, sessions and payloads belong to its own calls only.
        assert con.execute(f"SELECT count(*) FROM '{directory / 'snapshots.parquet'}' s ANTI JOIN"
                           f" '{directory / 'calls.parquet'}' c ON c.id = s.tool_call_id").fetchone()[0] == 0
        assert con.execute(f"SELECT count(*) FROM '{directory / 'payloads.parquet'}' p ANTI JOIN"
                           f" '{directory / 'snapshots.parquet'}' s ON s.payload_sha256 = p.sha256").fetchone()[0] == 0
    assert refs[0] and refs[1] and not refs[0] & refs[1]
    assert refs[0] | refs[1] == {r for r, _ in received}  # every finished call once; the incomplete one never


def test_missing_pyarrow_is_one_clear_error(archive, tmp_path):
    path, root, _ = archive
    code = ("import sys; sys.modules['pyarrow'] = None; from yarp.cli import main; "
            f"sys.exit(main(['archive', 'export', '--format', 'parquet', {str(tmp_path / 'x')!r},"
            f" '--archive', {str(path)!r}]))")
    result = subprocess.run([sys.executable, "-c", code], env=yarp_env(root), capture_output=True, timeout=60)
    assert result.returncode == 74
    # It names the command that installs pyarrow for this interpreter, not only the extra's name.
    assert result.stderr.decode() == ("yarp: Parquet export needs pyarrow, which is not installed; install it with: "
                                      f"{shlex.quote(sys.executable)} -m pip install 'pyarrow>=14'\n")
    assert not (tmp_path / "x").exists()


def test_usage_errors(archive, tmp_path):
    path, root, _ = archive
    assert run_yarp("archive", "export", str(tmp_path / "y"), "--archive", str(path), home=root).returncode == 64
    assert run_yarp("archive", "export", "--format", "csv", str(tmp_path / "y"), "--archive", str(path),
                    home=root).returncode == 64
    empty = export(archive, tmp_path / "y", "--since", "2000", "--until", "1000")
    assert empty.returncode == 64 and not (tmp_path / "y").exists()


def test_damaged_payload_fails_cleanly(archive, tmp_path):
    """A payload that no longer decompresses stops the export with one bounded line and no files."""
    import sqlite3

    path, root, _ = archive
    copy_dir = tmp_path / "copy"
    copy_dir.mkdir(mode=0o700)
    copy = copy_dir / "tool-calls.sqlite3"
    src, dst = sqlite3.connect(path), sqlite3.connect(copy)
    src.backup(dst)
    src.close()
    assert dst.execute("UPDATE payloads SET body = x'28b52ffd00' WHERE compression = 'zstd'").rowcount >= 1
    dst.commit()
    dst.close()
    os.chmod(copy, 0o600)
    out = tmp_path / "out"
    result = run_yarp("archive", "export", "--format", "parquet", str(out), "--archive", str(copy), home=root)
    assert result.returncode == 65
    assert result.stderr.startswith(b"yarp: ") and result.stderr.count(b"\n") == 1
    assert os.listdir(out) == []


def test_progress_on_a_terminal_and_nothing_in_a_pipe(archive, tmp_path):
    from terminal import on_a_terminal

    argv = [sys.executable, "-m", "yarp", "archive", "export", "--format", "parquet", str(tmp_path / "tty"),
            "--archive", str(archive[0])]
    proc, seen = on_a_terminal(argv, yarp_env(tmp_path), stream="stderr")
    assert proc.returncode == 0 and b"snapshots: " in proc.stdout
    assert seen.startswith(b"\r\x1b[Kexporting: sessions 0/") and seen.endswith(b"\r\x1b[K"), seen
    piped = export(archive, tmp_path / "pipe")
    assert piped.returncode == 0 and piped.stderr == b""


def test_library_progress_counts_every_table_to_its_rows(archive, tmp_path):
    import sqlite3

    from yarp.archive.export import export_parquet

    seen = {}
    conn = sqlite3.connect(f"file:{archive[0]}?mode=ro", uri=True, isolation_level=None)
    try:
        summary = export_parquet(conn, str(tmp_path / "lib"),
                                 progress=lambda table, done, total: seen.setdefault(table, []).append((done, total)))
    finally:
        conn.close()
    for table, info in summary["tables"].items():
        assert seen[table][0] == (0, info["rows"]) and seen[table][-1] == (info["rows"], info["rows"]), table
