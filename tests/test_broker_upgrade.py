"""Two YARP versions on one archive: a broker of one, clients of the other, both ways round.

Real processes throughout: this checkout and a copy of it that says it is the
next release (`version_helpers`), a broker started by one, `yarp run`
captures, prune, status and stop from the other. Every capture must be
archived exactly (read back with `yarp restore`), every view capped, and the
other version's broker must be gone: asked to drain and exit, never killed.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import textwrap
import threading
import time

import pytest
from broker_helpers import SRC, BrokerProcess, begin, broker_pids, count_rows, pid_alive, wait_gone
from run_helpers import close_run_env, make_run_env, yarp
from version_helpers import (
    BEFORE_HANDOVER,
    OTHER_VERSION,
    as_version,
    before_handover_src,
    other_version_src,
)

from yarp._version import __version__
from yarp.clients.handover import is_broker_command

CAP = 5120
#: The view may pass the cap by its closing marker lines at most.
MARKER_ALLOWANCE = 512
SEQ = ("seq", "1", "30000")
SEQ_BYTES = "".join(f"{i}\n" for i in range(1, 30001)).encode()
REF = re.compile(rb"ref=(yr_[0-9a-f]{32})")
VERSIONS = {"this": __version__, "other": OTHER_VERSION}


@pytest.fixture
def env():
    benv = make_run_env(idle_ms=600_000)  # the first broker would outlive the test on its own
    try:
        yield benv
    finally:
        close_run_env(benv, timeout=0)


def _env(benv, which: str) -> dict:
    return as_version(benv.environ, SRC if which == "this" else other_version_src())


def _status(benv, which: str) -> dict:
    result = yarp(benv, "archive", "broker", "status", "--json", env=_env(benv, which))
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def _start_broker(benv, which: str) -> int:
    assert yarp(benv, "run", "--", "true", env=_env(benv, which)).returncode == 0
    status = _status(benv, which)
    assert status["running"] and status["compatible"] and status["binaryVersion"] == VERSIONS[which]
    return status["pid"]


def _capture(benv, which: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "yarp", "run", "--", *SEQ], env=_env(benv, which),
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _check_capture(benv, which: str, proc: subprocess.Popen) -> str:
    """The capture's reference, once its view is proven capped and its archived stdout exact."""
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0 and err == b"", err[-2000:]
    assert len(out) <= CAP + MARKER_ALLOWANCE, f"{len(out)} bytes reached the agent"
    refs = set(REF.findall(out))
    assert len(refs) == 1, out[-600:]
    ref = refs.pop().decode()
    restored = yarp(benv, "restore", ref, env=_env(benv, which))
    assert restored.returncode == 0 and restored.stdout == SEQ_BYTES, restored.stderr
    return ref


@pytest.mark.parametrize("first,second", [("this", "other"), ("other", "this")])
def test_captures_of_another_version_replace_the_broker_and_lose_nothing(env, first, second):
    old_pid = _start_broker(env, first)
    # Four at once meet the old broker: one asks it to exit, the others wait on the startup lock.
    procs = [_capture(env, second) for _ in range(4)]
    refs = [_check_capture(env, second, proc) for proc in procs]
    refs += [_check_capture(env, second, _capture(env, second)) for _ in range(4)]
    assert len(set(refs)) == 8
    assert wait_gone(old_pid, 10), "the other version's broker is still running"
    status = _status(env, second)
    assert status["binaryVersion"] == VERSIONS[second] and status["pid"] != old_pid
    assert broker_pids(env.archive) == [status["pid"]]


def test_a_broker_from_before_the_hand_over_is_asked_in_a_way_it_understands(env):
    # Its code has no notion of a hand-over; its SIGTERM runs the clean shutdown every broker has.
    src = before_handover_src()
    if src is None:
        pytest.skip(f"the checkout has no commit {BEFORE_HANDOVER}")
    old = as_version(env.environ, src)
    old["YARP_NO_EXTENSIONS"] = "1"  # its own pure-Python twins, not this tree's compiled kernels
    assert yarp(env, "run", "--", "true", env=old).returncode == 0
    status = json.loads(yarp(env, "archive", "broker", "status", "--json", env=old).stdout)
    assert "compatible" not in status, "the old command's own status"
    procs = [_capture(env, "this") for _ in range(3)]
    refs = [_check_capture(env, "this", proc) for proc in procs]
    assert len(set(refs)) == 3
    assert wait_gone(status["pid"], 10)
    assert _status(env, "this")["binaryVersion"] == __version__


def test_both_versions_at_once_take_turns_and_lose_nothing(env):
    # Clients of two versions at once replace each other's broker back and
    # forth; each hand-over drains cleanly, so every capture still lands.
    _start_broker(env, "this")
    refs: list[str] = []
    errors: list[BaseException] = []

    def loop(which: str) -> None:
        try:
            for _ in range(4):
                refs.append(_check_capture(env, which, _capture(env, which)))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=loop, args=(which,)) for which in ("this", "other", "this", "other")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)
    assert not errors, errors[0]
    assert len(set(refs)) == 16
    assert len(broker_pids(env.archive)) == 1


def test_prune_and_status_through_a_broker_of_another_version(env):
    old_pid = _start_broker(env, "other")
    status = _status(env, "this")
    assert status == {"running": True, "compatible": False, "binaryVersion": OTHER_VERSION, "pid": old_pid,
                      "note": status["note"]}
    text = yarp(env, "archive", "broker", "status", env=_env(env, "this"))
    assert text.returncode == 0 and f"binaryVersion: {OTHER_VERSION}".encode() in text.stdout
    assert b"compatible: False" in text.stdout and pid_alive(old_pid), "status never stops a broker"
    pruned = yarp(env, "archive", "prune", "--before", "2000-01-01T00:00:00Z", env=_env(env, "this"))
    assert pruned.returncode == 0, pruned.stderr
    assert wait_gone(old_pid, 10)
    assert _status(env, "this")["binaryVersion"] == __version__


def test_a_refused_handshake_does_not_hold_off_the_idle_exit(env):
    broker = BrokerProcess(env, env=env.with_env(YARP_BROKER_IDLE_MS=1000)).wait_ready()
    hello = json.dumps({"schema": "yarp.archive-broker.v1", "binaryVersion": "0.0.0-other",
                        "archiveId": env.paths.archive_id, "correlationId": "c-other"}).encode()
    refused = 0
    end = time.monotonic() + 8
    while broker.proc.poll() is None and time.monotonic() < end:
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(2)
                sock.connect(env.paths.socket)
                sock.sendall(len(hello).to_bytes(8, "big") + hello)
                answer = sock.recv(4096)
            assert b'"ok":false' in answer.replace(b" ", b"")
            refused += 1
        except OSError:
            pass  # the broker is going: its socket is gone or closing
        time.sleep(0.1)
    assert broker.proc.poll() == 0, "refused clients kept the broker from its idle exit"
    assert refused >= 5
    assert '"reason":"idle"' in broker.log_text()


_IMPOSTOR = textwrap.dedent("""
    import fcntl, json, os, signal, socket, sys
    path, lifetime, archive_id, marker = sys.argv[1:5]
    signal.signal(signal.SIGTERM, lambda *_: open(marker, "w").close())
    lock = os.open(lifetime, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(lock, fcntl.LOCK_EX)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    os.umask(0o177)
    server.bind(path)
    server.listen(8)
    print("listening", flush=True)
    answer = json.dumps({"schema": "yarp.archive-broker.v1", "binaryVersion": "9.9.9", "archiveId": archive_id,
                         "correlationId": "", "ok": False, "code": "handshake",
                         "error": "handshake binary version differs from the broker's"}).encode()
    while True:
        conn, _ = server.accept()
        conn.recv(4096)
        conn.sendall(len(answer).to_bytes(8, "big") + answer)
        conn.close()
""")


def test_a_process_that_is_not_a_yarp_broker_is_never_signalled(env):
    # It answers like a broker of another version and holds the lifetime lock,
    # but its command line is not a YARP broker's: the client waits, then says why.
    paths = env.paths
    marker = os.path.join(env.root, "signalled")
    impostor = subprocess.Popen([sys.executable, "-c", _IMPOSTOR, paths.socket, paths.lifetime_lock,
                                 paths.archive_id, marker], stdout=subprocess.PIPE, text=True)
    env.track(impostor.pid)
    assert impostor.stdout.readline() == "listening\n"
    from yarp.clients.broker import BrokerClient
    from yarp.errors import BrokerUnavailable

    with BrokerClient(env.location, env.environ) as client, pytest.raises(BrokerUnavailable) as raised:
        client.connect(time.monotonic() + 1.5)
    assert "yarp 9.9.9" in raised.value.message and "not a process this user may stop" in raised.value.message
    assert impostor.poll() is None and not os.path.exists(marker)
    impostor.kill()
    impostor.wait(10)


def test_broker_stop_finishes_admitted_work_and_acknowledges_it(env):
    acked: list[str] = []
    errors: list[BaseException] = []
    stop_now = threading.Event()
    first = env.request(begin("load-0"))
    acked.append(first["archiveRef"])
    old_pid = env.status()["pid"]

    def load() -> None:
        i = 1
        try:
            with env.client() as client:
                while not stop_now.is_set():
                    acked.append(client.request(begin(f"load-{i}"), time.monotonic() + 20)["archiveRef"])
                    i += 1
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    thread = threading.Thread(target=load)
    thread.start()
    time.sleep(0.5)
    stopped = yarp(env, "archive", "broker", "stop", "--json")
    time.sleep(0.5)  # the load goes on through a broker started after the stop
    stop_now.set()
    thread.join(60)
    assert stopped.returncode == 0, stopped.stderr
    report = json.loads(stopped.stdout)
    assert report["stopped"] is True and report["pid"] == old_pid and report["binaryVersion"] == __version__
    assert report["status"]["requests"] >= 1
    assert not pid_alive(old_pid)
    assert not errors, errors[0]
    assert len(acked) == len(set(acked)) == count_rows(env, "tool_calls")
    assert env.status()["pid"] != old_pid


def test_broker_stop_with_none_running_and_with_another_version(env):
    nothing = yarp(env, "archive", "broker", "stop")
    assert nothing.returncode == 0 and nothing.stdout == b"broker: not running\n"
    old_pid = _start_broker(env, "other")
    stopped = yarp(env, "archive", "broker", "stop", env=_env(env, "this"))
    assert stopped.returncode == 0, stopped.stderr
    assert stopped.stdout.startswith(f"stopped: the broker of yarp {OTHER_VERSION} (pid {old_pid})".encode())
    assert wait_gone(old_pid, 5)
    assert not os.path.exists(env.paths.socket)
    wal = env.archive + "-wal"
    assert not os.path.exists(wal) or os.path.getsize(wal) == 0, "the WAL was not checkpointed"
    assert yarp(env, "archive", "broker", "status").stdout == b"broker: not running\n"


def test_only_a_yarp_broker_command_line_counts_as_a_broker():
    def argv(text: str) -> list[bytes]:
        return text.encode().split(b" ")

    assert is_broker_command(argv("/usr/bin/python3 -m yarp archive broker --archive /a/x.sqlite3"))
    assert is_broker_command(argv("/venv/bin/python /venv/bin/yarp archive broker --foreground") + [b""])
    assert is_broker_command(argv("yarp archive broker"))
    assert not is_broker_command(argv("/venv/bin/yarp archive broker status"))
    assert not is_broker_command(argv("/venv/bin/yarp archive broker stop --json"))
    assert not is_broker_command(argv("/opt/notyarp archive broker"))
    assert not is_broker_command(argv("/usr/bin/sleep 100"))
    assert not is_broker_command(argv("python -m yarp run -- archive broker"))
