"""A full disk under the archive, through the real clients: the ingest bridge and `yarp run`.

The archive lives on a 2 MiB tmpfs mounted by the test (root only; skipped
with the reason otherwise). Filling it must give the affected requests a
terminal, bounded error — an `ok:false` acknowledgement from the bridge, raw
bytes plus one error line and the child's status from `yarp run` — and never a
success; no fallback store may appear anywhere (no new SQLite-looking file in
the environment's HOME/XDG tree or directly in /tmp); and once space returns
the same bridge captures again and the archive verifies.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

import pytest

from ingest_helpers import Ingest, begin_call, finish_call, result_before, session
from reliability_helpers import (
    archive_invariants,
    canary,
    cleanup_broker_env,
    make_env,
    new_sqlite_files,
    run_verify,
)
from yarp.limits import MAX_ERROR_CHARS
from yarp.paths import ArchiveLocation


@pytest.fixture
def small_fs():
    mnt = tempfile.mkdtemp(prefix="yrdf", dir="/tmp")
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m,mode=0700", "tmpfs", mnt], capture_output=True)
    if proc.returncode != 0:
        os.rmdir(mnt)
        pytest.skip("cannot mount a 2 MiB tmpfs (needs root and mount permission): "
                    + proc.stderr.decode(errors="replace").strip()[:200])
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", mnt], capture_output=True)
        os.rmdir(mnt)


class _EnvOf:
    """Adapter so `ingest_helpers.Ingest` runs in a reliability environment."""

    def __init__(self, benv) -> None:
        self.benv = benv

    def env(self) -> dict:
        return self.benv.environ


def _fill(path: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        while True:
            os.write(fd, b"\0" * 65536)
    except OSError:
        pass
    try:
        while True:
            os.write(fd, b"\0" * 512)
    except OSError:
        pass
    finally:
        os.close(fd)


def test_full_disk_is_terminal_bounded_and_leaves_no_fallback(small_fs):
    benv = make_env(idle_ms=5000)
    archive = os.path.join(small_fs, "tool-calls.sqlite3")
    benv.location = ArchiveLocation(archive, False)
    benv.environ["YARP_ARCHIVE"] = archive
    secret = canary()
    started = time.time() - 1
    sess = session("disk-session")
    ing = Ingest(_EnvOf(benv))
    try:
        assert ing.request(begin_call(sess, "before-full"))["ok"] is True
        filler = os.path.join(small_fs, "filler")
        _fill(filler)

        # Ingest: every capture that needs space is refused, and the bridge goes on.
        refused = 0
        for i in range(3):
            big = {"blob": os.urandom(96 * 1024).hex(), "secret": secret}
            for req in (begin_call(sess, f"full-{i}", input_before=big),
                        result_before(sess, "before-full", {"out": secret, "blob": big["blob"]})):
                reply = ing.request(req, timeout=40)
                assert reply["ok"] is False, reply
                assert "archiveRef" not in reply
                assert secret not in reply["error"] and len(reply["error"]) <= MAX_ERROR_CHARS
                refused += 1
        assert ing.proc.poll() is None, "a full disk must not end the bridge"

        # yarp run: raw bytes on their own streams, one error line, the child's status.
        out = subprocess.run(
            [sys.executable, "-m", "yarp", "run", "--", "sh", "-c",
             f"head -c 300000 /dev/zero | tr '\\0' a; printf '{secret}-err' >&2; exit 7"],
            env=benv.environ, capture_output=True, timeout=120, stdin=subprocess.DEVNULL,
        )
        assert out.returncode == 7
        assert out.stdout == b"a" * 300000
        assert out.stderr.startswith(f"{secret}-err".encode())
        errors = out.stderr[len(secret) + 4:].decode()
        assert errors.count("yarp: archive failed") == 1, errors
        assert secret not in errors

        # No fallback store anywhere the clients could have written one.
        strays = [p for p in new_sqlite_files([benv.root], started) if not p.startswith(small_fs)]
        strays += [os.path.join("/tmp", n) for n in os.listdir("/tmp")
                   if os.path.isfile(os.path.join("/tmp", n)) and os.path.getmtime(os.path.join("/tmp", n)) > started
                   and (n.endswith((".sqlite3", ".sqlite", ".db", "-wal", "-journal")))]
        assert strays == [], strays
        assert sorted(os.listdir(small_fs)) <= sorted(["filler", "tool-calls.sqlite3", "tool-calls.sqlite3-wal",
                                                        "tool-calls.sqlite3-shm"])

        # Space returns: the same bridge captures again.
        os.unlink(filler)
        assert ing.request(begin_call(sess, "after-space"))["ok"] is True
        assert ing.request(result_before(sess, "after-space", {"ok": 1}))["ok"] is True
        assert ing.request(finish_call(sess, "after-space", {"ok": 1}))["ok"] is True
        assert ing.wait(30) == 0
    finally:
        ing.kill()
        cleanup_broker_env(benv)
    counts = archive_invariants(archive)
    # Nothing refused was stored: only before-full, after-space and the run's own call(s).
    import sqlite3

    conn = sqlite3.connect(f"file:{archive}?mode=ro", uri=True)
    try:
        ids = {r[0] for r in conn.execute("SELECT source_call_id FROM tool_calls")}
        assert not any(i.startswith("full-") for i in ids)
        assert conn.execute("SELECT count(*) FROM snapshots s JOIN tool_calls c ON c.id = s.tool_call_id"
                            " WHERE c.source_call_id = 'before-full' AND s.subject = 'result'").fetchone()[0] == 0
    finally:
        conn.close()
    verify = run_verify(benv, archive)
    assert verify.returncode == 0, verify.stderr
    print("full disk:", {"refused": refused, **counts})


@pytest.mark.soak
@pytest.mark.parametrize("round_", range(10))
def test_full_disk_soak(small_fs, round_):
    test_full_disk_is_terminal_bounded_and_leaves_no_fallback(small_fs)
