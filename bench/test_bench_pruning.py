"""Pruning benchmarks: reducer throughput per family, passthrough copy vs `cat`, pruning quality.

Run: PYTHONPATH=src .venv/bin/python -m pytest bench/test_bench_pruning.py -q -s
The corpus (bench/corpus) is scaled up to about 32 MB per case for throughput.
"""

from __future__ import annotations

import json
import os
import subprocess
import time

import pytest

from yarp.shell.reducers import copy_stream, reduce_stream
from yarp.shell.rules import load_rules, select_rule

CORPUS = os.path.join(os.path.dirname(__file__), "corpus")
REF = "yr_" + "0" * 32
SCALED_BYTES = 32 * 1024 * 1024
with open(os.path.join(CORPUS, "manifest.json"), encoding="utf-8") as _handle:
    MANIFEST = json.load(_handle)
FAMILY_CASES = {
    "test": "pytest-verbose", "build": "ruff-check", "log": "git-log", "diff": "git-diff",
    "list": "find-tree", "search": "grep-results",
}


def _scaled(tmp_path_factory, name: str) -> str:
    with open(os.path.join(CORPUS, f"{name}.stdout"), "rb") as handle:
        data = handle.read()
    path = tmp_path_factory.getbasetemp() / f"scaled-{name}"
    if not path.exists():
        with open(path, "wb") as out:
            written = 0
            while written < SCALED_BYTES:
                out.write(data)
                written += len(data)
    return str(path)


@pytest.mark.parametrize("family", list(FAMILY_CASES))
def test_reducer_throughput(benchmark, tmp_path_factory, family):
    case = next(c for c in MANIFEST if c["name"] == FAMILY_CASES[family])
    rule = select_rule(case["argv"], load_rules())
    src = _scaled(tmp_path_factory, case["name"])
    dst = str(tmp_path_factory.getbasetemp() / f"out-{family}")
    stats = benchmark.pedantic(
        reduce_stream, args=(rule, case["exit_code"], src, dst), kwargs={"ref": REF, "stream_name": "stdout"},
        rounds=3, iterations=1,
    )
    assert stats.reduced
    benchmark.extra_info["MB_per_s"] = round(stats.source_bytes / benchmark.stats.stats.mean / 1e6, 1)
    print(f"\n{family}: {benchmark.extra_info['MB_per_s']} MB/s over {stats.source_bytes} bytes")


def test_passthrough_copy_vs_cat(benchmark, tmp_path_factory):
    """Same target for both: a regular file (what the runner spools to) and /dev/null."""
    src = _scaled(tmp_path_factory, "ls-recursive")
    size = os.path.getsize(src)
    dst = str(tmp_path_factory.getbasetemp() / "copy")

    def timed(fn, rounds=5):
        start = time.perf_counter()
        for _ in range(rounds):
            fn()
        return (time.perf_counter() - start) / rounds

    def cat_to(target):
        with open(target, "wb") as out:
            subprocess.run(["cat", src], stdout=out, check=True)

    cat_file = timed(lambda: cat_to(dst))
    cat_null = timed(lambda: cat_to(os.devnull))
    copy_null = timed(lambda: copy_stream(src, os.devnull))
    benchmark.pedantic(copy_stream, args=(src, dst), rounds=5, iterations=1)
    copy_file = benchmark.stats.stats.mean
    rate = lambda s: round(size / s / 1e6)
    print(f"\nto file: copy_stream {rate(copy_file)} MB/s vs cat {rate(cat_file)} MB/s; "
          f"to /dev/null: copy_stream {rate(copy_null)} MB/s vs cat {rate(cat_null)} MB/s")
    benchmark.extra_info.update(copy_file=rate(copy_file), cat_file=rate(cat_file), copy_null=rate(copy_null), cat_null=rate(cat_null))


def test_reducer_worst_case_no_evidence(benchmark, tmp_path_factory):
    """A stream where no line is evidence: the evidence regex scans every byte."""
    path = tmp_path_factory.getbasetemp() / "no-evidence"
    line = b"collected item number 12345 in module tests/test_something.py ok\n"
    path.write_bytes(line * (SCALED_BYTES // len(line)))
    rule = select_rule(["pytest"], load_rules())
    dst = str(tmp_path_factory.getbasetemp() / "out-none")
    stats = benchmark.pedantic(reduce_stream, args=(rule, 0, str(path), dst), kwargs={"ref": REF, "stream_name": "stdout"},
                               rounds=3, iterations=1)
    print(f"\ntest family, no evidence: {stats.source_bytes / benchmark.stats.stats.mean / 1e6:.0f} MB/s")


def test_rule_load_time(benchmark):
    from yarp.shell import rules

    def fresh_load():
        rules._BUILTIN_CACHE = None
        return rules.load_rules()

    loaded = benchmark(fresh_load)
    print(f"\nrule load: {benchmark.stats.stats.mean * 1000:.2f} ms for {len(loaded)} rules")


def test_plan_latency(benchmark):
    from yarp.shell.plan import plan_command

    loaded = load_rules()
    benchmark(plan_command, "pytest -x 'tests/test_a.py' -k 'not slow'", loaded)
    start = time.perf_counter()
    subprocess.run(["python", "-m", "yarp", "plan", "--json", "git status"], capture_output=True,
                   env={**os.environ, "PYTHONPATH": os.path.join(os.path.dirname(__file__), os.pardir, "src")})
    print(f"\nplan_command: {benchmark.stats.stats.mean * 1e6:.0f} us; `python -m yarp plan` process: "
          f"{(time.perf_counter() - start) * 1000:.0f} ms")


def test_pruning_quality_table(tmp_path):
    rules = load_rules()
    rows = []
    total_src = total_shown = 0
    for case in MANIFEST:
        rule = select_rule(case["argv"], rules)
        for stream in ("stdout", "stderr"):
            src = os.path.join(CORPUS, f"{case['name']}.{stream}")
            if not os.path.getsize(src):
                continue
            stats = reduce_stream(rule, case["exit_code"], src, str(tmp_path / "o"), ref=REF, stream_name=stream)
            total_src += stats.source_bytes
            total_shown += stats.shown_bytes
            rows.append(f"{case['name'] + '.' + stream:28} {rule.reducer:7} {stats.source_bytes:8} {stats.shown_bytes:7} "
                        f"{100 * stats.shown_bytes / stats.source_bytes:6.1f}% {'reduced' if stats.reduced else 'unchanged'}")
    print("\n" + f"{'stream':28} {'family':7} {'archived':>8} {'shown':>7} {'shown%':>7}")
    print("\n".join(rows))
    print(f"{'total':36} {total_src:8} {total_shown:7} {100 * total_shown / total_src:6.1f}%")
    assert total_shown < total_src
