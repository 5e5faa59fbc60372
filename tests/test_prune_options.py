"""`yarp archive prune --dry-run` and `--incomplete-before`, as real commands against a real broker.

A dry run goes through the broker like a prune, writes nothing, and says
exactly what the same prune then deletes: its calls, the payloads no
remaining call uses, and their logical and stored bytes. `--incomplete-before
TIME` also deletes the calls still `started` with no record since TIME (their
start and every snapshot older), and only those: a call whose capture arrived
since stays however old its start. A prune never creates the archive it was
asked to prune.
"""

from __future__ import annotations

import base64
import os
import time

import kernel_impls
import pytest
from ingest_helpers import Sandbox, begin_call, finish_call, result_before, session

from yarp.errors import ContractViolation, ValidationError
from yarp.wire import operations as ops

CUT_MS = 1_700_000_000_000
CUT_TEXT = "2023-11-14T22:13:20Z"
DAY_MS = 86_400_000


@pytest.fixture
def sandbox(tmp_path):
    sb = Sandbox.create(tmp_path / "sb", idle_ms=500)
    yield sb
    sb.close()


def _archive_state(sandbox) -> dict:
    """What the archive holds, row by row (no payload bodies): compared across a dry run."""
    return {
        "calls": sandbox.query("SELECT id, status, finished_at_ms FROM tool_calls ORDER BY id"),
        "snapshots": sandbox.query("SELECT tool_call_id, subject, stage, payload_sha256 FROM snapshots"
                                   " ORDER BY 1, 2, 3"),
        "payloads": sandbox.query("SELECT sha256, uncompressed_byte_length, length(body) FROM payloads ORDER BY 1"),
    }


def _fill(sandbox) -> None:
    """Old finished calls (each with a large payload of its own, one sharing a payload with a kept call),
    kept finished calls, an abandoned incomplete call, and two incomplete calls that are not idle."""
    sess = session("sess-options")
    shared = {"content": "shared between a pruned and a kept call"}
    ing = sandbox.ingest()
    old = CUT_MS - 10 * DAY_MS
    for i in range(12):
        assert ing.request(begin_call(sess, f"old-{i}", tool="read", input_before={"id": i}, started_at_ms=old))["ok"]
        blob = {"blob": base64.b64encode(os.urandom(32 * 1024)).decode()}
        assert ing.request(result_before(sess, f"old-{i}", blob))["ok"]
        assert ing.request(finish_call(sess, f"old-{i}", {"n": i}, finished_at_ms=CUT_MS - 1 - i))["ok"]
    for name, result, finished in (("old-shared", shared, CUT_MS - 1), ("kept-shared", shared, CUT_MS + 5)):
        assert ing.request(begin_call(sess, name, tool="read", input_before={"id": name}, started_at_ms=old))["ok"]
        assert ing.request(result_before(sess, name, result))["ok"]
        assert ing.request(finish_call(sess, name, {"done": name}, finished_at_ms=finished))["ok"]
    # Begun long ago, nothing since: abandoned. Begun long ago, a result captured just now: still in use.
    assert ing.request(begin_call(sess, "abandoned", input_before={"id": "abandoned"}, started_at_ms=old))["ok"]
    assert ing.request(begin_call(sess, "active-old", input_before={"id": "active"}, started_at_ms=old))["ok"]
    assert ing.request(result_before(sess, "active-old", {"partial": True}))["ok"]
    now = int(time.time() * 1000)
    assert ing.request(begin_call(sess, "recent", input_before={"id": "recent"}, started_at_ms=now))["ok"]
    assert ing.wait() == 0


def _lines(done) -> dict[str, int]:
    assert done.returncode == 0 and done.stderr == b"", done
    return {key: int(value) for key, value in (line.split(": ") for line in done.stdout.decode().splitlines())}


def test_a_dry_run_writes_nothing_and_says_what_the_prune_then_deletes(tmp_path):
    sandbox = Sandbox.create(tmp_path / "sb", idle_ms=3000)  # the broker outlives the dry run's answer
    try:
        _dry_run_then_prune(sandbox)
    finally:
        sandbox.close()


def _dry_run_then_prune(sandbox) -> None:
    _fill(sandbox)
    sandbox.wait_no_broker()
    before = _archive_state(sandbox)

    dry = sandbox.yarp("archive", "prune", "--before", CUT_TEXT, "--incomplete-before", "7d", "--dry-run")
    said = _lines(dry)
    assert list(said) == ["would_prune_calls", "would_prune_incomplete_calls", "would_remove_payloads",
                          "would_free_logical_bytes", "would_free_stored_bytes"]
    assert sandbox.brokers() != []  # it asked the broker, like a prune
    assert (said["would_prune_calls"], said["would_prune_incomplete_calls"]) == (13, 1)
    sandbox.wait_no_broker()
    assert _archive_state(sandbox) == before

    done = sandbox.yarp("archive", "prune", "--before", CUT_TEXT, "--incomplete-before", "7d")
    assert _lines(done) == {"pruned_calls": 13, "pruned_incomplete_calls": 1}
    sandbox.wait_no_broker()
    after = _archive_state(sandbox)
    gone = set(before["payloads"]) - set(after["payloads"])
    assert said["would_remove_payloads"] == len(gone) > 12
    assert said["would_free_logical_bytes"] == sum(logical for _, logical, _ in gone)
    assert said["would_free_stored_bytes"] == sum(stored for _, _, stored in gone) > 12 * 32 * 1024
    kept = [row[0] for row in sandbox.query("SELECT source_call_id FROM tool_calls ORDER BY id")]
    assert kept == ["kept-shared", "active-old", "recent"]
    assert sandbox.query("PRAGMA foreign_key_check") == []

    # Nothing left to prune: the dry run says so too.
    assert _lines(sandbox.yarp("archive", "prune", "--before", CUT_TEXT, "--dry-run")) == {
        "would_prune_calls": 0, "would_remove_payloads": 0, "would_free_logical_bytes": 0,
        "would_free_stored_bytes": 0}


def test_incomplete_before_alone_removes_only_idle_incomplete_calls(sandbox):
    _fill(sandbox)
    done = sandbox.yarp("archive", "prune", "--incomplete-before", "7d")
    assert _lines(done) == {"pruned_calls": 0, "pruned_incomplete_calls": 1}
    names = {row[0] for row in sandbox.query("SELECT source_call_id FROM tool_calls")}
    assert "abandoned" not in names and {"active-old", "recent", "old-0", "old-shared", "kept-shared"} <= names
    assert sandbox.query("SELECT count(*) FROM payloads WHERE sha256 NOT IN"
                         " (SELECT payload_sha256 FROM snapshots)") == [(0,)]
    # Without --incomplete-before an incomplete call stays however old (the specification's prune).
    done = sandbox.yarp("archive", "prune", "--before", "2100-01-01")
    assert _lines(done) == {"pruned_calls": 14}
    assert sorted(row[0] for row in sandbox.query("SELECT source_call_id FROM tool_calls")) == ["active-old", "recent"]


def test_a_prune_asks_for_something_and_never_creates_an_archive(sandbox):
    done = sandbox.yarp("archive", "prune", "--dry-run")
    assert (done.returncode, done.stdout) == (64, b"")
    assert done.stderr == b"yarp: archive prune: --before TIME or --incomplete-before TIME is required\n"
    done = sandbox.yarp("archive", "prune", "--incomplete-before", "soon")
    assert done.returncode == 64 and done.stderr.startswith(b"yarp: --incomplete-before must be ")
    done = sandbox.yarp("archive", "prune", "--before", "30d", "--dry-run")
    assert (done.returncode, done.stdout) == (74, b"")
    said = f"yarp: archive database {sandbox.archive} does not exist: there is nothing to prune\n"
    assert done.stderr == said.encode()
    assert not sandbox.archive.exists() and sandbox.brokers() == []


@pytest.mark.parametrize("impl", ["c", "py"])
def test_both_validators_read_the_prune_options(impl):
    validate = kernel_impls.load("_validate", impl)
    plain = validate.parse_operation({"operation": "prune_before", "timestampMs": 5})
    assert plain == ops.PruneBefore(5) == ops.PruneBefore(5, None, False)
    full = validate.parse_operation({"operation": "prune_before", "timestampMs": 5, "incompleteBeforeMs": 7,
                                     "dryRun": True})
    assert full == ops.PruneBefore(5, 7, True)
    assert ops.operation_to_json(full) == {"operation": "prune_before", "timestampMs": 5, "incompleteBeforeMs": 7,
                                           "dryRun": True}
    for bad in ({"dryRun": 1}, {"incompleteBeforeMs": -1}, {"incompleteBeforeMs": "7d"}, {"force": True}):
        with pytest.raises((ValidationError, ContractViolation)):
            validate.parse_operation({"operation": "prune_before", "timestampMs": 5, **bad})
    # A plain prune keeps the reference's identity (its time alone); a dry run or an incomplete prune has its own.
    ids = {ops.prune_operation_id(5), ops.operation_id(full), ops.operation_id(ops.PruneBefore(5, None, True)),
           ops.operation_id(ops.PruneBefore(5, 7, False))}
    assert len(ids) == 4 and ops.operation_id(plain) == ops.prune_operation_id(5)


def test_the_ingest_bridge_relays_the_options_and_their_answer(sandbox):
    _fill(sandbox)
    ing = sandbox.ingest()
    dry = ing.request({"operation": "prune_before", "timestampMs": CUT_MS, "incompleteBeforeMs": CUT_MS,
                       "dryRun": True})
    assert dry["ok"] and dry["prunedCalls"] == 0 and dry["prunedIncompleteCalls"] == 0
    assert (dry["dryRun"]["calls"], dry["dryRun"]["incompleteCalls"]) == (13, 1)
    assert dry["dryRun"]["payloads"] > 12 and dry["dryRun"]["storedBytes"] > 12 * 32 * 1024
    done = ing.request({"operation": "prune_before", "timestampMs": CUT_MS, "incompleteBeforeMs": CUT_MS})
    assert (done["ok"], done["prunedCalls"], done["prunedIncompleteCalls"], "dryRun" in done) == (True, 13, 1, False)
    plain = ing.request({"operation": "prune_before", "timestampMs": CUT_MS})
    assert plain == {"requestId": plain["requestId"], "ok": True, "prunedCalls": 0}
    # A malformed option breaks the adapter contract: the bridge ends with 74, as for any such field.
    bad = ing.request({"operation": "prune_before", "timestampMs": CUT_MS, "dryRun": "yes"})
    assert not bad["ok"] and "dryRun must be a boolean" in bad["error"]
    assert ing.wait() == 74
