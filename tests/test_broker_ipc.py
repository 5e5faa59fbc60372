"""Private local IPC: runtime directory and socket modes, unsafe entries, peer uid, no TCP."""

from __future__ import annotations

import hashlib
import os
import socket
import stat
import subprocess
import sys
import tempfile

import pytest

from broker_helpers import (
    BrokerProcess,
    RawConn,
    archive_id_of,
    begin,
    broker_pids,
    cmdline,
    result_before,
    wait_for,
)
from broker_helpers import broker, broker_env  # noqa: F401  (fixtures)
from yarp.errors import UnsafePath
from yarp.runtime import runtime_paths

NOBODY = 65534
SECRET = "pr1vate-marker-93ad"


def test_runtime_dir_socket_modes_and_archive_identity(broker_env, broker):
    paths = broker_env.paths
    run_dir = os.path.join(broker_env.environ["XDG_RUNTIME_DIR"], "yarp")
    assert paths.directory == run_dir
    assert stat.S_IMODE(os.lstat(run_dir).st_mode) == 0o700
    st = os.lstat(paths.socket)
    assert stat.S_ISSOCK(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600
    for lock in (paths.startup_lock, paths.lifetime_lock):
        assert stat.S_IMODE(os.lstat(lock).st_mode) == 0o600
    canonical = os.path.realpath(broker_env.archive)
    expected = hashlib.sha256(canonical.encode()).digest()[:16].hex()
    assert paths.archive_id == expected == archive_id_of(broker_env.archive)
    assert os.path.basename(paths.socket) == f"archive-{expected}.sock"
    assert len(paths.socket.encode()) < 104
    assert broker_env.request(begin("modes"))["ok"] is True
    assert stat.S_IMODE(os.stat(broker_env.archive).st_mode) == 0o600


def test_symlinked_archive_path_has_the_same_identity(broker_env):
    link = os.path.join(broker_env.root, "alias")
    os.symlink(os.path.dirname(broker_env.archive), link)
    aliased = os.path.join(link, os.path.basename(broker_env.archive))
    assert runtime_paths(aliased, broker_env.environ).archive_id == broker_env.paths.archive_id


def _expect_refused(benv, wording: str) -> None:
    with pytest.raises(UnsafePath) as info:
        benv.request(begin("refused"), timeout=3)
    assert wording in info.value.message
    assert not os.path.exists(benv.archive), "a refused client must not create the archive"
    assert broker_pids(benv.archive) == []


def test_symlinked_runtime_directory_is_refused(broker_env):
    real = tempfile.mkdtemp(prefix="yr", dir=broker_env.root)
    os.symlink(real, os.path.join(broker_env.environ["XDG_RUNTIME_DIR"], "yarp"))
    _expect_refused(broker_env, "symbolic link")


def test_symlinked_xdg_runtime_dir_is_refused(broker_env):
    real = broker_env.environ["XDG_RUNTIME_DIR"]
    link = os.path.join(broker_env.root, "rl")
    os.symlink(real, link)
    broker_env.environ["XDG_RUNTIME_DIR"] = link
    _expect_refused(broker_env, "XDG_RUNTIME_DIR")


def test_foreign_owned_runtime_directory_is_refused(broker_env):
    run_dir = os.path.join(broker_env.environ["XDG_RUNTIME_DIR"], "yarp")
    os.mkdir(run_dir, 0o700)
    os.chown(run_dir, NOBODY, NOBODY)
    _expect_refused(broker_env, "owned by another user")


def test_broad_runtime_directory_is_refused(broker_env):
    run_dir = os.path.join(broker_env.environ["XDG_RUNTIME_DIR"], "yarp")
    os.mkdir(run_dir, 0o700)
    os.chmod(run_dir, 0o755)
    _expect_refused(broker_env, "broader than 0700")


def test_broad_xdg_runtime_dir_is_refused(broker_env):
    os.chmod(broker_env.environ["XDG_RUNTIME_DIR"], 0o755)
    _expect_refused(broker_env, "XDG_RUNTIME_DIR")


def test_regular_file_in_place_of_the_socket_is_refused(broker_env):
    paths = broker_env.paths
    with open(paths.socket, "w") as f:
        f.write("not a socket")
    _expect_refused(broker_env, "not a socket")
    # The broker itself refuses too, and leaves the entry alone.
    proc = BrokerProcess(broker_env)
    assert proc.wait_exit(10) != 0
    assert "not a socket" in proc.log_text() or proc.proc.returncode != 0
    assert open(paths.socket).read() == "not a socket"


def test_symlinked_socket_is_refused(broker_env):
    paths = broker_env.paths
    target = os.path.join(broker_env.root, "elsewhere.sock")
    os.symlink(target, paths.socket)
    _expect_refused(broker_env, "symbolic link")
    assert os.path.islink(paths.socket)


def test_foreign_owned_stale_socket_is_refused(broker_env):
    paths = broker_env.paths
    s = socket.socket(socket.AF_UNIX)
    s.bind(paths.socket)
    s.close()
    os.chmod(paths.socket, 0o600)
    os.chown(paths.socket, NOBODY, NOBODY)
    _expect_refused(broker_env, "owned by another user")
    assert os.path.exists(paths.socket)


def test_without_xdg_runtime_dir_the_tmp_fallback_is_used(broker_env):
    tmp = tempfile.mkdtemp(prefix="yrt", dir="/tmp")
    env = broker_env.with_env(XDG_RUNTIME_DIR=None, TMPDIR=tmp)
    code = (
        "import time\n"
        "from yarp.clients.broker import BrokerClient\n"
        "from yarp.paths import ArchiveLocation\n"
        "from yarp.wire import operations as ops\n"
        f"loc = ArchiveLocation({broker_env.archive!r}, False)\n"
        "c = BrokerClient(loc)\n"
        "s = ops.Session('pi', 'me', 's')\n"
        "r = c.request(ops.BeginCall(s, ops.CallMeta('c', 't', 1, False), {}, {}, 1), time.monotonic() + 10)\n"
        "print(c.paths.socket, c.status(time.monotonic() + 5)['pid'])\n"
    )
    try:
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=30)
        assert out.returncode == 0, out.stderr
        sock_path, pid = out.stdout.split()
        broker_env.track(int(pid))
        base = os.path.join(tmp, f"yarp-runtime-{os.geteuid()}")
        assert sock_path == os.path.join(base, "yarp", f"archive-{broker_env.paths.archive_id}.sock")
        assert stat.S_IMODE(os.lstat(base).st_mode) == 0o700
        assert stat.S_IMODE(os.lstat(os.path.join(base, "yarp")).st_mode) == 0o700
        assert stat.S_ISSOCK(os.lstat(sock_path).st_mode)
    finally:
        for pid in broker_pids(broker_env.archive):
            os.kill(pid, 9)
        subprocess.run(["rm", "-rf", tmp])


_PEER_CHILD = """
import os, socket, struct, sys
path = sys.argv[1]
os.setgroups([])
os.setresgid(65534, 65534, 65534)
os.setresuid(65534, 65534, 65534)
s = socket.socket(socket.AF_UNIX)
s.settimeout(5)
try:
    s.connect(path)
except OSError as exc:
    print("connect-failed", exc.errno)
    sys.exit(0)
hello = b'{"schema":"yarp.archive-broker.v1","binaryVersion":"x","archiveId":"%s","correlationId":"c-evil"}' % sys.argv[2].encode()
try:
    s.sendall(struct.pack(">Q", len(hello)) + hello)
    data = s.recv(4096)
except OSError as exc:
    print("reset", exc.errno)
    sys.exit(0)
print("eof" if not data else "answered")
"""


def test_peer_with_another_uid_is_rejected(broker_env, broker):
    # The runtime directory is 0700 root, so another user cannot even reach the
    # socket. To exercise the SO_PEERCRED check itself, expose the same socket
    # inode through a hard link in a traversable directory, open its mode, and
    # connect as uid 65534.
    paths = broker_env.paths
    public = tempfile.mkdtemp(prefix="yrp", dir="/tmp")
    os.chmod(public, 0o755)
    link = os.path.join(public, "s")
    os.link(paths.socket, link)
    os.chmod(link, 0o666)
    try:
        out = subprocess.run(
            [sys.executable, "-c", _PEER_CHILD, link, paths.archive_id],
            capture_output=True, text=True, timeout=30,
        )
    finally:
        os.chmod(paths.socket, 0o600)
        os.unlink(link)
        os.rmdir(public)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[0] in ("eof", "reset"), out.stdout
    wait_for(lambda: "peer_rejected" in broker.log_text(), 5)
    # The same user is still served.
    assert broker_env.request(begin("after-peer"))["ok"] is True


def _socket_inodes(pid: int) -> set[int]:
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(int(target[8:-1]))
    return inodes


def _proc_net_inodes(pid: int, table: str) -> set[int]:
    inodes = set()
    try:
        with open(f"/proc/{pid}/net/{table}") as f:
            next(f)
            for line in f:
                cols = line.split()
                if table == "unix":
                    if len(cols) >= 7:
                        inodes.add(int(cols[6]))
                else:
                    inodes.add(int(cols[9]))
    except FileNotFoundError:
        pass
    return inodes


def test_broker_holds_only_unix_sockets(broker_env, broker):
    with RawConn.ready(broker_env) as conn:
        conn.send_op(begin("no-tcp"))
        assert conn.recv_obj()["ok"] is True
        inodes = _socket_inodes(broker.pid)
        assert inodes, "the broker should hold its listening and client sockets"
        unix = _proc_net_inodes(broker.pid, "unix")
        inet = set()
        for table in ("tcp", "tcp6", "udp", "udp6", "raw", "raw6"):
            inet |= _proc_net_inodes(broker.pid, table)
        assert inodes <= unix
        assert not inodes & inet


def test_payloads_never_reach_socket_path_argv_or_log(broker_env, broker):
    sess_secret = f"session-{SECRET}"
    from yarp.wire import operations as ops

    sess = ops.Session("pi", "acct", sess_secret)
    with RawConn.ready(broker_env) as conn:
        conn.send_op(begin("leak", sess, input_obj={"command": f"cat {SECRET}"}))
        assert conn.recv_obj()["ok"] is True
        # A failing request's error must not carry the payload either.
        conn.send_op(result_before("missing-call", {"out": SECRET}, sess))
        reply = conn.recv_obj()
        assert reply["ok"] is False and SECRET not in reply["error"]
        conn.send_obj({"schema": "x", "correlationId": conn.correlation_id, "junk": SECRET})
        reply = conn.recv_obj()
        assert SECRET not in str(reply)
    assert SECRET not in broker_env.paths.socket
    for name in os.listdir(broker_env.paths.directory):
        assert SECRET not in name
    assert SECRET.encode() not in cmdline(broker.pid)
    with open(f"/proc/{broker.pid}/environ", "rb") as f:
        assert SECRET.encode() not in f.read()
    log = broker.log_text()
    assert '"event":"ready"' in log
    assert SECRET not in log and "acct" not in log


def test_client_started_broker_has_no_payload_in_argv(broker_env):
    broker_env.request(begin("argv", input_obj={"secret": SECRET}))
    (pid,) = wait_for(lambda: broker_pids(broker_env.archive))
    args = cmdline(pid)
    assert SECRET.encode() not in args
    assert b"archive\0broker" in args
    # Started detached: its own session, stdio on /dev/null.
    assert os.getsid(pid) == pid
    for fd in (0, 1, 2):
        assert os.readlink(f"/proc/{pid}/fd/{fd}") == "/dev/null"


_NO_DIRECT_CHILD = """
import os, sys, time
from yarp.clients.broker import BrokerClient
from yarp.paths import ArchiveLocation
from yarp.wire import operations as ops
archive = sys.argv[1]
c = BrokerClient(ArchiveLocation(archive, False))
s = ops.Session("pi", "me", "direct")
c.request(ops.BeginCall(s, ops.CallMeta("d", "t", 1, False), {}, {}, 1), time.monotonic() + 20)
fds = [os.readlink(f"/proc/self/fd/{fd}") for fd in os.listdir("/proc/self/fd") if os.path.exists(f"/proc/self/fd/{fd}")]
print("sqlite3" in sys.modules, any(archive in fd for fd in fds))
"""


def test_client_never_opens_the_archive_itself(broker_env, broker):
    out = subprocess.run(
        [sys.executable, "-c", _NO_DIRECT_CHILD, broker_env.archive],
        env=broker_env.environ, capture_output=True, text=True, timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "False"]
    assert broker_env.status()["requests"] >= 1
