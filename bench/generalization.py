"""Score YARP's output view on the generalization corpus: tools it was never tuned on.

Run: python bench/generalization.py [--half tuning|held_out|fresh|blind|sealed|hidden|veiled|cloaked|shrouded|masked|hooded|draped|cowled|swathed|mantled|all] [--case NAME] [--json] [--missed]

The corpus (bench/generalization, see its README) holds real outputs of scripting,
web, native, system and VCS tools, each annotated with the lines a reader must see,
and split by name into a tuning half and a held-out half, plus a third, `fresh` half
(manifest-fresh.json) recorded later, whose losses were read in turn, and a fourth, `blind`
half (manifest-blind.json) recorded without any view computed, scored once and read in turn,
a fifth, `sealed` half (manifest-sealed.json) and a sixth, `hidden` half (manifest-hidden.json),
recorded and read the same way, a seventh, `veiled` half (manifest-veiled.json), an eighth, `cloaked` half
(manifest-cloaked.json) and a ninth, `shrouded` half (manifest-shrouded.json), read in turn, a tenth,
`masked` half (manifest-masked.json), read in turn, an eleventh, `hooded` half (manifest-hooded.json), read in turn, a twelfth,
`draped` half (manifest-draped.json), read in turn, a thirteenth, `cowled` half (manifest-cowled.json), read in turn,
a fourteenth, `swathed` half (manifest-swathed.json), read in turn, and a fifteenth, `mantled` half
(manifest-mantled.json), read in turn. For every case this
computes three views of the same budget (the default cap, 5,120 bytes):

- run route: what `yarp run` shows (the selected rule reduces each stream, then
  `cap_files` caps both together; `view_routes.run_view`);
- host route: what a host post-view shows (`cap_text` over stdout, then stderr from a line of its own, source
  `result_text`, the exit status given; `view_routes.host_view`);
- naive: the first and last bytes (`view_routes.naive_cap`).

A signal line is kept when that exact decoded line is a line of the view (the run
route's per stream). The exit status is visible when the view is the output
unchanged or names `exit status N]` / `exit_status=N`. An output at or under the cap
must come back unchanged. Totals are given per half and overall; `TARGETS` are the
goals the held-out half is held to (bench/test_bench_generalization.py); the fresh
blind, sealed, hidden, veiled, cloaked, shrouded, masked, hooded, draped, cowled, swathed and mantled halves are measured against the same goals and reported.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
for _path in (HERE, os.path.join(ROOT, "src")):
    if _path not in sys.path:
        sys.path.insert(0, _path)

import corpus_cases  # noqa: E402
from view_routes import host_text, host_view, naive_cap, run_view  # noqa: E402
from yarp.limits import DEFAULT_CAP_BYTES  # noqa: E402
from yarp.view.rules import load_rules  # noqa: E402

CORPUS_DIR = os.path.join(HERE, "generalization")
MANIFESTS = ("manifest-scripting.json", "manifest-native.json", "manifest-fresh.json", "manifest-blind.json",
             "manifest-sealed.json", "manifest-hidden.json", "manifest-veiled.json",
             "manifest-cloaked.json", "manifest-shrouded.json", "manifest-masked.json",
             "manifest-hooded.json", "manifest-draped.json", "manifest-cowled.json",
             "manifest-swathed.json", "manifest-mantled.json")
HALVES = ("tuning", "held_out", "fresh", "blind", "sealed", "hidden", "veiled", "cloaked", "shrouded", "masked", "hooded", "draped", "cowled",
          "swathed", "mantled")
#: What the held-out half must reach: signal kept (both routes), view bytes against the
#: naive cap's over the cases larger than the cap, and every exit status / small output.
TARGETS = {"signal_kept": 0.98, "bytes_vs_naive": 0.60}


@dataclass
class Row:
    """One case's score on the three views."""

    name: str
    tool: str
    half: str
    raw: int
    signals: int
    run_kept: int
    host_kept: int
    naive_kept: int
    run_bytes: int
    host_bytes: int
    naive_bytes: int
    run_exit: bool
    host_exit: bool
    small: bool
    run_unchanged: bool
    host_unchanged: bool
    run_missed: list[str] = field(default_factory=list)
    host_missed: list[str] = field(default_factory=list)


def _lines(data: bytes) -> set[str]:
    return set(data.decode("utf-8", errors="replace").split("\n"))


def exit_visible(view: bytes, raw: bytes, exit_code: int) -> bool:
    """The rule of test_salience_against_naive_cap: unchanged output, or a marker naming the status."""
    return view == raw or f"exit status {exit_code}]".encode() in view or f"exit_status={exit_code}".encode() in view


def available_manifests(corpus_dir: str = CORPUS_DIR) -> tuple[tuple[str, ...], list[str]]:
    """The manifests present, and a note for each one missing."""
    present = tuple(m for m in MANIFESTS if os.path.exists(os.path.join(corpus_dir, m)))
    notes = [f"note: {m} not found; its cases are skipped" for m in MANIFESTS if m not in present]
    return present, notes


def load(corpus_dir: str = CORPUS_DIR) -> tuple[list, list[str]]:
    """Every case of the manifests that exist, with a note per missing manifest."""
    present, notes = available_manifests(corpus_dir)
    return corpus_cases.load_cases(corpus_dir, present), notes


def score_case(case, rules, tmp: Path, cap: int = DEFAULT_CAP_BYTES) -> tuple[Row, dict[str, bytes]]:
    """Score one case; also return its three views (run as stdout+stderr) for inspection."""
    out, err = run_view(case, rules, tmp, cap)
    run = out + err
    host = host_view(case, cap)
    raw = case.stdout + case.stderr
    naive = naive_cap(raw, cap)
    run_shown = {"stdout": _lines(out), "stderr": _lines(err)}
    host_shown, naive_shown = _lines(host), _lines(naive)
    signals = corpus_cases.signal_lines(case)
    run_missed = [f"{stream}: {text}" for stream, _, text in signals if text not in run_shown[stream]]
    host_missed = [f"{stream}: {text}" for stream, _, text in signals if text not in host_shown]
    small = len(raw) <= cap
    row = Row(
        name=case.name, tool=case.tool, half=case.half, raw=len(raw), signals=len(signals),
        run_kept=len(signals) - len(run_missed), host_kept=len(signals) - len(host_missed),
        naive_kept=sum(text in naive_shown for _, _, text in signals),
        run_bytes=len(run), host_bytes=len(host), naive_bytes=len(naive),
        run_exit=exit_visible(run, raw, case.exit_code), host_exit=exit_visible(host, host_text(case), case.exit_code),
        small=small, run_unchanged=(out, err) == (case.stdout, case.stderr), host_unchanged=host == host_text(case),
        run_missed=run_missed, host_missed=host_missed,
    )
    return row, {"run": run, "host": host, "naive": naive}


def score(cases, cap: int = DEFAULT_CAP_BYTES) -> list[Row]:
    """Every case's row, in corpus order."""
    rules = load_rules()
    with tempfile.TemporaryDirectory(prefix="yarp-generalization-") as tmp:
        return [score_case(case, rules, Path(tmp), cap)[0] for case in cases]


def totals(rows: list[Row]) -> dict:
    """Sums over rows: signal kept per view, bytes over the cases larger than the cap, exits, small outputs."""
    big = [r for r in rows if not r.small]
    small = [r for r in rows if r.small]
    t = {
        "cases": len(rows), "signals": sum(r.signals for r in rows),
        "run_kept": sum(r.run_kept for r in rows), "host_kept": sum(r.host_kept for r in rows),
        "naive_kept": sum(r.naive_kept for r in rows),
        "big_cases": len(big), "big_raw_bytes": sum(r.raw for r in big),
        "big_run_bytes": sum(r.run_bytes for r in big), "big_host_bytes": sum(r.host_bytes for r in big),
        "big_naive_bytes": sum(r.naive_bytes for r in big),
        "run_exit_visible": sum(r.run_exit for r in rows), "host_exit_visible": sum(r.host_exit for r in rows),
        "small_cases": len(small), "run_small_unchanged": sum(r.run_unchanged for r in small),
        "host_small_unchanged": sum(r.host_unchanged for r in small),
    }
    for route in ("run", "host", "naive"):
        t[f"{route}_kept_pct"] = round(100 * t[f"{route}_kept"] / t["signals"], 1) if t["signals"] else 100.0
    for route in ("run", "host"):
        naive = t["big_naive_bytes"]
        t[f"{route}_bytes_vs_naive_pct"] = round(100 * t[f"big_{route}_bytes"] / naive, 1) if naive else 0.0
    return t


def target_problems(rows: list[Row]) -> list[str]:
    """How the rows miss `TARGETS`: signal kept, bytes against the naive cap, exit status, small outputs."""
    t = totals(rows)
    problems = []
    for route in ("run", "host"):
        if t["signals"] and t[f"{route}_kept"] < TARGETS["signal_kept"] * t["signals"]:
            problems.append(f"{route} route keeps {t[f'{route}_kept']}/{t['signals']} signal lines "
                            f"({t[f'{route}_kept_pct']}% < {100 * TARGETS['signal_kept']:.0f}%)")
        if t["big_naive_bytes"] and t[f"big_{route}_bytes"] > TARGETS["bytes_vs_naive"] * t["big_naive_bytes"]:
            problems.append(f"{route} route views are {t[f'{route}_bytes_vs_naive_pct']}% of the naive cap's bytes "
                            f"over {t['big_cases']} big cases (> {100 * TARGETS['bytes_vs_naive']:.0f}%)")
        problems += [f"{route} route: exit status not visible in {r.name}" for r in rows
                     if not getattr(r, f"{route}_exit")]
        problems += [f"{route} route: small output of {r.name} changed" for r in rows
                     if r.small and not getattr(r, f"{route}_unchanged")]
    return problems


def table(rows: list[Row]) -> str:
    """One line per case, then the totals per half and overall."""
    head = (f"{'case':32} {'half':8} {'tool':12} {'raw':>9} {'run':>7} {'host':>7} {'naive':>7} "
            f"{'run B':>6} {'host B':>6} {'naive B':>7} {'exit':>5} {'small':>5}")
    out = [head]
    for r in rows:
        small = ("ok" if r.run_unchanged and r.host_unchanged else "CHG") if r.small else "-"
        exits = "".join("y" if ok else "N" for ok in (r.run_exit, r.host_exit))
        out.append(f"{r.name[:32]:32} {r.half[:8]:8} {r.tool[:12]:12} {r.raw:9} {r.run_kept:3}/{r.signals:<3} "
                   f"{r.host_kept:3}/{r.signals:<3} {r.naive_kept:3}/{r.signals:<3} {r.run_bytes:6} "
                   f"{r.host_bytes:6} {r.naive_bytes:7} {exits:>5} {small:>5}")
    out.append("")
    for label, group in [(h, [r for r in rows if r.half == h]) for h in HALVES] + [("all", rows)]:
        if group:
            out.append(summary_line(label, totals(group)))
    return "\n".join(out)


def summary_line(label: str, t: dict) -> str:
    """The totals of one half as one readable line."""
    return (f"{label:8} {t['cases']:3} cases: signal kept run {t['run_kept']}/{t['signals']} ({t['run_kept_pct']}%), "
            f"host {t['host_kept']}/{t['signals']} ({t['host_kept_pct']}%), naive {t['naive_kept']}/{t['signals']} "
            f"({t['naive_kept_pct']}%); bytes over {t['big_cases']} big cases: run {t['big_run_bytes']} "
            f"({t['run_bytes_vs_naive_pct']}% of naive), host {t['big_host_bytes']} ({t['host_bytes_vs_naive_pct']}%), "
            f"naive {t['big_naive_bytes']}; exit visible run {t['run_exit_visible']}/{t['cases']}, "
            f"host {t['host_exit_visible']}/{t['cases']}; small unchanged run "
            f"{t['run_small_unchanged']}/{t['small_cases']}, host {t['host_small_unchanged']}/{t['small_cases']}")


def show_case(case, cap: int = DEFAULT_CAP_BYTES) -> str:
    """A case's three views in full, with its score."""
    with tempfile.TemporaryDirectory(prefix="yarp-generalization-") as tmp:
        row, views = score_case(case, load_rules(), Path(tmp), cap)
    parts = [f"# {case.name} ({case.tool}, {case.half}, exit {case.exit_code}, {row.raw} bytes)"]
    for route in ("run", "host", "naive"):
        parts.append(f"\n===== {route} view ({len(views[route])} bytes) =====")
        parts.append(views[route].decode("utf-8", errors="replace"))
    parts.append("\n===== missed =====")
    parts += [f"run  {m}" for m in row.run_missed] + [f"host {m}" for m in row.host_missed]
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    """Print the table (or one case's views, or the totals as JSON)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--half", choices=(*HALVES, "all"), default="all")
    parser.add_argument("--case", help="print this case's views in full")
    parser.add_argument("--json", action="store_true", help="print the totals as JSON")
    parser.add_argument("--missed", action="store_true", help="list every missed signal line per case")
    args = parser.parse_args(argv)
    cases, notes = load()
    for note in notes:
        print(note, file=sys.stderr)
    if args.case:
        chosen = [c for c in cases if c.name == args.case]
        if not chosen:
            parser.error(f"no case named {args.case!r}")
        print(show_case(chosen[0]))
        return 0
    if args.half != "all":
        cases = [c for c in cases if c.half == args.half]
    rows = score(cases)
    if args.json:
        halves = {h: totals([r for r in rows if r.half == h]) for h in HALVES if any(r.half == h for r in rows)}
        halves["all"] = totals(rows)
        print(json.dumps({"totals": halves, "notes": notes,
                          **{f"{half}_problems": target_problems([r for r in rows if r.half == half])
                             for half in HALVES if half != "tuning"},
                          **({"cases": [asdict(r) for r in rows]} if args.missed else {})}, indent=1))
        return 0
    print(table(rows))
    if args.missed:
        for r in rows:
            for route in ("run", "host"):
                for line in getattr(r, f"{route}_missed"):
                    print(f"missed {route:4} {r.name}: {line[:200]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
