"""`yarp import pi` on the two real Pi sessions (version 1), through a real broker.

Every one of the 845 tool calls must be accounted for: imported finished with
the live extension's exact result shape, or imported without a result (the 24
calls of aborted or failed assistant messages). A second run writes nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import pytest

from broker_helpers import broker_env  # noqa: F401  (fixture)
from shared_data import shared_path
from yarp.archive.codec import canonical_json, decode_body

PI_DIR = shared_path("data", "pi-sessions")
FILES = ("before-compaction.jsonl", "large-session.jsonl")

pytestmark = pytest.mark.skipif(not all((PI_DIR / f).is_file() for f in FILES),
                                reason="real Pi sessions are not available")


def yarp(benv, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "yarp", *args, "--archive", benv.archive], env=benv.environ,
                          capture_output=True, text=True, timeout=300)
    if check and proc.returncode != 0:
        raise AssertionError(f"yarp {args[0]} exited {proc.returncode}: {proc.stderr}")
    return proc


def import_json(benv, *args: str) -> dict:
    return json.loads(yarp(benv, "import", *args, "--json").stdout)


def archive_digest(benv) -> str:
    h = hashlib.sha256()
    for suffix in ("", "-wal"):
        path = benv.archive + suffix
        if os.path.exists(path):
            with open(path, "rb") as handle:
                h.update(handle.read())
    return h.hexdigest()


def expected_calls() -> dict:
    """(session id, call id) -> (tool name, input, result or None), read independently of the importer."""
    out = {}
    for name in FILES:
        pending = {}
        with open(PI_DIR / name, encoding="utf-8") as handle:
            header = json.loads(handle.readline())
            for line in handle:
                entry = json.loads(line)
                message = entry.get("message") if entry.get("type") == "message" else None
                if not isinstance(message, dict):
                    continue
                if message.get("role") == "assistant":
                    for block in message.get("content", []):
                        if block.get("type") == "toolCall":
                            key = (header["id"], block["id"])
                            assert key not in out, "the real sessions reuse no call id"
                            out[key] = (block["name"], block["arguments"], None)
                            pending[block["id"]] = key
                elif message.get("role") == "toolResult":
                    key = pending.pop(message["toolCallId"])
                    result = {"content": message["content"], "details": message.get("details"),
                              "isError": message["isError"]}
                    out[key] = (out[key][0], out[key][1], result)
    return out


def payload(conn, call_rowid: int, subject: str, stage: str) -> bytes | None:
    row = conn.execute(
        "SELECT p.compression, p.body, p.uncompressed_byte_length FROM snapshots s JOIN payloads p"
        " ON p.sha256 = s.payload_sha256 WHERE s.tool_call_id = ? AND s.subject = ? AND s.stage = ?",
        (call_rowid, subject, stage)).fetchone()
    return None if row is None else decode_body(row[0], bytes(row[1]), row[2])


def test_real_pi_sessions_every_call_accounted_for_and_exact(broker_env):  # noqa: F811
    expected = expected_calls()
    assert len(expected) == 845
    summary = import_json(broker_env, "pi", str(PI_DIR), "--settle", "0")
    assert summary["callsFound"] == 845
    assert summary["callsNew"] == 845
    assert summary["callsWithoutResult"] == 24
    assert summary["resultsWithoutCall"] == 0 and summary["corruptLines"] == 0
    assert summary["sessions"] == 2 and summary["files"] == 2

    conn = broker_env.db()
    try:
        rows = conn.execute(
            "SELECT c.id, s.agent, s.account, s.source_session_id, c.source_call_id, c.tool_name, c.status,"
            " c.is_error, c.executed, c.requires_streams, c.provider, c.model, c.working_directory"
            " FROM tool_calls c JOIN sessions s ON s.id = c.session_id").fetchall()
        assert len(rows) == 845
        import pwd

        account = pwd.getpwuid(os.geteuid()).pw_name
        for rowid, agent, acct, session_id, call_id, tool, status, is_error, executed, streams, provider, model, cwd \
                in rows:
            name, arguments, result = expected[(session_id, call_id)]
            assert (agent, acct, tool, streams) == ("pi", account, name, 0)
            assert provider == "anthropic" and model.startswith("claude-")
            assert cwd == "/Users/badlogic/workspaces/pi-mono"
            input_before = payload(conn, rowid, "input", "before")
            assert input_before == payload(conn, rowid, "input", "after") == canonical_json(arguments)
            if result is None:
                assert (status, is_error, executed) == ("started", None, None)
                assert payload(conn, rowid, "result", "before") is None
            else:
                assert (status, is_error, executed) == ("finished", int(result["isError"]), 1)
                assert payload(conn, rowid, "result", "before") == payload(conn, rowid, "result", "after") \
                    == canonical_json(result)
    finally:
        conn.close()
    assert "archive: ok" in yarp(broker_env, "archive", "verify").stdout

    # Idempotent: nothing read again, nothing sent, not one byte of the archive changed.
    before = archive_digest(broker_env)
    again = import_json(broker_env, "pi", str(PI_DIR), "--settle", "0")
    assert again["callsNew"] == 0 and again["filesUnchanged"] == 2
    assert archive_digest(broker_env) == before

    # The imported calls are found like live ones.
    listing = yarp(broker_env, "search", "--tool", "bash").stdout
    ref = next(line.split()[0] for line in listing.splitlines() if line.startswith("yr_") and " ok " in line)
    restored = yarp(broker_env, "restore", ref).stdout.encode()
    conn = broker_env.db()
    try:
        rowid = conn.execute("SELECT id FROM tool_calls WHERE archive_ref = ?", (ref,)).fetchone()[0]
        assert restored == payload(conn, rowid, "result", "before")
    finally:
        conn.close()
    assert yarp(broker_env, "read", ref, "1:1").stdout.strip()


def test_dry_run_counts_without_writing_or_showing_content(broker_env):  # noqa: F811
    proc = yarp(broker_env, "import", "pi", str(PI_DIR), "--dry-run", "--settle", "0")
    assert proc.stdout.startswith("would import 845 calls from 2 files (2 sessions)")
    # Counts only: no command text or output of the sessions appears.
    assert "packages/coding-agent" not in proc.stdout + proc.stderr
    assert not os.path.exists(broker_env.archive)
    assert not os.path.exists(broker_env.archive + ".import-state")
