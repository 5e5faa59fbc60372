"""`yarp calls`: how long the call list takes to print its first screen, on whole archives.

Run: PYTHONPATH=src:tests .venv/bin/python -m pytest bench/test_bench_calls.py -q -s
     YARP_BENCH_CALLS=100000 (default; e.g. 100000,1000000) names the archive sizes;
     YARP_BENCH_CALLS_DIR=DIR keeps the archives between runs (DIR/calls-N/tool-calls.sqlite3).

Archives come from bench/archive_gen.py as it is. Every figure is a whole process, wall
time and the child's CPU (user + system), the median of seven runs, against two floors in
the same run: `yarp --version` (the interpreter and the CLI starting) and the search
listing `yarp search -m 20` (the 20 newest call rows alone). Each filter is timed as a
person would use it: a common one (`--tool shell`, which walks the start-time index), a
rare one (`--session`, which walks its own index and sorts), one no call matches and
that no index serves (`--status incomplete`: the whole archive read back to the oldest
call, the worst case), and a whole call (`yarp show`).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
sys.path.insert(0, os.path.dirname(__file__))

from archive_factory import yarp_env  # noqa: E402
from archive_gen import cached  # noqa: E402

SIZES = [int(n) for n in os.environ.get("YARP_BENCH_CALLS", "100000").split(",")]
ROUNDS = 7
#: The issue's target for the first screen of the list on 1,000,000 calls.
TARGET_S = 0.3


def _run(argv: list[str], home: Path) -> tuple[float, float, bytes]:
    """(wall s, child CPU s, stdout) of one whole process."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, env=yarp_env(home), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.stdout.read(), proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    assert os.waitstatus_to_exitcode(status) in (0, 1), err
    return wall, usage.ru_utime + usage.ru_stime, out


def _median(argv: list[str], home: Path) -> tuple[float, float, bytes]:
    runs = [_run(argv, home) for _ in range(ROUNDS)]
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs), runs[0][2]


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    kept = os.environ.get("YARP_BENCH_CALLS_DIR")
    if kept:
        Path(kept).mkdir(mode=0o700, parents=True, exist_ok=True)
        return Path(kept)
    return tmp_path_factory.mktemp("bench-calls")


@pytest.mark.parametrize("calls", SIZES)
def test_first_screen(root, calls):
    path = cached(root, calls)
    home = root / "home"
    home.mkdir(exist_ok=True)
    yarp = [sys.executable, "-m", "yarp"]
    where = ["--archive", str(path)]
    newest = json.loads(_run([*yarp, "calls", "-n", "1", "--json", *where], home)[2])
    cases = {
        "yarp --version (floor)": [*yarp, "--version"],
        "yarp search -m 20 (floor)": [*yarp, "search", "-m", "20", *where],
        "yarp calls": [*yarp, "calls", *where],
        "yarp calls --json": [*yarp, "calls", "--json", *where],
        "yarp calls --tool shell": [*yarp, "calls", "--tool", "shell", *where],
        "yarp calls --agent claude-code": [*yarp, "calls", "--agent", "claude-code", *where],
        "yarp calls --session bench-session-3": [*yarp, "calls", "--session", "bench-session-3", *where],
        "yarp calls --status incomplete (none)": [*yarp, "calls", "--status", "incomplete", *where],
        "yarp show REF": [*yarp, "show", newest["ref"], *where],
    }
    results = {name: _median(argv, home) for name, argv in cases.items()}
    floor = results["yarp --version (floor)"]
    print(f"\n{calls} calls ({path.stat().st_size / 2**20:.0f} MiB), median of {ROUNDS}:")
    for name, (wall, cpu, out) in results.items():
        lines = out.count(b"\n")
        print(f"  {name:<42} wall {wall:6.3f} s  cpu {cpu:6.3f} s  ({wall / floor[0]:4.1f}x floor)  {lines} lines")
    listed = results["yarp calls"]
    assert listed[2].count(b"\n") == 20
    # The first screen costs the rows it shows: within the search listing's time, plus a little.
    assert listed[1] <= 1.5 * results["yarp search -m 20 (floor)"][1] + 0.05
    print(f"  first screen: {listed[0]:.3f} s wall against the {TARGET_S} s target")
