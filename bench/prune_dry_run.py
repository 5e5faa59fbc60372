"""What `yarp archive prune --dry-run` costs beside the prune it predicts, and whether it predicts it.

Copies a generated archive (bench/archive_gen.py) into a private sandbox,
runs `yarp archive prune --before TIME --incomplete-before AGE --dry-run`
there while `yarp run` and ingest captures go on, then the same prune for
real (no load), and prints both wall times, their ratio, the worst capture
latency during the dry run, and the dry run's figures beside what the prune
then removed (calls, payloads, stored payload bytes)::

    nice python bench/archive_gen.py /tmp/p/a100k.sqlite3 100000
    nice python bench/prune_dry_run.py /tmp/p/a100k.sqlite3 2026-01-18T08:40:00Z
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent
for _path in (str(_ROOT / "tests"), str(_ROOT / "src")):
    if _path not in sys.path:
        sys.path.insert(0, _path)

from ingest_helpers import Sandbox  # noqa: E402
from prune_load import CaptureLoad, check_archived, worst  # noqa: E402


def _payloads(path: Path) -> tuple[int, int]:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        return conn.execute("SELECT count(*), total(length(body)) FROM payloads").fetchone()


def _prune(sandbox: Sandbox, args: list[str]) -> tuple[float, dict[str, int]]:
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "yarp", "archive", "prune", *args], env=sandbox.env(),
                          capture_output=True, text=True, timeout=3600, check=True)
    took = time.monotonic() - started
    return took, {key: int(value) for key, value in (line.split(": ") for line in done.stdout.splitlines())}


def measure(source: Path, before: str, idle: str, work: Path) -> dict:
    """A dry run under captures, then the prune, on one copy of `source`."""
    sandbox = Sandbox.create(work, idle_ms=5000)
    try:
        shutil.copyfile(source, sandbox.archive)
        sandbox.archive.chmod(0o600)
        options = ["--before", before, "--incomplete-before", idle]
        load = CaptureLoad(sandbox, work / "out", runs=1, sessions=1)
        load.start()
        dry_s, said = _prune(sandbox, [*options, "--dry-run"])
        time.sleep(0.5)
        probes = load.stop()
        problems = check_archived(sandbox.archive, probes)
        sandbox.wait_no_broker(30)
        payloads_before, stored_before = _payloads(sandbox.archive)
        prune_s, pruned = _prune(sandbox, options)
        sandbox.wait_no_broker(30)
        payloads_after, stored_after = _payloads(sandbox.archive)
        return {"dry_run_s": round(dry_s, 2), "prune_s": round(prune_s, 2), "ratio": round(dry_s / prune_s, 3),
                "worst_run_during_dry_run_s": round(worst(probes, "run"), 3),
                "worst_begin_call_during_dry_run_s": round(worst(probes, "begin_call"), 3),
                "not_archived": len(problems),
                "calls": (said["would_prune_calls"], pruned["pruned_calls"]),
                "incomplete_calls": (said["would_prune_incomplete_calls"], pruned["pruned_incomplete_calls"]),
                "payloads": (said["would_remove_payloads"], payloads_before - payloads_after),
                "stored_bytes": (said["would_free_stored_bytes"], int(stored_before - stored_after))}
    finally:
        sandbox.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("archive", type=Path)
    parser.add_argument("before")
    parser.add_argument("--incomplete-before", default="7d", help="the idle time for incomplete calls (7d)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="prune-dry-", dir=args.archive.parent) as work:
        result = measure(args.archive, args.before, args.incomplete_before, Path(work))
    for key, value in result.items():
        print(f"{key}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
