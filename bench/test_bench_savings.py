"""`yarp archive savings` and `yarp archive export` on a 100,000-call archive, beside baselines.

Run: PYTHONPATH=src:tests .venv/bin/python -m pytest bench/test_bench_savings.py -q -s
     (YARP_BENCH_SAVINGS_CALLS=100000 by default; YARP_BENCH_SAVINGS_DIR=DIR keeps the
     generated archives between runs, since generating 100,000 calls takes about a minute)

Archives come from bench/archive_gen.py (the archive's one writer, 256 requests per
transaction; the mix is described there). Every figure is a whole process
(`python -m yarp ...`), wall time and the child's own CPU (user + system):

* savings: `yarp archive savings` against `yarp archive stats` (the other read-only
  metadata report) on the same archive, both whole processes, and against the
  target of 1 s. A report keeps each finished call's row in the savings
  projection (`yarp.archive.savings.projection`); `savings, first report` runs without
  one (every row computed, half of them on a second connection and thread),
  `first, one connection` the same on one connection (what the second core
  buys in wall time and costs in CPU), `savings` with the projection the
  previous report left, and `savings after a change` with 50 calls (a capped
  run, its re-run and a recovery among them) added since, on a copy of the
  archive (the usual case: a report after some work).
* export: `yarp archive export --format parquet` in MB/s of logical payload (the
  payload table's uncompressed bytes), against a floor that only reads and
  decompresses every snapshot's payload in a Python process (no Parquet), and the
  export's peak anonymous memory at two archive sizes (a fifth of the calls, and all of them):
  bounded memory means the two peaks are close while the archives differ 5x.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
sys.path.insert(0, os.path.dirname(__file__))

from archive_factory import yarp_env  # noqa: E402
from archive_gen import cached  # noqa: E402

CALLS = int(os.environ.get("YARP_BENCH_SAVINGS_CALLS", "100000"))
MB = 1_000_000
ROUNDS = 5

_FLOOR = """
import sqlite3, sys, zstandard
conn = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
dec = zstandard.ZstdDecompressor()
n = 0
for compression, length, body in conn.execute(
        "SELECT p.compression, p.uncompressed_byte_length, p.body FROM snapshots s"
        " JOIN payloads p ON p.sha256 = s.payload_sha256 ORDER BY s.tool_call_id, s.subject, s.stage"):
    data = dec.decompress(body, max_output_size=length) if compression == "zstd" else body
    n += len(data)
print(n)
"""


#: A first savings report on one connection (no opener, so no split; the projection
#: in memory), as a whole process.
_ONE_CONNECTION = """
import sys
from yarp.archive.savings import projection
from yarp.archive.savings.render import render_text
from yarp.archive.savings.report import compute
from yarp.paths import resolve_archive
conn = projection.connect(resolve_archive(sys.argv[1], {}), persistent=False)
sys.stdout.write(render_text(compute(conn)))
"""


@pytest.fixture(scope="module")
def archives(tmp_path_factory):
    keep = os.environ.get("YARP_BENCH_SAVINGS_DIR")
    root = Path(keep) if keep else tmp_path_factory.mktemp("bench-savings")
    root.mkdir(parents=True, exist_ok=True)
    return root, {CALLS // 5: cached(root, CALLS // 5), CALLS: cached(root, CALLS)}


def _run(argv: list[str], home: Path) -> tuple[float, float, int, bytes]:
    """(wall s, child CPU s, child peak anonymous memory KiB, stdout) of one whole process.

    The memory is `RssAnon` of /proc/PID/status sampled every 5 ms: the reader commands memory-map the
    archive, and the mapped pages (counted by ru_maxrss) grow with the file, not with what the process holds.
    """
    import threading

    started = time.perf_counter()
    proc = subprocess.Popen(argv, env=yarp_env(home), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    peak = [0]

    def sample() -> None:
        while True:
            try:
                with open(f"/proc/{proc.pid}/status") as handle:
                    anon = [int(line.split()[1]) for line in handle if line.startswith("RssAnon:")]
            except OSError:
                return
            if not anon:
                return  # exited (a zombie has no memory lines)
            peak[0] = max(peak[0], anon[0])
            time.sleep(0.005)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = proc.stdout.read(), proc.stderr.read()
    sampler.join()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - started
    assert proc.returncode == 0, err
    return wall, usage.ru_utime + usage.ru_stime, peak[0], out


def _yarp(*args: str) -> list[str]:
    return [sys.executable, "-m", "yarp", *args]


def _best(runs):
    return min(r[0] for r in runs), min(r[1] for r in runs)


def _add_calls(path: Path, first: int, count: int) -> None:
    """`count` more calls after the archive's own, as the generator writes them (capped runs, re-runs,
    recoveries among them), from seed `first`, started after every call already there."""
    from archive_gen import extend

    extend(path, count, seed=first)


def test_savings_whole_process(archives, tmp_path):
    root, paths = archives
    path = paths[CALLS]
    projections = root / ".cache" / "yarp" / "savings"
    savings_argv = _yarp("archive", "savings", "--archive", str(path))
    changed = tmp_path / "changed" / "tool-calls.sqlite3"
    changed.parent.mkdir(mode=0o700)
    shutil.copyfile(path, changed)
    os.chmod(changed, 0o600)
    added = iter(range(10**6, 10**7, 100))

    def first(argv, home):
        shutil.rmtree(projections, ignore_errors=True)  # no projection: every call's row is computed
        return _run(argv, home)

    def after_a_change(argv, home):
        _add_calls(changed, next(added), 50)
        return _run(argv, home)

    _run(_yarp("archive", "savings", "--archive", str(changed)), root)  # the copy's projection, once
    results = {}
    for name, argv, runner in (
            ("savings, first report", savings_argv, first),
            ("first, one connection", [sys.executable, "-c", _ONE_CONNECTION, str(path)], first),
            ("savings", savings_argv, _run),
            ("savings after a change", _yarp("archive", "savings", "--archive", str(changed)), after_a_change),
            ("savings --by program", _yarp("archive", "savings", "--by", "program", "--archive", str(path)), _run),
            ("stats (baseline)", _yarp("archive", "stats", "--archive", str(path)), _run)):
        runs = [runner(argv, root) for _ in range(ROUNDS)]
        results[name] = _best(runs)
    print(f"\nsavings over {CALLS} calls, whole process, best of {ROUNDS} (wall s / CPU s):")
    for name, (wall, cpu) in results.items():
        print(f"  {name:<24} {wall:6.3f} / {cpu:6.3f}")
    base = results["stats (baseline)"]
    print(f"  ratio savings/stats: wall {results['savings'][0] / base[0]:.2f}, CPU {results['savings'][1] / base[1]:.2f}")
    report = json.loads(_run(_yarp("archive", "savings", "--json", "--archive", str(path)), root)[3])
    total = report["total"]
    import sqlite3

    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    calls = conn.execute("SELECT count(*) FROM tool_calls").fetchone()[0]
    conn.close()
    assert total["calls"] + total["view_unknown_calls"] + total["not_executed_calls"] + total["incomplete_calls"] \
        == calls
    print(f"  net {total['bytes_withheld_net']:,} of gross {total['bytes_withheld_gross']:,} bytes; "
          f"{total['recalled_calls']:,} of {total['capped_calls']:,} capped calls recalled")


def test_export_throughput_and_memory(archives, tmp_path):
    root, paths = archives
    logical = {}
    peaks = {}
    for calls, path in sorted(paths.items()):
        import sqlite3

        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        logical[calls] = conn.execute("SELECT sum(uncompressed_byte_length) FROM payloads").fetchone()[0]
        rows = conn.execute("SELECT count(*) FROM tool_calls").fetchone()[0]  # the calls and their recoveries
        conn.close()
        runs = []
        for attempt in range(2):
            out = tmp_path / f"export-{calls}-{attempt}"
            runs.append(_run(_yarp("archive", "export", "--format", "parquet", str(out), "--json", "--archive",
                                   str(path)), root))
            summary = json.loads(runs[-1][3])
            assert summary["tables"]["calls"]["rows"] == rows
            shutil.rmtree(out)
        floor = [_run([sys.executable, "-c", _FLOOR, str(path)], root) for _ in range(2)]
        wall, cpu = _best(runs)
        floor_wall, floor_cpu = _best(floor)
        peaks[calls] = max(r[2] for r in runs)
        print(f"\nexport of {calls} calls, {logical[calls] / MB:.0f} MB logical payload "
              f"({summary['payload_bytes'] / MB:.0f} MB across snapshots), best of 2:")
        # MB per wall second, and per CPU second (steadier when other work shares the cores).
        print(f"  export   {wall:6.2f} s wall {cpu:6.2f} s CPU  {logical[calls] / MB / wall:6.1f} MB/s"
              f" ({logical[calls] / MB / cpu:.1f} per CPU s)  peak RssAnon {peaks[calls] / 1024:.0f} MiB")
        print(f"  floor    {floor_wall:6.2f} s wall {floor_cpu:6.2f} s CPU  {logical[calls] / MB / floor_wall:6.1f} MB/s"
              f" ({logical[calls] / MB / floor_cpu:.1f} per CPU s)  (read + decompress only)")
        print(f"  ratio export/floor: wall {wall / floor_wall:.2f}, CPU {cpu / floor_cpu:.2f}")
    small, large = sorted(peaks)
    print(f"\npeak RssAnon: {peaks[small] / 1024:.0f} MiB at {small} calls, {peaks[large] / 1024:.0f} MiB at {large} calls")
    # Bounded memory: five times the archive must not mean a markedly larger peak.
    assert peaks[large] < peaks[small] * 1.5
