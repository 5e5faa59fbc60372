"""`yarp import` throughput, no-change re-import time and memory, beside the live capture path.

One run measures, each against a fresh archive with a real broker process:

- import: Pi transcripts of 1 KiB calls (input + result) through `import_calls`
  batches — calls per second, end to end (read, parse, send, prepare, commit);
- live: the same calls sent the way a live adapter sends them (begin_call,
  result_before, stage_result, finish_call, one client, one session) — the
  baseline of the ratio;
- re-import: a second run over 100,000 already imported calls (nothing changed);
- memory: the importer process's peak RSS on a file and on one four times as
  large (streamed reading keeps it flat).

Run:  PYTHONPATH=src .venv/bin/python -m pytest -q -s bench/test_bench_import.py
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "src")]

from broker_helpers import cleanup_broker_env, make_broker_env  # noqa: E402
from import_fixtures import pi_session_file, set_old_mtime  # noqa: E402

IMPORT_CALLS = 40_000
LIVE_CALLS = 2_000
REIMPORT_FILES, REIMPORT_CALLS_PER_FILE = 50, 2_000
#: Result text per call: with the command, the JSON wrapping and the input, about 1 KiB per call.
PAYLOAD = "x" * 900


def _broker_cpu_s(benv) -> float:
    """CPU seconds (user + system) the running broker of `benv` has used so far."""
    from broker_helpers import broker_pids

    total = 0.0
    for pid in broker_pids(benv.archive):
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def _import(benv, *paths: str) -> tuple[dict, float, int]:
    """Run `yarp import pi` as its own process: (summary, seconds, the importer's peak RSS in KiB).

    Also records the importer's and the broker's own CPU seconds in `benv.cpu`.
    """
    broker_before = _broker_cpu_s(benv)
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "yarp", "import", "pi", *paths, "--json", "--archive",
                             benv.archive], env=benv.environ, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = proc.stdout.read()
    err = proc.stderr.read()
    _pid, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    assert os.waitstatus_to_exitcode(status) == 0, err.decode(errors="replace")
    benv.cpu = (usage.ru_utime + usage.ru_stime, _broker_cpu_s(benv) - broker_before)
    return json.loads(out), seconds, usage.ru_maxrss


def _live(benv, calls: int) -> float:
    from yarp.wire import operations as ops
    from yarp.hooks.events import local_account

    session = ops.Session("pi", local_account(), "live-bench", 1)
    with benv.client() as client:
        deadline = lambda: time.monotonic() + 60  # noqa: E731
        client.request(ops.BeginCall(session, ops.CallMeta("warm", "bash", 1, False), {}, {}, 1), deadline())
        start = time.perf_counter()
        for n in range(calls):
            call_id = f"live-{n}"
            command = {"command": f"echo {n}"}
            result = {"content": [{"type": "text", "text": f"{n}\n{PAYLOAD}"}], "details": None, "isError": False}
            client.request(ops.BeginCall(session, ops.CallMeta(call_id, "bash", 2, False), command, command, 2),
                           deadline())
            client.request(ops.ResultBefore(session, call_id, result, 3), deadline())
            client.request(ops.StageResult(session, call_id, result, False, 3), deadline())
            client.request(ops.FinishCall(session, call_id, result, False, True, 4), deadline())
        return time.perf_counter() - start


def test_import_throughput_reimport_and_memory_beside_live_capture():
    work = Path(tempfile.mkdtemp(prefix="yrimp", dir="/tmp"))
    envs = []
    try:
        big = work / "big" / "s.jsonl"
        pi_session_file(big, IMPORT_CALLS, payload=PAYLOAD)
        quarter = work / "quarter" / "s.jsonl"
        pi_session_file(quarter, IMPORT_CALLS // 4, payload=PAYLOAD)
        set_old_mtime(big, quarter)

        benv = make_broker_env()
        envs.append(benv)
        small_summary, _, small_rss = _import(benv, str(quarter))
        assert small_summary["callsNew"] == IMPORT_CALLS // 4
        benv = make_broker_env()
        envs.append(benv)
        summary, import_s, big_rss = _import(benv, str(big))
        assert summary["callsNew"] == IMPORT_CALLS
        import_rate = IMPORT_CALLS / import_s
        importer_cpu, broker_cpu = benv.cpu

        benv = make_broker_env()
        envs.append(benv)
        live_s = _live(benv, LIVE_CALLS)
        live_rate = LIVE_CALLS / live_s

        many = work / "many"
        for k in range(REIMPORT_FILES):
            pi_session_file(many / f"{k}.jsonl", REIMPORT_CALLS_PER_FILE, payload="", session_id=f"session-{k}")
        set_old_mtime(*many.iterdir())
        benv = make_broker_env()
        envs.append(benv)
        first, first_s, _ = _import(benv, str(many))
        assert first["callsNew"] == REIMPORT_FILES * REIMPORT_CALLS_PER_FILE
        again, again_s, _ = _import(benv, str(many))
        assert again["callsNew"] == 0 and again["filesUnchanged"] == REIMPORT_FILES

        print(f"\nimport: {IMPORT_CALLS} calls in {import_s:.2f} s = {import_rate:,.0f} calls/s"
              f" (file {big.stat().st_size / 2**20:.1f} MiB)")
        print(f"live capture path: {LIVE_CALLS} calls in {live_s:.2f} s = {live_rate:,.0f} calls/s"
              f" -> import is {import_rate / live_rate:.1f}x")
        print(f"import CPU per call: importer {importer_cpu / IMPORT_CALLS * 1e6:.0f} us,"
              f" broker {broker_cpu / IMPORT_CALLS * 1e6:.0f} us (machine load {os.getloadavg()[0]:.1f})")
        print(f"first import of {first['callsNew']} small calls: {first_s:.2f} s;"
              f" no-change re-import: {again_s:.2f} s")
        print(f"importer peak RSS: {small_rss / 1024:.1f} MiB ({IMPORT_CALLS // 4} calls),"
              f" {big_rss / 1024:.1f} MiB ({IMPORT_CALLS} calls, 4x the file)")
        assert import_rate >= 3000, "the issue's floor: 3,000 imported calls/s on 1 KiB calls"
        assert import_rate > live_rate
        assert again_s < 2.0, "a no-change re-import of 100,000 calls within 2 s"
        # Streamed: content memory is bounded by the batches in flight; what grows with the
        # file is its checkpoint's list of call ids (tens of bytes per call).
        assert big_rss < small_rss * 1.3
    finally:
        for benv in envs:
            cleanup_broker_env(benv)
        shutil.rmtree(work, ignore_errors=True)
