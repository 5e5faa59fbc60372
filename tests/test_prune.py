"""`yarp archive prune --before TIME` as a real command against a real broker and archive.

Only finished calls older than TIME go; calls that are still `started` stay
however old they are; payloads nothing references any more are removed and the
freed pages are returned to the filesystem; the command prints
`pruned_calls: N`. A time that is not RFC 3339 UTC is a usage error (64).
"""

from __future__ import annotations

import base64
import os

import pytest

from ingest_helpers import Sandbox, begin_call, finish_call, result_before, session
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
    done = sandbox.yarp("archive", "prune", "--before", "2030-01-01T00:00:00.5Z")
    assert (done.returncode, done.stdout, done.stderr) == (0, b"pruned_calls: 0\n", b"")


@pytest.mark.parametrize("when", [
    "2023-11-14T22:13:20+01:00", "2023-11-14T22:13:20+00:00", "2023-11-14 22:13:20Z", "2023-11-14T22:13:20",
    "2023-11-14", "yesterday", "", "2023-02-30T00:00:00Z", "2023-11-14T25:00:00Z", "1700000000000",
    "1969-12-31T23:59:59Z",
])
def test_a_time_that_is_not_rfc3339_utc_exits_64(sandbox, when):
    done = sandbox.yarp("archive", "prune", "--before", when)
    assert done.returncode == 64, done
    assert done.stdout == b""
    assert done.stderr.count(b"\n") == 1 and b"--before" in done.stderr
    assert sandbox.brokers() == [] and not sandbox.archive.exists()


def test_missing_before_is_a_usage_error(sandbox):
    done = sandbox.yarp("archive", "prune")
    assert done.returncode == 64 and b"--before" in done.stderr


def test_parse_utc_reads_milliseconds_and_refuses_offsets():
    assert parse_utc(CUT_TEXT) == CUT_MS
    assert parse_utc("2023-11-14t22:13:20.123456z") == CUT_MS + 123
    assert parse_utc("1970-01-01T00:00:00.9Z") == 900
    for text in ("2023-11-14T22:13:20-05:00", "2023-11-14T22:13:20.Z", "2023-11-14T22:13:60Z"):
        with pytest.raises(UsageError):
            parse_utc(text)
