"""Generate a large state root by scaling the real runs, re-sealing every copy.

Each generated run is a copy of a real launched or journal run under a new id:
files that mention the source id are rewritten with the new id, files that do
not are hard-linked (same bytes, no extra disk), and a launched run's final
receipt and lifecycle receipts are recomputed so the copy verifies as sealed.
Usage: python bench/agent_workflow/generate.py LAUNCHED_ROOT JOURNALS_ROOT OUT_ROOT [COUNT]
"""

from __future__ import annotations

import hashlib
import json
import os
import sys


def _files(run_dir):
    for dirpath, _, filenames in os.walk(run_dir):
        for name in filenames:
            full = os.path.join(dirpath, name)
            yield os.path.relpath(full, run_dir), full


def _write(path, data: bytes, mode: int) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
    os.chmod(path, mode)


def clone_run(source_dir: str, source_id: str, target_dir: str, target_id: str, cache: dict) -> None:
    old, new = source_id.encode(), target_id.encode()
    os.mkdir(target_dir, 0o755)
    digests = {}
    receipt_rel = None
    lifecycle = []
    for rel, full in sorted(_files(source_dir)):
        st = os.lstat(full)
        target = os.path.join(target_dir, rel)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        key = full
        if key not in cache:
            with open(full, "rb") as handle:
                cache[key] = handle.read()
        data = cache[key]
        if rel == "final-receipt.json":
            receipt_rel = (rel, st.st_mode & 0o777)
            continue
        if rel.startswith("receipts/"):
            lifecycle.append((rel, st.st_mode & 0o777))
            continue
        if old in data:
            data = data.replace(old, new)
            _write(target, data, st.st_mode & 0o777)
        else:
            os.link(full, target)
        digests[rel] = (len(data), hashlib.sha256(data).hexdigest())
    if receipt_rel is None:
        return
    with open(os.path.join(source_dir, "final-receipt.json"), encoding="utf-8") as handle:
        receipt = json.load(handle)
    receipt["session_id"] = target_id
    receipt["artifacts"] = [
        {"path": item["path"], "size": digests[item["path"]][0], "sha256": digests[item["path"]][1]}
        for item in receipt["artifacts"]
    ]
    receipt_bytes = (json.dumps(receipt, indent=2, sort_keys=True) + "\n").encode()
    _write(os.path.join(target_dir, "final-receipt.json"), receipt_bytes, 0o444)
    receipt_sha = hashlib.sha256(receipt_bytes).hexdigest()
    for rel, mode in lifecycle:
        with open(os.path.join(source_dir, rel), encoding="utf-8") as handle:
            value = json.loads(handle.read().replace(source_id, target_id))
        value["final_receipt_sha256"] = receipt_sha
        _write(os.path.join(target_dir, rel), (json.dumps(value, indent=2, sort_keys=True) + "\n").encode(), mode)


def generate(launched_root: str, journals_root: str, out_root: str, count: int = 10_000) -> str:
    sources = []
    for root in (launched_root, journals_root):
        runs = os.path.join(root, "runs")
        sources.append([(os.path.join(runs, name), name) for name in sorted(os.listdir(runs))])
    os.makedirs(os.path.join(out_root, "runs"), mode=0o700)
    os.chmod(out_root, 0o700)
    cache: dict = {}
    for index in range(count):
        pool = sources[index % 2]
        source_dir, source_id = pool[(index // 2) % len(pool)]
        target_id = f"{source_id}-x{index:05d}"
        clone_run(source_dir, source_id, os.path.join(out_root, "runs", target_id), target_id, cache)
    return out_root


if __name__ == "__main__":
    generate(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 else 10_000)
