"""The read commands at the scale of a heavy year: time and peak anonymous memory of whole processes.

    nice python bench/scale.py DIR [--calls 10000,100000,1000000] [--rounds 3] [--keep]

For each size, DIR/calls-N/tool-calls.sqlite3 is used (made by
`bench/archive_gen.py` when missing, with `--plant zq-planted-needle-7731
--plant-calls 10`). Every command is a real `python -m yarp` process with
its own HOME (so its cache directory starts empty); for each the table gives
wall seconds, CPU seconds (user + system, from wait4) and the peak of its
anonymous memory (`RssAnon` of /proc/PID/status, sampled every 5 ms: the
archive's memory-mapped pages are not counted, the process's own memory is).

- `stats`, first (no kept sums) and warm (the sums the first left);
- `verify`, and its floor measured in the same run: `PRAGMA integrity_check`
  in one process plus one pass that decompresses and hashes every payload in
  another (both with the 1 GiB memory map verify uses), summed;
- `savings`, first (no projection) and warm (the projection the first left);
- `export --format parquet` into a fresh directory (removed afterwards);
- `search` listing (`yarp search --tool bash`, the newest 20 calls) and
  `search --text NEEDLE -m 100` (every planted call, the whole archive read).

With `--rounds N` (default 1) each warm figure is the best of N runs; first
runs are run once each. Prints one Markdown table per size.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NEEDLE = "zq-planted-needle-7731"
MIB = 1024 * 1024

_INTEGRITY = """
import sqlite3, sys
conn = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
conn.execute("PRAGMA mmap_size = 1073741824")
print(conn.execute("PRAGMA integrity_check(20)").fetchall())
"""
_PASS = """
import hashlib, sqlite3, sys, zstandard
conn = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
conn.execute("PRAGMA mmap_size = 1073741824")
dctx = zstandard.ZstdDecompressor()
n = 0
for compression, length, body in conn.execute("SELECT compression, uncompressed_byte_length, body FROM payloads"):
    data = dctx.decompress(body, max_output_size=length) if compression == "zstd" else body
    hashlib.sha256(data).digest()
    n += 1
print(n)
"""


class Runner:
    """Runs whole processes with a HOME of their own and keeps the CPU of each exactly."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("YARP_", "XDG_"))}
        self.env.update(HOME=str(home), PYTHONPATH=str(ROOT / "src"))
        self._cpu = 0.0

    def run(self, argv: list[str]) -> tuple[float, float, int]:
        import resource

        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        proc = subprocess.Popen(argv, env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        peak = 0
        status = f"/proc/{proc.pid}/status"
        while proc.poll() is None:
            try:
                with open(status) as handle:
                    for line in handle:
                        if line.startswith("RssAnon:"):
                            peak = max(peak, int(line.split()[1]))
                            break
            except OSError:
                pass
            time.sleep(0.005)
        wall = time.perf_counter() - started
        err = proc.stderr.read()
        assert proc.returncode in (0, 1), (argv, proc.returncode, err[-500:])  # search: 1 is "no match"
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        return wall, cpu, peak

    def yarp(self, *args: str) -> tuple[float, float, int]:
        return self.run([sys.executable, "-m", "yarp", *args])

    def forget(self) -> None:
        """Drop the cache directory (kept sums, savings projection): the next run is a first run."""
        shutil.rmtree(self.home / ".cache", ignore_errors=True)


def _best(runs: list[tuple[float, float, int]]) -> tuple[float, float, int]:
    return min(r[0] for r in runs), min(r[1] for r in runs), max(r[2] for r in runs)


def archive_for(root: Path, calls: int) -> Path:
    path = root / f"calls-{calls}" / "tool-calls.sqlite3"
    if not path.exists():
        sys.path.insert(0, str(ROOT / "bench"))
        from archive_gen import generate

        started = time.perf_counter()
        generate(path, calls, plant=NEEDLE, plant_calls=10)
        print(f"generated {calls} calls in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return path


def measure_size(path: Path, rounds: int) -> list[tuple[str, tuple[float, float, int]]]:
    """Every row of one size's table."""
    rows = []
    archive = ["--archive", str(path)]
    with tempfile.TemporaryDirectory(prefix="yarp-scale-") as home:
        runner = Runner(Path(home))
        runner.forget()
        rows.append(("stats, first", runner.yarp("archive", "stats", *archive)))
        rows.append(("stats, warm", _best([runner.yarp("archive", "stats", *archive) for _ in range(rounds)])))
        verify = runner.yarp("archive", "verify", *archive)
        integrity = runner.run([sys.executable, "-c", _INTEGRITY, str(path)])
        one_pass = runner.run([sys.executable, "-c", _PASS, str(path)])
        floor = (integrity[0] + one_pass[0], integrity[1] + one_pass[1], max(integrity[2], one_pass[2]))
        rows += [("verify", verify), ("  floor: integrity_check", integrity),
                 ("  floor: decompress + hash pass", one_pass), ("  floor (sum)", floor)]
        runner.forget()
        rows.append(("savings, first", runner.yarp("archive", "savings", *archive)))
        rows.append(("savings, warm", _best([runner.yarp("archive", "savings", *archive) for _ in range(rounds)])))
        out = Path(home) / "export"
        rows.append(("export --format parquet", runner.yarp("archive", "export", "--format", "parquet", str(out),
                                                             *archive)))
        shutil.rmtree(out, ignore_errors=True)
        rows.append(("search --tool bash (listing)",
                     _best([runner.yarp("search", "--tool", "bash", *archive) for _ in range(rounds)])))
        rows.append(("search --text NEEDLE -m 100", runner.yarp("search", "--text", NEEDLE, "-m", "100", *archive)))
    return rows


def table(calls: int, path: Path, rows) -> str:
    size = path.stat().st_size / 1e9
    out = [f"\n{calls:,} calls ({size:.2f} GB)\n", "| command | wall s | CPU s | peak RssAnon MiB |",
           "| --- | ---: | ---: | ---: |"]
    for name, (wall, cpu, peak) in rows:
        out.append(f"| {name} | {wall:.2f} | {cpu:.2f} | {peak / 1024:.0f} |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> None:
    """`python bench/scale.py DIR [--calls N,N] [--rounds N]`."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("--calls", default="10000,100000,1000000")
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args(argv)
    for calls in (int(n) for n in args.calls.split(",")):
        path = archive_for(args.root, calls)
        print(table(calls, path, measure_size(path, args.rounds)), flush=True)


if __name__ == "__main__":
    main()
