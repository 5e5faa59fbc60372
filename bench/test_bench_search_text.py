"""`yarp search --text`: the time to find every call holding a rare string, on whole archives.

Run: PYTHONPATH=src:tests .venv/bin/python -m pytest bench/test_bench_search_text.py -q -s
     YARP_BENCH_SEARCH_CALLS=10000,100000 (default) names the archive sizes;
     YARP_BENCH_SEARCH_DIR=DIR keeps the archives between runs (DIR/calls-N/tool-calls.sqlite3,
     with DIR/calls-N/planted.txt holding the planted calls' references).

Archives come from bench/archive_gen.py with `--plant NEEDLE --plant-calls 10`: ten
calls spread evenly from the oldest to the newest hold a line no other call has,
so finding all ten needs a search of the whole archive. Every figure is a whole
process, wall time and the child's CPU (user + system), best of three, against a
floor in the same run: a Python process that runs the search's own statement
(every call's recovery payloads, newest first) and decompresses each body, without
matching anything. `-m 1` shows what stopping at the first (newest) match costs.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
sys.path.insert(0, os.path.dirname(__file__))

from archive_factory import yarp_env  # noqa: E402
from archive_gen import generate  # noqa: E402

SIZES = [int(n) for n in os.environ.get("YARP_BENCH_SEARCH_CALLS", "10000,100000").split(",")]
NEEDLE = "zq-planted-needle-7731"
PLANTED = 10
ROUNDS = 3

_FLOOR = """
import sqlite3, sys, zstandard
from yarp.archive.recovery.listing import _SCAN, _SUBJECTS
conn = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
conn.execute("PRAGMA mmap_size = 1073741824")
dec = zstandard.ZstdDecompressor()
n = 0
big = 1 << 62
for _, _, compression, length, _, body in conn.execute(_SCAN.format(where="", subjects=_SUBJECTS), (big, big)):
    data = dec.decompress(body, max_output_size=length) if compression == "zstd" else body
    n += len(data)
print(n)
"""


def _archive(root: Path, calls: int) -> tuple[Path, set[str]]:
    path = root / f"calls-{calls}" / "tool-calls.sqlite3"
    listed = path.parent / "planted.txt"
    if not path.exists():
        started = time.perf_counter()
        written = generate(path, calls, plant=NEEDLE, plant_calls=PLANTED)
        listed.write_text(" ".join(written["planted_refs"]) + "\n")
        print(f"\ngenerated {calls} calls in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return path, set(listed.read_text().split())


def _run(argv: list[str], home: Path) -> tuple[float, float, bytes]:
    """(wall s, child CPU s, stdout) of one whole process."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, env=yarp_env(home), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.stdout.read(), proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    assert os.waitstatus_to_exitcode(status) == 0, err
    return wall, usage.ru_utime + usage.ru_stime, out


def _best(argv: list[str], home: Path) -> tuple[float, float, bytes]:
    runs = [_run(argv, home) for _ in range(ROUNDS)]
    return min(r[0] for r in runs), min(r[1] for r in runs), runs[0][2]


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    keep = os.environ.get("YARP_BENCH_SEARCH_DIR")
    path = Path(keep) if keep else tmp_path_factory.mktemp("bench-search-text")
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.mark.parametrize("calls", SIZES)
def test_find_every_planted_call(root, calls, tmp_path):
    path, planted = _archive(root, calls)
    assert len(planted) == PLANTED
    search = [sys.executable, "-m", "yarp", "search", "--text", NEEDLE, "-m", "100", "--archive", str(path)]
    wall, cpu, out = _best(search, tmp_path)
    found = {line.split()[0] for line in out.decode().splitlines() if line.startswith("yr_")}
    assert found == planted  # every planted call, from the oldest to the newest
    first_wall, first_cpu, _ = _best(search[:-4] + ["-m", "1", "--archive", str(path)], tmp_path)
    floor_wall, floor_cpu, _ = _best([sys.executable, "-c", _FLOOR, str(path)], tmp_path)
    print(f"\n{calls} calls: find all {PLANTED}: {wall:.2f} s wall / {cpu:.2f} s CPU;"
          f" floor (statement + decompression) {floor_wall:.2f} / {floor_cpu:.2f}"
          f" (x{cpu / floor_cpu:.2f} CPU); -m 1 (newest match) {first_wall:.2f} / {first_cpu:.2f}")
