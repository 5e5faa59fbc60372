"""`yarp archive prune --before TIME` as a real command against a real broker and archive.

Only finished calls older than TIME go; calls that are still `started` stay
however old they are; payloads nothing references any more are removed and the
freed pages are returned to the filesystem; the command prints
`pruned_calls: N`. A time the command line's grammar does not read is a usage error (64).

On an archive made by bench/archive_gen.py (the archive's own writer), the
broker prunes in short steps between other requests: `yarp run` and ingest
captures (begin_call with a 2 s deadline) sent without pause during the prune
are all archived and readable, and the count stays exact. The client hears the
prune's progress (a terminal shows it, a pipe does not), each word renewing
its wait. A broker killed mid-prune leaves whole steps behind and a rerun
finishes the job; a broker stopped mid-prune says how many calls went.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ingest_helpers import Sandbox, begin_call, finish_call, result_before, session
from prune_load import CaptureLoad, check_archived, prunable
from terminal import on_a_terminal
from yarp.commands.archive_prune import parse_utc
from yarp.errors import UsageError

CUT_MS = 1_700_000_000_000
CUT_TEXT = "2023-11-14T22:13:20Z"


@pytest.fixture
def sandbox(tmp_path):
    sb = Sandbox.create(tmp_path / "sb", idle_ms=500)
    yield sb
    sb.close()


def add_call(ing, sess, call_id: str, result, *, finished_at_ms: int | None) -> None:
    assert ing.request(begin_call(sess, call_id, tool="read", input_before={"id": call_id}, started_at_ms=1))["ok"]
    assert ing.request(result_before(sess, call_id, result))["ok"]
    if finished_at_ms is not None:
        assert ing.request(finish_call(sess, call_id, {"done": True}, finished_at_ms=finished_at_ms))["ok"]


def test_prune_deletes_only_old_finished_calls_and_vacuums(sandbox):
    sess = session("sess-prune")
    shared = {"content": "shared between a pruned and a kept call"}
    ing = sandbox.ingest()
    for i in range(30):
        blob = {"blob": base64.b64encode(os.urandom(64 * 1024)).decode()}
        add_call(ing, sess, f"old-{i}", blob, finished_at_ms=CUT_MS - 1 - i)
    add_call(ing, sess, "old-shared", shared, finished_at_ms=CUT_MS - 1)
    add_call(ing, sess, "at-cut", {"n": 1}, finished_at_ms=CUT_MS)
    add_call(ing, sess, "new-shared", shared, finished_at_ms=CUT_MS + 1000)
    add_call(ing, sess, "started-ancient", {"n": 2}, finished_at_ms=None)
    assert ing.wait() == 0
    sandbox.wait_no_broker()  # idle exit checkpoints the WAL into the main file
    size_before = os.path.getsize(sandbox.archive)
    (pages_before,) = sandbox.query("PRAGMA page_count")[0]

    done = sandbox.yarp("archive", "prune", "--before", CUT_TEXT)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"pruned_calls: 31\n", b"")

    assert sorted(r[0] for r in sandbox.query("SELECT source_call_id FROM tool_calls")) == [
        "at-cut", "new-shared", "started-ancient"]
    assert sandbox.query("SELECT status FROM tool_calls WHERE source_call_id = 'started-ancient'") == [("started",)]
    # Every remaining payload is referenced, and the one shared with a kept call survived.
    assert sandbox.query("SELECT count(*) FROM payloads WHERE sha256 NOT IN"
                         " (SELECT payload_sha256 FROM snapshots)") == [(0,)]
    assert sandbox.query("SELECT count(*) FROM snapshots s JOIN tool_calls c ON c.id = s.tool_call_id"
                         " WHERE c.source_call_id = 'new-shared'") == [(4,)]
    assert sandbox.query("PRAGMA foreign_key_check") == []
    # Incremental vacuum returned the freed pages.
    assert sandbox.query("PRAGMA freelist_count") == [(0,)]
    (pages_after,) = sandbox.query("PRAGMA page_count")[0]
    assert pages_after < pages_before / 4, (pages_before, pages_after)
    sandbox.wait_no_broker()
    assert os.path.getsize(sandbox.archive) < size_before / 4

    again = sandbox.yarp("archive", "prune", "--before", CUT_TEXT)
    assert (again.returncode, again.stdout) == (0, b"pruned_calls: 0\n")


def test_prune_of_an_empty_archive_prints_zero(sandbox):
    from archive_factory import ArchiveFactory

    ArchiveFactory(sandbox.archive).close()  # the schema, no call
    done = sandbox.yarp("archive", "prune", "--before", "2030-01-01T00:00:00.5Z")
    assert (done.returncode, done.stdout, done.stderr) == (0, b"pruned_calls: 0\n", b"")


def test_prune_of_a_missing_archive_is_refused_and_creates_none(sandbox):
    done = sandbox.yarp("archive", "prune", "--before", "2030-01-01T00:00:00.5Z")
    assert (done.returncode, done.stdout) == (74, b"")
    assert b"does not exist: there is nothing to prune" in done.stderr
    assert sandbox.brokers() == [] and not sandbox.archive.exists()


# (Offsets, dates, ages and Unix milliseconds are times the grammar reads: tests/test_times.py.)
@pytest.mark.parametrize("when", ["", "soon", "2023-02-30T00:00:00Z", "2023-11-14T25:00:00Z", "1969-12-31T23:59:59Z"])
def test_a_time_that_is_not_rfc3339_utc_exits_64(sandbox, when):
    done = sandbox.yarp("archive", "prune", "--before", when)
    assert done.returncode == 64, done
    assert done.stdout == b""
    assert done.stderr.count(b"\n") == 1 and b"--before" in done.stderr
    assert sandbox.brokers() == [] and not sandbox.archive.exists()


def test_missing_before_is_a_usage_error(sandbox):
    done = sandbox.yarp("archive", "prune")
    assert done.returncode == 64 and b"--before" in done.stderr


def test_parse_before_reads_milliseconds_and_offsets():
    # --before reads the command line's one time grammar (tests/test_times.py has the rest).
    assert parse_utc(CUT_TEXT) == CUT_MS
    assert parse_utc("2023-11-14t22:13:20.123456z") == CUT_MS + 123
    assert parse_utc("1970-01-01T00:00:00.9Z") == 900
    assert parse_utc("2023-11-14T17:13:20-05:00") == CUT_MS
    for text in ("2023-11-14T22:13:20.Z", "2023-11-14T22:13:60Z", "1969-12-31T23:59:59Z"):
        with pytest.raises(UsageError):
            parse_utc(text)


# --- a large archive: the prune runs in steps, captures go on ---------------------------------

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

#: 20,000 generated calls; the cut is the median call's finish time, so half of them go.
GEN_CALLS = 20_000
GEN_CUT = "2026-01-04T11:20:00Z"
#: Small steps, so that the prune of 10,000 calls takes a few hundred of them.
SMALL_STEPS = {"YARP_BROKER_PRUNE_CALLS": "64", "YARP_BROKER_PRUNE_STEP_MS": "20"}


def generated_archive(directory: Path, calls: int) -> Path:
    from archive_gen import generate

    path = directory / "arch" / "tool-calls.sqlite3"
    generate(path, calls)
    return path


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    return generated_archive(tmp_path_factory.mktemp("generated"), GEN_CALLS)


def sandbox_with(archive: Path, root: Path, env: dict) -> Sandbox:
    sb = Sandbox.create(root, idle_ms=2000)
    shutil.copyfile(archive, sb.archive)
    os.chmod(sb.archive, 0o600)
    sb.extra_env.update(env)
    return sb


@pytest.fixture
def big(generated, tmp_path):
    sb = sandbox_with(generated, tmp_path / "big", SMALL_STEPS)
    yield sb
    sb.close()


def assert_whole(sb: Sandbox) -> None:
    """Integrity, foreign keys, no payload left without a snapshot."""
    assert sb.query("PRAGMA integrity_check") == [("ok",)]
    assert sb.query("PRAGMA foreign_key_check") == []
    assert sb.query("SELECT count(*) FROM payloads p WHERE NOT EXISTS"
                    " (SELECT 1 FROM snapshots s WHERE s.payload_sha256 = p.sha256)") == [(0,)]


def prune_under_load(sb: Sandbox, cut: str, out_dir: Path, *, sessions: int = 1) -> None:
    """Prune at `cut` with captures running all along; every capture archived, the count exact."""
    cut_ms = parse_utc(cut)
    expected = prunable(sb.archive, cut_ms)
    (calls_before,) = sb.query("SELECT count(*) FROM tool_calls")[0]
    load = CaptureLoad(sb, out_dir, runs=1, sessions=sessions).start()
    while load.count() < 2:  # the broker is up and captures flow
        time.sleep(0.05)
    started = time.monotonic()
    done = sb.yarp("archive", "prune", "--before", cut, timeout=900)
    ended = time.monotonic()
    time.sleep(0.5)
    probes = load.stop()
    assert (done.returncode, done.stdout, done.stderr) == (0, f"pruned_calls: {expected}\n".encode(), b"")
    assert prunable(sb.archive, cut_ms) == 0
    assert check_archived(sb.archive, probes) == []
    # Captures committed while the prune ran, not after it: both kinds began and ended inside it.
    inside = {p.kind for p in probes if p.ended - p.latency_s > started and p.ended < ended}
    assert inside == {"run", "begin_call"}, (len(probes), ended - started)
    assert sb.query("SELECT count(*) FROM tool_calls") == [(calls_before - expected + len(probes),)]
    assert_whole(sb)
    assert sb.query("PRAGMA freelist_count") == [(0,)]


def test_captures_go_on_during_a_prune_of_a_large_archive_and_every_one_is_archived(big, tmp_path):
    assert prunable(big.archive, parse_utc(GEN_CUT)) > GEN_CALLS // 3
    prune_under_load(big, GEN_CUT, tmp_path / "out")


@pytest.mark.soak
def test_captures_go_on_during_a_prune_of_100k_calls(tmp_path):
    """The same with 100,000 calls and the broker's own step settings (generation takes about a minute)."""
    sb = sandbox_with(generated_archive(tmp_path / "gen", 100_000), tmp_path / "sb", {})
    try:
        prune_under_load(sb, "2026-01-18T08:40:00Z", tmp_path / "out", sessions=2)
    finally:
        sb.close()


def test_progress_renews_the_wait_of_a_prune_that_outlasts_its_first_deadline(big):
    from yarp.clients.broker import BrokerClient
    from yarp.paths import resolve_archive
    from yarp.wire import operations as ops
    from yarp.wire import protocol

    big.extra_env.update({"YARP_BROKER_PRUNE_CALLS": "4", "YARP_BROKER_PRUNE_STEP_MS": "1"})
    cut_ms = parse_utc(GEN_CUT)
    expected = prunable(big.archive, cut_ms)
    frames: list[dict] = []
    with BrokerClient(resolve_archive(str(big.archive), big.env()), big.env()) as client:
        client.connect(time.monotonic() + 10)
        started = time.monotonic()
        reply = client.send(protocol.outgoing(ops.PruneBefore(cut_ms)), started + 1.0, on_progress=frames.append)
        took = time.monotonic() - started
    assert reply == {"ok": True, "prunedCalls": expected}
    assert took > 1.0, "the prune ended within its first deadline, so nothing was renewed"
    assert frames[0] == {"phase": "count", "done": 0, "total": 0, "prunedCalls": 0}
    assert len(frames) >= 2
    pruned = [f["prunedCalls"] for f in frames]
    assert pruned == sorted(pruned) and pruned[-1] <= expected
    assert {"calls"} <= {f["phase"] for f in frames}
    assert all(f["total"] == expected for f in frames if f["phase"] == "calls")


def test_a_prune_shows_its_progress_on_a_terminal(big):
    # Steps of 4 calls: the calls phase lasts well past the first second, when it is first drawn.
    big.extra_env.update({"YARP_BROKER_PRUNE_CALLS": "4", "YARP_BROKER_PRUNE_STEP_MS": "1"})
    expected = prunable(big.archive, parse_utc(GEN_CUT))
    argv = [sys.executable, "-m", "yarp", "archive", "prune", "--before", GEN_CUT]
    done, screen = on_a_terminal(argv, big.env(), stream="stderr", timeout=300)
    assert (done.returncode, done.stdout) == (0, f"pruned_calls: {expected}\n".encode())
    assert re.search(rb"pruning calls \d+/%d" % expected, screen), screen[-300:]
    assert screen.endswith(b"\r\x1b[K")  # the line is removed before the result is printed


def start_prune(sb: Sandbox, cut: str) -> subprocess.Popen:
    """`yarp archive prune` in the background; returns once its first step has committed."""
    (before,) = sb.query("SELECT count(*) FROM tool_calls")[0]
    proc = subprocess.Popen([sys.executable, "-m", "yarp", "archive", "prune", "--before", cut],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=sb.env())
    end = time.monotonic() + 120
    while sb.query("SELECT count(*) FROM tool_calls") == [(before,)]:
        assert time.monotonic() < end and proc.poll() is None, proc.poll()
        time.sleep(0.005)
    return proc


def test_a_broker_killed_mid_prune_leaves_whole_steps_and_a_rerun_finishes(big):
    cut_ms = parse_utc(GEN_CUT)
    expected = prunable(big.archive, cut_ms)
    proc = start_prune(big, GEN_CUT)
    os.kill(big.wait_broker(), signal.SIGKILL)
    out, err = proc.communicate(timeout=60)
    assert (proc.returncode, out) == (74, b"")
    assert b"outcome is unknown" in err and b"goes on with the prune" in err
    assert b"yarp archive stats" in err and err.count(b"\n") == 1
    left = prunable(big.archive, cut_ms)
    assert 0 < left < expected
    assert_whole(big)
    again = big.yarp("archive", "prune", "--before", GEN_CUT, timeout=300)
    assert (again.returncode, again.stdout) == (0, f"pruned_calls: {left}\n".encode())
    assert prunable(big.archive, cut_ms) == 0
    assert big.query("PRAGMA freelist_count") == [(0,)]  # the rerun also returned what the first freed


def test_a_broker_stopped_mid_prune_says_how_many_calls_went(big):
    cut_ms = parse_utc(GEN_CUT)
    expected = prunable(big.archive, cut_ms)
    proc = start_prune(big, GEN_CUT)
    status = big.yarp("archive", "broker", "status", "--json")
    prune = json.loads(status.stdout)["prune"]  # the broker's status shows the prune going on
    assert prune["phase"] == "calls" and 0 < prune["done"] == prune["prunedCalls"] < prune["total"] == expected
    second = big.yarp("archive", "prune", "--before", "2026-01-02T00:00:00Z")
    assert (second.returncode, second.stdout) == (74, b"")
    assert second.stderr == (b"yarp: another prune is running in the broker ('yarp archive broker status' shows it);"
                             b" prune again once it has ended\n")
    os.kill(big.wait_broker(), signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert (proc.returncode, out) == (74, b"")
    found = re.search(rb"the broker stopped during the prune after (\d+) call\(s\) were deleted; run the same prune"
                      rb" again to finish it\n\Z", err)
    assert found, err
    left = prunable(big.archive, cut_ms)
    assert int(found.group(1)) == expected - left and left > 0
    assert_whole(big)
    again = big.yarp("archive", "prune", "--before", GEN_CUT, timeout=300)
    assert (again.returncode, again.stdout) == (0, f"pruned_calls: {left}\n".encode())
