"""A second local user against a live broker and archive, and files planted or swapped by an attacker.

The attacker is a real account created for the test (`useradd -M
yarp-attacker-<random>`, removed at teardown); its probes run in a child
process that has dropped to that uid. Needs root (skipped otherwise). Because
root bypasses permission checks, the defender's side is asserted through
ownership and modes, and the attacker's side through real EACCES.
"""

from __future__ import annotations

import os
import pwd
import secrets
import shutil
import stat
import subprocess
import sys

import orjson
import pytest

from broker_helpers import BrokerProcess, begin, wait_for
from reliability_helpers import canary, cleanup_broker_env, make_env, yarp_cmd
from yarp.wire import operations as ops
from yarp.errors import UnsafePath, YarpError
from yarp.paths import ArchiveLocation

_PROBE = """
import errno, json, os, socket, struct, sys
uid = int(sys.argv[1])
os.setgroups([]); os.setresgid(uid, uid, uid); os.setresuid(uid, uid, uid)
out = {}
def attempt(name, fn):
    try:
        fn(); out[name] = "ok"
    except OSError as exc:
        out[name] = errno.errorcode.get(exc.errno, str(exc.errno))
def connect():
    s = socket.socket(socket.AF_UNIX); s.settimeout(5); s.connect(sys.argv[2])
    hello = json.dumps({"schema": "yarp.archive-broker.v1", "binaryVersion": sys.argv[5],
                        "archiveId": sys.argv[6], "correlationId": "attacker"}).encode()
    s.sendall(struct.pack(">Q", len(hello)) + hello)
    data = s.recv(4096)
    if data:
        out["answered"] = data.decode("latin-1")
        return
    raise ConnectionResetError(errno.ECONNRESET, "closed")
attempt("connect", connect)
attempt("read_archive", lambda: open(sys.argv[3], "rb").read(16))
attempt("list_runtime", lambda: os.listdir(sys.argv[4]))
attempt("list_archive_dir", lambda: os.listdir(os.path.dirname(sys.argv[3])))
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def attacker():
    if os.geteuid() != 0:
        pytest.skip("creating a second local user needs root")
    name = f"yarp-attacker-{secrets.token_hex(3)}"
    made = subprocess.run(["useradd", "-M", "-s", "/usr/sbin/nologin", name], capture_output=True)
    if made.returncode != 0:
        pytest.skip(f"useradd failed: {made.stderr.decode(errors='replace').strip()[:200]}")
    try:
        yield pwd.getpwnam(name).pw_uid
    finally:
        subprocess.run(["userdel", name], capture_output=True)


def _probe(uid: int, benv, paths=None) -> dict:
    from yarp._version import __version__

    paths = paths or benv.paths
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, str(uid), paths.socket, benv.archive,
         paths.directory, __version__, paths.archive_id],
        capture_output=True, text=True, timeout=30,
    )
    assert out.returncode == 0, out.stderr
    return orjson.loads(out.stdout)


@pytest.fixture
def env():
    benv = make_env(idle_ms=600_000)
    try:
        yield benv
    finally:
        cleanup_broker_env(benv)


def test_another_user_reaches_neither_socket_nor_archive(attacker, env):
    broker = BrokerProcess(env).wait_ready()
    try:
        assert env.request(begin("private"))["ok"] is True
        for path, mode in ((env.paths.directory, 0o700), (env.paths.socket, 0o600),
                           (os.path.dirname(env.archive), 0o700), (env.archive, 0o600)):
            st = os.lstat(path)
            assert st.st_uid == os.geteuid() and stat.S_IMODE(st.st_mode) == mode, path
        seen = _probe(attacker, env)
        assert seen == {"connect": "EACCES", "read_archive": "EACCES", "list_runtime": "EACCES",
                        "list_archive_dir": "EACCES"}, seen
        assert env.request(begin("still-private"))["ok"] is True
    finally:
        broker.stop()


def test_peer_uid_check_rejects_another_user_on_a_loosened_copy(attacker, env):
    # A copy setup whose runtime directories were made traversable and whose
    # socket was opened up: only the SO_PEERCRED check stands in the way.
    broker = BrokerProcess(env).wait_ready()
    paths = env.paths
    try:
        base = env.environ["XDG_RUNTIME_DIR"]
        for d in (env.root, base, paths.directory):
            os.chmod(d, 0o711)
        os.chmod(paths.socket, 0o666)
        seen = _probe(attacker, env, paths)
        assert seen["connect"] in ("ECONNRESET", "EPIPE"), seen
        assert "answered" not in seen
        wait_for(lambda: "peer_rejected" in broker.log_text(), 10)
        # And our own clients now refuse the loosened runtime directory outright.
        with pytest.raises(UnsafePath):
            env.request(begin("loosened"), timeout=5)
    finally:
        os.chmod(env.root, 0o700)
        broker.stop()


def test_attacker_owned_runtime_and_archive_directories_are_refused(attacker, env):
    paths = env.paths
    os.chown(paths.directory, attacker, attacker)
    try:
        with pytest.raises(UnsafePath, match="owned by another user"):
            env.request(begin("x"), timeout=5)
    finally:
        os.chown(paths.directory, 0, 0)
    archive_dir = os.path.dirname(env.archive)
    os.chown(archive_dir, attacker, attacker)
    try:
        with pytest.raises(YarpError) as info:
            env.request(begin("y"), timeout=10)
        assert info.value.code in ("unsafe_path", "unavailable"), info.value
        assert not os.path.exists(env.archive)
    finally:
        os.chown(archive_dir, 0, 0)


def _stream_op(paths: dict, call: str) -> ops.CapturePassthroughStreams:
    return ops.CapturePassthroughStreams(ops.Session("pi", "victim", "s"), call, 1, paths["out"], paths["err"])


def _declared(path: str) -> ops.StreamFile:
    st = os.lstat(path)
    return ops.StreamFile(path, st.st_dev, st.st_ino, st.st_size)


def test_planted_or_swapped_stream_files_are_refused(attacker, env):
    broker = BrokerProcess(env).wait_ready()
    spool = os.path.join(env.root, "spool")
    os.mkdir(spool, 0o700)
    secret = canary()

    def private(name: str, data: bytes) -> str:
        path = os.path.join(spool, name)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.write(fd, data)
        os.close(fd)
        return path

    try:
        call = "stream-call"
        sess = ops.Session("pi", "victim", "s")
        assert env.request(ops.BeginCall(sess, ops.CallMeta(call, "bash", 1, True), {}, {}, 1))["ok"]
        err = _declared(private("err", b""))
        cases = {}
        # Swapped after declaration: same path, another inode.
        out = _declared(private("out", b"genuine"))
        os.unlink(out.path)
        private("out", b"swapped" + secret.encode())
        cases["inode"] = _stream_op({"out": out, "err": err}, call)
        # Grown after declaration: same inode, another size.
        out2 = _declared(private("out2", b"genuine"))
        with open(out2.path, "ab") as fh:
            fh.write(secret.encode())
        cases["size"] = _stream_op({"out": out2, "err": err}, call)
        # Planted by the attacker: a file the attacker owns.
        planted = private("planted", secret.encode())
        os.chown(planted, attacker, attacker)
        cases["owner"] = _stream_op({"out": _declared(planted), "err": err}, call)
        # A symlink to a file the attacker wants archived (or to ours, to exfiltrate it).
        link = os.path.join(spool, "link")
        os.symlink(planted, link)
        cases["symlink"] = _stream_op({"out": ops.StreamFile(link), "err": err}, call)
        # World-readable spool file.
        loose = private("loose", secret.encode())
        os.chmod(loose, 0o644)
        cases["mode"] = _stream_op({"out": _declared(loose), "err": err}, call)
        for name, op in cases.items():
            with pytest.raises(YarpError) as info:
                env.request(op, timeout=10)
            assert info.value.code in ("unsafe_path", "validation"), (name, info.value)
            assert secret not in info.value.message
        db = env.db()
        try:
            assert db.execute("SELECT count(*) FROM snapshots WHERE subject IN ('stdout', 'stderr')").fetchone()[0] == 0
        finally:
            db.close()
        assert secret not in broker.log_text()
    finally:
        broker.stop()


def test_broad_default_archive_is_narrowed_and_broad_override_is_an_error(env):
    # The known default location (no override anywhere): narrowed before opening.
    default_env = dict(env.environ)
    default_env.pop("YARP_ARCHIVE")
    data_dir = os.path.join(default_env["XDG_DATA_HOME"], "yarp")
    os.makedirs(data_dir, mode=0o755)
    os.chmod(data_dir, 0o755)
    default_db = os.path.join(data_dir, "tool-calls.sqlite3")
    import sqlite3

    sqlite3.connect(default_db).close()
    os.chmod(default_db, 0o644)
    benv_default = make_env(idle_ms=600_000)
    benv_default.environ.update(default_env)
    benv_default.location = ArchiveLocation(default_db, True)
    try:
        assert benv_default.request(begin("narrowed"))["ok"] is True
        assert stat.S_IMODE(os.lstat(data_dir).st_mode) == 0o700
        assert stat.S_IMODE(os.lstat(default_db).st_mode) == 0o600
    finally:
        for pid in __import__("broker_helpers").broker_pids(default_db):
            __import__("broker_helpers").kill_pid(pid)
        shutil.rmtree(benv_default.root, ignore_errors=True)

    # An explicit override that is broad: refused, and left as it was.
    override_dir = os.path.dirname(env.archive)
    os.chmod(override_dir, 0o755)
    ran = yarp_cmd(env, "archive", "ingest", input=b"", timeout=30)
    assert ran.returncode == 74
    assert b"permission" in ran.stderr.lower() or b"0700" in ran.stderr
    assert stat.S_IMODE(os.lstat(override_dir).st_mode) == 0o755
    assert not os.path.exists(env.archive)
