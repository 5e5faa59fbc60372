"""Pruning benchmarks: reducer and cap throughput, passthrough copy vs `cat`, pruning quality.

Run: PYTHONPATH=src .venv/bin/python -m pytest bench/test_bench_pruning.py -q -s
The corpus (bench/corpus) is scaled up to about 32 MB per case for throughput.

`test_salience_against_naive_cap` scores the view `yarp run` shows (the case's
rule, if any, then the global cap) against a naive cap of the same budget (the
first and last bytes) on every annotated case of `corpus_cases.load_cases()`:
signal lines kept whole, view bytes and raw bytes, per case and in total.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from yarp.limits import DEFAULT_CAP_BYTES
from yarp.view.cap import cap_files
from yarp.view.reducers import copy_stream, reduce_stream
from yarp.view.rules import load_rules, select_rule

from view_routes import naive_cap, run_view  # bench/: the views shared with generalization.py

CORPUS = os.path.join(os.path.dirname(__file__), "corpus")
REF = "yr_" + "0" * 32
SCALED_BYTES = 32 * 1024 * 1024
with open(os.path.join(CORPUS, "manifest.json"), encoding="utf-8") as _handle:
    MANIFEST = json.load(_handle)
#: A case per family whose reducer prunes: the build and list families are generic, left to the view
#: (`reduce_stream` copies their output unless a rule gives them patterns; `test_passthrough_copy_vs_cat`
#: measures the copy), so a throughput of theirs would time a copy.
FAMILY_CASES = {"test": "pytest-verbose", "log": "git-log", "diff": "git-diff", "search": "grep-results"}


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


@pytest.mark.parametrize("shape", ["one-file", "no-locations"])
def test_search_reducer_worst_case(benchmark, tmp_path_factory, shape):
    """Search output where the per-file first-match scan finds nothing new: every match in one
    file (one bisection per chunk), and lines without `path:N:` (the scan turns itself off)."""
    path = tmp_path_factory.getbasetemp() / f"search-{shape}"
    if shape == "one-file":
        data = b"".join(b"src/big.py:%d:    return compute(value) + %d\n" % (n, n) for n in range(200_000))
    else:
        data = b"".join(b"    return compute(value) + %d\n" % n for n in range(200_000))
    path.write_bytes(data * (SCALED_BYTES // len(data) + 1))
    rule = select_rule(["grep", "-rn", "compute", "src"], load_rules())
    dst = str(tmp_path_factory.getbasetemp() / f"out-search-{shape}")
    stats = benchmark.pedantic(reduce_stream, args=(rule, 0, str(path), dst), kwargs={"ref": REF, "stream_name": "stdout"},
                               rounds=3, iterations=1)
    assert stats.reduced
    rate = stats.source_bytes / benchmark.stats.stats.mean / 1e6
    benchmark.extra_info["MB_per_s"] = round(rate, 1)
    print(f"\nsearch family, {shape}: {rate:.0f} MB/s over {stats.source_bytes} bytes")


def test_rule_load_time(benchmark):
    from yarp.view import rules

    def fresh_load():
        rules._BUILTIN_CACHE = None
        return rules.load_rules()

    loaded = benchmark(fresh_load)
    print(f"\nrule load: {benchmark.stats.stats.mean * 1000:.2f} ms for {len(loaded)} rules")


def test_plan_latency(benchmark):
    from yarp.view.plan import plan_command

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


CAP_BYTES = 8 * 1024 * 1024


@pytest.mark.parametrize("kind", ["app-log", "pytest-verbose"])
def test_cap_throughput(benchmark, tmp_path_factory, kind):
    """The salience cap over an 8 MB stream with no rule (the chunked scan): a log with an
    ERROR line every few hundred lines, and pytest -v (a trigger on every PASSED line, the worst case)."""
    path = tmp_path_factory.getbasetemp() / f"cap-{kind}"
    if kind == "app-log":
        block = b"".join(b"2026-12-03 12:00:%02d INFO worker-%d handled request id=%d status=200\n" % (i % 60, i % 4, i)
                         for i in range(300)) + b"2026-12-03 12:05:00 ERROR worker-3 gateway timeout\n"
    else:
        with open(os.path.join(CORPUS, "pytest-verbose.stdout"), "rb") as handle:
            block = handle.read()
    path.write_bytes(block * (CAP_BYTES // len(block) + 1))
    empty = tmp_path_factory.getbasetemp() / "empty"
    empty.write_bytes(b"")
    parts = benchmark.pedantic(cap_files, args=([str(path), str(empty)],), kwargs={"archive_ref": REF, "exit_code": 1},
                               rounds=2, iterations=1)
    assert parts is not None and sum(map(len, parts)) <= DEFAULT_CAP_BYTES
    rate = os.path.getsize(path) / benchmark.stats.stats.mean / 1e6
    benchmark.extra_info["MB_per_s"] = round(rate, 1)
    print(f"\ncap, {kind}, {os.path.getsize(path)} bytes: {rate:.1f} MB/s")


# --- salience: signal lines kept, against a naive head+tail cap of the same budget ------------------


def _corpus_cases():
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    try:
        import corpus_cases
    except ImportError:
        pytest.skip("bench/corpus_cases.py (the annotated corpus) is not present")
    finally:
        sys.path.pop(0)
    return corpus_cases


def _lines(data: bytes) -> set[str]:
    return set(data.decode("utf-8", errors="replace").split("\n"))


def test_salience_against_naive_cap(tmp_path):
    corpus = _corpus_cases()
    cases = corpus.load_cases()
    rules = load_rules()
    cap = DEFAULT_CAP_BYTES
    rows = []
    totals = {"signal": 0, "kept": 0, "naive_kept": 0, "view": 0, "naive": 0, "raw": 0}
    problems = []
    for case in cases:
        out, err = run_view(case, rules, tmp_path, cap)
        view = out + err
        raw = case.stdout + case.stderr
        naive = naive_cap(raw, cap)
        shown = {"stdout": _lines(out), "stderr": _lines(err)}
        naive_shown = _lines(naive)
        signals = corpus.signal_lines(case)
        kept = sum(text in shown[stream] for stream, _, text in signals)
        naive_kept = sum(text in naive_shown for _, _, text in signals)
        exit_visible = view == raw or f"exit status {case.exit_code}]".encode() in view or (
            f"exit_status={case.exit_code}".encode() in view)
        rows.append(f"{case.name[:34]:34} {case.tool[:10]:10} {kept:3}/{len(signals):<3} {naive_kept:3}/{len(signals):<3} "
                    f"{len(view):7} {len(naive):7} {len(raw):9} {'yes' if exit_visible else 'NO':>4}")
        totals["signal"] += len(signals)
        totals["kept"] += kept
        totals["naive_kept"] += naive_kept
        totals["view"] += len(view)
        totals["naive"] += len(naive)
        totals["raw"] += len(raw)
        missed = [text for stream, _, text in signals if text not in shown[stream]]
        if missed:
            problems.append(f"{case.name}: missed {missed[:3]}")
        if len(raw) > 2 * cap and len(view) > cap:
            problems.append(f"{case.name}: view {len(view)} > cap {cap}")
        if not exit_visible:
            problems.append(f"{case.name}: exit status not visible")
    print("\n" + f"{'case':34} {'tool':10} {'ours':>7} {'naive':>7} {'view':>7} {'naive':>7} {'raw':>9} {'exit':>4}")
    print("\n".join(rows))
    print(f"{'total (' + str(len(cases)) + ' cases)':45} {totals['kept']:3}/{totals['signal']:<3} "
          f"{totals['naive_kept']:3}/{totals['signal']:<3} {totals['view']:7} {totals['naive']:7} {totals['raw']:9}")
    if problems:
        print("\n".join(["problems:"] + problems))
    assert totals["view"] <= totals["naive"]
    assert not problems, problems
