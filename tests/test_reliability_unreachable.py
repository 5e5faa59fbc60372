"""A broker that cannot be reached: fail fast when the cause is permanent, and always say why.

Three situations, each real: a read-only runtime directory (a read-only
tmpfs mounted over it; skipped where mounting is not allowed), a broker that
holds its socket but does not answer (SIGSTOP), and a foreign entry at the
socket path (a regular file, a socket nobody serves, a socket whose listener
never answers). A permanent error returns at once: the client process counts
its own connection attempts and start-ups (`ATTEMPTS`), and one of each, with
the time compared only against the 5 s bound with a wide margin, shows that no
retry loop ran.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading

import pytest

from broker_helpers import broker_pids, wait_for
from reliability_helpers import cleanup_broker_env, make_env
from run_helpers import yrun
from yarp.limits import BROKER_START_TIMEOUT_S

#: One capture through the library client, in a process of its own that counts what it tries:
#: connections (`try_connect`) and start-up paths (`connect_or_start`). Prints one JSON line.
ATTEMPTS = r"""
import json, sys, time
from yarp.clients import broker, startup
from yarp.paths import ArchiveLocation
from yarp.wire import operations as ops

counts = {"connects": 0, "startups": 0}
try_connect, connect_or_start = broker.BrokerClient.try_connect, startup.connect_or_start

def counted_connect(self, deadline):
    counts["connects"] += 1
    return try_connect(self, deadline)

def counted_startup(client, deadline):
    counts["startups"] += 1
    return connect_or_start(client, deadline)

broker.BrokerClient.try_connect, startup.connect_or_start = counted_connect, counted_startup
operation = ops.BeginCall(ops.Session("pi", "me", "s"), ops.CallMeta("c1", "bash", 1, False), {}, {}, 1)
began = time.monotonic()
try:
    with broker.BrokerClient(ArchiveLocation(sys.argv[1], False)) as client:
        client.request(operation, began + float(sys.argv[2]))
    outcome = {"code": "ok", "message": ""}
except Exception as exc:
    outcome = {"code": getattr(exc, "code", type(exc).__name__), "message": str(exc)}
print(json.dumps(dict(outcome, elapsed=time.monotonic() - began, **counts)))
"""
#: The request deadline the counted client gives itself: far beyond the 5 s bound.
DEADLINE_S = 20.0


def attempt(benv) -> dict:
    proc = subprocess.run([sys.executable, "-c", ATTEMPTS, benv.archive, str(DEADLINE_S)], env=benv.environ,
                          capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture
def benv():
    env = make_env(idle_ms=600_000)
    try:
        yield env
    finally:
        cleanup_broker_env(env)


def _mount_read_only(path: str) -> None:
    os.makedirs(path, 0o700, exist_ok=True)
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,mode=700,size=64k", "tmpfs", path],
                          capture_output=True)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a read-only tmpfs here: {proc.stderr.decode(errors='replace').strip()}")


@pytest.mark.parametrize("where", ["runtime directory", "its parent"])
def test_a_read_only_runtime_directory_fails_at_once_naming_the_path_and_the_cause(benv, where):
    base = benv.environ["XDG_RUNTIME_DIR"]
    directory = os.path.join(base, "yarp")
    mount_point = directory if where == "runtime directory" else base
    _mount_read_only(mount_point)
    try:
        got = attempt(benv)
        run = yrun(benv, "echo", "hi")
    finally:
        subprocess.run(["umount", mount_point], check=True)

    named = (os.path.join(directory, f"archive-{benv.paths.archive_id}.lock") if where == "runtime directory"
             else directory)
    assert got["code"] == "runtime_dir"
    assert named in got["message"] and "Read-only file system" in got["message"], got
    # Permanent: one look, no retry loop, and so long before the 5 s bound.
    assert got["connects"] <= 1 and got["startups"] <= 1, got
    assert got["elapsed"] < BROKER_START_TIMEOUT_S / 2, got
    assert run.returncode == 0 and run.stdout == b"hi\n"
    assert run.stderr.count(b"\n") == 1 and b"archive failed after command execution: cannot use " in run.stderr
    assert b"Read-only file system" in run.stderr
    assert broker_pids(benv.archive) == []


def test_a_stopped_broker_is_named_with_its_pid_socket_and_the_bound(benv):
    assert attempt(benv)["code"] == "ok"
    pid = wait_for(lambda: broker_pids(benv.archive))[0]
    os.kill(pid, signal.SIGSTOP)
    try:
        got = attempt(benv)
        run = yrun(benv, "echo", "hi")
    finally:
        os.kill(pid, signal.SIGCONT)

    silent = f"broker pid {pid} does not answer on {benv.paths.socket} (no answer within 5 s)"
    assert got["code"] == "unresponsive" and got["message"] == silent, got
    # It is waited for up to the bound, not the request's whole deadline, and not again.
    assert got["connects"] == 1 and got["startups"] == 0, got
    assert got["elapsed"] < DEADLINE_S / 2, got
    assert run.returncode == 0 and run.stdout == b"hi\n"
    assert run.stderr == f"yarp: archive failed after command execution: {silent}\n".encode()
    # Once it runs again it serves as before.
    assert attempt(benv)["code"] == "ok"


def test_a_regular_file_at_the_socket_path_fails_at_once_naming_it(benv):
    socket_path = benv.paths.socket
    with open(socket_path, "w") as f:
        f.write("not a socket")
    os.chmod(socket_path, 0o600)

    got = attempt(benv)

    assert got["code"] == "unsafe_path" and got["message"] == f"broker socket {socket_path} is not a socket", got
    assert got["connects"] == 1 and got["startups"] == 0, got
    assert got["elapsed"] < BROKER_START_TIMEOUT_S / 2, got
    with open(socket_path) as f:
        assert f.read() == "not a socket", "a foreign entry was touched"


def _foreign_socket(path: str, listen: bool) -> socket.socket:
    old = os.umask(0o177)
    try:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind(path)
    finally:
        os.umask(old)
    if listen:
        sock.listen(16)
    return sock


@pytest.mark.parametrize("listen", [False, True], ids=["nobody serves it", "its listener never answers"])
def test_a_socket_no_broker_owns_is_replaced_by_a_broker(benv, listen):
    foreign = _foreign_socket(benv.paths.socket, listen)
    accepted = []
    stop = threading.Event()

    def accept() -> None:
        foreign.settimeout(0.05)
        while not stop.is_set():
            try:
                accepted.append(foreign.accept()[0])
            except (socket.timeout, OSError):
                continue

    thread = threading.Thread(target=accept)
    if listen:
        thread.start()
    try:
        got = attempt(benv)
    finally:
        stop.set()
        if listen:
            thread.join(5)
        for conn in accepted:
            conn.close()
        foreign.close()

    # No process holds the archive's lifetime lock, so the entry is stale: removed, and a broker started.
    assert got["code"] == "ok", got
    assert got["startups"] == 1 and got["connects"] <= 3, got
    assert len(accepted) <= 2, "the listener was asked again and again"
    assert got["elapsed"] < BROKER_START_TIMEOUT_S, got
    assert len(broker_pids(benv.archive)) == 1
