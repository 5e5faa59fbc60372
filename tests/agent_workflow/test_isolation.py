"""One corrupt run never disturbs healthy runs; a later good sync clears its errors."""

from __future__ import annotations

import json
import os

import pytest
from aw_helpers import cli, db, snapshot, write_json

VICTIM = "gen-0001"


def _run(root: str, name: str = VICTIM) -> str:
    return os.path.join(root, "runs", name)


def _truncate_line(root):
    path = os.path.join(_run(root), "events.jsonl")
    with open(path, "rb") as handle:
        data = handle.read()
    with open(path, "wb") as handle:
        handle.write(data[:-20])


def _invalid_json(root):
    path = os.path.join(_run(root), "status.json")
    os.chmod(path, 0o600)
    with open(path, "a", encoding="utf-8") as handle:
        handle.write("{not json")


def _schema_violation(root):
    path = os.path.join(_run(root), "ledger-row.json")
    with open(path, encoding="utf-8") as handle:
        value = json.load(handle)
    del value["attempt_classification"]
    write_json(path, value)


def _tampered_sealed_artifact(root):
    path = os.path.join(_run(root), "run-provenance.json")
    with open(path, encoding="utf-8") as handle:
        value = json.load(handle)
    value["model"] = "another-model"
    write_json(path, value, mode=0o400)


def _symlink_substitution(root):
    path = os.path.join(_run(root), "status.json")
    os.replace(path, path + ".moved")
    os.symlink(os.path.join(_run(root, "gen-0002"), "status.json"), path)


def _foreign_owner(root):
    os.chown(os.path.join(_run(root), "heartbeat.json"), 65534, 65534)


def _writable_receipt(root):
    os.chmod(os.path.join(_run(root), "final-receipt.json"), 0o644)


CORRUPTIONS = {
    "truncated_jsonl_line": (_truncate_line, "record_invalid"),
    "invalid_json": (_invalid_json, "record_invalid"),
    "schema_violation": (_schema_violation, "record_invalid"),
    "tampered_sealed_artifact": (_tampered_sealed_artifact, "seal_broken"),
    "symlink_substitution": (_symlink_substitution, "unsafe_source"),
    "foreign_owned_file": (_foreign_owner, "unsafe_source"),
    "writable_receipt": (_writable_receipt, "seal_broken"),
}


@pytest.mark.parametrize("name", sorted(CORRUPTIONS))
def test_corruption_is_isolated_to_its_run(mixed_root, name):
    corrupt, category = CORRUPTIONS[name]
    if name == "foreign_owned_file" and os.geteuid() != 0:
        pytest.skip("changing a file's owner needs root")
    code, _, err = cli("index", "rebuild", "--state-root", mixed_root)
    assert code == 0, err
    conn = db(mixed_root)
    healthy_before = conn.execute(
        "SELECT session_id, indexed_at, source_fingerprint FROM runs WHERE session_id != ? ORDER BY session_id",
        (VICTIM,),
    ).fetchall()
    conn.close()
    corrupt(mixed_root)
    before = snapshot(mixed_root)
    code, out, _ = cli("index", "sync", "--state-root", mixed_root)
    assert code == 65, out
    assert snapshot(mixed_root) == before, "the sync modified source evidence"
    conn = db(mixed_root)
    assert conn.execute("SELECT index_state FROM runs WHERE session_id = ?", (VICTIM,)).fetchone() == ("error",)
    errors = conn.execute("SELECT category, detail FROM index_errors WHERE session_id = ?", (VICTIM,)).fetchall()
    assert [e[0] for e in errors] == [category], errors
    assert conn.execute("SELECT COUNT(*) FROM events WHERE session_id = ?", (VICTIM,)).fetchone()[0] == 0
    healthy_after = conn.execute(
        "SELECT session_id, indexed_at, source_fingerprint FROM runs WHERE session_id != ? ORDER BY session_id",
        (VICTIM,),
    ).fetchall()
    assert healthy_after == healthy_before, "healthy runs were re-projected or disturbed"
    assert conn.execute("SELECT COUNT(*) FROM runs WHERE index_state = 'current'").fetchone()[0] == 8
    conn.close()
    code, _, _ = cli("index", "verify", "--full", "--state-root", mixed_root)
    assert code == 65


def test_a_later_successful_sync_clears_the_runs_errors(mixed_root):
    path = os.path.join(_run(mixed_root), "ledger-row.json")
    with open(path, encoding="utf-8") as handle:
        original = handle.read()
    _schema_violation(mixed_root)
    code, _, _ = cli("index", "rebuild", "--state-root", mixed_root)
    assert code == 65
    assert db(mixed_root).execute("SELECT COUNT(*) FROM index_errors").fetchone()[0] == 1
    os.chmod(path, 0o600)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(original)
    code, out, _ = cli("index", "sync", "--state-root", mixed_root)
    assert code == 0, out
    conn = db(mixed_root)
    assert conn.execute("SELECT COUNT(*) FROM index_errors").fetchone()[0] == 0
    assert conn.execute("SELECT index_state FROM runs WHERE session_id = ?", (VICTIM,)).fetchone() == ("current",)
    code, _, _ = cli("index", "verify", "--full", "--state-root", mixed_root)
    assert code == 0


def test_obsolete_legacy_run_is_a_preserved_historical_artifact(mixed_root):
    path = os.path.join(_run(mixed_root), "ledger-row.json")
    with open(path, encoding="utf-8") as handle:
        value = json.load(handle)
    write_json(os.path.join(_run(mixed_root), "collections", "command-set.json"),
               {"schema": "agent-workflow/command-collection-set/v1", "session_id": VICTIM})
    before = snapshot(mixed_root)
    code, out, _ = cli("index", "rebuild", "--state-root", mixed_root)
    assert code == 0, out
    assert snapshot(mixed_root) == before
    conn = db(mixed_root)
    row = conn.execute("SELECT index_state, index_error FROM runs WHERE session_id = ?", (VICTIM,)).fetchone()
    assert row[0] == "historical_artifact" and "command-collection-set" in row[1]
    assert conn.execute("SELECT COUNT(*) FROM events WHERE session_id = ?", (VICTIM,)).fetchone()[0] == 0
    code, out, _ = cli("index", "query", "runs", "--state-root", mixed_root, "--json")
    assert VICTIM not in [r["session_id"] for r in json.loads(out)["rows"]]
    code, out, _ = cli("index", "verify", "--full", "--state-root", mixed_root, "--json")
    report = json.loads(out)
    assert code == 0 and report["quarantined"][0]["session_id"] == VICTIM
    assert value["run_id"] == VICTIM


def test_symlinked_run_directory_is_an_error_not_followed(mixed_root, tmp_path):
    outside = tmp_path / "outside"
    os.rename(_run(mixed_root, "gen-0003"), outside)
    os.symlink(outside, _run(mixed_root, "gen-0003"))
    code, _, _ = cli("index", "rebuild", "--state-root", mixed_root)
    assert code == 65
    conn = db(mixed_root)
    assert conn.execute("SELECT category FROM index_errors WHERE session_id = 'gen-0003'").fetchone() == ("unsafe_source",)
    assert conn.execute("SELECT COUNT(*) FROM source_files WHERE session_id = 'gen-0003'").fetchone()[0] == 0
