"""Load generator for the archive broker, with its two baselines in the same run.

    python bench/load.py --clients 1 8 64 --calls 100 --payload 1k 16k 64k
    python bench/load.py --raw-clients 32 --raw-payload 1k 16k --raw-calls 300
    python bench/load.py --clients 1 8 64 --calls 20 --payload 1k 64k 1m --pool thread process --no-baselines
    python bench/load.py --clients --ingest-clients 16 --flush-delay-ms 0 1 2 4
    python bench/load.py --clients --ceiling-clients 4 --ceiling-window 1 8

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

`naive_call` is a third baseline beside them: N processes doing what a
simple tool would do, one transaction per call, writing the same calls' rows
into a spec-schema SQLite file as plain `json.dumps` text (no canonical JSON,
no compression decision; the payload key is SHA-256 over those bytes).
`--ingest-baselines` picks which baselines run.

`--flush-delay-ms 0 2 4` runs every chosen comparison once per regime: 0 is
the machine as it is; otherwise `bench/slow_flush.c`, compiled with gcc at
run time, is preloaded (LD_PRELOAD) into every process that writes an
archive — the broker the clients start, the direct and naive writers — and
sleeps that long before each real fsync/fdatasync, so every flush still
reaches the disk, only later. Each regime runs in a fresh child process of
this tool started with the preload, after the previous regime's brokers are
stopped; it starts with a `flush_check` row (fsync and SQLite commit times as
measured under the preload) and every writer row says whether the preload was
mapped in its processes. A side-by-side table ends the run.

`--ceiling-clients K` measures the broker's ceiling with a client that spends
almost no CPU: `bench/load_client.c`, compiled at run time, over K
connections (one process each), sending pre-encoded begin_call frames
(`--ceiling-bytes`, 1 KiB by default) one at a time or `--ceiling-window W`
unacknowledged; requests/s, the broker's and the clients' CPU per request,
failures, and an audit of the archive's rows.

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


# --- compiled helpers: the flush-delay shim and the C load client ------------------------

#: Where this run's compiled helpers live (a private temporary directory), once built.
TOOLS: dict[str, str] = {}
#: The preloaded shim's path in a flush-delay regime ("" in the machine-as-is regime).
SHIM_ENV = "YARP_BENCH_SHIM"
DELAY_ENV = "YARP_BENCH_FLUSH_DELAY_US"


def build_tool(name: str, directory: str) -> str | None:
    """Compile `bench/<name>.c` into `directory` with gcc; None (and a message) when it cannot.

    `slow_flush` becomes a shared library for LD_PRELOAD, `load_client` a program.
    """
    if name in TOOLS:
        return TOOLS[name]
    gcc = shutil.which("gcc")
    if gcc is None:
        print(f"# gcc not found: cannot build bench/{name}.c; skipping what needs it", flush=True)
        return None
    source = os.path.join(HERE, f"{name}.c")
    if name == "slow_flush":
        target = os.path.join(directory, "slow_flush.so")
        cmd = [gcc, "-shared", "-fPIC", "-O2", "-o", target, source, "-ldl"]
    else:
        target = os.path.join(directory, name)
        cmd = [gcc, "-O2", "-o", target, source]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        print(f"# gcc failed on bench/{name}.c; skipping what needs it:\n{done.stderr.strip()}", flush=True)
        return None
    TOOLS[name] = target
    return target


def expected_shim() -> str:
    """The shim every archive writer of this regime must have loaded, or "" when none is preloaded."""
    return os.environ.get(SHIM_ENV, "")


def shim_mapped(pid: int | str = "self") -> bool:
    """Whether the flush-delay shim is mapped into process `pid`."""
    shim = expected_shim()
    try:
        with open(f"/proc/{pid}/maps") as f:
            return bool(shim) and shim in f.read()
    except OSError:
        return False


def preload_status(pid: int) -> str:
    """"-" outside a flush-delay regime, else "yes" when the broker (or writer) `pid` has the shim loaded."""
    if not expected_shim():
        return "-"
    return "yes" if shim_mapped(pid) else "NO"


def flush_check(samples: int = 40) -> dict:
    """What one fsync and one SQLite commit (WAL, synchronous = FULL) cost in this process, under
    whatever is preloaded: the proof that a regime's delay takes effect."""
    root = tempfile.mkdtemp(prefix="yrf", dir="/tmp")
    try:
        fd = os.open(os.path.join(root, "f"), os.O_CREAT | os.O_WRONLY, 0o600)
        t0 = time.perf_counter()
        for _ in range(samples):
            os.write(fd, b"x")
            os.fsync(fd)
        fsync_ms = (time.perf_counter() - t0) * 1000 / samples
        os.close(fd)
        db = sqlite3.connect(os.path.join(root, "c.sqlite3"), isolation_level=None)
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = FULL")
        db.execute("CREATE TABLE t (x)")
        t0 = time.perf_counter()
        for i in range(samples):
            db.execute("BEGIN IMMEDIATE")
            db.execute("INSERT INTO t VALUES (?)", (i,))
            db.execute("COMMIT")
        commit_ms = (time.perf_counter() - t0) * 1000 / samples
        db.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return {"mode": "flush_check", "delay_us": int(os.environ.get(DELAY_ENV, "0") or 0),
            "preloaded": shim_mapped(), "fsync_ms": round(fsync_ms, 3), "sqlite_commit_ms": round(commit_ms, 3)}


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
    preload = preload_status(pid)
    results, wall, cpu, busy = _race(_ingest_worker, clients, lambda w: (env, w, calls, size), pid)
    st = _broker_status(env)
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
        "commit_p50_ms": st.get("commitLatencyMsP50"),
        "mean_batch": round(st.get("requests", 0) / max(1, st.get("batches", 0)), 1),
        "broker_restarted": st.get("pid") != pid,
        "preload": preload,
        "audit": audit["ok"],
    }


def _broker_status(env: Env) -> dict:
    """The running broker's status, or {} when none answers."""
    from yarp.clients.broker import BrokerClient

    try:
        with BrokerClient(env.location, env.environ) as c:
            return c.status(time.monotonic() + 5)
    except Exception:
        return {}


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


def _timed_calls(work: list, units, write, busy) -> dict:
    """Each call's `units(call)` written with `write(unit)` (False: the archive refused it), each unit
    retried for up to 5 s while `busy(exc)` says the archive was locked; a call with a unit refused or
    given up on is lost. The worker's figures, without its start-up."""
    locked = lost = 0
    lat: list[float] = []
    t0 = time.perf_counter()
    for call in work:
        s = time.perf_counter()
        ok = True
        for unit in units(call):
            give_up = time.monotonic() + 5
            while True:
                try:
                    ok = write(unit)
                    break
                except Exception as exc:
                    if busy(exc):
                        locked += 1
                        if time.monotonic() <= give_up:
                            continue
                    ok = False
                    break
            if not ok:
                break
        if ok:
            lat.append((time.perf_counter() - s) * 1000)
        else:
            lost += 1
    return {"locked": locked, "lost": lost, "lat": lat, "elapsed": time.perf_counter() - t0}


def _direct_call_worker(env: Env, worker: int, calls: int, size: int, per_op: bool, barrier, out) -> None:
    from yarp.errors import ArchiveBusy
    from yarp.archive.prepare import prepare
    from yarp.archive.store import ArchiveStore

    rng = random.Random(worker)
    work = [pi_call_ops(worker, i, size, rng) for i in range(calls)]
    store = ArchiveStore.open(env.location)
    preloaded = shim_mapped()

    def write(batch) -> bool:
        return not any(isinstance(r, Exception) for r in store.apply_batch([prepare(op) for op in batch]))

    barrier.wait()
    figures = _timed_calls(work, lambda call: [[op] for op in call] if per_op else [call], write,
                           lambda exc: isinstance(exc, ArchiveBusy))
    store.close()
    out.put(figures | {"preloaded": preloaded})


def _preload_share(results: list[dict]) -> str:
    """How many of the writer processes had the flush-delay shim loaded ("-" outside a regime)."""
    if not expected_shim():
        return "-"
    return f"{sum(1 for r in results if r['preloaded'])}/{len(results)}"


def run_direct_calls(env: Env, clients: int, calls: int, size: int, per_op: bool) -> dict:
    from yarp.archive.store import ArchiveStore

    ArchiveStore.open(env.location).close()  # schema exists before the race
    results, wall, _, _ = _race(_direct_call_worker, clients, lambda w: (env, w, calls, size, per_op))
    return _writers_row("direct_op" if per_op else "direct_call", results, wall, clients * calls)


def _writers_row(mode: str, results: list[dict], wall: float, calls: int) -> dict:
    """One baseline's row from its writers' figures (`_timed_calls`): rate, latency, locks, losses, fairness."""
    lat = [x for r in results for x in r["lat"]]
    per_proc = [(len(r["lat"]) + r["lost"]) / r["elapsed"] for r in results]
    return {
        "mode": mode,
        "calls_per_s": round(calls / wall, 1),
        "call_p50_ms": pct(lat, 0.50),
        "call_p99_ms": pct(lat, 0.99),
        "locked_errors": sum(r["locked"] for r in results),
        "lost": sum(r["lost"] for r in results),
        "starvation": round(min(per_proc) / max(per_proc), 2),
        "preload": _preload_share(results),
    }


# --- the naive baseline: what a simple tool would write ------------------------------------

#: A simple tool's connection: the archive's durability (WAL, synchronous = FULL) and
#: busy timeout, SQLite's own automatic checkpoints.
NAIVE_PRAGMAS = ("PRAGMA journal_mode = WAL", "PRAGMA synchronous = FULL", "PRAGMA foreign_keys = ON",
                 "PRAGMA busy_timeout = 250")


def _naive_payload(value) -> tuple[bytes, bytes]:
    import hashlib
    import json

    body = json.dumps(value).encode()
    return hashlib.sha256(body).digest(), body


def _naive_write(conn: sqlite3.Connection, call: list) -> None:
    """One Pi-shaped call's rows in one transaction, as a simple tool would write them at the call's end:
    the session, the finished call, its four snapshots and their payloads as plain `json.dumps` text."""
    begin, before, _stage, final = call
    snaps = [("input", "before", _naive_payload(begin.input_before), begin.captured_at_ms),
             ("input", "after", _naive_payload(begin.input_after), begin.captured_at_ms),
             ("result", "before", _naive_payload(before.result), before.captured_at_ms),
             ("result", "after", _naive_payload(final.result), final.finished_at_ms)]
    sess, meta = begin.session, begin.call
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute("INSERT OR IGNORE INTO sessions (agent, account, source_session_id, started_at_ms)"
                     " VALUES (?, ?, ?, ?)", (sess.agent, sess.account, sess.source_session_id, sess.started_at_ms))
        (session_id,) = conn.execute("SELECT id FROM sessions WHERE agent = ? AND account = ? AND source_session_id = ?",
                                     (sess.agent, sess.account, sess.source_session_id)).fetchone()
        call_id = conn.execute(
            "INSERT INTO tool_calls (session_id, source_call_id, archive_ref, tool_name, provider, model,"
            " working_directory, started_at_ms, requires_streams, finished_at_ms, status, is_error, executed)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'finished', ?, 1)",
            (session_id, meta.source_call_id, "yr_" + os.urandom(16).hex(), meta.tool_name, meta.provider, meta.model,
             meta.working_directory, meta.started_at_ms, int(meta.requires_streams), final.finished_at_ms,
             int(final.is_error))).lastrowid
        for subject, stage, (digest, body), at_ms in snaps:
            conn.execute("INSERT OR IGNORE INTO payloads (sha256, compression, uncompressed_byte_length, body)"
                         " VALUES (?, 'none', ?, ?)", (digest, len(body), body))
            conn.execute("INSERT INTO snapshots (tool_call_id, subject, stage, media_type, captured_at_ms,"
                         " payload_sha256) VALUES (?, ?, ?, 'application/json', ?, ?)",
                         (call_id, subject, stage, at_ms, digest))
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _naive_worker(path: str, worker: int, calls: int, size: int, barrier, out) -> None:
    rng = random.Random(worker)
    work = [pi_call_ops(worker, i, size, rng) for i in range(calls)]
    conn = sqlite3.connect(path, isolation_level=None)
    for pragma in NAIVE_PRAGMAS:
        conn.execute(pragma)
    preloaded = shim_mapped()

    def write(call) -> bool:
        _naive_write(conn, call)
        return True

    def busy(exc: Exception) -> bool:  # SQLITE_BUSY, SQLITE_LOCKED
        return isinstance(exc, sqlite3.OperationalError) and getattr(exc, "sqlite_errorcode", 0) & 0xFF in (5, 6)

    barrier.wait()
    figures = _timed_calls(work, lambda call: [call], write, busy)
    conn.close()
    out.put(figures | {"preloaded": preloaded})


def run_naive_calls(env: Env, clients: int, calls: int, size: int) -> dict:
    from yarp.archive.schema import SCHEMA_V1

    path = os.path.join(env.root, "a", "naive.sqlite3")
    db = sqlite3.connect(path, isolation_level=None)  # the spec's schema exists before the race
    db.execute("PRAGMA journal_mode = WAL")
    db.executescript(SCHEMA_V1)
    db.close()
    results, wall, _, _ = _race(_naive_worker, clients, lambda w: (path, w, calls, size))
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        finished = db.execute("SELECT count(*) FROM tool_calls WHERE status = 'finished'").fetchone()[0]
        complete = db.execute("SELECT count(*) FROM (SELECT tool_call_id FROM snapshots GROUP BY tool_call_id"
                              " HAVING count(*) = 4)").fetchone()[0]
    finally:
        db.close()
    audit = finished == complete == clients * calls
    return _writers_row("naive_call", results, wall, clients * calls) | {"audit": audit}


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


# --- broker ceiling: a C client that spends almost no CPU ------------------------------------


def _padding(size: int) -> str:
    """`size` characters of tool-output-like text that JSON carries unescaped (no newlines)."""
    return make_text(size, random.Random(size)).replace("\n", " ")


def ceiling_frames(paths, connection: int, count: int, frame_bytes: int) -> bytes:
    """One connection's frames for `load_client`: its handshake, then `count` begin_call request
    envelopes of exactly `frame_bytes` bytes each (length header included), distinct calls of one session."""
    import json

    from yarp._version import SCHEMA, __version__
    from yarp.wire import protocol

    correlation = f"bench-ceiling-{connection}"
    hello = json.dumps({"schema": SCHEMA, "binaryVersion": __version__, "archiveId": paths.archive_id,
                        "correlationId": correlation}, separators=(",", ":")).encode()
    frames = [len(hello).to_bytes(8, "big") + hello]
    sess = ops.Session("bench", "ceiling", f"k{connection}")

    def encode(i: int, text: str, tail: str = "") -> bytes:
        inp = {"i": i, "t": text}
        op = ops.BeginCall(sess, ops.CallMeta(f"q{connection}-{i}{tail}", "bash", 1, False), inp, inp, 2)
        return protocol.envelope_frame(protocol.outgoing(op), correlation, 30000)

    for i in range(count):
        # The text appears twice (input before and after, equal); an odd byte goes to the call id.
        extra = max(0, frame_bytes - len(encode(i, "")))
        frames.append(encode(i, _padding(extra // 2), "x" * (extra % 2)))
    return b"".join(frames)


def run_broker_ceiling(env: Env, clients: int, count: int, window: int, frame_bytes: int) -> dict:
    """K `load_client` processes, one connection each, `count` begin_calls each with at most `window` unacknowledged."""
    from yarp.clients.broker import BrokerClient

    client_bin = TOOLS["load_client"]
    pid = _broker_pid(env)
    preload = preload_status(pid)
    paths = BrokerClient(env.location, env.environ).paths
    procs = []
    for k in range(clients):
        path = os.path.join(env.root, f"ceiling-{k}.frames")
        with open(path, "wb") as f:
            f.write(ceiling_frames(paths, k, count, frame_bytes))
        procs.append(subprocess.Popen([client_bin, paths.socket, path, str(window)], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, env=env.environ))
    ready = [p.stdout.readline().strip() == b"ready" for p in procs]
    cpu0 = cpu_seconds(pid)
    busy0 = _machine_busy()
    t0 = time.perf_counter()
    for p in procs:
        if p.poll() is None:
            p.stdin.write(b"g")
            p.stdin.close()
    lines = [p.stdout.readline().decode() for p in procs]
    wall = time.perf_counter() - t0
    cpu = cpu_seconds(pid) - cpu0
    busy = _machine_busy() - busy0
    for p in procs:
        p.wait(30)
    st = _broker_status(env)
    results = [dict(item.split("=", 1) for item in line.split()) if line.strip() else {} for line in lines]
    ok = sum(int(r.get("ok", 0)) for r in results)
    failed = clients * count - ok
    db = sqlite3.connect(f"file:{env.location.path}?mode=ro", uri=True)
    try:
        stored = db.execute("SELECT count(*) FROM tool_calls t JOIN sessions s ON s.id = t.session_id"
                            " WHERE s.source_session_id LIKE 'k%' AND s.account = 'ceiling'").fetchone()[0]
        snaps = db.execute("SELECT count(*) FROM snapshots JOIN tool_calls t ON t.id = snapshots.tool_call_id"
                           " JOIN sessions s ON s.id = t.session_id WHERE s.account = 'ceiling'").fetchone()[0]
    finally:
        db.close()
    lat50 = [float(r["p50_ms"]) for r in results if "p50_ms" in r]
    lat99 = [float(r["p99_ms"]) for r in results if "p99_ms" in r]
    return {
        "mode": "broker_ceiling",
        "window": window,
        "frame_bytes": frame_bytes,
        "requests_per_s": round(ok / wall, 1),
        "ok": ok,
        "failed": failed,
        "clients_ready": f"{sum(ready)}/{clients}",
        "ack_p50_ms": round(statistics.median(lat50), 2) if lat50 else None,
        "ack_p99_ms": round(max(lat99), 2) if lat99 else None,
        "broker_cpu_pct": round(100 * cpu / wall, 1),
        "broker_cpu_us_per_req": round(1e6 * cpu / max(1, ok), 1),
        "clients_cpu_us_per_req": round(1e6 * sum(float(r.get("cpu_s", 0)) for r in results) / max(1, ok), 2),
        "machine_busy_pct": round(100 * busy / (wall * (os.cpu_count() or 1)), 1),
        "mean_batch": round(st.get("requests", 0) / max(1, st.get("batches", 0)), 1),
        "commit_p50_ms": st.get("commitLatencyMsP50"),
        "broker_restarted": st.get("pid") != pid,
        "preload": preload,
        # Every acknowledged begin_call is a stored call with its two input snapshots.
        "audit": stored == ok == clients * count and snaps == 2 * stored,
    }


def _machine_busy() -> float:
    """Seconds of CPU time all cores have spent busy since boot (from /proc/stat)."""
    with open("/proc/stat") as handle:
        fields = [int(x) for x in handle.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return (sum(fields[:8]) - idle) / _TICK


#: Every broker this process stopped: a regime's parent checks they are gone before the next one.
STOPPED_BROKERS: list[int] = []


def _process_gone(pid: int) -> bool:
    """True when `pid` no longer runs (absent, or a zombie waiting for its parent)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except (OSError, IndexError):
        return True


def stop_broker(env: Env) -> None:
    from yarp.clients.broker import BrokerClient

    try:
        with BrokerClient(env.location, env.environ) as c:
            if c.try_connect(time.monotonic() + 1):
                pid = c.status(time.monotonic() + 2)["pid"]
                STOPPED_BROKERS.append(pid)
                os.kill(pid, 15)
                for _ in range(500):
                    if _process_gone(pid):
                        break
                    time.sleep(0.01)
    except Exception as exc:  # the broker then idles out on its own; say so rather than hide it
        print(f"# could not stop the broker of {env.root}: {type(exc).__name__}: {exc}", flush=True)


def _is_archive_broker(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"archive\0broker" in f.read()
    except OSError:
        return False


def ensure_stopped(pids: list[int]) -> int:
    """Make sure the brokers `pids` (ours, from an earlier regime) run no more; return how many had to be killed."""
    killed = 0
    for pid in pids:
        if _process_gone(pid) or not _is_archive_broker(pid):
            continue
        killed += 1
        for sig in (15, 9):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                break
            for _ in range(300):
                if _process_gone(pid):
                    break
                time.sleep(0.01)
            if _process_gone(pid):
                break
    return killed


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


# --- flush-delay regimes and the side-by-side summary ------------------------------------------

#: The targets docs/broker.md names, per regime (flush delay in ms): ingest over a baseline.
RATIO_TARGETS = {2.0: ("naive_call", 1.5), 4.0: ("naive_call", 2.5), 0.0: ("direct_call", 0.6)}
CEILING_TARGET = 6000.0


def regime_label(delay_ms) -> str:
    return "as is" if not delay_ms else f"+{delay_ms:g} ms"


def run_regimes(args, tools_dir: str) -> list[dict]:
    """Run the chosen modes once per flush delay, each regime in a fresh child of this tool.

    A regime with a delay is started with the shim preloaded and the delay in
    its environment: the child inherits it, its forked writers inherit it,
    and so does every broker it starts (the clients hand their environment to
    the broker they spawn). The previous regime's brokers must be gone first.
    """
    import json

    delays = [float(d) for d in args.flush_delay_ms]
    shim = build_tool("slow_flush", tools_dir) if any(delays) else None
    rows: list[dict] = []
    previous: list[int] = []
    for delay in delays:
        if delay and shim is None:
            print(f"# regime {regime_label(delay)} skipped: the flush-delay shim could not be built", flush=True)
            continue
        killed = ensure_stopped(previous)
        if killed:
            print(f"# {killed} broker(s) of the previous regime were still running and were stopped", flush=True)
        environ = dict(os.environ)
        for key in (SHIM_ENV, DELAY_ENV):
            environ.pop(key, None)
        if delay:
            environ["LD_PRELOAD"] = ":".join(x for x in (shim, environ.get("LD_PRELOAD", "")) if x)
            environ[DELAY_ENV] = str(int(round(delay * 1000)))
            environ[SHIM_ENV] = shim
        spec_path = os.path.join(tools_dir, "regime.json")
        out_path = os.path.join(tools_dir, "regime-out.json")
        with open(spec_path, "w") as f:
            json.dump({"args": vars(args), "tools": TOOLS, "delay_ms": delay, "out": out_path}, f)
        if os.path.exists(out_path):
            os.unlink(out_path)
        print(f"# regime {regime_label(delay)}", flush=True)
        done = subprocess.run([sys.executable, os.path.abspath(__file__), "--regime-child", spec_path], env=environ)
        if not os.path.exists(out_path):
            print(f"# regime {regime_label(delay)} failed (status {done.returncode})", flush=True)
            continue
        with open(out_path) as f:
            result = json.load(f)
        rows.extend(result["rows"])
        previous = result["brokers"]
    ensure_stopped(previous)
    return rows


def regime_child(spec_path: str) -> int:
    import json

    with open(spec_path) as f:
        spec = json.load(f)
    args = argparse.Namespace(**spec["args"])
    TOOLS.update(spec["tools"])
    for item in args.env:
        key, _, value = item.partition("=")
        EXTRA_ENV[key] = value
    rows: list[dict] = []
    try:
        run_modes(args, _shower(rows, {"flush_ms": spec["delay_ms"]}), flush=True)
    finally:
        with open(spec["out"], "w") as f:
            json.dump({"rows": rows, "brokers": STOPPED_BROKERS}, f)
    return 0


def _shower(rows: list[dict], prefix: dict):
    def show(row: dict) -> None:
        row = {**prefix, **row}
        rows.append(row)
        print(" ".join(f"{k}={v}" for k, v in row.items()), flush=True)

    return show


def run_modes(args, show, flush: bool = False) -> None:
    """Every mode the arguments ask for, in this process and its children, each on a fresh archive."""
    if flush:
        show(flush_check())
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
            for baseline in args.ingest_baselines:
                with Env() as env:
                    if baseline == "naive_call":
                        row = run_naive_calls(env, n, args.ingest_calls, size)
                    else:
                        row = run_direct_calls(env, n, args.ingest_calls, size, baseline == "direct_op")
                    show({"clients": n, "payload": payload, **row})
    if args.ceiling_clients:
        if "load_client" not in TOOLS:
            print("# broker ceiling skipped: bench/load_client.c could not be built", flush=True)
        else:
            frame_bytes = parse_size(args.ceiling_bytes)
            for k in args.ceiling_clients:
                for window in args.ceiling_window:
                    with Env() as env:
                        show({"clients": k, **run_broker_ceiling(env, k, args.ceiling_requests, window, frame_bytes)})
    if args.raw_clients:
        for payload in args.raw_payload:
            for pool in args.pool:
                with Env(pool) as env:
                    show({"clients": args.raw_clients, "payload": payload,
                          **run_raw(env, args.raw_clients, args.raw_calls, parse_size(payload))})


def summarize(rows: list[dict]) -> list[dict]:
    """Print ingest beside its baselines, per regime, with the ratios and the targets; return the ratio rows."""
    ratios: list[dict] = []
    groups: dict[tuple, dict[str, dict]] = {}
    for row in rows:
        if row.get("mode") in ("ingest", "direct_call", "direct_op", "naive_call"):
            key = (row.get("clients"), row.get("payload"), row.get("flush_ms", 0.0))
            groups.setdefault(key, {})[row["mode"]] = row
    if groups:
        print("\n# side by side: complete Pi-shaped calls/s; ratios are ingest over each baseline")
        head = ("sessions", "payload", "flush", "ingest", "direct_call", "naive_call", "direct_op",
                "ingest/naive", "ingest/direct_call", "commit_p50_ms", "mean_batch", "target")
        table = [head]
        for (clients, payload, delay), modes in groups.items():
            ingest = modes.get("ingest", {}).get("calls_per_s")

            def ratio(mode: str):
                base = modes.get(mode, {}).get("calls_per_s")
                return round(ingest / base, 2) if ingest and base else None

            over_naive, over_direct = ratio("naive_call"), ratio("direct_call")
            target = ""
            if float(delay or 0) in RATIO_TARGETS:
                mode, want = RATIO_TARGETS[float(delay or 0)]
                got = over_naive if mode == "naive_call" else over_direct
                if got is not None:
                    short = "naive" if mode == "naive_call" else "direct_call"
                    target = f"ingest/{short} >= {want}: {'met' if got >= want else 'NOT met'}"
            ratios.append({"flush_ms": delay, "clients": clients, "payload": payload, "mode": "ratios",
                           "ingest_over_naive": over_naive, "ingest_over_direct_call": over_direct})
            ing = modes.get("ingest", {})
            table.append((clients, payload, regime_label(delay), ingest,
                          *(modes.get(m, {}).get("calls_per_s") for m in ("direct_call", "naive_call", "direct_op")),
                          over_naive, over_direct, ing.get("commit_p50_ms"), ing.get("mean_batch"), target))
        _print_table(table)
    ceiling = [r for r in rows if r.get("mode") == "broker_ceiling"]
    if ceiling:
        print(f"\n# broker ceiling: C client, pre-encoded begin_call frames (target >= {CEILING_TARGET:,.0f} requests/s)")
        table = [("flush", "connections", "window", "frame_bytes", "requests/s", "failed", "broker_us/req",
                  "client_us/req", "broker_cpu_pct", "mean_batch", "audit", "target")]
        for r in ceiling:
            table.append((regime_label(r.get("flush_ms", 0)), r["clients"], r["window"], r["frame_bytes"],
                          r["requests_per_s"], r["failed"], r["broker_cpu_us_per_req"], r["clients_cpu_us_per_req"],
                          r["broker_cpu_pct"], r["mean_batch"], r["audit"],
                          "met" if r["requests_per_s"] >= CEILING_TARGET else "NOT met"))
        _print_table(table)
    return ratios


def _print_table(table: list[tuple]) -> None:
    cells = [["-" if v is None else str(v) for v in row] for row in table]
    widths = [max(len(row[i]) for row in cells) for i in range(len(cells[0]))]
    for row in cells:
        print("  ".join(v.rjust(w) if i else v.ljust(w) for i, (v, w) in enumerate(zip(row, widths))).rstrip())


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
                    help="sessions driving their own `yarp archive ingest`, beside the baselines")
    ap.add_argument("--ingest-calls", type=int, default=100, help="complete calls per ingest session")
    ap.add_argument("--ingest-payload", nargs="*", default=["1k"])
    ap.add_argument("--ingest-baselines", nargs="*", default=["direct_call", "direct_op", "naive_call"],
                    choices=["direct_call", "direct_op", "naive_call"],
                    help="baselines beside ingest: same-work direct writers per call or per operation, "
                         "and naive json.dumps writers per call")
    ap.add_argument("--flush-delay-ms", type=float, nargs="*", default=[], metavar="MS",
                    help="run everything once per regime: 0 = the machine as it is, else every archive writer "
                         "(broker, direct and naive writers) waits MS before each fsync/fdatasync (needs gcc)")
    ap.add_argument("--ceiling-clients", type=int, nargs="*", default=[], metavar="K",
                    help="broker ceiling with the C load client over K connections (needs gcc)")
    ap.add_argument("--ceiling-window", type=int, nargs="*", default=[1], metavar="W",
                    help="unacknowledged requests per ceiling connection (1 = each acknowledged before the next)")
    ap.add_argument("--ceiling-requests", type=int, default=1000, help="begin_call requests per ceiling connection")
    ap.add_argument("--ceiling-bytes", default="1k", help="size of each ceiling request frame, header included")
    ap.add_argument("--bridge-startup", type=int, default=0, help="samples of bridge start-up CPU")
    ap.add_argument("--cold-start", type=int, default=0, help="samples of cold start to ready")
    ap.add_argument("--env", action="append", default=[], metavar="KEY=VALUE", help="extra broker environment")
    ap.add_argument("--json", help="write all results to this file")
    ap.add_argument("--regime-child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.regime_child:
        return regime_child(args.regime_child)
    # Measure what an installed package runs: byte-compiled modules, whatever
    # PYTHONDONTWRITEBYTECODE says (it would make every child compile every module).
    import compileall

    compileall.compile_dir(os.path.join(os.path.dirname(HERE), "src"), quiet=1)
    for item in args.env:
        key, _, value = item.partition("=")
        EXTRA_ENV[key] = value

    rows: list[dict] = []
    tools_dir = tempfile.mkdtemp(prefix="yrt", dir="/tmp")
    try:
        if args.ceiling_clients:
            build_tool("load_client", tools_dir)
        if args.flush_delay_ms:
            rows = run_regimes(args, tools_dir)
        else:
            run_modes(args, _shower(rows, {}))
        rows.extend(summarize(rows))
    finally:
        shutil.rmtree(tools_dir, ignore_errors=True)
    if args.json:
        import json

        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
