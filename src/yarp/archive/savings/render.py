"""The terminal form of a savings report: totals in words, one bar per group, the top commands.

Bars are drawn to one scale: dark cells for bytes shown, light ones for the
net withheld, medium ones for what followers took back of the gross (`#`,
`-` and `=` when the terminal is not UTF-8); colour (cyan, grey, yellow) only
when the caller asks for it. The JSON form is the report's own (`totals.Savings.as_dict`).
"""

from __future__ import annotations

from yarp.archive.savings.programs import MAX_LABEL_CHARS
from yarp.archive.savings.totals import Savings, Totals, estimate_tokens, group_order, rule_order

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


#: Bar glyphs for shown, net withheld and taken back, on a UTF-8 terminal and elsewhere.
_GLYPHS = ("\u2588", "\u2591", "\u2592")
_ASCII_GLYPHS = ("#", "-", "=")
#: Colours of the three parts when the caller asks for colour: cyan, dim, yellow.
_COLOURS = ("\x1b[36m", "\x1b[2m", "\x1b[33m")


def bar(parts: tuple[int, int, int], scale: int, width: int, *, ascii_only: bool = False) -> list[str]:
    """One group's bar as its three parts' cells: shown, net withheld, what followers took back;
    `scale` bytes = `width` cells, and a part that is not empty gets a cell at least."""
    if scale <= 0:
        return ["", "", ""]
    glyphs = _ASCII_GLYPHS if ascii_only else _GLYPHS
    cells = []
    for value, glyph in zip(parts, glyphs):
        n = round(max(value, 0) * width / scale)
        cells.append(glyph * (1 if value > 0 and n == 0 else n))
    return cells


def render_text(report: Savings, *, width: int = 80, color: bool = False, ascii_only: bool = False,
                rows: int = 20) -> str:
    """The terminal report: totals, one bar per group (at most `width` columns), the rules, the top commands."""
    out = _total_lines(report.total)
    groups = sorted(report.groups.items(), key=group_order(report.by))
    if groups:
        out += _group_lines(report.by, groups, width, color, ascii_only, rows)
    if report.rules:
        out += _rule_lines(report.rules)
    if report.top_commands:
        out += _top_lines(report.top_commands)
    return "\n".join(out) + "\n"


def _share(part: int, whole: int) -> str:
    return f"{part / whole:.1%}" if whole else "-"


def _total_lines(total: Totals) -> list[str]:
    """The window's totals in words: net and gross withheld, shown, recalls, unknown views, calls without output."""
    out = [f"net withheld {human_bytes(total.net)} (~{human_count(estimate_tokens(total.net))} tokens), "
           f"{_share(total.net, total.tool_output)} of {human_bytes(total.tool_output)} of tool output",
           f"  gross {human_bytes(total.gross)} within the hosts' own limits, "
           f"less {human_bytes(total.recovered)} recovered, {human_bytes(total.rerun)} re-run",
           f"shown {human_bytes(total.shown)} in {total.calls:,} calls; {total.capped_calls:,} views capped, "
           f"{total.recalled_calls:,} of them recalled ({_share(total.recalled_calls, total.capped_calls)})"]
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
    full, light, medium = _ASCII_GLYPHS if ascii_only else _GLYPHS
    label_width = min(max(len(key) for key, _ in shown_groups), 24)
    cells = [(human_bytes(t.net), _share(t.net, t.tool_output),
              f"+{t.view_unknown_calls:,} unknown" if t.view_unknown_calls else "") for _, t in shown_groups]
    number_width = max(len(c[0]) for c in cells)
    share_width = max(len(c[1]) for c in cells)
    unknown_width = max(len(c[2]) for c in cells)
    bar_width = max(10, width - label_width - number_width - share_width - 5
                    - (unknown_width + 2 if unknown_width else 0) - 2)
    scale = max(max(t.shown + max(t.gross, 0), 1) for _, t in shown_groups)
    out.append("")
    out.append(f"by {by}: {full} shown {light} net withheld {medium} recovered or re-run; net, share")
    for (key, t), (net, share, unknown) in zip(shown_groups, cells):
        label = key if len(key) <= label_width else key[: label_width - 1] + "\u2026"
        kept = max(t.net, 0)
        cells = bar((t.shown, kept, max(t.gross - kept, 0)), scale, bar_width, ascii_only=ascii_only)
        pad = " " * (bar_width - sum(map(len, cells)))
        if color:
            cells = [f"{code}{part}\x1b[0m" for code, part in zip(_COLOURS, cells) if part]
        drawn = "".join(cells)
        line = f"{label:<{label_width}}  {drawn}{pad}  {net:>{number_width}} {share:>{share_width}}"
        out.append(f"{line}  {unknown}" if unknown else line)
    if len(groups) > rows:
        out.append(f"\u2026 {len(groups) - rows} more groups (--json lists all)")
    return out


def _rule_lines(rules: dict[str, Totals]) -> list[str]:
    """What cut the views: capped calls, how many were recalled, and the net withheld, flagging the aggressive."""
    out = ["", "what cut the views: capped calls, recalled, recall rate, net withheld"]
    ranked = rule_order(rules)
    name_width = min(max(len(name) for name, _ in ranked), 24)
    for name, t in ranked:
        flag = "  too aggressive" if t.too_aggressive else ""
        out.append(f"  {name:<{name_width}}  {t.capped_calls:>7,} {t.recalled_calls:>7,} "
                   f"{_share(t.recalled_calls, t.capped_calls):>6}  {human_bytes(t.net):>10}{flag}")
    return out


def _top_lines(top_commands: list[tuple[str, Totals]]) -> list[str]:
    """The commands that withheld most, net, with their share withheld and their calls."""
    out = ["", "top commands by net withheld"]
    command_width = min(max(len(c) for c, _ in top_commands), MAX_LABEL_CHARS)
    for command, t in top_commands:
        share = f"{t.withheld / t.produced:.0%}" if t.produced else "-"
        out.append(f"  {command:<{command_width}}  {human_bytes(t.net):>10} {share:>4}  {t.calls:,} calls")
    return out
