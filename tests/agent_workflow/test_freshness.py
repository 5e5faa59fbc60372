"""Freshness after touches, content changes, deletions and `cp -a` copies; verify --full."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

from aw_helpers import append_line, cli, cli_json, db, write_json


def _fresh(root):
    code, report = cli_json("index", "status", "--state-root", root)
    assert code == 0
    return report


def test_touch_makes_a_run_stale_until_the_next_sync(mixed_root):
    cli("index", "rebuild", "--state-root", mixed_root)
    assert _fresh(mixed_root)["freshness"] == "current"
    path = os.path.join(mixed_root, "runs", "gen-0002", "status.json")
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    report = _fresh(mixed_root)
    assert report["freshness"] == "stale" and report["stale_run_count"] == 1
    code, sync = cli_json("index", "sync", "--state-root", mixed_root)
    assert code == 0 and sync["indexed"] == ["gen-0002"] and sync["skipped_count"] == 8
    assert _fresh(mixed_root)["freshness"] == "current"


def test_content_change_is_reprojected(mixed_root):
    cli("index", "rebuild", "--state-root", mixed_root)
    run = os.path.join(mixed_root, "runs", "syn-0001")
    path = os.path.join(run, "status.json")
    with open(path, encoding="utf-8") as handle:
        value = json.load(handle)
    value["status"] = "interrupted"
    write_json(path, value)
    code, sync = cli_json("index", "sync", "--state-root", mixed_root)
    assert code == 0 and sync["indexed"] == ["syn-0001"]
    assert db(mixed_root).execute("SELECT durable_status FROM runs WHERE session_id = 'syn-0001'").fetchone() == (
        "interrupted",
    )


def test_deleted_run_is_stale_then_pruned(mixed_root):
    cli("index", "rebuild", "--state-root", mixed_root)
    shutil.rmtree(os.path.join(mixed_root, "runs", "syn-0002"))
    assert _fresh(mixed_root)["stale_run_count"] == 1
    code, sync = cli_json("index", "sync", "--state-root", mixed_root)
    assert code == 0 and sync["pruned"] == ["syn-0002"]
    conn = db(mixed_root)
    assert conn.execute("SELECT COUNT(*) FROM runs WHERE session_id = 'syn-0002'").fetchone()[0] == 0
    assert conn.execute("SELECT COUNT(*) FROM health_samples WHERE session_id = 'syn-0002'").fetchone()[0] == 0
    assert _fresh(mixed_root)["freshness"] == "current"


def test_cp_a_copy_of_an_unchanged_root_stays_current(mixed_root, tmp_path):
    cli("index", "rebuild", "--state-root", mixed_root)
    copy = str(tmp_path / "copy" / "agent-workflow")
    os.makedirs(os.path.dirname(copy), mode=0o700)
    subprocess.run(["cp", "-a", mixed_root, copy], check=True)
    report = _fresh(copy)
    assert report["freshness"] == "current" and report["stale_run_count"] == 0 and report["current_run_count"] == 9
    code, sync = cli_json("index", "sync", "--state-root", copy)
    assert code == 0 and sync["skipped_count"] == 9 and sync["indexed_count"] == 0


def test_archived_run_is_indexed_and_active_wins_a_duplicate(mixed_root):
    archive = os.path.join(mixed_root, "archive")
    os.makedirs(archive, mode=0o700)
    shutil.copytree(os.path.join(mixed_root, "runs", "gen-0000"), os.path.join(archive, "gen-0000"), symlinks=True)
    shutil.move(os.path.join(mixed_root, "runs", "gen-0005"), os.path.join(archive, "gen-0005"))
    code, _, err = cli("index", "rebuild", "--state-root", mixed_root)
    assert code == 0, err
    rows = dict(db(mixed_root).execute("SELECT session_id, storage_class FROM runs").fetchall())
    assert rows["gen-0000"] == "active" and rows["gen-0005"] == "archive"


def test_verify_full_catches_a_source_change(mixed_root):
    cli("index", "rebuild", "--state-root", mixed_root)
    code, report = cli_json("index", "verify", "--full", "--state-root", mixed_root)
    assert code == 0 and report["valid"] and report["checked_run_count"] == 9
    # A sealed non-structured artifact: its change is invisible to the fingerprint, not to verify.
    log = os.path.join(mixed_root, "runs", "gen-0003", "output.log")
    os.chmod(log, 0o600)
    with open(log, "a", encoding="utf-8") as handle:
        handle.write("changed\n")
    code, report = cli_json("index", "verify", "--full", "--state-root", mixed_root)
    assert code == 65 and not report["valid"]
    assert [(p["session_id"], p["category"]) for p in report["problems"]] == [("gen-0003", "seal_broken")]
    # A structured change without a sync: the stored digest no longer matches.
    status = os.path.join(mixed_root, "runs", "syn-0000", "status.json")
    with open(status, encoding="utf-8") as handle:
        value = json.load(handle)
    value["updated_at"] = "2026-07-30T00:09:00+00:00"
    write_json(status, value)
    code, report = cli_json("index", "verify", "--full", "--review", "syn-0000", "--state-root", mixed_root)
    assert code == 65
    assert {p["category"] for p in report["problems"]} == {"source_changed", "source_digest_mismatch"}
    assert report["review"]["session_id"] == "syn-0000"


def _age_tree(root, seconds=3600):
    """Move every directory's mtime into the past, as if the evidence was written
    long before the sync, so the probe trusts the mtimes the sync records."""
    for dirpath, dirnames, _ in os.walk(root):
        if os.path.relpath(dirpath, root).split(os.sep)[0] == "index":
            continue
        st = os.lstat(dirpath)
        os.utime(dirpath, ns=(st.st_atime_ns, st.st_mtime_ns - seconds * 1_000_000_000), follow_symlinks=False)


def _query(root, *extra):
    code, report = cli_json("index", "query", "runs", "--state-root", root, *extra)
    assert code == 0
    return report


def _synced_and_aged(root):
    _age_tree(root)
    cli("index", "rebuild", "--state-root", root)
    report = _query(root)
    assert report["freshness"] == "current" and report["freshness_basis"] == "probe"
    assert report["probed_run_count"] == 9 and report["unprobed_run_count"] == 0
    conn = db(root)
    # Aged directories were recorded as trusted mtimes, not as "check in full" (-1).
    assert conn.execute("SELECT COUNT(*) FROM source_dirs WHERE mtime_ns < 0").fetchone()[0] == 0
    assert conn.execute("SELECT value FROM index_metadata WHERE key = 'probe_runs_mtime_ns'").fetchone()[0] != "-1"


def test_probe_sees_a_journal_append_without_a_sync(mixed_root):
    _synced_and_aged(mixed_root)
    append_line(os.path.join(mixed_root, "runs", "syn-0001", "events.jsonl"), {"probe": 1})
    report = _query(mixed_root)
    assert report["freshness"] == "stale" and report["stale_run_count"] == 1 and report["current_run_count"] == 8


def test_probe_sees_a_touched_journal(mixed_root):
    _synced_and_aged(mixed_root)
    journal = sorted(
        name for name in os.listdir(os.path.join(mixed_root, "runs", "gen-0001")) if name.endswith(".jsonl")
    )[0]
    path = os.path.join(mixed_root, "runs", "gen-0001", journal)
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    report = _query(mixed_root)
    assert report["freshness"] == "stale" and report["stale_run_count"] == 1


def test_probe_sees_a_new_run_and_a_removed_run(mixed_root):
    _synced_and_aged(mixed_root)
    shutil.copytree(os.path.join(mixed_root, "runs", "gen-0000"), os.path.join(mixed_root, "runs", "gen-new"),
                    symlinks=True)
    report = _query(mixed_root)
    assert report["freshness"] == "stale" and report["stale_run_count"] == 1 and report["current_run_count"] == 9
    shutil.rmtree(os.path.join(mixed_root, "runs", "gen-new"))
    shutil.rmtree(os.path.join(mixed_root, "runs", "syn-0002"))
    report = _query(mixed_root)
    assert report["freshness"] == "stale" and report["stale_run_count"] == 1 and report["current_run_count"] == 8
    assert cli("index", "sync", "--state-root", mixed_root)[0] == 0
    assert _query(mixed_root)["freshness"] == "current"


def test_probe_sees_an_atomic_rewrite_and_a_new_sealed_record(mixed_root):
    _synced_and_aged(mixed_root)
    # The recorder replaces JSON artifacts atomically: a new file renamed over the old.
    run = os.path.join(mixed_root, "runs", "syn-0000")
    with open(os.path.join(run, "status.json"), encoding="utf-8") as handle:
        value = json.load(handle)
    value["updated_at"] = "2026-07-30T00:09:00+00:00"
    write_json(os.path.join(run, "status.json.tmp"), value)
    os.rename(os.path.join(run, "status.json.tmp"), os.path.join(run, "status.json"))
    report = _query(mixed_root)
    assert report["freshness"] == "stale" and report["stale_run_count"] == 1


def test_probe_trade_off_in_place_rewrite_needs_fresh(mixed_root):
    """An in-place rewrite of a sealed JSON record keeps its directory's mtime: the
    probe does not see it, the full check (`--fresh`, `status`) and sync do."""
    _synced_and_aged(mixed_root)
    receipt = os.path.join(mixed_root, "runs", "gen-0004", "final-receipt.json")
    with open(receipt, "rb") as handle:
        data = handle.read()
    os.chmod(receipt, 0o644)
    with open(receipt, "r+b") as handle:
        handle.write(data.replace(b'"sha256": "', b'"sha256": "0', 1)[: len(data)])
    os.chmod(receipt, 0o444)
    assert _query(mixed_root)["freshness"] == "current"
    fresh = _query(mixed_root, "--fresh")
    assert fresh["freshness"] == "stale" and fresh["freshness_basis"] == "full" and fresh["stale_run_count"] == 1
    assert _fresh(mixed_root)["freshness"] == "stale"
    # Sync still fingerprints every structured file, sealed ones included: the tampered receipt is caught.
    code, sync = cli_json("index", "sync", "--state-root", mixed_root)
    assert code == 65 and [e["session_id"] for e in sync["errors"]] == ["gen-0004"]


def test_recently_written_directories_are_checked_in_full(mixed_root):
    # Every directory modified just before the sync: the probe cannot trust
    # those mtimes (a change in the same tick keeps them) and uses the fingerprint.
    for dirpath, _, _ in os.walk(os.path.join(mixed_root, "runs")):
        os.utime(dirpath)
    cli("index", "rebuild", "--state-root", mixed_root)
    assert db(mixed_root).execute("SELECT COUNT(*) FROM source_dirs WHERE mtime_ns >= 0").fetchone()[0] == 0
    assert _query(mixed_root)["freshness"] == "current"
    path = os.path.join(mixed_root, "runs", "gen-0002", "status.json")
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    assert _query(mixed_root)["stale_run_count"] == 1


def test_probe_is_bounded_and_says_so(mixed_root):
    _synced_and_aged(mixed_root)
    from agent_workflow import index_store
    from agent_workflow.freshness import probe_freshness

    root = index_store.open_root(mixed_root)
    conn = index_store.connect_reader(root)
    try:
        report = probe_freshness(conn, root, budget=4)
    finally:
        conn.close()
    assert report["probed_run_count"] == 4 and report["unprobed_run_count"] == 5
    from agent_workflow.freshness import summary_line

    assert summary_line(report).endswith("; 5 runs not probed (--fresh checks all)")


def test_sync_replaces_untrusted_directory_mtimes_once_they_settle(mixed_root):
    for dirpath, _, _ in os.walk(os.path.join(mixed_root, "runs")):
        os.utime(dirpath)
    cli("index", "rebuild", "--state-root", mixed_root)
    assert db(mixed_root).execute("SELECT COUNT(*) FROM source_dirs WHERE mtime_ns < 0").fetchone()[0] > 0
    _age_tree(mixed_root)
    code, sync = cli_json("index", "sync", "--state-root", mixed_root)
    assert code == 0 and sync["skipped_count"] == 9 and sync["indexed_count"] == 0
    conn = db(mixed_root)
    assert conn.execute("SELECT COUNT(*) FROM source_dirs WHERE mtime_ns < 0").fetchone()[0] == 0
    stored = conn.execute("SELECT mtime_ns FROM source_dirs WHERE session_id = 'gen-0000' AND relative_path = ''")
    assert stored.fetchone()[0] == os.lstat(os.path.join(mixed_root, "runs", "gen-0000")).st_mtime_ns


def test_two_process_fingerprinting_matches_one_process(mixed_root):
    from agent_workflow import index_store
    from agent_workflow.discovery import discover_runs, fingerprints, run_fingerprint

    runs = [run for _, run in sorted(discover_runs(index_store.open_root(mixed_root)).items())]

    expected = [run_fingerprint(run) for run in runs]
    assert len(set(expected)) == len(runs)
    assert fingerprints(runs, parallel_from=1) == expected == fingerprints(runs)
