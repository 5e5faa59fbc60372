"""`yarp archive stats`: exact counts from a real archive, and never any archived content."""

from __future__ import annotations

import json
import os

import pytest
from archive_factory import ArchiveFactory, build_sample, run_yarp

from yarp.archive import stats
from yarp.paths import resolve_archive
from yarp.archive.sqlite import open_readonly

SECRET = "sk-live-THIS-MUST-NOT-APPEAR"


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    root = tmp_path_factory.mktemp("stats")
    path = root / "a" / "tool-calls.sqlite3"
    build_sample(path)
    with ArchiveFactory(path) as factory:
        # Compressible and secret-bearing content; stats must count it, never show it.
        factory.shell_call("zip", (SECRET + " repeated line\n").encode() * 2000, SECRET.encode(), tool=SECRET)
    return path, root


def test_reference_keys_first_in_order(sample):
    path, root = sample
    result = run_yarp("archive", "stats", "--archive", str(path), home=root)
    assert result.returncode == 0
    lines = result.stdout.decode().splitlines()
    assert [line.split(": ")[0] for line in lines[:8]] == list(stats.REFERENCE_KEYS)
    assert all(": " in line for line in lines)
    assert SECRET.encode() not in result.stdout + result.stderr
    assert b"repeated line" not in result.stdout


def test_counts_match_the_archive(sample):
    path, root = sample
    values = json.loads(run_yarp("archive", "stats", "--json", "--archive", str(path), home=root).stdout)
    # build_sample: shell (error), text, plain, preflight (not executed, error), incomplete; plus "zip".
    assert values["sessions"] == 1
    assert values["calls"] == 6
    assert values["incomplete_calls"] == 1
    assert values["calls_finished"] == 5
    assert (values["calls_error"], values["calls_ok"], values["calls_error_unknown"]) == (2, 3, 1)
    assert (values["calls_executed"], values["calls_not_executed"], values["calls_executed_unknown"]) == (4, 1, 1)
    assert values["snapshots_input_before"] == values["snapshots_input_after"] == 6
    assert values["snapshots_result_after"] == 5
    assert values["snapshots_result_before"] == 4
    assert values["snapshots_stdout_before"] == values["snapshots_stderr_after"] == 2
    assert values["snapshots_result_text_before"] == values["snapshots_source_output_before"] == 1
    assert values["oldest_call_ms"] == 1_700_000_000_000
    assert values["newest_call_ms"] > values["oldest_call_ms"]
    assert values["database_bytes"] == os.path.getsize(path)
    assert values["payloads"] == values["payloads_zstd"] + values["payloads_none"]
    assert values["payloads_zstd"] >= 1
    assert values["logical_payload_bytes"] > values["stored_payload_bytes"]
    assert values["compression_ratio"] == round(values["logical_payload_bytes"] / values["stored_payload_bytes"], 3)
    assert values["payloads_unreferenced"] == 0
    # Deduplication: identical before/after snapshots share payloads.
    assert values["snapshot_logical_bytes"] > values["logical_payload_bytes"]


def test_library_matches_sql_totals(sample):
    path, _ = sample
    location = resolve_archive(str(path), {})
    conn = open_readonly(location)
    try:
        values = stats.archive_stats(conn, location)
        logical, stored, count = conn.execute(
            "SELECT sum(uncompressed_byte_length), sum(length(body)), count(*) FROM payloads").fetchone()
        snapshots = conn.execute("SELECT count(*) FROM snapshots").fetchone()[0]
    finally:
        conn.close()
    assert (values["logical_payload_bytes"], values["stored_payload_bytes"], values["payloads"]) == (logical, stored, count)
    assert values["snapshots"] == snapshots == sum(v for k, v in values.items() if k.startswith("snapshots_"))


def test_wal_sizes_of_a_live_archive(tmp_path):
    path = tmp_path / "live" / "tool-calls.sqlite3"
    factory = ArchiveFactory(path)
    try:
        factory.shell_call("c", b"x\n")
        values = json.loads(run_yarp("archive", "stats", "--json", "--archive", str(path), home=tmp_path).stdout)
        assert values["wal_bytes"] == os.path.getsize(f"{path}-wal") > 0
        assert values["shm_bytes"] == os.path.getsize(f"{path}-shm") > 0
    finally:
        factory.close()


def test_empty_archive(tmp_path):
    path = tmp_path / "e" / "tool-calls.sqlite3"
    ArchiveFactory(path).close()
    result = run_yarp("archive", "stats", "--archive", str(path), home=tmp_path)
    text = result.stdout.decode()
    assert result.returncode == 0
    assert "calls: 0\n" in text and "oldest_call_ms: none\n" in text and "compression_ratio: none\n" in text


def test_missing_archive_exit_74(tmp_path):
    (tmp_path / "d").mkdir(mode=0o700)
    result = run_yarp("archive", "stats", "--archive", str(tmp_path / "d" / "x.sqlite3"), home=tmp_path)
    assert result.returncode == 74 and result.stderr.count(b"\n") == 1
    assert os.listdir(tmp_path / "d") == []
