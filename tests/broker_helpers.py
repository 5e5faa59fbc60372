"""Fixtures and helpers for tests that talk to a real broker process.

Everything here is real: a `python -m yarp archive broker` process, a Unix
socket in a private runtime directory, and a SQLite file. Runtime directories
come from `tempfile.mkdtemp(prefix="yr")` under /tmp rather than pytest's
`tmp_path`, because the socket path must stay under 104 bytes.

Use the `broker_env` fixture for an isolated environment (its own
XDG_RUNTIME_DIR, archive directory and a short idle grace), `BrokerProcess`
to run a broker in the foreground and kill it at teardown, and `RawConn` to
speak the wire protocol byte by byte.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import socket
import sqlite3
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

import orjson
import pytest

from yarp.wire import operations as ops
from yarp.wire import protocol
from yarp._version import __version__
from yarp.paths import ArchiveLocation
from yarp.runtime import RuntimePaths, runtime_paths

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
#: Idle grace used by default in broker tests: long enough not to fire mid-test.
TEST_IDLE_MS = 3000


@dataclass
class BrokerEnv:
    """An isolated place for one or more brokers: runtime dir, archive, environment."""

    root: str
    environ: dict
    location: ArchiveLocation
    _procs: list = field(default_factory=list)

    @property
    def archive(self) -> str:
        return self.location.path

    @property
    def paths(self) -> RuntimePaths:
        return runtime_paths(self.location.path, self.environ)

    def with_env(self, **overrides) -> dict:
        env = dict(self.environ)
        for key, value in overrides.items():
            if value is None:
                env.pop(key, None)
            else:
                env[key] = str(value)
        return env

    def client(self):
        from yarp.clients.broker import BrokerClient

        return BrokerClient(self.location, self.environ)

    def request(self, operation, timeout: float = 20.0) -> dict:
        with self.client() as client:
            return client.request(operation, time.monotonic() + timeout)

    def status(self, timeout: float = 10.0) -> dict:
        with self.client() as client:
            return client.status(time.monotonic() + timeout)

    def track(self, pid: int) -> None:
        """Kill `pid` at teardown if it is still running (brokers started by clients)."""
        self._procs.append(pid)

    def db(self) -> sqlite3.Connection:
        return sqlite3.connect(f"file:{self.archive}?mode=ro", uri=True)


def make_broker_env(idle_ms: int = TEST_IDLE_MS, **extra) -> BrokerEnv:
    root = tempfile.mkdtemp(prefix="yr", dir="/tmp")
    os.chmod(root, 0o700)
    run_dir = os.path.join(root, "r")
    data_dir = os.path.join(root, "a")
    home = os.path.join(root, "h")
    for d in (run_dir, data_dir, home):
        os.mkdir(d, 0o700)
    env = dict(os.environ)
    # The twin switch (`make test-twin`) is kept: brokers must run what the test run asked for.
    # The developer's own state and cache directories are not the test's: the private HOME's defaults are.
    for key in ("YARP_ARCHIVE", "YARP_CONFIG", "YARP_BROKER_POOL", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        env.pop(key, None)
    env.update(
        HOME=home,
        XDG_RUNTIME_DIR=run_dir,
        XDG_DATA_HOME=os.path.join(home, "data"),
        XDG_CONFIG_HOME=os.path.join(home, "config"),
        YARP_BROKER_IDLE_MS=str(idle_ms),
        PYTHONPATH=SRC + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else ""),
    )
    env.update({k: str(v) for k, v in extra.items()})
    return BrokerEnv(root, env, ArchiveLocation(os.path.join(data_dir, "tool-calls.sqlite3"), False))


def cleanup_broker_env(benv: BrokerEnv) -> None:
    for pid in benv._procs:
        kill_pid(pid)
    # Brokers started on demand by clients in this environment.
    for pid in broker_pids(benv.archive):
        kill_pid(pid)
    shutil.rmtree(benv.root, ignore_errors=True)


@pytest.fixture
def broker_env():
    """An isolated runtime dir + private archive dir; brokers in it die at teardown."""
    benv = make_broker_env()
    try:
        yield benv
    finally:
        cleanup_broker_env(benv)


# --- processes -------------------------------------------------------------------


def kill_pid(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        wait_gone(pid, 5)


def pid_alive(pid: int) -> bool:
    """True while `pid` runs (a zombie counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rsplit(b")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state not in (b"Z", b"X")


def wait_gone(pid: int, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if not pid_alive(pid):
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass
            return True
        time.sleep(0.01)
    return not pid_alive(pid)


def cmdline(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read()
    except OSError:
        return b""


def broker_pids(archive: str) -> list[int]:
    """Live broker processes serving `archive`, found by their command line."""
    needle = archive.encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        args = cmdline(int(name)).split(b"\0")
        if b"broker" in args and b"archive" in args and needle in args and pid_alive(int(name)):
            if not (len(args) > args.index(b"broker") + 1 and args[args.index(b"broker") + 1] == b"status"):
                found.append(int(name))
    return found


class BrokerProcess:
    """`python -m yarp archive broker --foreground` as a real child process.

    Its JSON log goes to a file (`log_text()`), readiness is the `ready` log
    event plus a working handshake, and `stop()` (also at teardown) kills it.
    """

    def __init__(self, benv: BrokerEnv, *, env: dict | None = None, extra_args: tuple = ()) -> None:
        self.benv = benv
        self.log_path = os.path.join(benv.root, f"broker-{time.monotonic_ns()}.log")
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "yarp", "archive", "broker", "--foreground", "--archive", benv.archive, *extra_args],
            env=env or benv.environ,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self._log,
        )
        benv.track(self.proc.pid)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def log_text(self) -> str:
        with open(self.log_path, encoding="utf-8", errors="replace") as f:
            return f.read()

    def events(self) -> list[dict]:
        out = []
        for line in self.log_text().splitlines():
            try:
                out.append(orjson.loads(line))
            except orjson.JSONDecodeError:
                continue
        return out

    def wait_ready(self, timeout: float = 30.0) -> "BrokerProcess":
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise AssertionError(f"broker exited with {self.proc.returncode}: {self.log_text()[-2000:]}")
            if '"event":"ready"' in self.log_text():
                return self
            time.sleep(0.01)
        raise AssertionError("broker did not become ready")

    def wait_exit(self, timeout: float = 10.0) -> int:
        return self.proc.wait(timeout)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self._log.close()


@pytest.fixture
def broker(broker_env):
    """A running foreground broker for `broker_env` (killed at teardown)."""
    proc = BrokerProcess(broker_env).wait_ready()
    try:
        yield proc
    finally:
        proc.stop()


# --- raw wire access ------------------------------------------------------------------


class RawConn:
    """A blocking Unix-socket connection that speaks frames without the client's checks."""

    def __init__(self, path: str, timeout: float = 20.0) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self.buf = b""
        self.correlation_id = ""

    @classmethod
    def ready(cls, benv: BrokerEnv, timeout: float = 20.0) -> "RawConn":
        """Connected and handshaken with a fresh correlation id."""
        conn = cls(benv.paths.socket, timeout)
        conn.handshake(benv.paths.archive_id)
        return conn

    def handshake(self, archive_id: str, correlation_id: str | None = None) -> dict:
        correlation_id = correlation_id or f"t-{os.getpid()}-{time.monotonic_ns()}"
        self.send_obj(
            {"schema": protocol.SCHEMA, "binaryVersion": __version__, "archiveId": archive_id, "correlationId": correlation_id}
        )
        reply = self.recv_obj()
        assert reply["ok"] is True, reply
        self.correlation_id = correlation_id
        return reply

    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def send_frame(self, body: bytes) -> None:
        self.sock.sendall(struct.pack(">Q", len(body)) + body)

    def send_obj(self, obj) -> None:
        self.send_frame(orjson.dumps(obj))

    def send_op(self, operation, deadline_ms: int = 10_000) -> None:
        self.send_frame(protocol.envelope(operation, self.correlation_id, deadline_ms))

    def recv_frame(self) -> bytes | None:
        """The next whole frame, or None at EOF."""
        while True:
            if len(self.buf) >= 8:
                (length,) = struct.unpack(">Q", self.buf[:8])
                if len(self.buf) >= 8 + length:
                    body, self.buf = self.buf[8 : 8 + length], self.buf[8 + length :]
                    return body
            try:
                chunk = self.sock.recv(1 << 16)
            except ConnectionResetError:
                return None
            if not chunk:
                return None
            self.buf += chunk

    def recv_obj(self):
        frame = self.recv_frame()
        return None if frame is None else orjson.loads(frame)

    def at_eof(self) -> bool:
        """True when the broker closed the connection (after any pending frames)."""
        return self.recv_frame() is None

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> "RawConn":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# --- operations -----------------------------------------------------------------------


def session(n: int | str = 1) -> ops.Session:
    return ops.Session("pi", "tester", f"session-{n}")


def begin(call: str, sess: ops.Session | None = None, *, input_obj=None, tool: str = "bash") -> ops.BeginCall:
    sess = sess or session()
    inp = input_obj if input_obj is not None else {"command": f"echo {call}"}
    return ops.BeginCall(sess, ops.CallMeta(call, tool, 1_700_000_000_000, False), inp, inp, 1_700_000_000_001)


def result_before(call: str, result, sess: ops.Session | None = None) -> ops.ResultBefore:
    return ops.ResultBefore(sess or session(), call, result, 1_700_000_000_002)


def finish(call: str, result, sess: ops.Session | None = None) -> ops.FinishCall:
    return ops.FinishCall(sess or session(), call, result, False, True, 1_700_000_000_003)


def archive_id_of(path: str) -> str:
    return hashlib.sha256(os.path.realpath(path).encode()).digest()[:16].hex()


def count_rows(benv: BrokerEnv, table: str) -> int:
    conn = benv.db()
    try:
        return conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    finally:
        conn.close()


def wait_for(predicate, timeout: float = 20.0, interval: float = 0.01):
    end = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError("condition not reached in time")
        time.sleep(interval)


def pipeline(benv: BrokerEnv, operations: list, connections: int = 32, deadline_ms: int = 20_000) -> list[dict]:
    """Send `operations` over `connections` concurrent connections, each pipelining
    its share; return the replies in the order of `operations`."""
    import threading

    shares = [list(range(i, len(operations), connections)) for i in range(connections)]
    replies: list = [None] * len(operations)
    errors: list = []

    def worker(indexes: list[int]) -> None:
        try:
            with RawConn.ready(benv, timeout=60) as conn:
                data = b"".join(
                    struct.pack(">Q", len(f)) + f
                    for f in (protocol.envelope(operations[i], conn.correlation_id, deadline_ms) for i in indexes)
                )
                conn.send_raw(data)
                for i in indexes:
                    replies[i] = conn.recv_obj()
        except Exception as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(s,)) for s in shares if s]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return replies


class WriteLock:
    """A second SQLite connection holding the write lock behind the broker's back."""

    def __init__(self, path: str) -> None:
        self.conn = sqlite3.connect(path, isolation_level=None, timeout=5)
        self.conn.execute("BEGIN IMMEDIATE")

    def release(self) -> None:
        if self.conn is not None:
            self.conn.execute("ROLLBACK")
            self.conn.close()
            self.conn = None
