"""The savings statements against a per-call reckoning of the documented rule, over an archive a broker wrote.

The statement that projects each call is tuned for speed (primary-key walks,
sizes read only where the rule needs them, co-routine levels), which makes it
easy to get subtly wrong. The reference here reads the raw rows with plain
SELECTs and applies the rule of `yarp.archive.savings.rule` call by call in
Python; the projection must hold exactly its row for every finished call, on
every access path and in halves, and the report's groups and totals must be
its sums.
"""

from __future__ import annotations

import json
import os
import random
import sqlite3
import tempfile
import time
from collections import defaultdict

import pytest
from broker_helpers import broker, broker_env, pipeline  # noqa: F401  (fixtures)

from yarp.wire import operations as ops
from yarp.archive.savings import projection as savings_projection
from yarp.archive.savings import parallel
from yarp.archive.savings.programs import SHELL_TOOLS, command_key
from yarp.archive.savings.hosts import host_view
from yarp.archive.savings.report import GROUPINGS, UNCAPPED, compute
from yarp.archive.savings.rule import VIEW_REPLACING_AGENTS, project_sql
from yarp.errors import ArchiveError
from yarp.paths import ArchiveLocation

DAY_MS = 86_400_000
BASE_MS = 1_767_225_600_000
SESSIONS = (ops.Session("pi", "tester", "pi-a"), ops.Session("pi", "tester", "pi-b"),
            ops.Session("claude-code", "tester", "cc-a"), ops.Session("yarp-run", "tester", "run-a"))
COMMANDS = ("cargo test --all", "git log --stat", "cd /w && pytest -q", "ls -la", "npm run build")


def _spool(directory: str, data: bytes) -> ops.StreamFile:
    fd, path = tempfile.mkstemp(dir=directory, prefix="s-")  # 0600 in a 0700 directory, as the runner spools
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    return ops.StreamFile(path)


def _text(rng: random.Random, lines: int) -> bytes:
    return b"".join(b"line %d of %d: %s\n" % (i, lines, b"x" * rng.randrange(0, 60)) for i in range(lines))


def _calls(spool: str, seed: int = 7, count: int = 90) -> list:
    """Operations for `count` calls of every kind the rule tells apart, in each call's own order."""
    rng = random.Random(seed)
    operations: list = []
    for n in range(count):
        session = SESSIONS[n % len(SESSIONS)]
        call = f"c{n}"
        started = BASE_MS + n * 3_600_000  # a call an hour: several days, several sessions
        shape = rng.choice(("wrapped", "wrapped", "passthrough", "rewritten", "unchanged", "unchanged",
                            "preflight", "begun", "staged", "imported"))
        shell = shape in ("wrapped", "passthrough", "preflight") or rng.random() < 0.2
        tool = rng.choice(("bash", "Bash", "exec_command")) if shell else rng.choice(("read", "Read", "grep"))
        command = {"command": rng.choice(COMMANDS)} if shell else {"path": f"/src/{n % 7}.py"}
        begun_at = started + 30 * DAY_MS if shape == "imported" else started
        meta = ops.CallMeta(call, tool, started, shape == "wrapped", "prov", "model", "/w")
        operations.append(ops.BeginCall(session, meta, command, command, begun_at))
        if shape in ("preflight", "begun"):
            if shape == "preflight":
                operations.append(ops.FinishCall(session, call, {"error": "blocked"}, True, False, started + 2))
            continue
        if shape == "wrapped":
            out, err = _text(rng, rng.randrange(1, 80)), _text(rng, rng.randrange(0, 4))
            out_after = out[: rng.randrange(0, len(out) + 1)] + b"[cut]\n" if rng.random() < 0.8 else out
            err_after = err if rng.random() < 0.7 else b""
            operations.append(ops.CaptureStreams(session, call, started + 1, *(
                _spool(spool, data) for data in (out, err, out_after, err_after))))
        if shape == "passthrough":
            operations.append(ops.CapturePassthroughStreams(session, call, started + 1, _spool(spool, _text(rng, 9)),
                                                            _spool(spool, b"")))
        body = {"content": [{"type": "text", "text": _text(rng, rng.randrange(1, 60)).decode()}]}
        shown = {"content": [{"type": "text", "text": "[capped]"}]} if shape == "rewritten" else body
        operations.append(ops.ResultBefore(session, call, body, begun_at + 2))
        if shape == "staged":
            operations.append(ops.StageResult(session, call, shown, False, started + 3))
            continue
        operations.append(ops.FinishCall(session, call, shown, False, True, started + 4))
    return operations


@pytest.fixture
def archive(broker_env, broker):  # noqa: F811
    spool = os.path.join(broker_env.root, "spool")
    os.mkdir(spool, 0o700)
    operations = _calls(spool)
    replies = pipeline(broker_env, operations, connections=1)
    assert all(reply["ok"] for reply in replies), [r for r in replies if not r["ok"]][:1]
    return broker_env.archive


def reference(path: str) -> dict:
    """call id -> (tool, started, session, kind, produced, withheld, input digest of a shell call, host_shown,
    gross, returned), call by call."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    sizes = dict(conn.execute("SELECT sha256, uncompressed_byte_length FROM payloads"))
    snaps: dict = defaultdict(dict)
    for call, subject, stage, sha, captured in conn.execute(
            "SELECT tool_call_id, subject, stage, payload_sha256, captured_at_ms FROM snapshots"):
        snaps[call][subject, stage] = (sha, captured)
    agents = dict(conn.execute("SELECT id, agent FROM sessions"))
    out: dict = {}
    for call, session, tool, started, status, finished, failed in conn.execute(
            "SELECT id, session_id, tool_name, started_at_ms, status, finished_at_ms, is_error FROM tool_calls"):
        s = snaps[call]

        def size(key, s=s):
            return sizes[s[key][0]] if key in s else 0

        before, after = s.get(("result", "before")), s.get(("result", "after"))
        wrapped = ("stdout", "after") in s or ("stderr", "after") in s
        rewritten = after is not None and (before is None or after[0] != before[0])
        if status != "finished":
            kind = "incomplete"
        elif wrapped:
            kind = "counted"
        elif before is None:
            kind = "not_executed"
        elif rewritten:
            kind = "counted"
        elif finished is not None and before[1] > finished:
            kind = "imported"
        elif agents[session] in VIEW_REPLACING_AGENTS:
            kind = "counted"
        else:
            kind = "host_view"
        produced = withheld = 0
        if kind not in ("incomplete", "not_executed"):
            delta = size(("result", "before")) - size(("result", "after")) if rewritten else 0
            if wrapped:
                produced = size(("stdout", "before")) + size(("stderr", "before"))
                withheld = produced - size(("stdout", "after")) - size(("stderr", "after")) + delta
            else:
                produced, withheld = size(("result", "before")), delta
            if kind != "counted":
                withheld = 0
        shell = tool.lower() in SHELL_TOOLS
        # What the host would have shown (by its byte limits: every output here is far below 2,000 lines),
        # beyond that what YARP's changed view kept out, and what the call put into the context.
        view = host_view(agents[session], tool, bool(failed))
        host = view.shown(produced) if view is not None else produced
        gross = host - (produced - withheld) if kind == "counted" and withheld > 0 else 0
        returned = {"counted": produced - withheld, "host_view": host, "imported": host}.get(kind, 0)
        out[call] = (tool, started, session, kind, produced, withheld, s[("input", "before")][0] if shell else None,
                     host, gross, returned)
    conn.close()
    return out


def _projected(conn) -> dict:
    return {row[0]: row[1:] for row in conn.execute(
        "SELECT id, kind, produced, withheld, input_sha256, host_shown, gross, returned FROM main.call_savings")}


def _expected_rows(calls: dict, low: int = -(2**63), high: int = 2**63 - 1) -> dict:
    return {call: (kind, produced, withheld, named, host, gross, returned)
            for call, (_, started, _, kind, produced, withheld, named, host, gross, returned)
            in calls.items() if kind != "incomplete" and low <= started < high}


def test_the_archive_holds_every_kind(archive):
    calls = reference(archive)
    assert {v[3] for v in calls.values()} == {"counted", "imported", "host_view", "not_executed", "incomplete"}
    assert any(v[3] == "counted" and v[5] > 0 for v in calls.values())


def test_projected_rows_match_the_reference_call_by_call(archive):
    """Every access path, a window, and the halves by id give each finished call exactly its reference row."""
    calls = reference(archive)
    location = ArchiveLocation(archive, False)
    conn = savings_projection.connect(location, persistent=False)
    try:
        everything = (-(2**63), 2**63 - 1)
        bounds = sorted(v[1] for v in calls.values())
        for windowed in (False, True):
            for low, high in (everything, (bounds[10], bounds[60])):
                conn.execute("DELETE FROM main.call_savings")
                conn.execute(project_sql(windowed), (low, high))
                assert _projected(conn) == _expected_rows(calls, low, high), (windowed, low, high)
        # Halves by call id, one inserted and one returned as rows, add up to the whole.
        conn.execute("DELETE FROM main.call_savings")
        middle = conn.execute("SELECT (min(id) + max(id)) / 2 FROM archive.tool_calls").fetchone()[0]
        conn.execute(project_sql(False, split=True), (*everything, everything[0], middle))
        rows = conn.execute(project_sql(False, split=True, insert=False),
                            (*everything, middle, everything[1])).fetchall()
        assert rows and all(row[0] >= middle for row in rows)
        conn.executemany(savings_projection.INSERT_CALL_VALUES, rows)
        assert _projected(conn) == _expected_rows(calls)
        # A second pass finds nothing missing.
        changes = conn.total_changes
        conn.execute(project_sql(False), everything)
        assert conn.total_changes == changes
    finally:
        conn.close()


def _reference_totals(calls: dict) -> dict:
    expected: dict = defaultdict(int)
    for _, _, _, kind, produced, withheld, *_ in calls.values():
        expected[kind] += 1
        if kind == "counted":
            expected["produced"] += produced
            expected["withheld"] += withheld
        elif kind in ("imported", "host_view"):
            expected["unknown_bytes"] += produced
    return expected


@pytest.mark.parametrize("by", GROUPINGS)
def test_report_groups_match_the_reference(archive, by):
    calls = reference(archive)
    conn = savings_projection.connect(ArchiveLocation(archive, False), persistent=False)
    try:
        report = compute(conn, by=by, top=100)
        sessions = {sid: f"{agent}:{source}" for sid, agent, source in
                    conn.execute("SELECT id, agent, source_session_id FROM archive.sessions")}
        labels = {}
        for sha, body in conn.execute("SELECT sha256, body FROM archive.payloads"):
            labels[sha] = json.loads(body) if body[:1] == b"{" else None
    finally:
        conn.close()
    groups: dict = defaultdict(lambda: [0, 0, 0, 0])
    commands: dict = defaultdict(int)
    for tool, started, session, kind, produced, withheld, named, _, gross, _ in calls.values():
        if kind != "counted":
            continue
        value = labels.get(named)
        # No view here names a reducer: a capped one was cut by the cap.
        key = {"tool": tool, "program": command_key(tool, value, subcommand=False),
               "command": command_key(tool, value, subcommand=True), "rule": "cap" if withheld > 0 else UNCAPPED,
               "day": time.strftime("%Y-%m-%d", time.gmtime(started // 1000)), "session": sessions[session]}[by]
        groups[key][0] += 1
        groups[key][1] += produced
        groups[key][2] += withheld
        groups[key][3] += gross
        if withheld > 0:
            commands[command_key(tool, value, subcommand=True)] += gross
    got = {g["group"]: [g["calls"], g["bytes_produced"], g["bytes_withheld"], g["bytes_withheld_gross"]]
           for g in report.as_dict()["groups"]}
    assert {k: v for k, v in got.items() if v[0]} == dict(groups)
    # Calls an hour apart and no recovery among them: nothing is taken back, net is gross.
    assert {c: (t.gross, t.net) for c, t in report.top_commands} == {c: (g, g) for c, g in commands.items()}


def test_report_totals_match_the_reference_with_and_without_a_second_connection(archive, monkeypatch):
    location = ArchiveLocation(archive, False)
    expected = _reference_totals(reference(archive))
    if parallel._cores() < 2:
        pytest.skip("one core: the report never splits")
    opened = []

    def opener():
        opened.append(1)
        return savings_projection.connect(location, persistent=False)

    # Every first report of this small archive takes the two-connection path.
    monkeypatch.setattr(parallel, "PARALLEL_MIN_CALLS", 1)
    reports = []
    for with_opener in (False, True):
        conn = savings_projection.connect(location, persistent=False)
        try:
            reports.append(compute(conn, by="program", opener=opener if with_opener else None).as_dict())
        finally:
            conn.close()
    assert opened == [1]
    single, split = reports
    assert single == split
    total = split["total"]
    assert (total["calls"], total["bytes_produced"], total["bytes_withheld"]) == (
        expected["counted"], expected["produced"], expected["withheld"])
    assert total["bytes_shown"] == expected["produced"] - expected["withheld"]
    assert (total["view_unknown_imported_calls"], total["view_unknown_host_calls"], total["view_unknown_bytes"]) == (
        expected["imported"], expected["host_view"], expected["unknown_bytes"])
    assert (total["not_executed_calls"], total["incomplete_calls"]) == (
        expected["not_executed"], expected["incomplete"])
    # Shell calls are named by their input in both halves.
    assert {"cargo test", "git log", "pytest", "ls", "npm run"} & {c["command"] for c in split["top_commands"]}


def test_a_failing_half_fails_the_report_with_a_bounded_error(archive, monkeypatch, tmp_path):
    if parallel._cores() < 2:
        pytest.skip("one core: the report never splits")
    monkeypatch.setattr(parallel, "PARALLEL_MIN_CALLS", 1)
    # The second connection reaches a database without the archive's tables: its half fails in its thread.
    stranger = sqlite3.connect(tmp_path / "other.sqlite3", check_same_thread=False)
    conn = savings_projection.connect(ArchiveLocation(archive, False), persistent=False)
    try:
        with pytest.raises(ArchiveError) as caught:
            compute(conn, opener=lambda: stranger)
        assert str(caught.value) == "reading archive savings: SQLite error (SQLITE_ERROR)"
        # Nothing of the failed report was kept, and the connection is still good for a report without the split.
        assert conn.execute("SELECT count(*) FROM main.call_savings").fetchone()[0] == 0
        assert compute(conn).total.calls > 0
    finally:
        conn.close()
