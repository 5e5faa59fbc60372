"""Projection of append-only evidence repairs (`evidence-repairs/<repair-id>/`).

A repair directory holds read-only `adapter.json`, `canonical-completion.json`
and `evidence-repair.json`, and a `repair-receipt.json` listing exactly those
three with size and SHA-256. A repair row is produced only when the receipt
verifies, the repair binds the source run's current final-receipt digest, the
named source artifact still has the digest the repair recorded, and the
adapter and canonical digests match their files. Repair rows are history;
they never change a run's acceptance fields. This module only reads.
"""

from __future__ import annotations

import os
import stat

from . import contracts
from .discovery import RUN_ID
from .errors import EvidenceError, RecordInvalid, SealBroken
from .limits import MAX_JSON_BYTES, MAX_SEALED_ARTIFACT_BYTES
from .source_io import hash_source, parse_json_object, read_source, record_sha256, sha256_hex

REPAIR_FILES = ("adapter.json", "canonical-completion.json", "evidence-repair.json")
RECEIPT = "repair-receipt.json"


def _project_one(conn, root, repair_id: str, path: str, indexed_at: str) -> tuple:
    rel_dir = f"evidence-repairs/{repair_id}"
    blobs = {}
    for name in REPAIR_FILES + (RECEIPT,):
        data, st = read_source(os.path.join(path, name), f"{rel_dir}/{name}", MAX_JSON_BYTES)
        if stat.S_IMODE(st.st_mode) & 0o222:
            raise SealBroken(f"{rel_dir}/{name}: repair artifact has write permission bits")
        blobs[name] = data
    receipt = parse_json_object(blobs[RECEIPT], f"{rel_dir}/{RECEIPT}")
    if receipt.get("schema") != "agent-workflow/evidence-repair-receipt/v1":
        raise RecordInvalid(f"{rel_dir}/{RECEIPT}: not a repair receipt")
    contracts.validate(receipt, f"{rel_dir}/{RECEIPT}")
    listed = {item["path"]: item for item in receipt["artifacts"]}
    if set(listed) != set(REPAIR_FILES) or receipt["repair_id"] != repair_id:
        raise SealBroken(f"{rel_dir}/{RECEIPT}: receipt must list exactly the three repair artifacts")
    for name in REPAIR_FILES:
        if listed[name]["size"] != len(blobs[name]) or listed[name]["sha256"] != sha256_hex(blobs[name]):
            raise SealBroken(f"{rel_dir}/{name}: repair artifact does not match its receipt")
    record = parse_json_object(blobs["evidence-repair.json"], f"{rel_dir}/evidence-repair.json")
    if record.get("schema") != "agent-workflow/evidence-repair/v1":
        raise RecordInvalid(f"{rel_dir}/evidence-repair.json: not an evidence repair")
    contracts.validate(record, f"{rel_dir}/evidence-repair.json")
    if record["repair_id"] != repair_id:
        raise RecordInvalid(f"{rel_dir}/evidence-repair.json: repair_id does not match its directory")
    adapter = record["adapter"]
    if adapter["sha256"] != sha256_hex(blobs["adapter.json"]):
        raise RecordInvalid(f"{rel_dir}/adapter.json: adapter digest does not match the repair record")
    if record["canonical_sha256"] != sha256_hex(blobs["canonical-completion.json"]):
        raise RecordInvalid(f"{rel_dir}/canonical-completion.json: canonical digest does not match")
    source = conn.execute(
        "SELECT final_receipt_sha256, source_dir FROM runs WHERE session_id = ? AND index_state = 'current'",
        (record["source_session_id"],),
    ).fetchone()
    if source is None:
        raise RecordInvalid(f"{rel_dir}/evidence-repair.json: source run is not current in the index")
    if source[0] != record["source_final_receipt_sha256"]:
        raise RecordInvalid(f"{rel_dir}/evidence-repair.json: source final receipt digest differs")
    artifact = record["source_artifact_path"]
    if artifact.startswith("/") or ".." in artifact.split("/"):
        raise RecordInvalid(f"{rel_dir}/evidence-repair.json: source artifact path leaves the run")
    run_path = os.path.join(root.path, source[1], record["source_session_id"])
    _, digest = hash_source(os.path.join(run_path, artifact), artifact, MAX_SEALED_ARTIFACT_BYTES)
    unchanged = digest == record["source_artifact_sha256"]
    if record["source_mutation_verified"] and not unchanged:
        raise SealBroken(f"{rel_dir}/evidence-repair.json: source artifact changed after the repair")
    return (
        repair_id, record["source_session_id"], record["source_final_receipt_sha256"], artifact[:256],
        record["source_artifact_sha256"], str(adapter["id"])[:256], str(adapter["version"])[:64], adapter["sha256"],
        record["canonical_sha256"], str(record["validation_result"])[:64], int(bool(unchanged)),
        sha256_hex(blobs[RECEIPT]), rel_dir, record.get("created_at"), record_sha256(record), indexed_at,
    )


def project_repairs(conn, root, indexed_at: str) -> tuple[list, list]:
    """Read the state root's repair records; return (repair rows, index errors for records that fail)."""
    rows, errors = [], []
    try:
        entries = sorted(os.scandir(root.repairs), key=lambda e: e.name)
    except FileNotFoundError:
        return rows, errors
    for entry in entries:
        rel_dir = f"evidence-repairs/{entry.name}"
        try:
            if not RUN_ID.match(entry.name):
                raise RecordInvalid(f"{rel_dir}: repair id is malformed")
            if entry.is_symlink() or not entry.is_dir(follow_symlinks=False):
                raise EvidenceError(f"{rel_dir}: repair directory is not a real directory")
            rows.append(_project_one(conn, root, entry.name, entry.path, indexed_at))
        except EvidenceError as exc:
            errors.append((None, rel_dir, exc.category, exc.message[:512], indexed_at))
    return rows, errors
