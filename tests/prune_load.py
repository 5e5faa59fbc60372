"""Captures that run without pause while a prune holds the broker, and the proof that each was archived.

`CaptureLoad` drives real clients against a `Sandbox`'s archive from threads
until it is stopped: `yarp run --archive A -- seq 1 2000` processes, one after
another, and `yarp archive ingest` sessions that begin a call with a 2 s
`deadlineAtMs` (what an agent's hook allows), give it a result and finish it.
Every attempt is a `Probe` with its latency and outcome. `check_archived` then
reads each one back: the run's stdout restored through the recovery library
(the code `yarp restore` runs, digest checked) must be exactly `seq`'s
output, and each ingest call must be finished under the reference its
acknowledgement named.

Used by tests/test_prune.py and bench/prune_captures.py.
"""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from ingest_helpers import Sandbox, begin_call, finish_call, now_ms, result_before, session

SEQ_BYTES = b"".join(b"%d\n" % i for i in range(1, 2001))
_REF = re.compile(rb"ref=(yr_[0-9a-f]{32})")
#: What an agent's hook waits for a begin_call acknowledgement.
BEGIN_DEADLINE_MS = 2000


@dataclass
class Probe:
    """One capture attempt: a `yarp run` or an ingest call (its begin_call latency)."""

    kind: str
    #: When it ended (time.monotonic()), and how long it took.
    ended: float
    latency_s: float
    ok: bool
    ref: str | None = None
    call_id: str | None = None
    error: str = ""


class CaptureLoad:
    """`runs` threads of `yarp run` and `sessions` ingest sessions, each capturing until `stop`."""

    def __init__(self, sandbox: Sandbox, out_dir: Path, *, runs: int = 1, sessions: int = 1) -> None:
        self.sandbox = sandbox
        self.out_dir = out_dir
        out_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.probes: list[Probe] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._runs, args=(k,), daemon=True) for k in range(runs)]
        self._threads += [threading.Thread(target=self._ingest, args=(k,), daemon=True) for k in range(sessions)]

    def start(self) -> CaptureLoad:
        """Start every capture thread."""
        for thread in self._threads:
            thread.start()
        return self

    def stop(self) -> list[Probe]:
        """Let each thread finish the capture it is in, then return every probe."""
        self._stop.set()
        for thread in self._threads:
            thread.join(120)
        return self.probes

    def count(self) -> int:
        """Probes so far."""
        with self._lock:
            return len(self.probes)

    def _add(self, probe: Probe) -> None:
        with self._lock:
            self.probes.append(probe)

    def _runs(self, k: int) -> None:
        n = 0
        while not self._stop.is_set():
            path = self.out_dir / f"run-{k}-{n}.out"
            started = time.monotonic()
            with open(path, "wb") as out:
                done = subprocess.run(
                    [sys.executable, "-m", "yarp", "run", "--archive", str(self.sandbox.archive), "--",
                     "seq", "1", "2000"], stdout=out, stderr=subprocess.PIPE, env=self.sandbox.env(), timeout=300)
            ended = time.monotonic()
            found = _REF.search(path.read_bytes())
            ok = done.returncode == 0 and not done.stderr and found is not None
            self._add(Probe("run", ended, ended - started, ok, found.group(1).decode() if found else None,
                            error=done.stderr.decode("utf-8", "replace")[:300]))
            n += 1

    def _ingest(self, k: int) -> None:
        sess = session(f"prune-load-{k}")
        ing = self.sandbox.ingest()
        n = 0
        try:
            while not self._stop.is_set():
                call_id = f"probe-{k}-{n}"
                n += 1
                started = time.monotonic()
                reply = ing.request(begin_call(sess, call_id, tool="read", input_before={"n": n},
                                               deadline_in_ms=BEGIN_DEADLINE_MS, started_at_ms=now_ms()), timeout=60)
                ended = time.monotonic()
                error = reply.get("error", "")
                if reply["ok"]:
                    error = self._finish(ing, sess, call_id, n)
                self._add(Probe("begin_call", ended, ended - started, not error, reply.get("archiveRef"), call_id,
                                error))
                if error:  # a missed deadline ends the bridge (74): a new one for the next call
                    ing.kill()
                    ing = self.sandbox.ingest()
        finally:
            ing.wait(60)

    @staticmethod
    def _finish(ing, sess: dict, call_id: str, n: int) -> str:
        """Give the call its result and finish it; the first failure's text, or empty."""
        for request in (result_before(sess, call_id, {"content": [{"type": "text", "text": f"r{n}"}]}),
                        finish_call(sess, call_id, {"n": n}, finished_at_ms=now_ms())):
            try:
                reply = ing.request(request, timeout=60)
            except (AssertionError, OSError) as exc:  # the bridge ended
                return f"bridge ended: {type(exc).__name__}"
            if not reply["ok"]:
                return reply.get("error", "") or "failed"
        return ""


def check_archived(archive: Path, probes: list[Probe]) -> list[str]:
    """What is wrong with the probes' calls in the archive (empty when every one is there and exact)."""
    from yarp.archive import recovery

    problems = []
    conn = sqlite3.connect(f"file:{archive}?mode=ro", uri=True)
    try:
        for probe in probes:
            if not probe.ok:
                problems.append(f"{probe.kind} failed: {probe.error!r}")
            elif probe.kind == "run":
                call = recovery.find_call(conn, probe.ref)
                stdout = recovery.choose_source(recovery.recovery_sources(conn, call), "stdout")
                if b"".join(recovery.iter_verified(conn, stdout)) != SEQ_BYTES:
                    problems.append(f"run {probe.ref}: stdout differs")
            else:
                row = conn.execute("SELECT source_call_id, status FROM tool_calls WHERE archive_ref = ?",
                                   (probe.ref,)).fetchall()  # (archive_ref is indexed, source_call_id alone not)
                if row != [(probe.call_id, "finished")]:
                    problems.append(f"ingest call {probe.call_id}: {row}")
    finally:
        conn.close()
    return problems


def prunable(archive: Path, before_ms: int) -> int:
    """How many calls a prune at `before_ms` deletes now."""
    conn = sqlite3.connect(f"file:{archive}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT count(*) FROM tool_calls WHERE status = 'finished' AND finished_at_ms < ?",
                            (before_ms,)).fetchone()[0]
    finally:
        conn.close()


def worst(probes: list[Probe], kind: str) -> float:
    """The longest latency of one kind of probe, in seconds (0 when there were none)."""
    return max((p.latency_s for p in probes if p.kind == kind), default=0.0)


def src_env(sandbox: Sandbox, src: str | os.PathLike | None) -> None:
    """Run the sandbox's children from another source tree (a baseline measured beside this one)."""
    if src is not None:
        sandbox.extra_env["PYTHONPATH"] = str(src)
