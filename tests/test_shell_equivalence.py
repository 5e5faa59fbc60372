"""A rewrite never changes what the shell means; how much of the corpus it reaches.

The whole harness (`shell_equivalence.py`) runs once per session over both
corpora, the real Pi bash commands (skipped when the shared data is absent)
and `tests/vectors/shell_forms.txt` (those also with stdout and stderr in one
file), inside a loopback-only network namespace, with the repository's
compound planner. Every command must be
equivalent (exit status, visible bytes, files, final shell state, archive);
the Pi corpus's reach must be at least 95 %. Deliberately wrong rewrites
prove that the harness reports what it is meant to catch.

`.venv/bin/python bench/shell_reach.py --show-unreached --show-differences`
prints the same figures with the commands behind them.
"""

from __future__ import annotations

import warnings

import pytest

import shell_equivalence as se
from netns import loopback_namespace

PI_CASES = se.load_pi_corpus()
FORM_CASES = se.load_forms_corpus()
REACH_TARGET = 0.95
#: The whole run is bounded; cases not started by then fail the equivalence tests as `not_run`.
BUDGET_SECONDS = 240


@pytest.fixture(scope="module")
def report():
    with loopback_namespace():
        separate = se.run_harness(PI_CASES + FORM_CASES, workers=2, budget=BUDGET_SECONDS)
        # The forms once more with stdout and stderr in one file: the combined output Pi and Codex show.
        merged = se.run_harness(FORM_CASES, workers=2, budget=max(0, BUDGET_SECONDS - separate.seconds), merged=True)
    result = se.HarnessReport(separate.results + merged.results, separate.verify + merged.verify,
                              separate.seconds + merged.seconds)
    print("\n" + se.format_report(result))
    return result


def _failures(results) -> str:
    lines = []
    for r in results:
        if not r.equivalent:
            lines.append(f"[{r.case.id}] {r.verdict}: {se._one_line(r.case.text)}")
            if r.plan and r.plan.command:
                lines.append(f"    rewritten: {se._one_line(r.plan.command)}")
            lines += [f"    - {d}" for d in (r.differences + r.archive_problems)[:6]]
    return "\n".join(lines[:200])


@pytest.mark.skipif(not PI_CASES, reason="recorded Pi sessions are not available")
def test_pi_corpus_has_every_bash_command():
    assert len(PI_CASES) == 398


@pytest.mark.skipif(not PI_CASES, reason="recorded Pi sessions are not available")
def test_pi_commands_are_equivalent(report):
    results = report.corpus("pi")
    figures = report.figures("pi")
    assert figures["commands"] == len(PI_CASES)
    assert figures["equivalent"] == figures["commands"], (
        f"Pi corpus: {figures['equivalent']}/{figures['commands']} equivalent\n" + _failures(results))


def test_forms_are_equivalent(report):
    results = report.corpus("forms")
    figures = report.figures("forms")
    assert figures["commands"] == len(FORM_CASES) > 100
    assert figures["equivalent"] == figures["commands"], (
        f"forms: {figures['equivalent']}/{figures['commands']} equivalent\n" + _failures(results))


def test_forms_with_merged_streams_are_equivalent(report):
    results = report.corpus("forms/merged")
    figures = report.figures("forms/merged")
    assert figures["commands"] == len(FORM_CASES)
    assert figures["equivalent"] == figures["commands"], (
        f"forms, merged streams: {figures['equivalent']}/{figures['commands']} equivalent\n" + _failures(results))


def test_archives_verify(report):
    assert report.verified, "\n".join(text for code, text in report.verify if code)


class ReachFigure(UserWarning):
    """The measured reach, shown in the warnings summary of every run, passing or not."""


@pytest.mark.skipif(not PI_CASES, reason="recorded Pi sessions are not available")
def test_pi_reach_at_least_95_percent(report, record_property):
    figures = report.figures("pi")
    record_property("pi_reach", figures["reach"])
    for name in sorted({r.case.corpus for r in report.results}):
        f = report.figures(name)
        warnings.warn(ReachFigure(f"{name}: reach {100 * f['reach']:.1f} % ({f['reached']}/{f['commands']}), "
                                  f"equivalent {f['equivalent']}/{f['commands']}"), stacklevel=1)
    unreached: dict[str, int] = {}
    for r in report.corpus("pi"):
        if not r.reached:
            for token in (r.plan.unwrapped if r.plan and r.plan.unwrapped else (r.verdict,)):
                unreached[token] = unreached.get(token, 0) + 1
    reasons = ", ".join(f"{k} {v}" for k, v in sorted(unreached.items(), key=lambda kv: -kv[1]))
    assert figures["reach"] >= REACH_TARGET, (
        f"Pi reach {100 * figures['reach']:.1f} % ({figures['reached']}/{figures['commands']}) "
        f"is below {100 * REACH_TARGET:.0f} %; unreached by reason: {reasons}")


# --- the harness itself can fail -------------------------------------------------------------------

SELF_CASES = [
    se.Case("self", "cd-and-test", "cd packages/tui && npm test"),
    se.Case("self", "merge-tail", "npm run check 2>&1 | tail -3"),
    se.Case("self", "cd-export", "cd packages && export STAGE=2 && ls"),
    se.Case("self", "plain-ls", "ls -la packages"),
]


@pytest.fixture(scope="module")
def self_reports():
    with loopback_namespace():
        return {name: se.run_harness(SELF_CASES, rewriter, workers=2, budget=120)
                for name, rewriter in (("wrap_cd", se.wrong_wrap_cd), ("drop_merge", se.wrong_drop_stderr_merge),
                                       ("child_shell", se.wrong_child_shell), ("identity", se.identity))}


def _by_id(report) -> dict:
    return {r.case.id: r for r in report.results}


def test_wrapping_cd_is_not_equivalent(self_reports):
    result = _by_id(self_reports["wrap_cd"])["cd-and-test"]
    assert result.verdict == "different" and not result.equivalent
    assert any(d.startswith("exit status") for d in result.differences)
    assert any(d.startswith("final pwd") for d in result.differences)


def test_dropping_a_stderr_merge_is_not_equivalent(self_reports):
    result = _by_id(self_reports["drop_merge"])["merge-tail"]
    assert result.verdict == "different"
    assert any(d.startswith("stdout") for d in result.differences)
    assert any(d.startswith("stderr") for d in result.differences)


def test_a_child_shell_loses_the_agents_state(self_reports):
    results = _by_id(self_reports["child_shell"])
    cd_export = results["cd-export"]
    assert cd_export.verdict == "different"
    assert any(d.startswith("final pwd") for d in cd_export.differences)
    assert any("STAGE" in d for d in cd_export.differences)
    # Its output is the same and archived exactly: only the final state gives it away.
    plain = results["plain-ls"]
    assert plain.equivalent and plain.calls == 1 and plain.observed == 2


def test_leaving_everything_alone_is_equivalent_and_reaches_nothing(self_reports):
    report = self_reports["identity"]
    assert all(r.equivalent for r in report.results)
    assert report.figures("self")["reach"] == 0


def test_an_archive_that_lost_bytes_is_reported():
    run = se.RunResult(0, b"out\n", b"", {}, {}, 0.0, [
        {"argv": ["run", "--", "ls"], "cwd": "/p", "fd1": "/io/stdout", "fd2": "/io/stderr", "same": False, "pid": 1}])
    call = {"ref": "yr_0", "status": "finished", "executed": 1, "requires_streams": 1, "snapshots": {
        ("input", "before"): b'{"argv":["ls"],"cwd":"/p"}',
        ("stdout", "before"): b"ou", ("stdout", "after"): b"ou",
        ("stderr", "before"): b"", ("stderr", "after"): b""}}
    from pathlib import Path

    problems, _ = se.check_archive(run, [call], Path("/io"))
    assert problems == []  # "ou" is inside what was shown: containment alone cannot see a cut tail ...
    problems, _ = se.check_archive(run, [call], Path("/io"), whole=True)
    assert any("is not exactly the visible stdout" in p for p in problems)  # ... a whole wrap can
    call["snapshots"][("stdout", "after")] = b"out\n"
    problems, _ = se.check_archive(run, [call], Path("/io"))
    assert any("differs from stdout/after" in p for p in problems)
    call["snapshots"][("stdout", "before")] = b"out\n"
    call["snapshots"][("stdout", "after")] = b"other\n"
    call["snapshots"][("stdout", "before")] = b"other\n"
    problems, _ = se.check_archive(run, [call], Path("/io"))
    assert any("is not in the visible stdout" in p for p in problems)
    problems, _ = se.check_archive(run, [], Path("/io"))
    assert any("no archived call" in p for p in problems)
