"""A prune in bounded steps (`yarp.archive.prune.Pruner`) on a real archive file, step by step.

Each step is one committed transaction: a window of at most `max_calls` call
ids, whose prunable calls go with their snapshots and the payloads only they
referenced. The counts are exact, a step that fails undoes only itself, a call
begun after the prune started is never judged, payloads nothing referenced
before the prune go too, and the freed pages are returned.
"""

from __future__ import annotations

import pytest

from yarp.archive.codec import json_payload
from yarp.archive.prune import PHASES, Pruner
from yarp.archive.store import ArchiveStore
from yarp.errors import ArchiveError
from yarp.paths import resolve_archive
from yarp.wire import operations as ops

SESSION = ops.Session("pi", "acct", "sess-1", 1_000)
CUT = 10_000


@pytest.fixture
def store(tmp_path):
    directory = tmp_path / "arch"
    directory.mkdir(mode=0o700)
    s = ArchiveStore.open(resolve_archive(str(directory / "tool-calls.sqlite3")))
    yield s
    s.close()


def add_call(store, call: str, *, finished_at: int | None, result=None, shared=None) -> None:
    store.apply_operation(ops.BeginCall(SESSION, ops.CallMeta(call, "read", 1_000, False),
                                        shared or {"path": call}, shared or {"path": call}, 1_001))
    store.apply_operation(ops.ResultBefore(SESSION, call, result or {"content": call * 200}, 1_002))
    if finished_at is not None:
        store.apply_operation(ops.FinishCall(SESSION, call, {"done": call}, False, True, finished_at))


def scalar(store, sql: str, params=()) -> int:
    return store.conn.execute(sql, params).fetchone()[0]


def orphans(store) -> int:
    return scalar(store, "SELECT count(*) FROM payloads p WHERE NOT EXISTS"
                         " (SELECT 1 FROM snapshots s WHERE s.payload_sha256 = p.sha256)")


def names(store) -> set[str]:
    return {row[0] for row in store.conn.execute("SELECT source_call_id FROM tool_calls")}


def test_steps_delete_at_most_their_window_and_count_exactly(store):
    shared = {"path": "the same input for an old and a new call"}
    for i in range(40):
        add_call(store, f"old-{i}", finished_at=CUT - 1 - i, shared=shared if i == 7 else None)
    add_call(store, "at-cut", finished_at=CUT)
    add_call(store, "new-shared", finished_at=CUT + 1, shared=shared)
    add_call(store, "running", finished_at=None)
    pruner = Pruner(store, CUT, max_calls=4)
    seen, left = [], scalar(store, "SELECT count(*) FROM tool_calls")
    while not pruner.step():
        seen.append(pruner.phase)
        now = scalar(store, "SELECT count(*) FROM tool_calls")
        assert left - now <= 4  # one window of ids at most per step
        left = now
    assert pruner.pruned_calls == 40 and pruner.total_calls == 40
    assert names(store) == {"at-cut", "new-shared", "running"}
    # The phases ran in order, the calls phase in many steps.
    assert [p for p in PHASES if p in seen] == [p for p in dict.fromkeys(seen)]
    assert seen.count("calls") >= 10
    assert orphans(store) == 0
    assert scalar(store, "SELECT count(*) FROM payloads WHERE sha256 = ?", (json_payload(shared).sha256,)) == 1
    assert store.conn.execute("PRAGMA foreign_key_check").fetchall() == []
    assert scalar(store, "PRAGMA freelist_count") == 0
    assert store.last_vacuum_error is None
    assert Pruner(store, CUT).run() == 0


def test_a_call_begun_after_the_prune_started_is_never_judged(store):
    for i in range(8):
        add_call(store, f"old-{i}", finished_at=CUT - 10)
    pruner = Pruner(store, CUT, max_calls=2)
    pruner.step()  # counted: the calls it judges are those held now
    assert pruner.phase == "calls" and pruner.total_calls == 8
    pruner.step()
    # An import of old history while the prune runs: finished long before the cut.
    add_call(store, "imported-meanwhile", finished_at=1)
    assert pruner.run() == 8
    assert names(store) == {"imported-meanwhile"}
    assert Pruner(store, CUT).run() == 1


def test_payloads_nothing_referenced_before_the_prune_go_too(store):
    add_call(store, "kept", finished_at=CUT + 5)
    leftover = json_payload({"left": "by another writer"})
    store.conn.execute("INSERT INTO payloads (sha256, compression, uncompressed_byte_length, body) VALUES (?, ?, ?, ?)",
                       (leftover.sha256, leftover.compression, leftover.length, leftover.body))
    assert orphans(store) == 1
    pruner = Pruner(store, CUT)
    assert pruner.run() == 0
    assert orphans(store) == 0 and pruner.removed_payloads == 1
    assert names(store) == {"kept"}
    # The store no longer takes the payload as present: writing it again stores it.
    add_call(store, "again", finished_at=CUT + 6, shared={"left": "by another writer"})
    assert store.conn.execute("PRAGMA foreign_key_check").fetchall() == []


def test_a_failed_step_undoes_only_itself_and_a_rerun_finishes(store):
    for i in range(12):
        add_call(store, f"old-{i:02d}", finished_at=CUT - 1)
    store.conn.execute("CREATE TEMP TRIGGER refuse BEFORE DELETE ON tool_calls WHEN old.source_call_id = 'old-06'"
                       " BEGIN SELECT RAISE(ABORT, 'refused'); END")
    pruner = Pruner(store, CUT, max_calls=4)
    with pytest.raises(ArchiveError):
        pruner.run()
    # Steps before the failing one committed whole; the failing window (ids 5-8) is untouched.
    assert pruner.pruned_calls == 4
    assert names(store) == {f"old-{i:02d}" for i in range(4, 12)}
    assert orphans(store) == 0
    store.conn.execute("DROP TRIGGER refuse")
    assert Pruner(store, CUT).run() == 8
    assert names(store) == set() and orphans(store) == 0
    assert scalar(store, "PRAGMA cache_size") == -2000  # the prune's larger cache was given back


def test_progress_names_the_phase_and_what_it_has_done(store):
    for i in range(6):
        add_call(store, f"old-{i}", finished_at=CUT - 1)
    pruner = Pruner(store, CUT, max_calls=2)
    assert pruner.progress() == {"phase": "count", "done": 0, "total": 0, "prunedCalls": 0}
    pruner.step()
    pruner.step()
    assert pruner.progress() == {"phase": "calls", "done": 2, "total": 6, "prunedCalls": 2}
    pruner.run()
    assert pruner.progress() == {"phase": "done", "done": 0, "total": 0, "prunedCalls": 6}
