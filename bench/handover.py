"""Wall time of a `yarp run -- true` that meets a broker of another YARP version, beside its baselines.

    python bench/handover.py               # 15 rounds
    python bench/handover.py --rounds 30

Each round, in one private environment and alternating so that the machine's
load falls on all three alike: a run against a broker of its own version
(warm), one with no broker running (cold start: the broker is stopped first
with `yarp archive broker stop`), and one against a broker of the next
release, a copy of this checkout that says so (`tests/version_helpers.py`),
which the run asks to drain and exit before it starts its own (hand-over).
Wall-clock figures on a shared machine swing: compare the hand-over with the
cold start measured beside it.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "src")]

from broker_helpers import SRC  # noqa: E402
from run_helpers import close_run_env, make_run_env  # noqa: E402
from version_helpers import OTHER_VERSION, as_version, other_version_src  # noqa: E402


def _yarp(env: dict, *args: str) -> float:
    """Run `yarp ARGS`, check it succeeded quietly, and return its wall time in milliseconds."""
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "yarp", *args], env=env, capture_output=True)
    elapsed = (time.monotonic() - started) * 1000
    if result.returncode != 0 or (args[0] == "run" and result.stderr):
        raise SystemExit(f"yarp {' '.join(args)} failed: {result.stderr.decode(errors='replace')[-500:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    rounds = parser.parse_args().rounds
    times: dict[str, list[float]] = {"warm": [], "cold": [], "hand-over": []}
    benv = make_run_env(idle_ms=600_000)
    this = as_version(benv.environ, SRC)
    other = as_version(benv.environ, other_version_src())
    try:
        _yarp(this, "run", "--", "true")
        for _ in range(rounds):
            times["warm"].append(_yarp(this, "run", "--", "true"))
            _yarp(this, "archive", "broker", "stop")
            times["cold"].append(_yarp(this, "run", "--", "true"))
            _yarp(other, "run", "--", "true")  # the broker of the other version replaces ours
            times["hand-over"].append(_yarp(this, "run", "--", "true"))
    finally:
        close_run_env(benv, timeout=0)
    print(f"yarp run -- true, {rounds} rounds; the other version is {OTHER_VERSION}")
    for name, values in times.items():
        print(f"{name:>9}: median {statistics.median(values):.0f} ms, min {min(values):.0f}, max {max(values):.0f}")
    ratio = statistics.median(times["hand-over"]) / statistics.median(times["cold"])
    print(f"hand-over / cold start (medians): {ratio:.2f}")


if __name__ == "__main__":
    main()
