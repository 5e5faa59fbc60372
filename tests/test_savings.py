"""`yarp archive savings`: exact byte accounting from a real archive, the view-unknown rule, the chart."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import sys

import pytest
from archive_factory import BASE_MS, ArchiveFactory, run_yarp, yarp_env
from terminal import on_a_terminal

from yarp.wire import operations as ops
from yarp.archive.savings import projection as savings_projection
from yarp.archive.savings.programs import command_key
from yarp.archive.savings.render import human_bytes
from yarp.archive.savings.recalls import annotate
from yarp.archive.savings.report import GROUPINGS, compute, report_sql, sum_followups
from yarp.archive.savings.rule import project_sql
from yarp.archive.savings.totals import BYTES_PER_TOKEN
from yarp.archive.codec import canonical_json
from yarp.paths import resolve_archive

PI = ops.Session(agent="pi", account="tester", source_session_id="pi-1", started_at_ms=BASE_MS)
CLAUDE = ops.Session(agent="claude-code", account="tester", source_session_id="cc-1", started_at_ms=BASE_MS)
DAY_MS = 86_400_000

STDOUT = b"".join(b"   Compiling crate%03d v0.1.0\n" % i for i in range(40)) + b"error[E0308]: mismatched types\n"
STDOUT_AFTER = b"error[E0308]: mismatched types\n[yarp: 40 lines omitted]\n"
STDERR = b"warning: unused\n"
READ_BIG = {"content": [{"type": "text", "text": "x" * 9000}], "details": None, "isError": False}
READ_CAPPED = {"content": [{"type": "text", "text": "x" * 100 + "[cut]"}], "details": None, "isError": False}
READ_SMALL = {"content": [{"type": "text", "text": "small file"}], "details": None, "isError": False}


def size(value: object) -> int:
    return len(canonical_json(value))


def _imported(factory: ArchiveFactory, call_id: str, result: object, started: int) -> None:
    """A call as a transcript import records it: result captured long after the call finished."""
    meta = ops.CallMeta(call_id, "read", started, False, None, None, "/work")
    imported_at = started + 30 * DAY_MS
    store = factory.store
    store.apply_operation(ops.BeginCall(factory.session, meta, {"path": "/a"}, {"path": "/a"}, imported_at))
    store.apply_operation(ops.ResultBefore(factory.session, call_id, result, imported_at))
    store.apply_operation(ops.FinishCall(factory.session, call_id, result, False, True, started + 5))


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    root = tmp_path_factory.mktemp("savings")
    path = root / "a" / "tool-calls.sqlite3"
    with ArchiveFactory(path, PI) as f:
        f.begin("sh-1", tool="bash", requires_streams=True, input_before={"command": "cd /repo && cargo test --all"})
        f.streams("sh-1", STDOUT, STDERR, stdout_after=STDOUT_AFTER)
        f.result_before("sh-1", {"exitCode": 1})
        f.finish("sh-1", {"exitCode": 1}, is_error=True)
        f.begin("rd-1", tool="read", input_before={"path": "/big"})
        f.result_before("rd-1", READ_BIG)
        f.result_text("rd-1", "x" * 9000)
        f.finish("rd-1", READ_CAPPED)
        f.tool_call("rd-2", result=READ_SMALL)                # unchanged, Pi hands on result/after: counted, 0
        f.preflight_failure("sh-2")                           # not executed
        f.begin("sh-3", requires_streams=True)                # incomplete
        _imported(f, "imp-1", READ_SMALL, BASE_MS - 10 * DAY_MS)
    with ArchiveFactory(path, CLAUDE) as f:
        f._clock = iter(range(BASE_MS + DAY_MS, BASE_MS + 2 * DAY_MS, 1000))
        f.tool_call("cc-read", tool="Read", result=READ_BIG)  # hook could not change it: view unknown
        f.begin("cc-bash", tool="Bash", requires_streams=True, input_before={"command": "git log --stat"})
        f.streams("cc-bash", STDOUT, b"", stdout_after=STDOUT_AFTER)
        f.result_before("cc-bash", {"stdout": STDOUT_AFTER.decode()})
        f.finish("cc-bash", {"stdout": STDOUT_AFTER.decode()})
    return path, root


def _json(archive, *args: str) -> dict:
    path, root = archive
    result = run_yarp("archive", "savings", "--json", *args, "--archive", str(path), home=root)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def expected():
    shell_withheld = (len(STDOUT) + len(STDERR)) - (len(STDOUT_AFTER) + len(STDERR))
    read_withheld = size(READ_BIG) - size(READ_CAPPED)
    cc_withheld = len(STDOUT) - len(STDOUT_AFTER)
    produced = (len(STDOUT) + len(STDERR)) + size(READ_BIG) + size(READ_SMALL) + len(STDOUT)
    return shell_withheld, read_withheld, cc_withheld, produced


def test_totals_follow_the_documented_rule(archive):
    shell_withheld, read_withheld, cc_withheld, produced = expected()
    total = _json(archive)["total"]
    assert total["calls"] == 4  # sh-1, rd-1, rd-2, cc-bash
    assert total["bytes_produced"] == produced
    assert total["bytes_withheld"] == shell_withheld + read_withheld + cc_withheld
    assert total["bytes_shown"] == produced - total["bytes_withheld"]
    assert total["tokens_withheld_estimate"] == round(total["bytes_withheld"] / BYTES_PER_TOKEN)
    # Unknown views are counted apart, with what their tools produced, and never as savings.
    assert (total["view_unknown_calls"], total["view_unknown_host_calls"], total["view_unknown_imported_calls"]) == (2, 1, 1)
    assert total["view_unknown_bytes"] == size(READ_BIG) + size(READ_SMALL)
    assert (total["not_executed_calls"], total["incomplete_calls"]) == (1, 1)


def test_groups_by_tool_sum_to_the_total(archive):
    report = _json(archive, "--by", "tool")
    groups = {g["group"]: g for g in report["groups"]}
    assert set(groups) == {"bash", "read", "Read", "Bash"}
    assert groups["read"]["calls"] == 2 and groups["read"]["view_unknown_imported_calls"] == 1
    assert groups["Read"]["calls"] == 0 and groups["Read"]["view_unknown_host_calls"] == 1
    assert groups["bash"]["not_executed_calls"] == 1 and groups["bash"]["incomplete_calls"] == 1
    for key in ("calls", "bytes_produced", "bytes_withheld", "bytes_shown", "view_unknown_bytes"):
        assert sum(g[key] for g in report["groups"]) == report["total"][key], key
    # Sorted by bytes withheld, most first.
    withheld = [g["bytes_withheld"] for g in report["groups"]]
    assert withheld == sorted(withheld, reverse=True)


def test_program_grouping_and_top_commands_name_what_ran(archive):
    shell_withheld, read_withheld, cc_withheld, _ = expected()
    report = _json(archive, "--by", "program")
    groups = {g["group"]: g for g in report["groups"]}
    assert groups["cargo"]["bytes_withheld"] == shell_withheld  # `cd /repo && ` is set-up, not the program
    assert groups["git"]["bytes_withheld"] == cc_withheld
    top = {c["command"]: c for c in report["top_commands"]}
    assert top["cargo test"]["bytes_withheld"] == shell_withheld
    assert top["git log"]["bytes_withheld"] == cc_withheld
    assert top["read"]["bytes_withheld"] == read_withheld and top["read"]["calls"] == 1
    assert [c["bytes_withheld"] for c in report["top_commands"]] == sorted(top_c["bytes_withheld"] for top_c in
                                                                             report["top_commands"])[::-1]
    assert len(_json(archive, "--top", "1")["top_commands"]) == 1


def test_day_and_session_groupings(archive):
    days = {g["group"]: g for g in _json(archive, "--by", "day")["groups"]}
    assert list(days) == sorted(days)
    assert set(days) == {"2023-11-04", "2023-11-14", "2023-11-15"}
    assert days["2023-11-15"]["view_unknown_host_calls"] == 1
    assert days["2023-11-04"]["view_unknown_imported_calls"] == 1
    sessions = {g["group"] for g in _json(archive, "--by", "session")["groups"]}
    assert sessions == {"pi:pi-1", "claude-code:cc-1"}


def test_window_selects_calls_by_start_time(archive):
    _, _, cc_withheld, _ = expected()
    late = _json(archive, "--since", str(BASE_MS + DAY_MS))
    assert late["since_ms"] == BASE_MS + DAY_MS
    assert late["total"]["calls"] == 1 and late["total"]["bytes_withheld"] == cc_withheld
    early = _json(archive, "--until", "2023-11-14T22:13:20Z")  # == BASE_MS
    assert early["total"]["view_unknown_imported_calls"] == 1 and early["total"]["calls"] == 0


def _damaged_copy(archive, tmp_path, name: str, spared: str) -> str:
    path, _ = archive
    copy_dir = tmp_path / name
    copy_dir.mkdir(mode=0o700)
    copy = copy_dir / "tool-calls.sqlite3"
    src = sqlite3.connect(path)
    dst = sqlite3.connect(copy)
    src.backup(dst)
    src.close()
    dst.execute("UPDATE payloads SET body = x'00' WHERE sha256 NOT IN"
                f" (SELECT payload_sha256 FROM snapshots WHERE {spared})")
    dst.commit()
    dst.close()
    os.chmod(copy, 0o600)
    return str(copy)


def test_output_payloads_are_read_only_for_a_views_first_line(archive, tmp_path):
    """Damage every payload but inputs and stream views: the report reads sizes only, so it is unchanged.
    Damage the views too: only what cut them is lost (named the cap), never a byte of the sums."""
    _, root = archive
    before = _json(archive, "--by", "program")
    copy = _damaged_copy(archive, tmp_path, "sizes", "subject = 'input' OR (subject = 'stdout' AND stage = 'after')")
    after = run_yarp("archive", "savings", "--json", "--by", "program", "--archive", copy, home=root)
    assert after.returncode == 0, after.stderr
    assert json.loads(after.stdout) == before
    verify = run_yarp("archive", "verify", "--archive", copy, home=root)
    assert verify.returncode == 65  # the damage is real
    views = _damaged_copy(archive, tmp_path, "views", "subject = 'input'")
    after = run_yarp("archive", "savings", "--json", "--by", "program", "--archive", views, home=root)
    assert after.returncode == 0, after.stderr
    damaged = json.loads(after.stdout)
    assert damaged["total"] == before["total"] and damaged["groups"] == before["groups"]
    assert {r["rule"] for r in damaged["rules"]} == {"cap"}


def test_terminal_chart_and_read_only(archive):
    path, root = archive
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    result = run_yarp("archive", "savings", "--archive", str(path), home=root)
    assert result.returncode == 0, result.stderr
    text = result.stdout.decode()
    shell_withheld, read_withheld, cc_withheld, _ = expected()
    total = shell_withheld + read_withheld + cc_withheld
    # Every output here is under its host's limits and nothing was recalled: net = gross = withheld.
    assert text.startswith(f"net withheld {human_bytes(total)} (~")
    assert f"  gross {human_bytes(total)} within the hosts' own limits, less 0 B recovered, 0 B re-run" in text
    assert "view unknown: 2 calls" in text and "not counted (1 host, 1 imported)" in text
    assert "no output to count: 1 not executed, 1 incomplete" in text
    assert "by tool: " in text and "top commands by net withheld" in text
    assert "what cut the views: " in text
    assert max(len(line) for line in text.splitlines()) <= 80
    bars = [line for line in text.splitlines() if line.startswith(("bash ", "read ", "Bash "))]
    assert len(bars) == 3 and all("\u2591" in line for line in bars)  # each withheld something
    assert "\x1b[" not in text  # no colour when stdout is not a terminal
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest


def test_colour_bars_on_a_terminal(archive):
    path, root = archive
    env = yarp_env(root) | {"TERM": "xterm", "COLUMNS": "100"}
    env.pop("NO_COLOR", None)
    proc, seen = on_a_terminal([sys.executable, "-m", "yarp", "archive", "savings", "--archive", str(path)], env)
    assert proc.returncode == 0, proc.stderr
    text = seen.decode()
    assert "\x1b[36m" in text and "\u2588" in text


def test_usage_and_archive_errors(archive, tmp_path):
    path, root = archive
    for args in (("--top", "101"), ("--by", "week"), ("--since", "the day before"),
                 ("--since", "2026-01-02T00:00:00Z", "--until", "2026-01-01T00:00:00Z")):
        result = run_yarp("archive", "savings", *args, "--archive", str(path), home=root)
        assert result.returncode == 64, args
        assert result.stderr.startswith(b"yarp: ") and result.stderr.count(b"\n") == 1
    missing = run_yarp("archive", "savings", "--archive", str(tmp_path / "none" / "x.sqlite3"), home=root)
    assert missing.returncode == 74


def test_library_classifies_every_call_once(archive):
    path, _ = archive
    conn = savings_projection.connect(resolve_archive(str(path), {}), persistent=False)
    try:
        report = compute(conn, by="tool")
        calls = conn.execute("SELECT count(*) FROM archive.tool_calls").fetchone()[0]
    finally:
        conn.close()
    t = report.total
    assert t.calls + t.view_unknown_calls + t.not_executed_calls + t.incomplete_calls == calls


@pytest.mark.parametrize("by", GROUPINGS)
def test_index_path_for_small_windows_agrees_with_the_scan(archive, by):
    """The two access paths of each statement give the same rows for any window."""
    path, _ = archive
    location = resolve_archive(str(path), {})
    conn = savings_projection.connect(location, persistent=False)
    try:
        bounds = [r[0] for r in conn.execute("SELECT started_at_ms FROM archive.tool_calls ORDER BY 1")]
        windows = [(-(2**63), 2**63 - 1), (bounds[0], bounds[3]), (bounds[2], bounds[-1]), (bounds[-1], bounds[-1] + 1)]
        for low, high in windows:
            projected = []
            for windowed in (False, True):
                conn.execute("DELETE FROM main.call_savings")
                conn.execute(project_sql(windowed), (low, high))
                annotate(conn)
                projected.append(conn.execute("SELECT * FROM main.call_savings ORDER BY id").fetchall())
            assert projected[0] == projected[1], (low, high)
            sum_followups(conn)
            scan = sorted(conn.execute(report_sql(by, False), (low, high)).fetchall(), key=repr)
            index = sorted(conn.execute(report_sql(by, True), (low, high)).fetchall(), key=repr)
            assert scan == index and scan, (by, low, high)
    finally:
        conn.close()


@pytest.mark.parametrize("value, subcommand, key", [
    ({"command": "FOO=1 sudo git status --short"}, True, "git status"),
    ({"command": "cd a; ls -la | head"}, False, "ls"),
    ({"command": ["bash", "-lc", "npm test 2>&1"]}, True, "npm test"),
    ({"cmd": "/usr/bin/pytest -q tests/x.py"}, True, "pytest"),
    ({"argv": ["cargo", "build"], "cwd": "/w"}, True, "cargo build"),
    ({"path": "/x"}, True, "bash"),
    (None, True, "bash"),
])
def test_command_key(value, subcommand, key):
    assert command_key("bash", value, subcommand=subcommand) == key


@pytest.mark.parametrize("recalled, flagged", [(6, False), (7, True)])
def test_a_rule_recalled_over_thirty_percent_of_twenty_calls_is_too_aggressive(tmp_path, recalled, flagged):
    """20 reads the Pi extension capped; `recalled` of them read back with `yarp read` (6/20 is 30 %, 7/20 35 %)."""
    path = tmp_path / "a" / "tool-calls.sqlite3"
    with ArchiveFactory(path, PI) as f:
        refs = []
        for n in range(20):
            ref = f.begin(f"rd-{n}", tool="read", input_before={"path": f"/big/{n}"})
            f.result_before(f"rd-{n}", READ_BIG)
            f.finish(f"rd-{n}", READ_CAPPED)
            refs.append(ref)
        for n in range(recalled):
            f.begin(f"rec-{n}", tool="bash", input_before={"command": f"yarp read {refs[n]} result_text 1:40"})
            f.result_before(f"rec-{n}", READ_SMALL)
            f.finish(f"rec-{n}", READ_SMALL)
    result = run_yarp("archive", "savings", "--json", "--by", "rule", "--archive", str(path), home=tmp_path)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    (rule,) = report["rules"]
    assert (rule["rule"], rule["capped_calls"], rule["recalled_calls"]) == ("cap", 20, recalled)
    assert rule["too_aggressive"] is flagged
    gross = 20 * (size(READ_BIG) - size(READ_CAPPED))
    assert rule["bytes_withheld_net"] == gross - recalled * size(READ_SMALL)
    text = run_yarp("archive", "savings", "--archive", str(path), home=tmp_path).stdout.decode()
    assert ("too aggressive" in text) is flagged


def test_a_report_that_computes_rows_tells_its_steps(archive):
    path, _ = archive
    steps = []
    conn = savings_projection.connect(resolve_archive(str(path), {}), persistent=False)
    try:
        compute(conn, progress=steps.append)
        again = []
        compute(conn, progress=again.append)
    finally:
        conn.close()
    assert steps[0].startswith("measuring every call (") and steps[-1].startswith("summing (")
    assert any(s.startswith("reading shell inputs and cut views 0/") for s in steps)
    # The second report finds the marks holding: only the calls since, none here, nothing left to read.
    assert again[0].startswith("measuring the calls since the last report (")
    assert "reading shell inputs and cut views 0/0" in again


def test_progress_on_a_terminal_after_half_a_second_and_never_in_a_pipe(archive, tmp_path, monkeypatch):
    import pty

    from yarp import cli
    from yarp.commands import archive_savings

    path, _ = archive
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    leader, follower = pty.openpty()
    try:
        with open(follower, "w", closefd=False) as terminal, open(os.devnull, "w") as out:
            monkeypatch.setattr(sys, "stderr", terminal)
            monkeypatch.setattr(sys, "stdout", out)
            monkeypatch.setattr(archive_savings, "PROGRESS_AFTER_S", 0)  # this archive is done in less
            assert cli.main(["archive", "savings", "--archive", str(path)]) == 0
            monkeypatch.setattr(archive_savings, "PROGRESS_AFTER_S", 30)
            assert cli.main(["archive", "savings", "--archive", str(path)]) == 0
        seen = os.read(leader, 65536)
    finally:
        os.close(follower)
        os.close(leader)
    assert seen.startswith(b"\r\x1b[Ksavings: measuring every call (") and seen.endswith(b"\r\x1b[K"), seen
    assert seen.count(b"\r\x1b[Ksavings: measuring") == 1  # the second report said nothing
    piped = run_yarp("archive", "savings", "--archive", str(path), home=tmp_path)
    assert piped.returncode == 0 and piped.stderr == b""
