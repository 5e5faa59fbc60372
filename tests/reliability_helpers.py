"""Shared machinery for the fault-injection and attack tests (`test_reliability_*`, `test_hostile_*`).

Everything is real: brokers are `python -m yarp archive broker` processes
(started on demand by clients or in the foreground), clients are separate
processes, faults are real signals, real full filesystems, real SQLite locks
held by other processes and real second users. The environment comes from
`broker_helpers.make_broker_env` (short private runtime directory under /tmp,
isolated HOME/XDG, short idle grace); teardown kills only brokers whose command
line names this environment's own archive.

This file is also a small command-line program, run as a child process by the
tests, so a "client" is a process that can be killed for real:

    python reliability_helpers.py capture-client LOG PREFIX STOPFILE [MAXCALLS]

captures complete calls (begin_call, result_before, finish_call) through the
library client until STOPFILE exists, and appends one JSON line per event to
LOG: ``sent`` before each request and ``ack`` (with its archiveRef) or
``error`` (with the error code only) after it. A line is flushed before the
next request starts, so the log never claims an acknowledgement that did not
happen.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import sqlite3
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import orjson  # noqa: E402
import rfc8785  # noqa: E402

from broker_helpers import (  # noqa: E402
    SRC,
    BrokerEnv,
    broker_pids,
    cleanup_broker_env,
    kill_pid,
    make_broker_env,
    pid_alive,
    wait_for,
    wait_gone,
)

#: Idle grace for reliability tests: short, so brokers come and go in a loop.
FAST_IDLE_MS = 300
#: Per-request deadline the load clients use (the broker's maximum is 30 s).
CLIENT_DEADLINE_S = 20.0

__all__ = [
    "BrokerEnv", "make_env", "cleanup_broker_env", "broker_pids", "kill_pid", "pid_alive", "wait_for",
    "wait_gone", "canonical_sha", "stored_payload_sha", "archive_invariants", "run_verify", "broker_status",
    "read_log", "start_capture_clients", "yarp_cmd", "rss_kib", "new_sqlite_files", "canary",
]


def make_env(idle_ms: int = FAST_IDLE_MS, **extra) -> BrokerEnv:
    """An isolated environment whose archive is also the default for `yarp run` and ingest."""
    benv = make_broker_env(idle_ms=idle_ms, **extra)
    benv.environ["YARP_ARCHIVE"] = benv.archive
    tmp = os.path.join(benv.root, "t")
    os.mkdir(tmp, 0o700)
    benv.environ["TMPDIR"] = tmp
    return benv


def canary() -> str:
    """A unique marker placed inside payloads: it must never appear in a reply or a log."""
    return "CANARY" + secrets.token_hex(12)


def yarp_cmd(benv: BrokerEnv, *args: str, timeout: float = 60, input: bytes | None = None,
             env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "yarp", *args], env=env or benv.environ, input=input,
        stdin=None if input is not None else subprocess.DEVNULL, capture_output=True, timeout=timeout,
    )


def broker_status(benv: BrokerEnv) -> dict:
    """`yarp archive broker status --json` (never starts a broker)."""
    out = yarp_cmd(benv, "archive", "broker", "status", "--archive", benv.archive, "--json", timeout=30)
    assert out.returncode == 0, out.stderr
    return orjson.loads(out.stdout)


def run_verify(benv: BrokerEnv, archive: str | None = None) -> subprocess.CompletedProcess:
    return yarp_cmd(benv, "archive", "verify", "--archive", archive or benv.archive, timeout=120)


# --- archive content -------------------------------------------------------------------


def canonical_sha(value) -> str:
    """SHA-256 hex of the RFC 8785 form of a JSON value: what the archive must hold."""
    return hashlib.sha256(rfc8785.dumps(value)).hexdigest()


def stored_payload_sha(conn: sqlite3.Connection, source_call_id: str, subject: str, stage: str) -> str | None:
    """SHA-256 hex recomputed from the stored (decompressed) bytes of one snapshot, or None."""
    from yarp.archive.codec import decode_body

    row = conn.execute(
        "SELECT p.compression, p.body, p.uncompressed_byte_length FROM snapshots s"
        " JOIN tool_calls c ON c.id = s.tool_call_id JOIN payloads p ON p.sha256 = s.payload_sha256"
        " WHERE c.source_call_id = ? AND s.subject = ? AND s.stage = ?",
        (source_call_id, subject, stage),
    ).fetchone()
    if row is None:
        return None
    return hashlib.sha256(decode_body(row[0], bytes(row[1]), row[2])).hexdigest()


def archive_invariants(path: str) -> dict:
    """Structural proof that nothing is half-written; returns counts for reporting.

    Fails when SQLite integrity or foreign keys are broken, when a call lacks
    either input snapshot (a begin_call applied in part), when a snapshot has
    no payload, or when a finished call lacks its final result.
    """
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        no_input = conn.execute(
            "SELECT count(*) FROM tool_calls c WHERE (SELECT count(*) FROM snapshots s"
            " WHERE s.tool_call_id = c.id AND s.subject = 'input') <> 2"
        ).fetchone()[0]
        assert no_input == 0, f"{no_input} call(s) without both input snapshots"
        orphan = conn.execute(
            "SELECT count(*) FROM snapshots s LEFT JOIN payloads p ON p.sha256 = s.payload_sha256"
            " WHERE p.sha256 IS NULL"
        ).fetchone()[0]
        assert orphan == 0, f"{orphan} snapshot(s) without a payload"
        unfinished_final = conn.execute(
            "SELECT count(*) FROM tool_calls c WHERE c.status = 'finished' AND NOT EXISTS"
            " (SELECT 1 FROM snapshots s WHERE s.tool_call_id = c.id AND s.subject = 'result' AND s.stage = 'after')"
        ).fetchone()[0]
        assert unfinished_final == 0
        calls, started = conn.execute(
            "SELECT count(*), coalesce(sum(status = 'started'), 0) FROM tool_calls"
        ).fetchone()
        dup = conn.execute(
            "SELECT count(*) FROM (SELECT session_id, source_call_id FROM tool_calls"
            " GROUP BY 1, 2 HAVING count(*) > 1)"
        ).fetchone()[0]
        assert dup == 0
        return {"calls": calls, "started": started,
                "snapshots": conn.execute("SELECT count(*) FROM snapshots").fetchone()[0],
                "payloads": conn.execute("SELECT count(*) FROM payloads").fetchone()[0]}
    finally:
        conn.close()


# --- load clients --------------------------------------------------------------------------


def read_log(path: str) -> list[dict]:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        return []
    out = []
    for line in data.split(b"\n"):
        if line:
            try:
                out.append(orjson.loads(line))
            except orjson.JSONDecodeError:
                # A client killed mid-write leaves at most one torn last line.
                continue
    return out


def start_capture_clients(benv: BrokerEnv, count: int, stop_file: str, max_calls: int = 0,
                          tag: str = "c") -> list[tuple[subprocess.Popen, str, str]]:
    clients = []
    for i in range(count):
        log = os.path.join(benv.root, f"{tag}{i}.log")
        prefix = f"{tag}{i}-"
        proc = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "capture-client", log, prefix, stop_file, str(max_calls)],
            env=benv.environ, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )
        clients.append((proc, log, prefix))
    return clients


def lifecycle_ops(call_id: str, blob: str):
    """begin_call, result_before, finish_call for one call, with their JSON payloads."""
    from yarp.wire import operations as ops

    sess = ops.Session("pi", "reliability", "crash-session")
    inp = {"command": f"cat {call_id}", "blob": blob}
    result = {"content": [{"type": "text", "text": blob[::-1]}], "isError": False}
    return [
        (ops.BeginCall(sess, ops.CallMeta(call_id, "bash", 1_700_000_000_000, False), inp, inp, 1_700_000_000_001),
         ("input", "before"), inp),
        (ops.ResultBefore(sess, call_id, result, 1_700_000_000_002), ("result", "before"), result),
        (ops.FinishCall(sess, call_id, result, False, True, 1_700_000_000_003), ("result", "after"), result),
    ]


def _capture_client(log_path: str, prefix: str, stop_file: str, max_calls: int) -> int:
    from yarp.clients.broker import BrokerClient
    from yarp.errors import YarpError
    from yarp.paths import ArchiveLocation

    location = ArchiveLocation(os.environ["YARP_ARCHIVE"], False)
    log = open(log_path, "ab", buffering=0)
    n = 0
    client = BrokerClient(location)
    try:
        while not os.path.exists(stop_file) and (not max_calls or n < max_calls):
            call_id = f"{prefix}{n}"
            n += 1
            blob = secrets.token_hex(secrets.randbelow(3000) + 16)
            for op, (subject, stage), value in lifecycle_ops(call_id, blob):
                record = {"call": call_id, "kind": op.kind, "subject": subject, "stage": stage,
                          "sha": canonical_sha(value)}
                log.write(orjson.dumps({**record, "ev": "sent"}) + b"\n")
                try:
                    reply = client.request(op, time.monotonic() + CLIENT_DEADLINE_S)
                except YarpError as exc:
                    log.write(orjson.dumps({**record, "ev": "error", "code": exc.code, "error": exc.message}) + b"\n")
                    client.close()
                    break
                log.write(orjson.dumps({**record, "ev": "ack", "ref": reply.get("archiveRef")}) + b"\n")
    finally:
        client.close()
        log.close()
    return 0


# --- processes and files ------------------------------------------------------------------


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def new_sqlite_files(roots: list[str], since: float) -> list[str]:
    """SQLite-looking files (by name or header) modified after `since` under `roots`."""
    found = []
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            for name in filenames:
                path = os.path.join(dirpath, name)
                try:
                    st = os.lstat(path)
                    if st.st_mtime < since or not os.path.isfile(path):
                        continue
                    with open(path, "rb") as fh:
                        head = fh.read(16)
                except OSError:
                    continue
                if head.startswith(b"SQLite format 3") or ".sqlite" in name or name.endswith((".db", "-wal", "-journal")):
                    found.append(path)
    return found


if __name__ == "__main__":
    if len(sys.argv) >= 5 and sys.argv[1] == "capture-client":
        sys.path.insert(0, SRC)
        sys.exit(_capture_client(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]) if len(sys.argv) > 5 else 0))
    sys.stderr.write("usage: reliability_helpers.py capture-client LOG PREFIX STOPFILE [MAXCALLS]\n")
    sys.exit(64)
