"""`yarp import opencode` on session stores written as opencode 1.18.33 writes them (tests/opencode_store.py).

The archive is real, written by a real broker. The store is read only, in one
snapshot, incrementally, and with the live plugin's identities and result
shapes (the real CLI's run is tests/test_real_opencode.py).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import pytest

from broker_helpers import broker_env  # noqa: F401  (fixture)
from import_fixtures import set_old_mtime
from opencode_store import CHILD, CWD, SESSION, Store, completed, errored, running
from test_import_formats import calls_by_id
from test_import_pi import import_json, yarp
from yarp.archive.codec import canonical_json


def store_digest(store: Store) -> str:
    h = hashlib.sha256()
    for suffix in ("", "-wal"):
        h.update(store.path.with_name(store.path.name + suffix).read_bytes())
    return h.hexdigest()


@pytest.fixture
def store(tmp_path):
    made = Store(tmp_path / "data")
    yield made
    made.close()


def test_tool_parts_are_imported_with_the_plugins_identities_and_results(broker_env, store, tmp_path):  # noqa: F811
    spill = tmp_path / "tool_0001"
    spill.write_text("".join(f"{n}\n" for n in range(1, 30001)))
    tail = "...output truncated...\n\nFull output saved to: x\n\n29999\n30000\n"
    store.add_session()
    store.add_session(CHILD, parent=SESSION, second=5)
    store.add_message("msg_1")
    store.add_message("msg_2", CHILD, second=5)
    seq = completed({"command": "seq 1 30000"}, tail, {"output": "...", "exit": 0, "truncated": True,
                                                      "outputPath": str(spill)}, 1)
    store.add_tool("call_seq", "bash", seq, second=1)
    store.add_tool("call_fail", "bash", completed({"command": "exit 3"}, "oops\n", {"exit": 3}, 2), second=2)
    store.add_tool("call_slow", "bash", completed({"command": "sleep 9"}, "killed", {"exit": None}, 3), second=3)
    read = completed({"filePath": "a.txt"}, "<path>a.txt</path>", {"preview": "a", "truncated": False}, 4)
    store.add_tool("call_read", "read", read, second=4)
    store.add_tool("call_gone", "read", errored({"filePath": "nope"}, "File not found: nope", 4), second=4)
    store.add_tool("call_bad", "invalid", completed({"tool": "x", "error": "e"}, "invalid", {}, 4), second=4)
    store.add_tool("call_sub", "bash", completed({"command": "ls"}, "a\n", {"exit": 0}, 6), message_id="msg_2",
                   session_id=CHILD, second=6)
    # The model reused a call id in the session: the second part is <id>#2, the first keeps the live identity.
    store.add_tool("call_again", "read", read, second=7)
    store.add_tool("call_again", "read", read, second=8)
    store.add_raw_part('{"type":"text","text":"not a tool"}')
    before = store_digest(store)
    set_old_mtime(store.path, store.path.with_name("opencode.db-wal"))

    summary = import_json(broker_env, "opencode", str(store.path))
    assert (summary["files"], summary["sessions"], summary["callsFound"], summary["callsNew"]) == (1, 2, 9, 9)
    assert summary["unknownRecords"] == {} and summary["corruptLines"] == 0 and summary["issues"] == []
    assert store_digest(store) == before, "the store is never written"
    calls = calls_by_id(broker_env)
    assert set(calls) == {"call_seq", "call_fail", "call_slow", "call_read", "call_gone", "call_bad", "call_sub",
                          "call_again", "call_again#2"}
    for call_id, call in calls.items():
        assert (call["agent"], call["provider"], call["model"], call["cwd"]) == ("opencode", "scripted",
                                                                                 "scripted-model", CWD)
        assert call["session"] == (CHILD if call_id == "call_sub" else SESSION)
        assert call["snaps"][("result", "before")] == call["snaps"][("result", "after")]
        assert call["snaps"][("input", "before")] == call["snaps"][("input", "after")]
    errors = {call_id: (call["is_error"], call["executed"]) for call_id, call in calls.items()}
    assert errors == {"call_seq": (0, 1), "call_fail": (1, 1), "call_slow": (1, 1), "call_read": (0, 1),
                      "call_gone": (1, 0), "call_bad": (1, 1), "call_sub": (0, 1), "call_again": (0, 1),
                      "call_again#2": (0, 1)}
    # A completed part's state without status, input and times: the after hook's output as the model got it.
    assert calls["call_seq"]["snaps"][("result", "before")] == canonical_json(
        {"title": "t", "output": tail, "metadata": seq["metadata"]})
    assert calls["call_seq"]["snaps"][("source_output", "before")] == spill.read_bytes()
    assert calls["call_seq"]["snaps"][("input", "before")] == canonical_json({"command": "seq 1 30000"})
    assert calls["call_gone"]["snaps"][("result", "before")] == canonical_json({"error": "File not found: nope"})
    assert calls["call_seq"]["started"] == seq["time"]["start"] and calls["call_seq"]["finished"] == seq["time"]["end"]
    assert "archive: ok" in yarp(broker_env, "archive", "verify").stdout


def test_only_what_changed_is_read_and_a_running_call_waits_for_its_result(broker_env, store):  # noqa: F811
    store.add_session()
    store.add_message("msg_1")
    store.add_tool("call_1", "bash", completed({"command": "true"}, "(no output)", {"exit": 0}, 1), second=1)
    slow = store.add_tool("call_2", "bash", running({"command": "make"}, 2), second=2)
    first = import_json(broker_env, "opencode", str(store.path))
    assert (first["callsNew"], first["callsWaitingForResult"], first["callsWithoutResult"]) == (1, 1, 0)
    unchanged = import_json(broker_env, "opencode", str(store.path))
    assert (unchanged["filesUnchanged"], unchanged["callsFound"], unchanged["callsWaitingForResult"]) == (1, 0, 1)

    store.update_tool(slow, completed({"command": "make"}, "built\n", {"exit": 0}, 2), second=30)
    store.add_tool("call_3", "read", completed({"filePath": "a"}, "a", {"truncated": False}, 31), second=31)
    later = import_json(broker_env, "opencode", str(store.path))
    assert (later["callsNew"], later["callsWaitingForResult"], later["callsImportedBefore"]) == (2, 0, 1)
    calls = calls_by_id(broker_env)
    assert set(calls) == {"call_1", "call_2", "call_3"} and calls["call_2"]["status"] == "finished"
    assert json.loads(calls["call_2"]["snaps"][("result", "before")])["output"] == "built\n"


def test_a_call_still_running_when_the_store_went_idle_is_recorded_without_result(broker_env, store):  # noqa: F811
    store.add_session()
    store.add_message("msg_1")
    store.add_tool("call_1", "bash", running({"command": "make"}, 1), second=1)
    assert import_json(broker_env, "opencode", str(store.path))["callsWaitingForResult"] == 1
    settled = import_json(broker_env, "opencode", str(store.path), "--settle", "0")
    assert (settled["callsNew"], settled["callsWithoutResult"], settled["callsWaitingForResult"]) == (1, 1, 0)
    call = calls_by_id(broker_env)["call_1"]
    assert (call["status"], call["is_error"], call["executed"]) == ("started", None, None)


def test_the_store_is_read_in_one_snapshot_while_opencode_writes(broker_env, store):  # noqa: F811
    store.add_session()
    store.add_message("msg_1")
    store.add_tool("call_1", "read", completed({"filePath": "a"}, "a", {"truncated": False}, 1), second=1)
    store.conn.execute("BEGIN IMMEDIATE")  # opencode in the middle of a write
    store.add_tool("call_2", "read", completed({"filePath": "b"}, "b", {"truncated": False}, 2), second=2)
    summary = import_json(broker_env, "opencode", str(store.path))
    store.conn.execute("COMMIT")
    assert (summary["callsNew"], summary["issues"]) == (1, [])
    assert import_json(broker_env, "opencode", str(store.path))["callsNew"] == 1


def test_unreadable_parts_are_reported_and_the_rest_imported(broker_env, store):  # noqa: F811
    store.add_session()
    store.add_message("msg_1")
    store.add_raw_part('{"type":"tool","tool":"bash", oops')
    store.add_raw_part('{"type":"tool","tool":"bash"}')
    store.add_tool("call_1", "read", completed({"filePath": "a"}, "a", {"truncated": False}, 1), second=1)
    summary = import_json(broker_env, "opencode", str(store.path))
    assert (summary["callsNew"], summary["corruptLines"]) == (1, 1)
    reasons = sorted(issue["reason"] for issue in summary["issues"])
    assert reasons == ["part prt_000000000001 is not a JSON object",
                       "tool part prt_000000000002 without a call id, tool or state"]


def test_the_store_is_found_under_the_data_home_and_by_all(broker_env, store, tmp_path):  # noqa: F811
    store.add_session()
    store.add_message("msg_1")
    store.add_tool("call_1", "read", completed({"filePath": "a"}, "a", {"truncated": False}, 1), second=1)
    found = import_json(broker_env, "all", str(store.path.parent), "--dry-run")
    assert (found["files"], found["callsNew"]) == (1, 1)
    proc = subprocess.run([sys.executable, "-m", "yarp", "import", "opencode", "--json", "--archive", broker_env.archive],
                          env=broker_env.with_env(XDG_DATA_HOME=str(tmp_path / "data"), HOME=str(tmp_path)),
                          capture_output=True, text=True, timeout=120, check=True)
    assert json.loads(proc.stdout)["callsNew"] == 1
    assert os.path.exists(broker_env.archive + ".import-state")
