"""How long `yarp archive prune` takes on a large archive, and what captures meet meanwhile.

Copies a generated archive (bench/archive_gen.py) into a private sandbox,
starts `yarp archive prune --before TIME` there, and keeps `yarp run -- seq 1
2000` and ingest sessions (begin_call with a 2 s deadline) capturing until
the prune has answered. Prints the prune's wall time, exit status and output,
the expected and reported counts, every probe's worst latency, and what was
not archived. `--src` runs every child from another source tree, so a
baseline is measured the same way::

    nice python bench/archive_gen.py /tmp/p/a100k.sqlite3 100000
    nice python bench/prune_captures.py /tmp/p/a100k.sqlite3 2026-01-18T08:40:00Z
    nice python bench/prune_captures.py /tmp/p/a100k.sqlite3 2026-01-18T08:40:00Z --src /tmp/p/old-src
"""

from __future__ import annotations

import argparse
import shutil
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
from prune_load import CaptureLoad, check_archived, prunable, src_env, worst  # noqa: E402
from yarp.commands.archive_prune import parse_utc  # noqa: E402


def measure(source: Path, before: str, *, src: str | None, runs: int, sessions: int, work: Path) -> dict:
    """One prune of a copy of `source` under continuous captures; what was measured."""
    sandbox = Sandbox.create(work, idle_ms=5000)
    src_env(sandbox, src)
    try:
        shutil.copyfile(source, sandbox.archive)
        sandbox.archive.chmod(0o600)
        expected = prunable(sandbox.archive, parse_utc(before))
        load = CaptureLoad(sandbox, work / "out", runs=runs, sessions=sessions)
        prune = subprocess.Popen([sys.executable, "-m", "yarp", "archive", "prune", "--before", before],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=sandbox.env())
        started = time.monotonic()
        load.start()
        out, err = prune.communicate(timeout=3600)
        took = time.monotonic() - started
        # The broker may go on after a client that gave up: wait until the calls are gone.
        while prunable(sandbox.archive, parse_utc(before)) > 0 and time.monotonic() - started < 3600:
            time.sleep(0.5)
        committed = time.monotonic() - started
        time.sleep(1.0)
        probes = load.stop()
        problems = check_archived(sandbox.archive, probes)
        (check,) = sandbox.query("PRAGMA quick_check")[0]
        return {"expected_calls": expected, "exit": prune.returncode, "stdout": out.decode().strip(),
                "stderr": err.decode().strip(), "prune_s": round(took, 2), "all_committed_s": round(committed, 2),
                "probes": len(probes), "worst_run_s": round(worst(probes, "run"), 3),
                "worst_begin_call_s": round(worst(probes, "begin_call"), 3),
                "not_archived": len(problems), "problems": problems[:5], "quick_check": check}
    finally:
        sandbox.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("archive", type=Path)
    parser.add_argument("before")
    parser.add_argument("--src", help="source tree the children run from (default: this one)")
    parser.add_argument("--runs", type=int, default=1, help="threads of yarp run")
    parser.add_argument("--sessions", type=int, default=1, help="ingest sessions")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="prune-bench-", dir=args.archive.parent) as work:
        result = measure(args.archive, args.before, src=args.src, runs=args.runs, sessions=args.sessions,
                         work=Path(work))
    for key, value in result.items():
        print(f"{key}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
