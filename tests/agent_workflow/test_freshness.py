"""Freshness after touches, content changes, deletions and `cp -a` copies; verify --full."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

from aw_helpers import cli, cli_json, db, write_json


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
