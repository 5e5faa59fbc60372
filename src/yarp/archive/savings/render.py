"""The terminal form of a savings report: totals in words, one bar per group, the top commands.

Bars are drawn to one scale: dark cells for bytes shown, light ones for bytes
withheld, `#` and `-` when the terminal is not UTF-8; colour only when the
caller asks for it. The JSON form is the report's own (`totals.Savings.as_dict`).
"""

from __future__ import annotations

from yarp.archive.savings.programs import MAX_LABEL_CHARS
from yarp.archive.savings.totals import Savings, Totals, estimate_tokens, group_order

_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")


def human_bytes(n: int) -> str:
    """`n` bytes in binary units for the text report, such as `1.5 MiB`."""
    value = float(n)
    sign = "-" if value < 0 else ""
    value = abs(value)
    for unit in _UNITS:
        if value < 1024 or unit == _UNITS[-1]:
            return f"{sign}{value:.0f} {unit}" if unit == "B" else f"{sign}{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def human_count(n: int) -> str:
    """`n` shortened with a k, M or G suffix for the text report."""
    for limit, suffix in ((1_000_000_000, "G"), (1_000_000, "M"), (1_000, "k")):
        if abs(n) >= limit:
            return f"{n / limit:.1f}{suffix}"
    return str(n)


def bar(shown: int, withheld: int, scale: int, width: int, *, ascii_only: bool = False) -> str:
    """One group's bar: shown (dark) then withheld (light), `scale` bytes = `width` cells."""
    full, light = ("#", "-") if ascii_only else ("\u2588", "\u2591")
    if scale <= 0:
        return ""
    shown_cells = round(max(shown, 0) * width / scale)
    withheld_cells = round(max(withheld, 0) * width / scale)
    if withheld > 0 and withheld_cells == 0:
        withheld_cells = 1
    if shown > 0 and shown_cells == 0:
        shown_cells = 1
    return full * shown_cells + light * withheld_cells


def render_text(report: Savings, *, width: int = 80, color: bool = False, ascii_only: bool = False,
                rows: int = 20) -> str:
    """The terminal report: totals, one bar per group (at most `width` columns), the top commands."""
    out = _total_lines(report.total)
    groups = sorted(report.groups.items(), key=group_order(report.by))
    if groups:
        out += _group_lines(report.by, groups, width, color, ascii_only, rows)
    if report.top_commands:
        out += _top_lines(report.top_commands)
    return "\n".join(out) + "\n"


def _total_lines(total: Totals) -> list[str]:
    """The window's totals in words: withheld, shown, unknown views, calls without output."""
    out: list[str] = []
    pct = f" ({total.withheld / total.produced:.1%})" if total.produced else ""
    out.append(f"withheld {human_bytes(total.withheld)} of {human_bytes(total.produced)} produced{pct}, "
               f"~{human_count(estimate_tokens(total.withheld))} tokens")
    out.append(f"shown {human_bytes(total.shown)} in {total.calls:,} calls")
    if total.view_unknown_calls:
        out.append(f"view unknown: {total.view_unknown_calls:,} calls, {human_bytes(total.view_unknown_bytes)}, "
                   f"not counted ({total.host_view_calls:,} host, {total.imported_calls:,} imported)")
    extra = [f"{total.not_executed_calls:,} not executed"] if total.not_executed_calls else []
    extra += [f"{total.incomplete_calls:,} incomplete"] if total.incomplete_calls else []
    if extra:
        out.append("no output to count: " + ", ".join(extra))
    return out


def _group_lines(by: str, groups: list[tuple[str, Totals]], width: int, color: bool, ascii_only: bool,
                 rows: int) -> list[str]:
    """One bar per group, the first `rows` groups in display order, drawn to one scale."""
    out: list[str] = []
    shown_groups = groups[:rows]
    full, light = ("#", "-") if ascii_only else ("\u2588", "\u2591")
    label_width = min(max(len(key) for key, _ in shown_groups), 24)
    cells = [(human_bytes(t.withheld), f"{t.withheld / t.produced:.0%}" if t.produced else "-",
              f"+{t.view_unknown_calls:,} unknown" if t.view_unknown_calls else "") for _, t in shown_groups]
    number_width = max(len(c[0]) for c in cells)
    unknown_width = max(len(c[2]) for c in cells)
    bar_width = max(10, width - label_width - number_width - 5 - (unknown_width + 2 if unknown_width else 0) - 4)
    scale = max(max(t.produced, t.shown) for _, t in shown_groups) or 1
    out.append("")
    out.append(f"by {by}: {full} shown {light} withheld, withheld bytes and share")
    for (key, t), (withheld, share, unknown) in zip(shown_groups, cells):
        label = key if len(key) <= label_width else key[: label_width - 1] + "\u2026"
        drawn = bar(t.shown, t.withheld, scale, bar_width, ascii_only=ascii_only)
        pad = " " * (bar_width - len(drawn))
        if color and drawn:
            dark = drawn.rstrip(light)
            drawn = f"\x1b[36m{dark}\x1b[0m\x1b[2m{drawn[len(dark):]}\x1b[0m"
        line = f"{label:<{label_width}}  {drawn}{pad}  {withheld:>{number_width}} {share:>4}"
        out.append(f"{line}  {unknown}" if unknown else line)
    if len(groups) > rows:
        out.append(f"\u2026 {len(groups) - rows} more groups (--json lists all)")
    return out


def _top_lines(top_commands: list[tuple[str, int, int, int]]) -> list[str]:
    """The commands that withheld most, with their share withheld and their calls."""
    out = ["", "top commands by bytes withheld"]
    command_width = min(max(len(c) for c, *_ in top_commands), MAX_LABEL_CHARS)
    for command, calls, produced, withheld in top_commands:
        share = f"{withheld / produced:.0%}" if produced else "-"
        out.append(f"  {command:<{command_width}}  {human_bytes(withheld):>10} {share:>4}  {calls:,} calls")
    return out
