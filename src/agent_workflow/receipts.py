"""Verification of a run's sealed final receipt.

A sealed run has `final-receipt.json` (`agent-workflow/final-receipt/v1`, no
write bits) listing `{path, size, sha256}` for every sealed artifact. Each
listed artifact is re-hashed from raw bytes read without following links.
This module only reads; a broken seal is reported, never repaired.
"""

from __future__ import annotations

import os
import stat

from .errors import SealBroken, UnsafeSource
from .limits import MAX_SEALED_ARTIFACT_BYTES
from .source_io import hash_source

RECEIPT_NAME = "final-receipt.json"


def verify_seal(run_path: str, receipt: dict, receipt_stat: os.stat_result, known: dict[str, tuple[int, str]]) -> int:
    """Check the receipt's mode and every listed artifact; return the artifact count.

    `known` maps relative paths already read (and hashed) by the caller to
    (size, sha256), so structured artifacts are not read twice.
    """
    if stat.S_IMODE(receipt_stat.st_mode) & 0o222:
        raise SealBroken(f"{RECEIPT_NAME}: sealed receipt has write permission bits")
    for item in receipt["artifacts"]:
        rel = item["path"]
        seen = known.get(rel)
        if seen is None:
            try:
                seen = hash_source(os.path.join(run_path, rel), rel, MAX_SEALED_ARTIFACT_BYTES)
            except UnsafeSource as exc:
                if "cannot open" not in exc.message:
                    raise
                raise SealBroken(f"{rel}: sealed artifact is missing or unreadable") from None
        if seen[0] != item["size"] or seen[1] != item["sha256"]:
            raise SealBroken(f"{rel}: sealed artifact does not match its receipt digest")
    return len(receipt["artifacts"])
