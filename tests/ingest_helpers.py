"""Shared machinery for the ingest, replay, prune and Pi-session tests and the ingest benchmark.

Everything here drives real processes: `python -m yarp archive ingest` children
that start a real broker on demand, a real SQLite archive read back only through
`mode=ro` connections, and real signals (SIGSTOP, SIGKILL) for the faults. The
runtime directory lives in a short `/tmp/yr*` path because Unix socket paths
must stay under 104 bytes. `Sandbox.close` kills every broker still serving its
archive, found by its command line, never by a broad name.
"""

from __future__ import annotations

import glob
import json
import os
import select
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from archive_factory import run_switches
from shared_data import shared_path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"
PI_SESSIONS_DIR = Path(os.environ.get("YARP_PI_SESSIONS") or shared_path("data", "pi-sessions"))
HEADER = 8


def frame(body: bytes) -> bytes:
    return len(body).to_bytes(HEADER, "big") + body


def encode(obj: dict) -> bytes:
    return frame(json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass
class Sandbox:
    """A private HOME/XDG tree, a short runtime directory and an archive path."""

    root: Path
    runtime: str
    archive: Path
    idle_ms: int = 2000
    extra_env: dict = field(default_factory=dict)

    @classmethod
    def create(cls, root: Path, *, idle_ms: int = 2000) -> Sandbox:
        root.mkdir(parents=True, exist_ok=True)
        home = root / "home"
        home.mkdir(mode=0o700, exist_ok=True)
        archive_dir = root / "arch"
        archive_dir.mkdir(mode=0o700, exist_ok=True)
        os.chmod(archive_dir, 0o700)
        runtime = tempfile.mkdtemp(prefix="yr", dir="/tmp")
        os.chmod(runtime, 0o700)
        return cls(root, runtime, archive_dir / "a.sqlite3", idle_ms)

    def env(self) -> dict:
        home = self.root / "home"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("YARP_", "XDG_"))}
        env.update(
            HOME=str(home),
            XDG_DATA_HOME=str(home / ".local" / "share"),
            XDG_CONFIG_HOME=str(home / ".config"),
            XDG_STATE_HOME=str(home / ".local" / "state"),
            XDG_RUNTIME_DIR=self.runtime,
            YARP_ARCHIVE=str(self.archive),
            YARP_BROKER_IDLE_MS=str(self.idle_ms),
            PYTHONPATH=str(SRC),
            **run_switches(),
        )
        env.update(self.extra_env)
        return env

    def yarp(self, *args: str, timeout: float = 60, input: bytes | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "yarp", *args], env=self.env(), input=input,
            capture_output=True, timeout=timeout,
        )

    def ingest(self) -> Ingest:
        return Ingest(self)

    def brokers(self) -> list[int]:
        return broker_pids(str(self.archive))

    def wait_broker(self, timeout: float = 5.0) -> int:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            pids = self.brokers()
            if pids:
                return pids[0]
            time.sleep(0.01)
        raise AssertionError("no broker is running for the sandbox archive")

    def wait_no_broker(self, timeout: float = 10.0) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if not self.brokers():
                return
            time.sleep(0.02)
        raise AssertionError("the broker did not exit")

    def ro(self) -> sqlite3.Connection:
        return sqlite3.connect(f"file:{self.archive}?mode=ro", uri=True)

    def query(self, sql: str, params=()) -> list[tuple]:
        conn = self.ro()
        try:
            return conn.execute(sql, params).fetchall()
        finally:
            conn.close()

    def close(self) -> None:
        for pid in self.brokers():
            try:
                os.kill(pid, signal.SIGCONT)
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        shutil.rmtree(self.runtime, ignore_errors=True)


def broker_pids(archive_path: str) -> list[int]:
    """Processes whose command line is `… archive broker … <archive_path>`."""
    found = []
    for entry in glob.glob("/proc/[0-9]*/cmdline"):
        try:
            with open(entry, "rb") as fh:
                argv = fh.read().split(b"\0")
        except OSError:
            continue
        joined = b" ".join(argv)
        if b"archive broker" in joined and archive_path.encode() in argv:
            try:
                with open(entry.replace("cmdline", "stat"), "rb") as fh:
                    if fh.read().rsplit(b")", 1)[1].split()[0] == b"Z":
                        continue
            except (OSError, IndexError):
                continue
            found.append(int(entry.split("/")[2]))
    return found


class Ingest:
    """One `yarp archive ingest` child: write frames, read acknowledgement lines."""

    def __init__(self, sandbox: Sandbox) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "yarp", "archive", "ingest"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=sandbox.env(),
        )
        self._buf = b""
        self.next_id = 1
        self.rusage = None

    def send_raw(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, obj: dict) -> int:
        """Send one request (filling requestId/schemaVersion when absent); return its id."""
        obj = dict(obj)
        if "requestId" not in obj:
            obj["requestId"] = self.next_id
            self.next_id += 1
        obj.setdefault("schemaVersion", 1)
        self.send_raw(encode(obj))
        return obj["requestId"]

    def ack(self, timeout: float = 30.0) -> dict:
        line = self.read_line(timeout)
        if line is None:
            raise AssertionError(f"no acknowledgement; stderr: {self.stderr_text()!r}")
        return json.loads(line)

    def read_line(self, timeout: float = 30.0) -> bytes | None:
        fd = self.proc.stdout.fileno()
        end = time.monotonic() + timeout
        while b"\n" not in self._buf:
            remaining = end - time.monotonic()
            if remaining <= 0:
                raise AssertionError("timed out waiting for an acknowledgement line")
            ready, _, _ = select.select([fd], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                return None
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        return line

    def request(self, obj: dict, timeout: float = 30.0) -> dict:
        request_id = self.send(obj)
        reply = self.ack(timeout)
        assert reply["requestId"] == request_id, reply
        return reply

    def close_stdin(self) -> None:
        try:
            self.proc.stdin.close()
        except BrokenPipeError:
            pass

    def wait(self, timeout: float = 30.0) -> int:
        """Close stdin, reap the child (recording its rusage) and return its status."""
        self.close_stdin()
        end = time.monotonic() + timeout
        while True:
            pid, status, rusage = os.wait4(self.proc.pid, os.WNOHANG)
            if pid:
                self.rusage = rusage
                self.proc.returncode = os.waitstatus_to_exitcode(status)
                return self.proc.returncode
            if time.monotonic() > end:
                self.proc.kill()
                raise AssertionError("ingest did not exit")
            time.sleep(0.005)

    def rest_of_stdout(self) -> bytes:
        rest = self._buf + self.proc.stdout.read()
        self._buf = b""
        return rest

    def stderr_text(self) -> str:
        if self.proc.poll() is None:
            return ""
        return self.proc.stderr.read().decode("utf-8", "replace")

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


# --- request builders -------------------------------------------------------------------


def session(sid: str = "sess-1", agent: str = "pi", account: str = "acct-1") -> dict:
    return {"agent": agent, "account": account, "sourceSessionId": sid}


def begin_call(sess: dict, call_id: str, *, tool: str = "bash", input_before=None, input_after=None,
               requires_streams: bool = False, deadline_in_ms: int | None = None, started_at_ms: int = 1_700_000_000_000,
               **call_extra) -> dict:
    inp = {"command": "echo hi"} if input_before is None else input_before
    req = {
        "operation": "begin_call",
        "session": sess,
        "call": {"sourceCallId": call_id, "toolName": tool, "startedAtMs": started_at_ms,
                 "requiresStreams": requires_streams, **call_extra},
        "inputBefore": inp,
        "inputAfter": inp if input_after is None else input_after,
        "capturedAtMs": started_at_ms,
    }
    if deadline_in_ms is not None:
        req["deadlineAtMs"] = now_ms() + deadline_in_ms
    return req


def result_before(sess: dict, call_id: str, result, full_output_path: str | None = None) -> dict:
    req = {"operation": "result_before", "session": sess, "sourceCallId": call_id, "result": result,
           "capturedAtMs": now_ms()}
    if full_output_path is not None:
        req["fullOutputPath"] = full_output_path
    return req


def result_text(sess: dict, call_id: str, text: str, completeness: str = "complete") -> dict:
    return {"operation": "result_text", "session": sess, "sourceCallId": call_id, "text": text,
            "sourceCompleteness": completeness, "capturedAtMs": now_ms()}


def stage_result(sess: dict, call_id: str, result, is_error: bool = False) -> dict:
    return {"operation": "stage_result", "session": sess, "sourceCallId": call_id, "result": result,
            "isError": is_error, "capturedAtMs": now_ms()}


def finish_call(sess: dict, call_id: str, result, *, is_error: bool = False, executed: bool = True,
                finished_at_ms: int | None = None) -> dict:
    return {"operation": "finish_call", "session": sess, "sourceCallId": call_id, "result": result,
            "isError": is_error, "requirePreResult": executed,
            "finishedAtMs": now_ms() if finished_at_ms is None else finished_at_ms}


def update_final_result(sess: dict, call_id: str, result, *, is_error: bool = False,
                        finished_at_ms: int | None = None) -> dict:
    return {"operation": "update_final_result", "session": sess, "sourceCallId": call_id, "result": result,
            "isError": is_error, "finishedAtMs": now_ms() if finished_at_ms is None else finished_at_ms}


def capture_streams(sess: dict, call_id: str, paths: dict) -> dict:
    return {"operation": "capture_streams", "session": sess, "sourceCallId": call_id, "capturedAtMs": now_ms(),
            **paths}


def capture_passthrough(sess: dict, call_id: str, stdout_path: str, stderr_path: str) -> dict:
    return {"operation": "capture_passthrough_streams", "session": sess, "sourceCallId": call_id,
            "capturedAtMs": now_ms(), "stdoutPath": stdout_path, "stderrPath": stderr_path}


def prune_before(timestamp_ms: int) -> dict:
    return {"operation": "prune_before", "timestampMs": timestamp_ms}


def private_file(path: Path, data: bytes) -> str:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    return str(path)


def full_lifecycle(sess: dict, call_id: str, *, result=None, text: str | None = None) -> list[dict]:
    """begin_call → result_before → result_text (optional) → finish_call for one ordinary call."""
    result = {"content": [{"type": "text", "text": "ok"}], "details": None, "isError": False} if result is None else result
    reqs = [begin_call(sess, call_id, tool="read", input_before={"path": f"/src/{call_id}.py"}),
            result_before(sess, call_id, result)]
    if text is not None:
        reqs.append(result_text(sess, call_id, text))
    reqs.append(finish_call(sess, call_id, result))
    return reqs


# --- Pi sessions -------------------------------------------------------------------------


@dataclass
class PiCall:
    session_file: str
    call_id: str
    tool_name: str
    arguments: object
    started_at_ms: int
    result: dict | None  # {content, details, isError} as the Pi adapter sends it
    text: str | None  # text blocks joined without separators, when the result has text
    completeness: str
    is_error: bool


def pi_session_files() -> list[Path]:
    return sorted(PI_SESSIONS_DIR.glob("*.jsonl")) if PI_SESSIONS_DIR.is_dir() else []


def _completeness(details) -> str:
    # The contract's rule, as the Pi adapter applies it (no full-output file here).
    if not isinstance(details, dict):
        return "unknown"
    truncated = details.get("truncated")
    if not isinstance(truncated, bool) and isinstance(details.get("truncation"), dict):
        truncated = details["truncation"].get("truncated")
    if truncated is True:
        return "incomplete"
    if truncated is False:
        return "complete"
    return "unknown"


def _iso_ms(text: str) -> int:
    from datetime import datetime

    return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)


def load_pi_calls(path: Path) -> list[PiCall]:
    """Every tool call of one Pi session log, in order, paired with its result when one exists."""
    calls: dict[str, PiCall] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        entry = json.loads(line)
        if entry.get("type") != "message":
            continue
        message = entry.get("message") or {}
        stamp = message.get("timestamp")
        at = stamp if isinstance(stamp, int) else _iso_ms(entry["timestamp"])
        if message.get("role") == "assistant":
            for item in message.get("content") or []:
                if isinstance(item, dict) and item.get("type") == "toolCall":
                    calls[item["id"]] = PiCall(path.name, item["id"], item["name"], item.get("arguments", {}),
                                               at, None, None, "unknown", False)
        elif message.get("role") == "toolResult":
            call = calls.get(message.get("toolCallId"))
            if call is None:
                continue
            content = message.get("content") or []
            details = message.get("details")
            call.is_error = message.get("isError") is True
            call.result = {"content": content, "details": details, "isError": call.is_error}
            texts = [b["text"] for b in content if isinstance(b, dict) and b.get("type") == "text"
                     and isinstance(b.get("text"), str)]
            call.text = "".join(texts) if texts else None
            call.completeness = _completeness(details)
    return list(calls.values())


def pi_requests(call: PiCall, sess: dict) -> list[dict]:
    """The ingest requests an adapter sends for one Pi call (begin → result → text → finish)."""
    reqs = [{
        "operation": "begin_call",
        "session": sess,
        "call": {"sourceCallId": call.call_id, "toolName": call.tool_name, "startedAtMs": call.started_at_ms,
                 "requiresStreams": False, "provider": "anthropic"},
        "inputBefore": call.arguments,
        "inputAfter": call.arguments,
        "capturedAtMs": call.started_at_ms,
    }]
    if call.result is None:
        return reqs  # interrupted: the call stays `started`
    reqs.append({"operation": "result_before", "session": sess, "sourceCallId": call.call_id,
                 "result": call.result, "capturedAtMs": call.started_at_ms + 1})
    if call.text is not None:
        reqs.append({"operation": "result_text", "session": sess, "sourceCallId": call.call_id,
                     "text": call.text, "sourceCompleteness": call.completeness,
                     "capturedAtMs": call.started_at_ms + 2})
    reqs.append({"operation": "finish_call", "session": sess, "sourceCallId": call.call_id,
                 "result": call.result, "isError": call.is_error, "requirePreResult": True,
                 "finishedAtMs": call.started_at_ms + 3})
    return reqs
