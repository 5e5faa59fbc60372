"""Load generator for the archive broker, with its two baselines in the same run.

    python bench/load.py --clients 1 8 64 --calls 100 --payload 1k 16k 64k
    python bench/load.py --raw-clients 32 --raw-payload 1k 16k --raw-calls 300
    python bench/load.py --clients 1 8 64 --calls 20 --payload 1k 64k 1m --pool thread process --no-baselines

For every (clients, payload) pair it runs, each against a fresh archive with
the same schema and pragmas:

* broker  — N client processes, each capturing complete calls through the
  broker (begin_call → result_before → finish_call, each acknowledged before
  the next): calls/s, ack latency p50/p99, broker CPU and peak RSS (from
  /proc, including pool workers), and an audit of the archive afterwards:
  every acknowledged archiveRef present, every call finished with its four
  snapshots, no failed or lost capture.
* ceiling — one in-process writer applying the same prepared operations
  with `ArchiveStore.apply_batch`, 32 per transaction (no socket, no pool).
* direct  — N processes opening the archive themselves, one transaction per
  operation, busy_timeout=250: "database is locked" failures (retried until
  a 5 s give-up, then counted lost) and per-process starvation (slowest
  process's calls/s over the fastest's).

`--ingest-clients` measures what an agent adapter sees: N sessions, each
driving its own `yarp archive ingest` bridge with Pi-shaped calls
(begin_call → result_before → stage_result → update_final_result, each
acknowledged before the next), side by side with two direct-writer
baselines doing the same four operations straight into a spec-schema SQLite
file: `direct_call` (one transaction per call) and `direct_op` (one
transaction per operation). It reports calls/s, p50/p99 per call, the
slowest session's rate over the fastest's, the bridges' and the broker's own
CPU per request in steady state (from /proc, sampled after each bridge's
first acknowledgement and before its stdin closes), and the bridge's
start-up CPU (its own rusage for a start, connect and clean exit).

`--raw-clients` adds the raw broker rate: K processes sending begin_call
requests back to back (1 KiB / 16 KiB inputs), requests/s, with the clients'
own CPU per request. Broker and raw rows also report how busy the whole
machine was (`machine_busy_pct`, 100 = every core), since the clients share
the cores with the broker.

Everything runs under /tmp in a private runtime directory; nothing here
touches the user's archive. Results print as a table and, with `--json`,
as one JSON document.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "src"))

from yarp.wire import operations as ops  # noqa: E402
from yarp.paths import ArchiveLocation  # noqa: E402

_WORDS = (
    "error warning ok test build src lib main func return value index match line file path module "
    "import self none true false config cache result status commit branch diff merge request"
).split()
_CTX = multiprocessing.get_context("fork")
_TICK = os.sysconf("SC_CLK_TCK")


def parse_size(text: str) -> int:
    text = text.lower()
    mult = {"k": 1024, "m": 1024 * 1024}.get(text[-1], 1)
    return int(text[:-1] if text[-1] in "km" else text) * mult


def make_text(size: int, rng: random.Random) -> str:
    """Tool-output-like text: short lines of common words and numbers (compresses ~3x)."""
    parts: list[str] = []
    n = 0
    while n < size:
        line = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(3, 12))) + f" {rng.randint(0, 99999)}\n"
        parts.append(line)
        n += len(line)
    return "".join(parts)[:size]


def call_ops(worker: int, i: int, size: int, rng: random.Random) -> list:
    sess = ops.Session("bench", "load", f"w{worker}")
    cid = f"c{worker}-{i}"
    inp = {"command": "run", "args": make_text(max(16, size // 4), rng)}
    res = {"content": [{"type": "text", "text": make_text(size, rng)}]}
    fin = {"content": [{"type": "text", "text": make_text(max(16, size // 8), rng)}]}
    return [
        ops.BeginCall(sess, ops.CallMeta(cid, "bash", 1, False), inp, inp, 2),
        ops.ResultBefore(sess, cid, res, 3),
        ops.FinishCall(sess, cid, fin, False, True, 4),
    ]


#: Extra broker environment (`--env KEY=VALUE`), e.g. YARP_BROKER_INLINE_BYTES=0.
EXTRA_ENV: dict[str, str] = {}


class Env:
    def __init__(self, pool: str | None = None) -> None:
        self.root = tempfile.mkdtemp(prefix="yrl", dir="/tmp")
        os.chmod(self.root, 0o700)
        for d in ("r", "a"):
            os.mkdir(os.path.join(self.root, d), 0o700)
        self.environ = dict(os.environ)
        self.environ["XDG_RUNTIME_DIR"] = os.path.join(self.root, "r")
        self.environ["YARP_BROKER_IDLE_MS"] = "600000"
        self.environ["PYTHONPATH"] = os.path.join(os.path.dirname(HERE), "src")
        if pool:
            self.environ["YARP_BROKER_POOL"] = pool
        self.environ.update(EXTRA_ENV)
        self.location = ArchiveLocation(os.path.join(self.root, "a", "tool-calls.sqlite3"), False)

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> "Env":
        return self

    def __exit__(self, *exc) -> None:
        """Stop the broker the measurement started, if any, and remove its directory."""
        stop_broker(self)
        self.close()


# --- /proc -------------------------------------------------------------------


def _children(pid: int) -> list[int]:
    out = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                out.extend(int(x) for x in f.read().split())
    except OSError:
        pass
    return out


def _tree(pid: int) -> list[int]:
    pids, todo = [], [pid]
    while todo:
        p = todo.pop()
        pids.append(p)
        todo.extend(_children(p))
    return pids


def cpu_seconds(pid: int) -> float:
    total = 0
    for p in _tree(pid):
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except (OSError, IndexError):
            pass
    return total / _TICK


def rss_mib(pid: int, key: str = "VmHWM") -> float:
    total = 0
    for p in _tree(pid):
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith(key + ":"):
                        total += int(line.split()[1])
        except OSError:
            pass
    return round(total / 1024, 1)


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2)


def _race(target, clients: int, worker_args, pid: int | None = None, timeout: float = 900):
    """Start `clients` worker processes, release them together, collect their results.

    Returns (results, wall seconds, CPU seconds of process `pid` and its
    children over the race, busy CPU seconds of the whole machine).
    """
    barrier = _CTX.Barrier(clients + 1)
    out = _CTX.Queue()
    procs = [_CTX.Process(target=target, args=(*worker_args(w), barrier, out)) for w in range(clients)]
    for p in procs:
        p.start()
    barrier.wait()
    cpu0 = cpu_seconds(pid) if pid else 0.0
    busy0 = _machine_busy()
    t0 = time.perf_counter()
    results = [out.get(timeout=timeout) for _ in procs]
    wall = time.perf_counter() - t0
    cpu = cpu_seconds(pid) - cpu0 if pid else 0.0
    busy = _machine_busy() - busy0
    for p in procs:
        p.join()
    return results, wall, cpu, busy


# --- broker clients ---------------------------------------------------------------


def _broker_worker(env: Env, worker: int, calls: int, size: int, barrier, out) -> None:
    os.environ.update(env.environ)
    from yarp.clients.broker import BrokerClient

    rng = random.Random(worker)
    work = [call_ops(worker, i, size, rng) for i in range(calls)]
    lat: list[float] = []
    refs: list[tuple[str, str]] = []
    failures = 0
    codes: dict[str, int] = {}
    client = BrokerClient(env.location, env.environ)
    client.connect(time.monotonic() + 10)
    barrier.wait()
    t0 = time.perf_counter()
    for triple in work:
        for op in triple:
            s = time.perf_counter()
            try:
                reply = client.request(op, time.monotonic() + 30)
            except Exception as exc:
                failures += 1
                code = getattr(exc, "code", type(exc).__name__)
                codes[code] = codes.get(code, 0) + 1
                continue
            lat.append((time.perf_counter() - s) * 1000)
            if isinstance(op, ops.BeginCall):
                refs.append((op.call.source_call_id, reply["archiveRef"]))
    elapsed = time.perf_counter() - t0
    client.close()
    out.put({"worker": worker, "lat": lat, "refs": refs, "failures": failures, "codes": codes, "elapsed": elapsed})


def run_broker(env: Env, clients: int, calls: int, size: int) -> dict:
    from yarp.clients.broker import BrokerClient

    os.environ.update(env.environ)
    with BrokerClient(env.location, env.environ) as c:
        status = c.status(time.monotonic() + 5) if c.try_connect(time.monotonic() + 1) else None
        if status is None:
            c.request(ops.BeginCall(ops.Session("bench", "load", "warm"), ops.CallMeta("warm", "t", 1, False), {}, {}, 1),
                      time.monotonic() + 10)
            status = c.status(time.monotonic() + 5)
    pid = status["pid"]
    results, wall, cpu, busy = _race(_broker_worker, clients, lambda w: (env, w, calls, size), pid, 600)
    with BrokerClient(env.location, env.environ) as c:
        st = c.status(time.monotonic() + 5)
    lat = [x for r in results for x in r["lat"]]
    per_proc = [calls / r["elapsed"] for r in results]
    audit = audit_archive(env, [ref for r in results for ref in r["refs"]], clients * calls)
    return {
        "mode": "broker",
        "calls_per_s": round(clients * calls / wall, 1),
        "ops_per_s": round(len(lat) / wall, 1),
        "ack_p50_ms": pct(lat, 0.50),
        "ack_p99_ms": pct(lat, 0.99),
        "failed": sum(r["failures"] for r in results),
        "errors": _merge_codes(results),
        "lost": audit["lost"],
        "broker_restarted": st["pid"] != pid,
        "starvation": round(min(per_proc) / max(per_proc), 2),
        "broker_cpu_s": round(cpu, 2),
        "broker_cpu_pct": round(100 * cpu / wall, 1),
        "broker_cpu_us_per_op": round(1e6 * cpu / max(1, len(lat)), 1),
        "broker_rss_mib": rss_mib(pid),
        "machine_busy_pct": round(100 * busy / (wall * (os.cpu_count() or 1)), 1),
        "batches": st["batches"],
        "requests": st["requests"],
        "commit_p50_ms": st["commitLatencyMsP50"],
        "commit_p99_ms": st["commitLatencyMsP99"],
        "pool": st["pool"],
        "inline": st.get("inlineBytes"),
        "audit": audit["ok"],
    }


def _merge_codes(results: list[dict]) -> str:
    merged: dict[str, int] = {}
    for r in results:
        for code, n in r.get("codes", {}).items():
            merged[code] = merged.get(code, 0) + n
    return ",".join(f"{k}:{v}" for k, v in sorted(merged.items())) or "-"


def audit_archive(env: Env, refs: list[tuple[str, str]], expected_calls: int) -> dict:
    db = sqlite3.connect(f"file:{env.location.path}?mode=ro", uri=True)
    try:
        stored = dict(db.execute("SELECT source_call_id, archive_ref FROM tool_calls WHERE status = 'finished'"))
        snaps = dict(db.execute("SELECT tool_call_id, count(*) FROM snapshots GROUP BY tool_call_id"))
        ids = dict(db.execute("SELECT source_call_id, id FROM tool_calls"))
        fk = db.execute("PRAGMA foreign_key_check").fetchall()
    finally:
        db.close()
    lost = sum(1 for cid, ref in refs if stored.get(cid) != ref or snaps.get(ids.get(cid)) != 4)
    lost += expected_calls - len(refs)
    return {"lost": lost, "ok": lost == 0 and not fk}


# --- baselines -------------------------------------------------------------------------


def run_ceiling(env: Env, clients: int, calls: int, size: int) -> dict:
    from yarp.archive.prepare import prepare
    from yarp.archive.store import ArchiveStore

    store = ArchiveStore.open(env.location)
    prepared = []
    for w in range(clients):
        rng = random.Random(w)
        for i in range(calls):
            prepared.extend(prepare(op) for op in call_ops(w, i, size, rng))
    t0 = time.perf_counter()
    for i in range(0, len(prepared), 32):
        store.apply_batch(prepared[i : i + 32])
    wall = time.perf_counter() - t0
    store.close()
    return {"mode": "ceiling", "calls_per_s": round(clients * calls / wall, 1), "ops_per_s": round(len(prepared) / wall, 1)}


def _direct_worker(env: Env, worker: int, calls: int, size: int, barrier, out) -> None:
    from yarp.errors import ArchiveBusy
    from yarp.archive.prepare import prepare
    from yarp.archive.store import ArchiveStore

    rng = random.Random(worker)
    work = [call_ops(worker, i, size, rng) for i in range(calls)]
    store = ArchiveStore.open(env.location)
    locked = lost = 0
    lat: list[float] = []
    barrier.wait()
    t0 = time.perf_counter()
    for triple in work:
        for op in triple:
            s = time.perf_counter()
            give_up = time.monotonic() + 5
            while True:
                try:
                    store.apply(prepare(op))
                    lat.append((time.perf_counter() - s) * 1000)
                    break
                except ArchiveBusy:
                    locked += 1
                    if time.monotonic() > give_up:
                        lost += 1
                        break
                except Exception:
                    lost += 1
                    break
    elapsed = time.perf_counter() - t0
    store.close()
    out.put({"locked": locked, "lost": lost, "lat": lat, "elapsed": elapsed})


def run_direct(env: Env, clients: int, calls: int, size: int) -> dict:
    from yarp.archive.store import ArchiveStore

    ArchiveStore.open(env.location).close()  # schema exists before the race
    results, wall, _, _ = _race(_direct_worker, clients, lambda w: (env, w, calls, size))
    lat = [x for r in results for x in r["lat"]]
    per_proc = [calls / r["elapsed"] for r in results]
    return {
        "mode": "direct",
        "calls_per_s": round(clients * calls / wall, 1),
        "ops_per_s": round(len(lat) / wall, 1),
        "ack_p50_ms": pct(lat, 0.50),
        "ack_p99_ms": pct(lat, 0.99),
        "locked_errors": sum(r["locked"] for r in results),
        "lost": sum(r["lost"] for r in results),
        "starvation": round(min(per_proc) / max(per_proc), 2),
    }


# --- sessions through `yarp archive ingest` ------------------------------------------------


def pi_call_ops(worker: int, i: int, size: int, rng: random.Random) -> list:
    """One Pi-shaped call: the four operations an adapter sends for a captured tool call."""
    sess = ops.Session("bench", "load", f"w{worker}")
    cid = f"c{worker}-{i}"
    inp = {"command": "run", "args": make_text(max(16, size // 4), rng)}
    res = {"content": [{"type": "text", "text": make_text(size, rng)}], "details": None, "isError": False}
    fin = {"content": [{"type": "text", "text": make_text(max(16, size // 8), rng)}], "details": None,
           "isError": False}
    return [
        ops.BeginCall(sess, ops.CallMeta(cid, "bash", 1, False), inp, inp, 2),
        ops.ResultBefore(sess, cid, res, 3),
        ops.StageResult(sess, cid, fin, False, 4),
        ops.UpdateFinalResult(sess, cid, fin, False, 5),
    ]


def ingest_frame(op, request_id: int, deadline: bool = True) -> bytes:
    """The adapter's frame for `op` (begin_call with an absolute deadline 2 s ahead, as Pi sends it)."""
    import orjson

    obj = ops.operation_to_json(op)
    obj["requestId"] = request_id
    obj["schemaVersion"] = 1
    if op.kind == "begin_call" and deadline:
        obj["deadlineAtMs"] = int(time.time() * 1000) + 2000
    body = orjson.dumps(obj)
    return len(body).to_bytes(8, "big") + body


#: How an installed `yarp` console script starts (`-m` would add runpy's own imports).
CONSOLE_SCRIPT = ("-c", "import sys; from yarp.cli import main; sys.exit(main())")


def bridge_command(env: Env) -> list[str]:
    return [sys.executable, *CONSOLE_SCRIPT, "archive", "ingest", "--archive", env.location.path]


def _proc_cpu(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


def _ingest_worker(env: Env, worker: int, calls: int, size: int, barrier, out) -> None:
    rng = random.Random(worker)
    work = [pi_call_ops(worker, i, size, rng) for i in range(calls)]
    bridge = subprocess.Popen(bridge_command(env), stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env.environ)
    stdin, stdout = bridge.stdin, bridge.stdout
    warm = ops.BeginCall(ops.Session("bench", "load", f"warm{worker}"), ops.CallMeta("warm", "bash", 1, False),
                         {}, {}, 1)
    # No deadline on the warm-up: 16 bridges starting at once on a loaded
    # machine may read it more than 2 s after it was written.
    stdin.write(ingest_frame(warm, 1, deadline=False))
    stdin.flush()
    stdout.readline()
    barrier.wait()
    import orjson

    cpu0 = _proc_cpu(bridge.pid)
    lat: list[float] = []
    refs: list[tuple[str, str]] = []
    failures = 0
    codes: dict[str, int] = {}
    request_id = 1
    t0 = time.perf_counter()
    for call in work:
        s = time.perf_counter()
        ok = True
        for op in call:
            request_id += 1
            stdin.write(ingest_frame(op, request_id))
            stdin.flush()
            ack = orjson.loads(stdout.readline() or b'{"ok":false,"error":"bridge exited"}')
            if not ack["ok"]:
                ok = False
                failures += 1
                code = str(ack.get("error", "?"))[:40]
                codes[code] = codes.get(code, 0) + 1
                break
            if op.kind == "begin_call":
                refs.append((op.call.source_call_id, ack["archiveRef"]))
        if ok:
            lat.append((time.perf_counter() - s) * 1000)
    elapsed = time.perf_counter() - t0
    cpu = _proc_cpu(bridge.pid) - cpu0
    stdin.close()
    status = bridge.wait(30)
    out.put({"lat": lat, "refs": refs, "failures": failures, "codes": codes, "elapsed": elapsed,
             "bridge_cpu": cpu, "requests": request_id - 1, "status": status})


def _broker_pid(env: Env) -> int:
    from yarp.clients.broker import BrokerClient

    os.environ.update(env.environ)
    with BrokerClient(env.location, env.environ) as c:
        c.request(ops.BeginCall(ops.Session("bench", "load", "warm"), ops.CallMeta("warm", "t", 1, False), {}, {}, 1),
                  time.monotonic() + 10)
        return c.status(time.monotonic() + 5)["pid"]


def run_ingest(env: Env, clients: int, calls: int, size: int) -> dict:
    pid = _broker_pid(env)
    results, wall, cpu, busy = _race(_ingest_worker, clients, lambda w: (env, w, calls, size), pid)
    lat = [x for r in results for x in r["lat"]]
    requests = sum(r["requests"] for r in results)
    bridge_cpu = sum(r["bridge_cpu"] for r in results)
    per_proc = [calls / r["elapsed"] for r in results]
    audit = audit_archive(env, [ref for r in results for ref in r["refs"]], clients * calls)
    return {
        "mode": "ingest",
        "calls_per_s": round(clients * calls / wall, 1),
        "call_p50_ms": pct(lat, 0.50),
        "call_p99_ms": pct(lat, 0.99),
        "failed": sum(r["failures"] for r in results),
        "errors": _merge_codes(results),
        "lost": audit["lost"],
        "bridge_exit": ",".join(sorted({str(r["status"]) for r in results})),
        "starvation": round(min(per_proc) / max(per_proc), 2),
        "bridge_cpu_us_per_req": round(1e6 * bridge_cpu / max(1, requests), 1),
        "broker_cpu_us_per_req": round(1e6 * cpu / max(1, requests), 1),
        "total_cpu_us_per_req": round(1e6 * (bridge_cpu + cpu) / max(1, requests), 1),
        "machine_busy_pct": round(100 * busy / (wall * (os.cpu_count() or 1)), 1),
        "audit": audit["ok"],
    }


def bridge_startup(env: Env, samples: int) -> dict:
    """A bridge's own CPU for start-up, connecting to a running broker and a clean exit at EOF."""
    _broker_pid(env)
    cpu = []
    for _ in range(samples):
        proc = subprocess.Popen(bridge_command(env), stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                env=env.environ)
        proc.stdin.close()
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        cpu.append((usage.ru_utime + usage.ru_stime) * 1000)
    return {"mode": "bridge_startup", "cpu_ms_median": round(statistics.median(cpu), 1),
            "cpu_ms_min": round(min(cpu), 1), "cpu_ms_max": round(max(cpu), 1), "samples": samples}


def _direct_call_worker(env: Env, worker: int, calls: int, size: int, per_op: bool, barrier, out) -> None:
    from yarp.errors import ArchiveBusy
    from yarp.archive.prepare import prepare
    from yarp.archive.store import ArchiveStore

    rng = random.Random(worker)
    work = [pi_call_ops(worker, i, size, rng) for i in range(calls)]
    store = ArchiveStore.open(env.location)
    locked = lost = 0
    lat: list[float] = []
    barrier.wait()
    t0 = time.perf_counter()
    for call in work:
        s = time.perf_counter()
        batches = [[op] for op in call] if per_op else [call]
        failed = False
        for batch in batches:
            give_up = time.monotonic() + 5
            while True:
                try:
                    results = store.apply_batch([prepare(op) for op in batch])
                    if any(isinstance(r, Exception) for r in results):
                        failed = True
                    break
                except ArchiveBusy:
                    locked += 1
                    if time.monotonic() > give_up:
                        failed = True
                        break
                except Exception:
                    failed = True
                    break
        if failed:
            lost += 1
        else:
            lat.append((time.perf_counter() - s) * 1000)
    elapsed = time.perf_counter() - t0
    store.close()
    out.put({"locked": locked, "lost": lost, "lat": lat, "elapsed": elapsed})


def run_direct_calls(env: Env, clients: int, calls: int, size: int, per_op: bool) -> dict:
    from yarp.archive.store import ArchiveStore

    ArchiveStore.open(env.location).close()  # schema exists before the race
    results, wall, _, _ = _race(_direct_call_worker, clients, lambda w: (env, w, calls, size, per_op))
    lat = [x for r in results for x in r["lat"]]
    per_proc = [calls / r["elapsed"] for r in results]
    return {
        "mode": "direct_op" if per_op else "direct_call",
        "calls_per_s": round(clients * calls / wall, 1),
        "call_p50_ms": pct(lat, 0.50),
        "call_p99_ms": pct(lat, 0.99),
        "locked_errors": sum(r["locked"] for r in results),
        "lost": sum(r["lost"] for r in results),
        "starvation": round(min(per_proc) / max(per_proc), 2),
    }


# --- raw request rate -----------------------------------------------------------------------


def _raw_worker(env: Env, worker: int, count: int, size: int, barrier, out) -> None:
    os.environ.update(env.environ)
    from yarp.clients.broker import BrokerClient

    rng = random.Random(worker)
    sess = ops.Session("bench", "raw", f"w{worker}")
    text = make_text(size, rng)
    work = [ops.BeginCall(sess, ops.CallMeta(f"r{worker}-{i}", "bash", 1, False), {"i": i, "t": text}, {"i": i, "t": text}, 1)
            for i in range(count)]
    client = BrokerClient(env.location, env.environ)
    client.connect(time.monotonic() + 10)
    barrier.wait()
    lat = []
    failures = 0
    cpu0 = time.process_time()
    for op in work:
        s = time.perf_counter()
        try:
            client.request(op, time.monotonic() + 30)
            lat.append((time.perf_counter() - s) * 1000)
        except Exception:
            failures += 1
    cpu = time.process_time() - cpu0
    client.close()
    out.put({"lat": lat, "failures": failures, "cpu": cpu})


def run_raw(env: Env, clients: int, count: int, size: int) -> dict:
    os.environ.update(env.environ)
    from yarp.clients.broker import BrokerClient

    with BrokerClient(env.location, env.environ) as c:
        c.request(ops.BeginCall(ops.Session("bench", "raw", "warm"), ops.CallMeta("warm", "t", 1, False), {}, {}, 1),
                  time.monotonic() + 10)
        pid = c.status(time.monotonic() + 5)["pid"]
    results, wall, cpu, busy = _race(_raw_worker, clients, lambda w: (env, w, count, size), pid, 600)
    with BrokerClient(env.location, env.environ) as c:
        st = c.status(time.monotonic() + 5)
    lat = [x for r in results for x in r["lat"]]
    return {
        "mode": "raw",
        "requests_per_s": round(len(lat) / wall, 1),
        "ack_p50_ms": pct(lat, 0.5),
        "ack_p99_ms": pct(lat, 0.99),
        "failed": sum(r["failures"] for r in results),
        "broker_cpu_pct": round(100 * cpu / wall, 1),
        "broker_cpu_us_per_req": round(1e6 * cpu / max(1, len(lat)), 1),
        # The clients share the machine with the broker: their own CPU per
        # request, and how busy all cores were (100 % = every core).
        "clients_cpu_us_per_req": round(1e6 * sum(r["cpu"] for r in results) / max(1, len(lat)), 1),
        "machine_busy_pct": round(100 * busy / (wall * (os.cpu_count() or 1)), 1),
        "mean_batch": round(st["requests"] / max(1, st["batches"]), 1),
        "pool": st["pool"],
        "inline": st.get("inlineBytes"),
    }


def _machine_busy() -> float:
    """Seconds of CPU time all cores have spent busy since boot (from /proc/stat)."""
    with open("/proc/stat") as handle:
        fields = [int(x) for x in handle.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return (sum(fields[:8]) - idle) / _TICK


def stop_broker(env: Env) -> None:
    from yarp.clients.broker import BrokerClient

    try:
        with BrokerClient(env.location, env.environ) as c:
            if c.try_connect(time.monotonic() + 1):
                pid = c.status(time.monotonic() + 2)["pid"]
                os.kill(pid, 15)
                for _ in range(500):
                    try:
                        with open(f"/proc/{pid}/stat") as f:
                            if f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                                break
                    except OSError:
                        break
                    time.sleep(0.01)
    except Exception as exc:  # the broker then idles out on its own; say so rather than hide it
        print(f"# could not stop the broker of {env.root}: {type(exc).__name__}: {exc}", flush=True)


def cold_start(samples: int) -> list[dict]:
    """Client connect → handshake answered, when no broker runs: on a fresh
    archive (schema created) and on an existing one (the usual case)."""
    from yarp.clients.broker import BrokerClient

    fresh, existing = [], []
    for _ in range(samples):
        with Env() as env:
            os.environ.update(env.environ)
            for bucket in (fresh, existing):
                c = BrokerClient(env.location, env.environ)
                t0 = time.perf_counter()
                c.connect(time.monotonic() + 10)
                bucket.append((time.perf_counter() - t0) * 1000)
                c.close()
                stop_broker(env)
    return [
        {"mode": f"cold_start_{name}", "median_ms": round(statistics.median(t), 1), "min_ms": round(min(t), 1),
         "max_ms": round(max(t), 1), "samples": samples}
        for name, t in (("fresh", fresh), ("existing", existing))
    ]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clients", type=int, nargs="*", default=[1, 8, 64])
    ap.add_argument("--calls", type=int, default=50, help="complete calls per client")
    ap.add_argument("--payload", nargs="*", default=["1k", "16k", "64k"])
    ap.add_argument("--pool", nargs="*", default=[None], help="broker pool kinds to compare (thread, process)")
    ap.add_argument("--no-baselines", action="store_true")
    ap.add_argument("--raw-clients", type=int, default=0)
    ap.add_argument("--raw-calls", type=int, default=300, help="requests per raw client")
    ap.add_argument("--raw-payload", nargs="*", default=["1k", "16k"])
    ap.add_argument("--ingest-clients", type=int, nargs="*", default=[],
                    help="sessions driving their own `yarp archive ingest`, beside both direct baselines")
    ap.add_argument("--ingest-calls", type=int, default=100, help="complete calls per ingest session")
    ap.add_argument("--ingest-payload", nargs="*", default=["1k"])
    ap.add_argument("--bridge-startup", type=int, default=0, help="samples of bridge start-up CPU")
    ap.add_argument("--cold-start", type=int, default=0, help="samples of cold start to ready")
    ap.add_argument("--env", action="append", default=[], metavar="KEY=VALUE", help="extra broker environment")
    ap.add_argument("--json", help="write all results to this file")
    args = ap.parse_args(argv)
    # Measure what an installed package runs: byte-compiled modules, whatever
    # PYTHONDONTWRITEBYTECODE says (it would make every child compile every module).
    import compileall

    compileall.compile_dir(os.path.join(os.path.dirname(HERE), "src"), quiet=1)
    for item in args.env:
        key, _, value = item.partition("=")
        EXTRA_ENV[key] = value

    rows = []

    def show(row: dict) -> None:
        rows.append(row)
        print(" ".join(f"{k}={v}" for k, v in row.items()), flush=True)

    if args.cold_start:
        for row in cold_start(args.cold_start):
            show(row)
    for payload in args.payload if args.clients else []:
        size = parse_size(payload)
        for n in args.clients:
            for pool in args.pool:
                with Env(pool) as env:
                    show({"clients": n, "payload": payload, **run_broker(env, n, args.calls, size)})
            if args.no_baselines:
                continue
            for runner in (run_ceiling, run_direct):
                with Env() as env:
                    show({"clients": n, "payload": payload, **runner(env, n, args.calls, size)})
    if args.bridge_startup:
        with Env() as env:
            show(bridge_startup(env, args.bridge_startup))
    for payload in args.ingest_payload if args.ingest_clients else []:
        size = parse_size(payload)
        for n in args.ingest_clients:
            with Env() as env:
                show({"clients": n, "payload": payload, **run_ingest(env, n, args.ingest_calls, size)})
            if args.no_baselines:
                continue
            for per_op in (False, True):
                with Env() as env:
                    show({"clients": n, "payload": payload, **run_direct_calls(env, n, args.ingest_calls, size, per_op)})
    if args.raw_clients:
        for payload in args.raw_payload:
            for pool in args.pool:
                with Env(pool) as env:
                    show({"clients": args.raw_clients, "payload": payload,
                          **run_raw(env, args.raw_clients, args.raw_calls, parse_size(payload))})
    if args.json:
        import json

        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
