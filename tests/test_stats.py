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


# --- the sums kept between runs -------------------------------------------------------------

def _both(path, cache):
    """(the run that keeps its sums under `cache`, a run that computes everything)."""
    location = resolve_archive(str(path), {})
    conn = open_readonly(location)
    try:
        kept = stats.archive_stats(conn, location, environ={"XDG_CACHE_HOME": str(cache)})
        fresh = stats.archive_stats(conn, location, keep=False)
    finally:
        conn.close()
    for volatile in ("database_bytes", "wal_bytes", "shm_bytes", "page_count", "free_pages"):
        kept.pop(volatile), fresh.pop(volatile)
    return kept, fresh


def _raw(path, *statements):
    import sqlite3

    conn = sqlite3.connect(path, isolation_level=None)
    try:
        for statement in statements:
            conn.execute(statement)
    finally:
        conn.close()


def test_kept_sums_equal_a_full_count_as_the_archive_changes(tmp_path):
    from yarp.archive.stats_summary import summary_path

    path = tmp_path / "a" / "tool-calls.sqlite3"
    refs = build_sample(path)
    cache = tmp_path / "cache"
    first, fresh = _both(path, cache)
    assert first == fresh and first["incomplete_calls"] == 1
    kept_file = summary_path(str(path), {"XDG_CACHE_HOME": str(cache)})
    assert os.stat(kept_file).st_mode & 0o777 == 0o600
    assert os.stat(os.path.dirname(kept_file)).st_mode & 0o777 == 0o700
    assert SECRET.encode() not in open(kept_file, "rb").read()
    with ArchiveFactory(path) as factory:  # new calls, one left open, and the open one finished
        factory.shell_call("new-1", b"new output\n" * 50)
        factory.tool_call("new-2", result_text="text\n")
        factory.begin("new-3")
        factory.streams("shell-3", b"late output\n", b"")
        factory.result_before("shell-3", {"exitCode": 0})
        factory.finish("shell-3", {"exitCode": 0})
    second, fresh = _both(path, cache)
    assert second == fresh and second["calls"] == first["calls"] + 3
    assert second["incomplete_calls"] == 1 and second["calls_finished"] == first["calls_finished"] + 3
    unchanged = open(kept_file, "rb").read()
    assert _both(path, cache)[0] == fresh and open(kept_file, "rb").read() == unchanged
    # A pruned call (its snapshots and the payloads only it named go too): everything is counted again.
    _raw(path, "PRAGMA foreign_keys = ON",
         f"DELETE FROM tool_calls WHERE archive_ref = '{refs['plain']}'",
         "DELETE FROM payloads WHERE NOT EXISTS (SELECT 1 FROM snapshots s WHERE s.payload_sha256 = payloads.sha256)")
    third, fresh = _both(path, cache)
    assert third == fresh and third["calls"] == second["calls"] - 1
    # A payload no snapshot names, then named by a new call's snapshot.
    import hashlib

    _raw(path, f"INSERT INTO payloads VALUES (X'{hashlib.sha256(b'{}').hexdigest()}', 'none', 2, CAST('{{}}' AS BLOB))")
    fourth, fresh = _both(path, cache)
    assert fourth == fresh and fourth["payloads_unreferenced"] == 1
    with ArchiveFactory(path) as factory:
        factory.tool_call("new-4", result={})
    fifth, fresh = _both(path, cache)
    assert fifth == fresh and fifth["payloads_unreferenced"] == 0


def test_the_last_call_pruned_and_its_id_reused_is_seen(tmp_path):
    path = tmp_path / "a" / "tool-calls.sqlite3"
    with ArchiveFactory(path) as factory:
        factory.tool_call("one")
        last = factory.tool_call("two", result={"big": "x" * 500})
    cache = tmp_path / "cache"
    before, _ = _both(path, cache)
    _raw(path, "PRAGMA foreign_keys = ON", f"DELETE FROM tool_calls WHERE archive_ref = '{last}'")
    with ArchiveFactory(path) as factory:  # same count of calls, the same id, another call
        factory.tool_call("three")
    after, fresh = _both(path, cache)
    assert after == fresh and after["calls"] == before["calls"]


def test_a_summary_that_is_not_ours_or_not_a_summary_is_never_trusted(tmp_path):
    from yarp.archive.stats_summary import summary_path

    path = tmp_path / "a" / "tool-calls.sqlite3"
    build_sample(path)
    cache = tmp_path / "cache"
    kept_file = summary_path(str(path), {"XDG_CACHE_HOME": str(cache)})
    os.makedirs(os.path.dirname(kept_file), mode=0o700)
    with open(kept_file, "wb") as handle:
        handle.write(b"not json")
    os.chmod(kept_file, 0o600)
    first, fresh = _both(path, cache)
    assert first == fresh
    assert open(kept_file, "rb").read().startswith(b"{")  # made anew
    os.unlink(kept_file)
    decoy = tmp_path / "decoy"
    decoy.write_bytes(b"{}")
    os.symlink(decoy, kept_file)
    second, fresh = _both(path, cache)
    assert second == fresh and decoy.read_bytes() == b"{}" and os.path.islink(kept_file)
