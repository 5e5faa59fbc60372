"""The archive removed or replaced under a running broker: nothing is acknowledged into a file nobody reads.

`rm -rf ~/.local/share/yarp` (the uninstall step) or a file moved over the
archive leaves a broker writing the file it opened. Everything here is real:
a broker process, the archive directory removed or the file replaced with
`rm`/`rename`, captures through `yarp run` and the library client, a foreign
process holding SQLite's write lock so a batch is still in flight when the
file goes. Every capture ends either archived in the archive at the path
(read back with `yarp read`/`yarp restore`) or reported as failed.
"""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import subprocess
import sys
import threading
import time

import pytest

from broker_helpers import BrokerProcess, begin, finish, result_before, session, wait_for
from reliability_helpers import broker_pids, cleanup_broker_env, make_env, run_verify, wait_gone
from run_helpers import make_run_env, yarp, yrun
from test_reliability_busy import LockHolder
from yarp.errors import ArchiveReplaced
from yarp.limits import ARCHIVE_RECHECK_S
from yarp.wire import operations as ops

SEQ = b"".join(b"%d\n" % n for n in range(1, 5001))
REF = re.compile(rb"yr_[0-9a-f]{32}")


@pytest.fixture
def renv():
    benv = make_run_env(idle_ms=600_000)
    try:
        yield benv
    finally:
        cleanup_broker_env(benv)


def _only_broker(benv) -> int:
    pids = wait_for(lambda: broker_pids(benv.archive))
    assert len(pids) == 1, pids
    return pids[0]


def _copy_archive(source: str, target: str) -> None:
    """A consistent copy of the archive (SQLite's backup), private like the original."""
    src = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    dst = sqlite3.connect(target)
    try:
        src.backup(dst)
    finally:
        dst.close()
        src.close()
    os.chmod(target, 0o600)


def _assert_readable(benv, out: bytes, expected: bytes) -> None:
    """A run whose view names a reference: `yarp restore` gives back exactly what the command wrote."""
    refs = set(REF.findall(out))
    assert len(refs) == 1, out[-400:]
    restored = yarp(benv, "restore", refs.pop().decode())
    assert restored.returncode == 0, restored.stderr
    assert restored.stdout == expected


@pytest.mark.parametrize("how", ["remove_directory", "replace_file"])
def test_a_run_after_the_archive_went_away_under_an_idle_broker_lands_in_the_archive_at_the_path(renv, how):
    assert yrun(renv, "true").returncode == 0
    first = _only_broker(renv)
    directory = os.path.dirname(renv.archive)
    if how == "remove_directory":
        shutil.rmtree(directory)
    else:
        other = os.path.join(directory, "other.sqlite3")
        _copy_archive(renv.archive, other)
        os.rename(other, renv.archive)
    time.sleep(ARCHIVE_RECHECK_S + 0.1)  # the broker's next batch looks before it writes

    run = yrun(renv, "seq", "1", "5000")

    # The begin was refused unwritten; the run replayed it to a broker on the file at the path.
    assert run.returncode == 0, run.stderr
    assert b"archive failed" not in run.stderr
    _assert_readable(renv, run.stdout, SEQ)
    assert wait_gone(first, 10), "the broker of the removed file went on running"
    assert _only_broker(renv) != first
    assert os.stat(directory).st_mode & 0o777 == 0o700
    assert run_verify(renv).returncode == 0


def _capture_after_commit_into_a_removed_file(benv, start_capture) -> tuple:
    """Start a capture while a foreign process holds the write lock, remove the archive directory
    while the broker waits on it, release the lock: the broker's batch then commits into the
    removed file. Returns what `start_capture` returned, once it is done."""
    holder = LockHolder(benv.archive, "BEGIN IMMEDIATE")
    try:
        before = benv.status()["retries"]
        finish = start_capture()
        wait_for(lambda: benv.status()["retries"] > before, timeout=20)
        shutil.rmtree(os.path.dirname(benv.archive))
    finally:
        holder.release()
    return finish()


def test_a_batch_committed_into_a_removed_file_is_not_acknowledged_and_the_broker_exits():
    benv = make_env(idle_ms=600_000)
    proc = BrokerProcess(benv).wait_ready()
    try:
        assert benv.request(begin("before"))["ok"] is True
        outcome: dict = {}

        def start():
            def send():
                try:
                    outcome["reply"] = benv.request(begin("inflight"), timeout=25)
                except Exception as exc:  # asserted below
                    outcome["error"] = exc
            thread = threading.Thread(target=send)
            thread.start()
            return lambda: thread.join(30)

        _capture_after_commit_into_a_removed_file(benv, start)

        assert "reply" not in outcome, "a batch committed into a removed file was acknowledged"
        error = outcome["error"]
        assert isinstance(error, ArchiveReplaced)
        assert error.message == ("the archive file was removed or replaced under the broker; "
                                 "nothing was acknowledged")
        assert proc.wait_exit(10) == 0
        assert any(e["event"] == "archive_replaced" for e in proc.events())
        assert not os.path.exists(benv.archive), "the stopping broker wrote at the path"

        # The next client starts a broker on the path, which creates the archive as first use does.
        reply = benv.request(begin("after"))
        assert reply["ok"] is True
        db = benv.db()
        try:
            calls = {row[0]: row[1] for row in db.execute("SELECT source_call_id, archive_ref FROM tool_calls")}
        finally:
            db.close()
        assert calls == {"after": reply["archiveRef"]}
        assert run_verify(benv).returncode == 0
    finally:
        proc.stop()
        cleanup_broker_env(benv)


def test_a_run_whose_capture_committed_into_a_removed_file_shows_the_raw_output(renv):
    call = ops.BeginCall(session("run"), ops.CallMeta("c1", "bash", 1, True), {}, {}, 1)
    assert renv.request(call)["ok"] is True
    first = _only_broker(renv)
    flags = ("--archive-agent", "pi", "--archive-account", "tester", "--archive-session", "session-run",
             "--archive-call", "c1")

    def start():
        proc = subprocess.Popen([sys.executable, "-m", "yarp", "run", *flags, "--", "seq", "1", "5000"],
                                env=renv.environ, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        return lambda: (proc, *proc.communicate(timeout=60))

    proc, out, err = _capture_after_commit_into_a_removed_file(renv, start)

    # As for any archive failure after the command ran: the exact raw bytes, one line, the command's status.
    assert proc.returncode == 0
    assert out == SEQ
    assert err == (b"yarp: archive failed after command execution: the archive file was removed or "
                   b"replaced under the broker; nothing was acknowledged\n")
    assert wait_gone(first, 10)
    again = yrun(renv, "seq", "1", "5000")
    assert again.returncode == 0 and b"archive failed" not in again.stderr
    _assert_readable(renv, again.stdout, SEQ)


def test_a_prune_of_a_removed_archive_acknowledges_no_count():
    benv = make_env(idle_ms=600_000)
    proc = BrokerProcess(benv).wait_ready()
    try:
        for n in range(3):
            call = f"old-{n}"
            for operation in (begin(call), result_before(call, {"ok": True}), finish(call, {"ok": True})):
                assert benv.request(operation)["ok"] is True
        shutil.rmtree(os.path.dirname(benv.archive))

        with pytest.raises(ArchiveReplaced) as refused:
            benv.request(ops.PruneBefore(2**62))

        assert refused.value.message.endswith("nothing was acknowledged")
        assert proc.wait_exit(10) == 0
        assert not os.path.exists(benv.archive)
    finally:
        proc.stop()
        cleanup_broker_env(benv)
