"""Capture throughput and acknowledgement latency through `yarp archive ingest`.

The workload is every tool call of the recorded Pi sessions (begin_call →
result_before → result_text → finish_call, as the Pi adapter sends them),
split round-robin over 1 or 16 concurrent sessions. Each session is one real
`yarp archive ingest` child (driven by a thread here, frames encoded up
front), or, as the baseline measured in the same run, one worker process
calling `BrokerClient.request` directly with the same operations. Every
configuration starts from an empty archive with its broker already running.

Run:  PYTHONPATH=src .venv/bin/python -m pytest -q -s bench/test_bench_ingest.py
 or:  PYTHONPATH=src .venv/bin/python bench/test_bench_ingest.py
"""

from __future__ import annotations

import multiprocessing
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "src")]

import pytest  # noqa: E402

from ingest_helpers import Sandbox, encode, load_pi_calls, pi_requests, pi_session_files  # noqa: E402

SESSION_COUNTS = (1, 16)
PATHS = ("ingest", "client")


def workload(sessions: int, tag: str) -> tuple[list[list[dict]], int]:
    """Requests per session (calls dealt round-robin) and the number of calls."""
    calls = [c for path in pi_session_files() for c in load_pi_calls(path)]
    shards: list[list[dict]] = [[] for _ in range(sessions)]
    for index, call in enumerate(calls):
        k = index % sessions
        sess = {"agent": "pi", "account": "bench", "sourceSessionId": f"{tag}-{k}"}
        shards[k].extend(pi_requests(call, sess))
    return shards, len(calls)


def _warmup(sess_id: str) -> dict:
    return {"operation": "begin_call", "session": {"agent": "pi", "account": "bench", "sourceSessionId": sess_id},
            "call": {"sourceCallId": "warmup", "toolName": "noop", "startedAtMs": 1, "requiresStreams": False},
            "inputBefore": {}, "inputAfter": {}, "capturedAtMs": 1}


def run_ingest(sb: Sandbox, shards: list[list[dict]]) -> tuple[float, list[float]]:
    frames = []
    for k, shard in enumerate(shards):
        frames.append([encode({"requestId": i + 1, "schemaVersion": 1, **req}) for i, req in enumerate(shard)])
    bridges = [sb.ingest() for _ in shards]
    for k, bridge in enumerate(bridges):
        assert bridge.request(_warmup(f"warm-{k}"), timeout=30)["ok"]
        bridge.next_id = 1
    latencies: list[list[float]] = [[] for _ in shards]
    barrier = threading.Barrier(len(shards) + 1)
    failures: list = []

    def drive(k: int) -> None:
        bridge, out = bridges[k], latencies[k]
        barrier.wait()
        for data in frames[k]:
            t0 = time.perf_counter()
            bridge.send_raw(data)
            reply = bridge.ack(timeout=60)
            out.append(time.perf_counter() - t0)
            if not reply["ok"]:
                failures.append(reply)

    threads = [threading.Thread(target=drive, args=(k,)) for k in range(len(shards))]
    for t in threads:
        t.start()
    barrier.wait()
    start = time.perf_counter()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - start
    for bridge in bridges:
        assert bridge.wait() == 0
    assert failures == []
    return elapsed, [x for per in latencies for x in per]


def _client_worker(env: dict, archive: str, shard: list[dict], warm_id: str, barrier, queue) -> None:
    from yarp.wire import validation as validate
    from yarp.clients.broker import BrokerClient
    from yarp.paths import ArchiveLocation

    operations = [validate.parse_operation(req) for req in shard]
    out = []
    with BrokerClient(ArchiveLocation(archive, False), env) as client:
        client.request(validate.parse_operation(_warmup(warm_id)), time.monotonic() + 30)
        barrier.wait()
        for op in operations:
            t0 = time.perf_counter()
            client.request(op, time.monotonic() + 30)
            out.append(time.perf_counter() - t0)
    queue.put(out)


def run_client(sb: Sandbox, shards: list[list[dict]]) -> tuple[float, list[float]]:
    ctx = multiprocessing.get_context("fork")
    barrier = ctx.Barrier(len(shards) + 1)
    queue = ctx.Queue()
    procs = [ctx.Process(target=_client_worker, args=(sb.env(), str(sb.archive), shard, f"warm-{k}", barrier, queue))
             for k, shard in enumerate(shards)]
    for p in procs:
        p.start()
    barrier.wait()
    start = time.perf_counter()
    results = [queue.get(timeout=300) for _ in procs]
    elapsed = time.perf_counter() - start
    for p in procs:
        p.join()
        assert p.exitcode == 0
    return elapsed, [x for per in results for x in per]


def measure(path: str, sessions: int, root: Path) -> dict:
    from yarp.clients.broker import BrokerClient
    from yarp.paths import ArchiveLocation
    from yarp.wire import validation as validate

    shards, calls = workload(sessions, f"{path}-{sessions}")
    sb = Sandbox.create(root / f"{path}-{sessions}", idle_ms=5000)
    try:
        # Keep one connection open so the broker is up (and stays up) before timing starts.
        keeper = BrokerClient(ArchiveLocation(str(sb.archive), False), sb.env())
        keeper.request(validate.parse_operation(_warmup("keeper")), time.monotonic() + 30)
        elapsed, lat = (run_ingest if path == "ingest" else run_client)(sb, shards)
        keeper.close()
        stored = sb.query("SELECT count(*) FROM tool_calls WHERE source_call_id <> 'warmup'")[0][0]
        assert stored == calls
    finally:
        sb.close()
    lat.sort()
    return {
        "path": path, "sessions": sessions, "calls": calls, "requests": len(lat), "seconds": round(elapsed, 3),
        "calls_per_s": round(calls / elapsed, 1), "requests_per_s": round(len(lat) / elapsed, 1),
        "p50_ms": round(lat[len(lat) // 2] * 1000, 3), "p99_ms": round(lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1000, 3),
    }


def table(rows: list[dict]) -> str:
    head = f"{'path':<8}{'sessions':>9}{'calls':>7}{'requests':>10}{'calls/s':>10}{'req/s':>10}{'p50 ms':>9}{'p99 ms':>9}"
    lines = [head]
    for r in sorted(rows, key=lambda r: (r["sessions"], r["path"] != "ingest")):
        lines.append(f"{r['path']:<8}{r['sessions']:>9}{r['calls']:>7}{r['requests']:>10}{r['calls_per_s']:>10}"
                     f"{r['requests_per_s']:>10}{r['p50_ms']:>9}{r['p99_ms']:>9}")
    return "\n".join(lines)


_ROWS: list[dict] = []


@pytest.fixture(scope="module", autouse=True)
def _print_table():
    yield
    if _ROWS:
        print("\n" + table(_ROWS))


@pytest.mark.skipif(not pi_session_files(), reason="recorded Pi sessions are not available")
@pytest.mark.parametrize("sessions", SESSION_COUNTS)
@pytest.mark.parametrize("path", PATHS)
def test_ingest_throughput(benchmark, tmp_path, path, sessions):
    row = benchmark.pedantic(measure, args=(path, sessions, tmp_path), rounds=1, iterations=1)
    benchmark.extra_info.update(row)
    _ROWS.append(row)
    assert row["requests"] > row["calls"]


if __name__ == "__main__":
    if not pi_session_files():
        sys.exit("recorded Pi sessions are not available")
    with tempfile.TemporaryDirectory() as tmp:
        rows = [measure(path, n, Path(tmp)) for n in SESSION_COUNTS for path in PATHS]
    print(table(rows))
