"""`yarp run` benchmarks, each beside its baseline in the same run.

Run: PYTHONPATH=src .venv/bin/python -m pytest bench/test_bench_run.py -q
(the 200 MB throughput and memory cases need about 1 GB free in /tmp).

* startup: `sh -c true` (baseline), `python -c pass` (the interpreter floor)
  and `yarp run -- true` (standalone: begin, capture, result, finish) against a
  warm broker; the median overhead is `yarp run -- true` minus `sh -c true`.
  `yarp` is the installed console script, as agents run it; `python -m yarp`
  (which adds runpy's imports) is measured beside it. `yarp run -- echo hello`
  against `sh -c 'echo hello'` adds output: the rule set is consulted (from
  the warm rule cache), no rule matches, the bytes pass through.
* startup-adapter: `yarp run --archive-… -- true` into a call begun through the
  broker client (one capture operation, no reference lookup).
* capped: `sh -c 'seq 1 3000'` bare and through `yarp run --archive-…`, whose
  output passes the cap (reference lookup, capped view, four streams).
* throughput: bare `cat BIG > /dev/null` against `yarp run -- cat BIG` for a
  200 MB text file, with `cat BIG > FILE` (the cost of the spool write alone)
  beside them; `extra_info` holds MB/s.
* memory: the runner's peak RSS (`RUSAGE_CHILDREN` of a tiny parent) for 50 MB
  and 200 MB of output, recorded in `extra_info` (independent of size).

Processes run with bytecode caching on (`PYTHONPYCACHEPREFIX` in a temporary
directory, warmed once), as an installed package would, even when the calling
environment sets PYTHONDONTWRITEBYTECODE. Pruning quality is measured in
bench/test_bench_pruning.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
sys.path.insert(0, os.path.join(HERE, "..", "src"))

from run_helpers import close_run_env, make_run_env  # noqa: E402

from yarp.wire import operations as ops  # noqa: E402

PY = sys.executable
MB = 1024 * 1024
#: The installed `yarp` console script, which is what agents run (the Pi
#: adapter and the hooks call `yarp` from PATH); `python -m yarp` adds runpy's
#: imports and is measured beside it.
_SCRIPT = os.path.join(os.path.dirname(PY), "yarp")
YARP = [_SCRIPT] if os.access(_SCRIPT, os.X_OK) else [PY, "-m", "yarp"]


@pytest.fixture(scope="module")
def warm():
    benv = make_run_env(idle_ms=600_000)
    benv.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    benv.environ["PYTHONPYCACHEPREFIX"] = os.path.join(benv.root, "pyc")
    benv.environ["XDG_CACHE_HOME"] = os.path.join(benv.root, "cache")
    for _ in range(2):  # start the broker, write the bytecode and rule caches
        subprocess.run([*YARP, "run", "--", "echo", "warm"], env=benv.environ, check=True,
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    try:
        yield benv
    finally:
        benv.environ["YARP_BROKER_IDLE_MS"] = "300"
        from run_helpers import broker_pids, kill_pid

        for pid in broker_pids(benv.archive):
            kill_pid(pid)
        close_run_env(benv, timeout=5)


def _runner(env: dict, argv: list[str], stdout=subprocess.DEVNULL):
    def run() -> None:
        proc = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, stdout=stdout, stderr=subprocess.DEVNULL)
        assert proc.returncode == 0

    return run


STARTUP = {
    "sh -c true": ["sh", "-c", "true"],
    "python -c pass": [PY, "-c", "pass"],
    "yarp run -- true": [*YARP, "run", "--", "true"],
    "python -m yarp run -- true": [PY, "-m", "yarp", "run", "--", "true"],
    "sh -c 'echo hello'": ["sh", "-c", "echo hello"],
    "yarp run -- echo hello": [*YARP, "run", "--", "echo", "hello"],
}


@pytest.mark.benchmark(group="run-startup")
@pytest.mark.parametrize("name", list(STARTUP))
def test_startup(benchmark, warm, name):
    benchmark.pedantic(_runner(warm.environ, STARTUP[name]), rounds=40, warmup_rounds=3)


def _adapter_runs(warm, argv: list[str], label: str):
    """A function that begins a call through the broker client (as an adapter
    would), then runs `yarp run --archive-… -- argv` into it; returns its output."""
    session = ops.Session("bench", "me", f"{label}-{time.time_ns()}")
    counter = iter(range(1, 10_000))

    def run() -> bytes:
        call = f"c{next(counter)}"
        warm.request(ops.BeginCall(session, ops.CallMeta(call, "bash", 1, True), {}, {}, 1))
        proc = subprocess.run([*YARP, "run", "--archive-agent", "bench", "--archive-account", "me",
                               "--archive-session", session.source_session_id, "--archive-call", call, "--",
                               *argv], env=warm.environ, stdin=subprocess.DEVNULL, capture_output=True)
        assert proc.returncode == 0
        return proc.stdout

    return run


@pytest.mark.benchmark(group="run-startup")
def test_startup_adapter_mode(benchmark, warm):
    # Each round includes its begin_call (one broker round trip in this process).
    benchmark.pedantic(_adapter_runs(warm, ["true"], "quiet"), rounds=30, warmup_rounds=2)


NOISY = ["sh", "-c", "seq 1 3000"]  # 13,893 bytes: over the 5,120-byte cap, no rule


@pytest.mark.benchmark(group="run-capped")
def test_noisy_command_bare(benchmark, warm):
    benchmark.pedantic(_runner(warm.environ, NOISY), rounds=30, warmup_rounds=2)


@pytest.mark.benchmark(group="run-capped")
def test_noisy_command_adapter_mode(benchmark, warm):
    # The output passes the cap: the runner reads the call's reference
    # (read-only SQLite), writes the capped view with its marker and captures
    # all four streams. Each round includes its begin_call.
    run = _adapter_runs(warm, NOISY, "capped")

    def capped() -> None:
        assert b"byte(s) capped at 5120; ref=yr_" in run()

    benchmark.pedantic(capped, rounds=30, warmup_rounds=2)


def _write_big(path: str, size: int) -> None:
    line = b"%08d the quick brown fox jumps over the lazy dog; status=ok elapsed=%04d ms\n"
    with open(path, "wb") as handle:
        n = written = 0
        while written < size:
            chunk = b"".join(line % (i, i % 9973) for i in range(n, n + 20000))
            handle.write(chunk)
            written += len(chunk)
            n += 20000


@pytest.fixture(scope="module")
def big_files(warm):
    paths = {}
    for size in (50, 200):
        path = os.path.join(warm.root, f"big-{size}.txt")
        _write_big(path, size * MB)
        paths[size] = path
    yield paths
    for path in paths.values():
        os.unlink(path)


@pytest.mark.benchmark(group="run-throughput-200MB")
@pytest.mark.parametrize("mode", ["bare cat", "cat > file", "yarp run -- cat"])
def test_throughput(benchmark, warm, big_files, mode):
    big = big_files[200]
    argv = {
        "bare cat": ["sh", "-c", 'cat "$0" > /dev/null', big],
        # What the runner's spool write alone costs: the same bytes into a file.
        "cat > file": ["sh", "-c", 'cat "$0" > "$1"', big, os.path.join(warm.root, "sink")],
        "yarp run -- cat": [*YARP, "run", "--", "cat", big],
    }[mode]
    benchmark.pedantic(_runner(warm.environ, argv), rounds=3, warmup_rounds=1)
    size = os.path.getsize(big)
    benchmark.extra_info["bytes"] = size
    benchmark.extra_info["MB_per_s_median"] = round(size / MB / benchmark.stats.stats.median, 1)


PEAK = textwrap.dedent("""
    import resource, subprocess, sys
    subprocess.run(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, check=True)
    print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
""")


@pytest.mark.benchmark(group="run-peak-rss")
@pytest.mark.parametrize("size", [50, 200])
def test_peak_rss(benchmark, warm, big_files, size):
    peaks = []

    def run() -> None:
        out = subprocess.run([PY, "-c", PEAK, *YARP, "run", "--", "cat", big_files[size]],
                             env=warm.environ, capture_output=True, check=True)
        peaks.append(int(out.stdout))

    benchmark.pedantic(run, rounds=2, warmup_rounds=0)
    benchmark.extra_info["runner_peak_rss_kib"] = max(peaks)
