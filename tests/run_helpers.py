"""Helpers (no tests) for `yarp run` tests: an isolated environment, real runs, archive reads.

Everything is real: `python -m yarp run` child processes, a broker started on
demand in a short private runtime directory (`/tmp/yr…`, 0700, so the socket
path stays under 104 bytes), and the SQLite archive read back read-only.
Brokers idle out after `IDLE_MS`; teardown waits for the socket to go and then
kills only brokers serving this environment's own archive.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys
import time

from broker_helpers import BrokerEnv, broker_pids, cleanup_broker_env, kill_pid, make_broker_env  # noqa: F401

from yarp.archive.codec import decode_body

IDLE_MS = 300
STREAM_KEYS = (("stdout", "before"), ("stdout", "after"), ("stderr", "before"), ("stderr", "after"))


def make_run_env(idle_ms: int = IDLE_MS) -> BrokerEnv:
    benv = make_broker_env(idle_ms=idle_ms)
    benv.environ["YARP_ARCHIVE"] = benv.archive
    benv.environ["TMPDIR"] = os.path.join(benv.root, "t")
    os.mkdir(benv.environ["TMPDIR"], 0o700)
    benv.environ.pop("YARP_BROKER_IDLE_MS_OVERRIDE", None)
    return benv


def close_run_env(benv: BrokerEnv, timeout: float = 10.0) -> None:
    socket_path = benv.paths.socket
    end = time.monotonic() + timeout
    while os.path.lexists(socket_path) and time.monotonic() < end:
        time.sleep(0.05)
    cleanup_broker_env(benv)


def yarp(benv: BrokerEnv, *args: str, input: bytes | None = None, env: dict | None = None,
         timeout: float = 120.0) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "yarp", *args],
        input=input,
        stdin=None if input is not None else subprocess.DEVNULL,
        capture_output=True,
        env=env or benv.environ,
        timeout=timeout,
    )


def yrun(benv: BrokerEnv, *argv: str, flags: tuple[str, ...] = (), **kwargs) -> subprocess.CompletedProcess:
    return yarp(benv, "run", *flags, "--", *argv, **kwargs)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_sha(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


class ArchiveView:
    """Read-only access to the archive a run wrote."""

    def __init__(self, benv: BrokerEnv) -> None:
        self.conn = sqlite3.connect(f"file:{benv.archive}?mode=ro", uri=True)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> ArchiveView:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def calls(self, agent: str = "yarp-run") -> list[tuple]:
        return self.conn.execute(
            "SELECT c.id, c.archive_ref, c.status, c.executed, c.is_error, c.requires_streams"
            " FROM tool_calls c JOIN sessions s ON s.id = c.session_id WHERE s.agent = ? ORDER BY c.id",
            (agent,),
        ).fetchall()

    def call_id(self, ref: str) -> int:
        return self.conn.execute("SELECT id FROM tool_calls WHERE archive_ref = ?", (ref,)).fetchone()[0]

    def snapshot_keys(self, call_id: int) -> set[tuple[str, str]]:
        rows = self.conn.execute("SELECT subject, stage FROM snapshots WHERE tool_call_id = ?", (call_id,))
        return set(rows.fetchall())

    def snapshot(self, call_id: int, subject: str, stage: str) -> bytes:
        row = self.conn.execute(
            "SELECT p.compression, p.body, p.uncompressed_byte_length, p.sha256 FROM snapshots s"
            " JOIN payloads p ON p.sha256 = s.payload_sha256"
            " WHERE s.tool_call_id = ? AND s.subject = ? AND s.stage = ?",
            (call_id, subject, stage),
        ).fetchone()
        assert row is not None, f"no {subject}/{stage} snapshot"
        data = decode_body(row[0], row[1], row[2])
        assert hashlib.sha256(data).digest() == bytes(row[3])
        return data

    def snapshot_sha(self, call_id: int, subject: str, stage: str) -> str:
        row = self.conn.execute(
            "SELECT payload_sha256 FROM snapshots WHERE tool_call_id = ? AND subject = ? AND stage = ?",
            (call_id, subject, stage),
        ).fetchone()
        assert row is not None, f"no {subject}/{stage} snapshot"
        return bytes(row[0]).hex()


def only_call(benv: BrokerEnv, agent: str = "yarp-run") -> tuple:
    with ArchiveView(benv) as view:
        calls = view.calls(agent)
    assert len(calls) == 1, calls
    return calls[0]
