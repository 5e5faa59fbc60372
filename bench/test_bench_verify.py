"""Verify throughput and search latency, each beside a baseline measured in the same run.

Run: PYTHONPATH=src:tests .venv/bin/python -m pytest bench/test_bench_verify.py -q -s
     (YARP_BENCH_VERIFY_MB=400 for a larger archive; default 208 MB of payload)

* verify: `verify_archive` over a generated archive of >= 200 MB of payload (half
  compressible log text, half random bytes) built through `ArchiveStore`, against
  hashing the same uncompressed bytes from one flat file with hashlib.sha256
  (what `sha256sum` does). Both report MB/s of payload.
* verify, uncompressed only: an archive of random (stored uncompressed) payloads
  against hashlib over the same bytes from a flat file: the hashing floor.
* verify, the previous loop: 1 MiB chunks hashed inline on a plain read-only
  connection, over the same mixed archive (what verify did before).
* search: `search_call` over a 1 MiB archived stdout (p95 recorded), against a
  plain `re` scan of the same bytes from a flat file and against the per-line
  reference search kept in tests/test_recovery.py (the previous algorithm).
* search, whole process: `python -m yarp search` p95, against a Python process
  that scans the flat file with `re` (same interpreter start-up).
"""

from __future__ import annotations

import hashlib
import os
import random
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))

from archive_factory import ArchiveFactory, yarp_env  # noqa: E402
from test_recovery import reference_scan  # noqa: E402

from yarp.archive import recovery, verify  # noqa: E402
from yarp.limits import MAX_SCAN_LINE_BYTES  # noqa: E402
from yarp.paths import resolve_archive  # noqa: E402
from yarp.archive.sqlite import open_readonly  # noqa: E402

PAYLOAD_BYTES = int(os.environ.get("YARP_BENCH_VERIFY_MB", "208")) * 1024 * 1024
RAW_PAYLOAD_BYTES = int(os.environ.get("YARP_BENCH_VERIFY_RAW_MB", "64")) * 1024 * 1024
CHUNK = 4 * 1024 * 1024
MB = 1_000_000


def _log_text(rng: random.Random, size: int) -> bytes:
    words = [b"error", b"warning", b"compiling", b"src/main.rs", b"test", b"ok", b"FAILED", b"module", b"42"]
    lines, total, n = [], 0, 0
    while total < size:
        n += 1
        line = b"%06d %s %s %d\n" % (n, rng.choice(words), rng.choice(words), rng.randrange(10**9))
        lines.append(line)
        total += len(line)
    return b"".join(lines)[:size]


@pytest.fixture(scope="module")
def big_archive(tmp_path_factory):
    root = tmp_path_factory.mktemp("bench-verify")
    path = root / "a" / "tool-calls.sqlite3"
    flat = root / "flat.bin"
    rng = random.Random(7)
    written = 0
    with ArchiveFactory(path) as factory, open(flat, "wb") as out:
        index = 0
        while written < PAYLOAD_BYTES:
            data = _log_text(rng, CHUNK) if index % 2 == 0 else os.urandom(CHUNK)
            factory.shell_call(f"c{index}", data, b"")
            out.write(data)
            written += len(data)
            index += 1
    return path, flat, written


def _mbps(benchmark, nbytes: int) -> float:
    return nbytes / benchmark.stats.stats.mean / MB


@pytest.mark.benchmark(group="verify-throughput")
def test_verify_archive(benchmark, big_archive):
    path, _, payload = big_archive
    location = resolve_archive(str(path), {})
    report = benchmark.pedantic(verify.verify_archive, args=(location,), rounds=3, iterations=1)
    assert report.ok, report.problems
    assert report.payload_bytes_checked >= payload
    benchmark.extra_info["payload_bytes"] = report.payload_bytes_checked
    benchmark.extra_info["MB_per_s"] = round(_mbps(benchmark, report.payload_bytes_checked), 1)
    print(f"\nverify: {report.payload_bytes_checked / MB:.0f} MB payload, {benchmark.extra_info['MB_per_s']} MB/s")


@pytest.mark.benchmark(group="verify-throughput")
def test_baseline_sha256_flat_file(benchmark, big_archive):
    _, flat, payload = big_archive

    def sha256sum() -> str:
        digest = hashlib.sha256()
        with open(flat, "rb", buffering=0) as handle:
            while chunk := handle.read(1024 * 1024):
                digest.update(chunk)
        return digest.hexdigest()

    assert len(benchmark.pedantic(sha256sum, rounds=3, iterations=1)) == 64
    benchmark.extra_info["MB_per_s"] = round(_mbps(benchmark, payload), 1)
    print(f"\nsha256 flat file: {payload / MB:.0f} MB, {benchmark.extra_info['MB_per_s']} MB/s")


@pytest.mark.benchmark(group="verify-throughput")
def test_previous_verify_loop(benchmark, big_archive):
    path, _, payload = big_archive

    def previous() -> int:
        conn = open_readonly(resolve_archive(str(path), {}))
        try:
            conn.execute("PRAGMA integrity_check(20)").fetchall()
            total = 0
            for rowid, compression in conn.execute("SELECT rowid, compression FROM payloads").fetchall():
                digest = hashlib.sha256()
                for chunk in recovery.iter_payload(conn, rowid, compression, chunk=1024 * 1024):
                    digest.update(chunk)
                    total += len(chunk)
            return total
        finally:
            conn.close()

    assert benchmark.pedantic(previous, rounds=3, iterations=1) >= payload
    benchmark.extra_info["MB_per_s"] = round(_mbps(benchmark, payload), 1)
    print(f"\nprevious verify loop: {payload / MB:.0f} MB, {benchmark.extra_info['MB_per_s']} MB/s")


@pytest.fixture(scope="module")
def raw_archive(tmp_path_factory):
    root = tmp_path_factory.mktemp("bench-verify-raw")
    path = root / "a" / "tool-calls.sqlite3"
    flat = root / "flat.bin"
    written = 0
    with ArchiveFactory(path) as factory, open(flat, "wb") as out:
        while written < RAW_PAYLOAD_BYTES:
            data = os.urandom(CHUNK)  # incompressible: stored uncompressed
            factory.shell_call(f"r{written}", data, b"")
            out.write(data)
            written += len(data)
    return path, flat, written


@pytest.mark.benchmark(group="verify-uncompressed")
def test_verify_uncompressed(benchmark, raw_archive):
    path, _, payload = raw_archive
    location = resolve_archive(str(path), {})
    report = benchmark.pedantic(verify.verify_archive, args=(location,), rounds=5, iterations=1)
    assert report.ok and report.payload_bytes_checked >= payload
    benchmark.extra_info["MB_per_s"] = round(_mbps(benchmark, report.payload_bytes_checked), 1)
    print(f"\nverify uncompressed: {report.payload_bytes_checked / MB:.0f} MB, {benchmark.extra_info['MB_per_s']} MB/s")


@pytest.mark.benchmark(group="verify-uncompressed")
def test_baseline_sha256_raw_flat_file(benchmark, raw_archive):
    _, flat, payload = raw_archive

    def sha256sum() -> str:
        digest = hashlib.sha256()
        with open(flat, "rb", buffering=0) as handle:
            while chunk := handle.read(1024 * 1024):
                digest.update(chunk)
        return digest.hexdigest()

    assert len(benchmark.pedantic(sha256sum, rounds=5, iterations=1)) == 64
    benchmark.extra_info["MB_per_s"] = round(_mbps(benchmark, payload), 1)
    print(f"\nsha256 raw flat file: {payload / MB:.0f} MB, {benchmark.extra_info['MB_per_s']} MB/s")


@pytest.fixture(scope="module")
def mib_stream(tmp_path_factory):
    root = tmp_path_factory.mktemp("bench-search")
    path = root / "a" / "tool-calls.sqlite3"
    data = _log_text(random.Random(3), 1024 * 1024)
    with ArchiveFactory(path) as factory:
        ref = factory.shell_call("s", data, b"")
    flat = root / "stdout.bin"
    flat.write_bytes(data)
    return path, ref, flat


def _p95_ms(benchmark) -> float:
    data = sorted(benchmark.stats.stats.data)
    return round(data[int(0.95 * (len(data) - 1))] * 1000, 2)


@pytest.mark.benchmark(group="search-1MiB")
def test_search_one_mib(benchmark, mib_stream):
    path, ref, _ = mib_stream
    options = recovery.SearchOptions(patterns=("FAILED.*src/main",))

    def search():
        conn = open_readonly(resolve_archive(str(path), {}))
        try:
            return recovery.search_call(conn, recovery.find_call(conn, ref), options, budget_bytes=32768)
        finally:
            conn.close()

    results = benchmark.pedantic(search, rounds=30, iterations=1)
    assert results[0].matches > 0
    benchmark.extra_info["p95_ms"] = _p95_ms(benchmark)
    print(f"\nsearch 1 MiB: p95 {benchmark.extra_info['p95_ms']} ms")


@pytest.mark.benchmark(group="search-1MiB")
def test_baseline_regex_flat_file(benchmark, mib_stream):
    import re

    _, _, flat = mib_stream
    matcher = re.compile(rb"FAILED.*src/main")

    def scan():
        with open(flat, "rb") as handle:
            return sum(1 for line in handle if matcher.search(line))

    assert benchmark.pedantic(scan, rounds=30, iterations=1) > 0
    benchmark.extra_info["p95_ms"] = _p95_ms(benchmark)
    print(f"\nregex flat 1 MiB: p95 {benchmark.extra_info['p95_ms']} ms")


@pytest.mark.benchmark(group="search-1MiB")
def test_previous_per_line_search(benchmark, mib_stream):
    path, ref, _ = mib_stream
    options = recovery.SearchOptions(patterns=("FAILED.*src/main",))
    matcher = recovery.compile_patterns(options)

    def search():
        conn = open_readonly(resolve_archive(str(path), {}))
        try:
            source = recovery.recovery_sources(conn, recovery.find_call(conn, ref))[0]
            return reference_scan(recovery.iter_verified(conn, source), matcher, options, 32768,
                                  MAX_SCAN_LINE_BYTES)
        finally:
            conn.close()

    assert benchmark.pedantic(search, rounds=30, iterations=1).matches > 0
    benchmark.extra_info["p95_ms"] = _p95_ms(benchmark)
    print(f"\nprevious per-line search 1 MiB: p95 {benchmark.extra_info['p95_ms']} ms")


def _process_env(home):
    env = yarp_env(home)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # measure as installed: bytecode cached
    return env


@pytest.mark.benchmark(group="search-1MiB-process")
def test_search_process(benchmark, mib_stream, tmp_path):
    path, ref, _ = mib_stream
    argv = [sys.executable, "-m", "yarp", "search", ref, "FAILED.*src/main", "--archive", str(path)]
    env = _process_env(tmp_path)
    subprocess.run(argv, env=env, capture_output=True, check=True)  # warm the bytecode cache

    def run():
        return subprocess.run(argv, env=env, capture_output=True).returncode

    assert benchmark.pedantic(run, rounds=20, iterations=1) == 0
    benchmark.extra_info["p95_ms"] = _p95_ms(benchmark)
    print(f"\npython -m yarp search 1 MiB: p95 {benchmark.extra_info['p95_ms']} ms")


@pytest.mark.benchmark(group="search-1MiB-process")
def test_baseline_regex_process(benchmark, mib_stream, tmp_path):
    _, _, flat = mib_stream
    code = ("import re,sys;m=re.compile(rb'FAILED.*src/main');"
            "sys.exit(0 if sum(1 for l in open(sys.argv[1],'rb') if m.search(l)) else 1)")
    argv = [sys.executable, "-c", code, str(flat)]
    env = _process_env(tmp_path)

    def run():
        return subprocess.run(argv, env=env, capture_output=True).returncode

    assert benchmark.pedantic(run, rounds=20, iterations=1) == 0
    benchmark.extra_info["p95_ms"] = _p95_ms(benchmark)
    print(f"\npython re over flat file 1 MiB (process): p95 {benchmark.extra_info['p95_ms']} ms")
