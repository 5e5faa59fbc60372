"""Equivalence and reach of the compound shell planner over the Pi and forms corpora.

    .venv/bin/python bench/shell_reach.py [--corpus pi|forms|all] [--show-unreached] [--show-differences]
                                          [--merged] [--workers N] [--json FILE]

Runs `tests/shell_equivalence.py`'s harness (every command plain and rewritten
in identical scratch worlds, compared byte for byte, archive checked) inside a
loopback-only network namespace, which needs root; prints the figures per
corpus, and with the flags the commands not reached (with the planner's
reasons) and the commands that are not equivalent (with each difference).
Exits 1 when a command is not equivalent or an archive does not verify.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent / "tests"
sys.path.insert(0, str(TESTS))

import shell_equivalence as se  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", choices=("pi", "forms", "all"), default="all")
    parser.add_argument("--show-unreached", action="store_true", help="list commands whose output is not all archived")
    parser.add_argument("--show-differences", action="store_true", help="list commands that are not equivalent")
    parser.add_argument("--merged", action="store_true",
                        help="also run with stdout and stderr in one file (the combined output Pi and Codex show)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--budget", type=float, default=900.0, help="seconds after which no further command starts")
    parser.add_argument("--json", metavar="FILE", help="write every result as JSON")
    args = parser.parse_args(argv)

    cases = []
    if args.corpus in ("pi", "all"):
        pi = se.load_pi_corpus()
        if not pi:
            print("Pi sessions not found (../shared/data/pi-sessions); skipping that corpus", file=sys.stderr)
        cases += pi
    if args.corpus in ("forms", "all"):
        cases += se.load_forms_corpus()

    from netns import loopback_namespace

    try:
        with loopback_namespace():
            report = se.run_harness(cases, workers=args.workers, budget=args.budget)
            if args.merged:
                extra = se.run_harness(cases, workers=args.workers, budget=args.budget, merged=True)
                report = se.HarnessReport(report.results + extra.results, report.verify + extra.verify,
                                          report.seconds + extra.seconds)
    except BaseException as exc:  # pytest's skip/fail outcome when the namespace cannot be made
        if isinstance(exc, KeyboardInterrupt):
            raise
        print(f"shell_reach: {getattr(exc, 'msg', None) or exc}", file=sys.stderr)
        return 2
    print(se.format_report(report, show_unreached=args.show_unreached, show_differences=args.show_differences))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            corpora = sorted({r.case.corpus for r in report.results})
            json.dump({"figures": {name: report.figures(name) for name in corpora},
                       "verified": report.verified, "results": [r.to_json() for r in report.results]},
                      handle, indent=1, ensure_ascii=False)
            handle.write("\n")
    ok = report.verified and all(r.equivalent for r in report.results)
    return 0 if ok else 1


if __name__ == "__main__":
    os.environ.pop("CI", None)  # a missing namespace is reported, not turned into a test failure
    sys.exit(main())
