"""Savings net of what the agent took back, bounded by what its host would have shown: real calls.

Every call here goes through the real broker: Claude Code hook events from
real `yarp hook` processes around real commands (the rewritten `yarp run`
among them), a Pi call begun and finished over the broker's socket around a
real `yarp run` child, and a Pi session file read by `yarp import`. The
report is the real `yarp archive savings`; the expected numbers are reckoned
here from the archived snapshots and the hosts' documented limits.
"""

from __future__ import annotations

import json
import re
import time

from test_hooks import answer, bash_response, calls, claude_event, make_haystack, world  # noqa: F401

from yarp.archive.savings.hosts import HOST_VIEWS, SHELL
from yarp.archive.savings.totals import AGGRESSIVE_MIN_CALLS

#: Claude Code 2.1.197 saves Bash output over 30,000 bytes to a file and shows a 2,000-character preview.
CC_LIMIT, CC_PREVIEW = 30_000, 2_300
FAMILY = re.compile(rb"\[yarp summary: ([a-z_]+);")


def _report(world, *args: str) -> dict:  # noqa: F811
    result = world.yarp_cli("archive", "savings", "--json", *args)
    assert result.returncode == 0, result.stderr.decode()
    return json.loads(result.stdout)


def _sizes(call: dict) -> tuple[int, int]:
    """(raw, shown) of a wrapped call: its streams before and after YARP's view."""
    snaps = call["snaps"]
    raw = len(snaps["stdout/before"]) + len(snaps["stderr/before"])
    return raw, len(snaps["stdout/after"]) + len(snaps["stderr/after"])


def _claude_bash(world, call_id: str, command: str) -> dict | None:  # noqa: F811
    """One Bash call as Claude Code makes it: PreToolUse, the (possibly rewritten) command run, PostToolUse."""
    cwd = str(world.work)
    tool_input = {"command": command, "description": "run"}
    pre = answer(world.hook("claude-code", claude_event("PreToolUse", "Bash", tool_input, call_id, cwd)))
    ran_input = pre["hookSpecificOutput"]["updatedInput"] if pre else tool_input
    ran = world.shell(ran_input["command"])
    post = world.hook("claude-code", claude_event("PostToolUse", "Bash", ran_input, call_id, cwd,
                                                  tool_response=bash_response(ran)))
    assert answer(post) is None and post.stderr == b"", post.stderr
    return pre


def test_recoveries_and_reruns_are_netted_and_the_host_bounds_the_gross(world):  # noqa: F811
    make_haystack(world.work, 320)  # about 24 KB of grep output: under Claude Code's own limit
    big = world.work / "big"
    big.mkdir()
    (big / "all.txt").write_text("".join(f"line {i}: needle number {i} with some padding text here\n"
                                         for i in range(2000)))  # over 100 KB: Claude Code would show a preview
    grep = "grep -rn needle src"
    assert _claude_bash(world, "toolu_1", grep) is not None, "grep has a reduce rule: rewritten to yarp run"
    archived = calls(world.archive)
    first = archived["toolu_1"]["ref"]
    # The agent reads the hidden part back through `yarp run` (its own shell runs the standalone `yarp run`,
    # which records a call of its own inside this one: the same recovery, counted once).
    recovery = f"yarp run -- yarp search {first} 'number 57 in file 2'"
    assert _claude_bash(world, "toolu_2", recovery) is None, "recovery commands are never rewritten"
    _claude_bash(world, "toolu_3", grep)  # the same command again: a re-run of toolu_1
    edit = {"file_path": str(world.work / "src" / "f0.txt"), "old_string": "line 0:", "new_string": "line zero:"}
    cwd = str(world.work)
    world.hook("claude-code", claude_event("PreToolUse", "Edit", edit, "toolu_4", cwd))
    world.hook("claude-code", claude_event("PostToolUse", "Edit", edit, "toolu_4", cwd,
                                           tool_response={"filePath": edit["file_path"]}))
    _claude_bash(world, "toolu_5", grep)  # after an edit: a new run, not a re-run
    _claude_bash(world, "toolu_6", "grep -rn needle big")  # raw over the host's limit

    archived = calls(world.archive)
    nested = [c for c in archived.values() if c["agent"] == "yarp-run"]
    assert len(nested) == 1 and first.encode() in nested[0]["snaps"]["input/before"]
    sizes = {key: _sizes(archived[key]) for key in ("toolu_1", "toolu_3", "toolu_5", "toolu_6")}
    assert all(shown < raw for raw, shown in sizes.values()), "every grep view was cut"
    assert sizes["toolu_1"][0] < CC_LIMIT < sizes["toolu_6"][0]
    host = {key: raw if raw <= CC_LIMIT else CC_PREVIEW for key, (raw, _) in sizes.items()}
    gross = {key: host[key] - shown for key, (_, shown) in sizes.items()}
    assert gross["toolu_6"] < 0, "YARP's view is larger than the preview Claude Code itself would have shown"
    recovered = len(archived["toolu_2"]["snaps"]["result/before"])  # Claude Code showed it whole
    rerun = sizes["toolu_3"][1] + gross["toolu_3"]  # what it showed, charged to toolu_1; what it cut, to itself

    report = _report(world, "--by", "rule")
    total = report["total"]
    assert total["bytes_withheld_gross"] == sum(gross.values())
    assert total["bytes_recovered"] == recovered
    assert total["bytes_rerun"] == rerun
    assert total["bytes_withheld_net"] == sum(gross.values()) - recovered - rerun
    assert (total["capped_calls"], total["recalled_calls"], total["recall_rate"]) == (4, 1, 0.25)
    family = FAMILY.match(archived["toolu_1"]["snaps"]["stdout/after"]).group(1).decode()
    rules = {r["rule"]: r for r in report["rules"]}
    assert rules[family]["capped_calls"] == 4 and rules[family]["recalled_calls"] == 1
    assert rules[family]["too_aggressive"] is False  # fewer than AGGRESSIVE_MIN_CALLS capped calls
    assert 4 < AGGRESSIVE_MIN_CALLS
    # Every byte the hosts would have shown: the capped calls at their host view, the rest as shown.
    shown_whole = sum(len(c["snaps"]["result/before"]) for k, c in archived.items()
                      if k in ("toolu_2", "toolu_4"))
    nested_shown = len(nested[0]["snaps"]["stdout/after"]) + len(nested[0]["snaps"]["stderr/after"])
    assert total["tool_output_bytes"] == sum(host.values()) + shown_whole + nested_shown

    # The text report leads with the net figure.
    text = world.yarp_cli("archive", "savings").stdout.decode()
    assert text.startswith("net withheld ") and "recovered" in text and "re-run" in text


def test_a_pi_call_over_the_hosts_line_limit_counts_only_what_pi_would_have_shown(world):  # noqa: F811
    from yarp.clients.broker import BrokerClient
    from yarp.paths import resolve_archive
    from yarp.wire import operations as ops

    session = ops.Session("pi", "tester", "pi-lines")
    command = "seq 1 30000"
    wrapped = (f"{world.yarp} run --archive-agent pi --archive-account tester --archive-session pi-lines"
               f" --archive-call call-1 -- {command}")
    now = int(time.time() * 1000)
    meta = ops.CallMeta("call-1", "bash", now, True, "prov", "model", str(world.work))
    with BrokerClient(resolve_archive(world.archive, world.env), world.env) as client:
        client.request(ops.BeginCall(session, meta, {"command": command}, {"command": wrapped}, now),
                       time.monotonic() + 10)
        ran = world.shell(wrapped)
        assert ran.returncode == 0 and len(ran.stdout) < 6000
        result = {"content": [{"type": "text", "text": ran.stdout.decode()}], "details": None, "isError": False}
        client.request(ops.ResultBefore(session, "call-1", result, now + 1), time.monotonic() + 10)
        client.request(ops.FinishCall(session, "call-1", result, False, True, now + 2), time.monotonic() + 10)
    raw, shown = _sizes(calls(world.archive)["call-1"])
    assert raw == len("".join(f"{i}\n" for i in range(1, 30001)))
    # Pi's bash keeps 2,000 lines (or 50 KiB) of the tail: at the output's mean line length, under its note.
    pi = HOST_VIEWS["pi", SHELL, None]
    host = min(raw * pi.lines // 30001, pi.limit) + pi.notice
    total = _report(world)["total"]
    assert total["tool_output_bytes"] == host < raw
    assert total["bytes_withheld_gross"] == host - shown
    assert total["bytes_withheld"] == raw - shown  # YARP's own cut, beside it


def test_an_imported_session_that_reads_a_reference_back_is_a_recovery(world, tmp_path):  # noqa: F811
    from import_fixtures import pi_call, pi_header, pi_result

    world.shell("yarp run -- seq 1 30000 > /dev/null")
    (live,) = calls(world.archive).values()
    ref = live["ref"]
    lines = [pi_header(), pi_call("c1", None, "toolu_r", 5, f"yarp read {ref} stdout 1:3"),
             pi_result("r1", "c1", "toolu_r", 6, "1\n2\n3\n")]
    session = tmp_path / "session.jsonl"
    session.write_text("".join(json.dumps(line) + "\n" for line in lines))
    imported = world.yarp_cli("import", "pi", str(session), "--settle", "0", "--json")
    assert imported.returncode == 0, imported.stderr.decode()
    assert json.loads(imported.stdout)["callsNew"] == 1
    reader = calls(world.archive)["toolu_r"]
    total = _report(world)["total"]
    assert total["view_unknown_imported_calls"] == 1
    assert total["bytes_recovered"] == len(reader["snaps"]["result/before"])
    assert (total["capped_calls"], total["recalled_calls"]) == (1, 1)
    raw, shown = _sizes(live)
    assert total["bytes_withheld_net"] == raw - shown - total["bytes_recovered"]  # a person's run: no host limit
