"""The call list and a call's record as people read them: aligned columns, local times, colour on a terminal.

One line per call: reference, start time (local), agent, tool, status (`ok`,
`error`, `exit N`, `incomplete`, `not-run`), duration, output size, `cut` when
YARP's view cut the output, working directory (`~` for home), and the gist of
the input (the command, path or pattern). Column widths come from the first
page of calls, so a long list streams. Colours follow git's choices (yellow
reference, green ok, red failure) and only when asked.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator

from yarp.archive.calls.listing import CallRow
from yarp.archive.tools import one_line
from yarp.times import format_duration, format_local

TYPE_CHECKING = False
if TYPE_CHECKING:  # the list never loads the record's module (and its payload reader)
    from yarp.archive.calls.record import CallRecord

#: ANSI SGR codes of the columns that have a colour.
_COLOURS = {"ref": "33", "time": "2", "ok": "32", "error": "31", "incomplete": "33", "not-run": "31",
            "cut": "35", "cwd": "36", "dim": "2"}
_UNITS = ("B", "K", "M", "G", "T")
#: The widest agent and tool column; a longer name runs over.
MAX_AGENT, MAX_TOOL = 12, 18
#: A working directory longer than this is shortened on a terminal (`…/parent/dir`).
MAX_CWD = 28
#: Lines of a view part `yarp show` prints: its first and its last (where the markers are).
VIEW_HEAD, VIEW_TAIL = 24, 12


def size(n: int | None) -> str:
    """Bytes the way `ls -lh` prints them: `312B`, `4.1K`, `48K`, `1.2M`."""
    if n is None:
        return "-"
    value, unit = float(n), 0
    while value >= 1024 and unit < len(_UNITS) - 1:
        value /= 1024
        unit += 1
    if unit == 0:
        return f"{n}B"
    return f"{value:.1f}{_UNITS[unit]}" if value < 10 else f"{value:.0f}{_UNITS[unit]}"


def status_text(row: CallRow) -> str:
    """`exit N` for a failed call whose exit code is known, else its state."""
    return f"exit {row.exit_code}" if row.state == "error" and row.exit_code is not None else row.state


def short_cwd(path: str | None, *, home: str | None, shorten: bool) -> str:
    """`path` with the home directory as `~`; on a terminal, long ones cut to their last directories."""
    if not path:
        return "-"
    if home and home != "/" and (path == home or path.startswith(home.rstrip("/") + "/")):
        path = "~" + path[len(home.rstrip("/")):]
    path = one_line(path, 1024)
    if shorten and len(path) > MAX_CWD:
        parts = path.split("/")
        tail = parts[-1]
        for part in reversed(parts[:-1]):
            if len(part) + len(tail) + 3 > MAX_CWD:
                break
            tail = f"{part}/{tail}"
        path = "\u2026/" + tail[-(MAX_CWD - 2):]
    return path


def _paint(text: str, key: str, colour: bool) -> str:
    return f"\033[{_COLOURS[key]}m{text}\033[0m" if colour and text else text


class ListWriter:
    """Lines of the call list: widths fixed by the first rows given, then one line per row."""

    def __init__(self, *, colour: bool, width: int | None, home: str | None = None) -> None:
        self.colour = colour
        self.width = width  # a terminal's columns: lines are cut to it; None: nothing is cut
        self.home = os.path.expanduser("~") if home is None else home
        self.widths: tuple[int, int, int, int] | None = None

    def lines(self, rows: Iterable[CallRow], first_page: int = 200) -> Iterator[str]:
        """The list, line by line (each ends in a newline), for `rows` in order."""
        pending: list[CallRow] = []
        iterator = iter(rows)
        for row in iterator:
            pending.append(row)
            if len(pending) >= first_page:
                break
        shorten = self.width is not None
        self.widths = (min(max((len(r.agent) for r in pending), default=5), MAX_AGENT),
                       min(max((len(r.tool) for r in pending), default=4), MAX_TOOL),
                       max((len(status_text(r)) for r in pending), default=2),
                       min(max((len(short_cwd(r.cwd, home=self.home, shorten=shorten)) for r in pending), default=1),
                           MAX_CWD + 12))
        for row in pending:
            yield self.line(row)
        for row in iterator:
            yield self.line(row)

    def line(self, row: CallRow) -> str:
        """One call's line."""
        agent_w, tool_w, status_w, cwd_w = self.widths or (MAX_AGENT, MAX_TOOL, 10, MAX_CWD)
        colour = self.colour
        status = status_text(row)
        duration = format_duration(row.duration_ms) if row.duration_ms is not None else "-"
        tool = one_line(row.tool, 64)
        fixed = " ".join((
            _paint(row.ref, "ref", colour),
            _paint(format_local(row.started_ms), "time", colour),
            one_line(row.agent, 64).ljust(agent_w),
            tool.ljust(tool_w),
            _paint(status, row.state, colour) + " " * max(status_w - len(status), 0),
            duration.rjust(6),
            size(row.output_bytes).rjust(5),
            _paint("cut", "cut", colour) if row.cut else "   ",
        ))
        cwd = short_cwd(row.cwd, home=self.home, shorten=self.width is not None)
        cwd = cwd.ljust(cwd_w) if row.gist else cwd
        gist = row.gist or ""
        if self.width is not None:
            # The line fits the terminal: the gist gives way first, then the directory.
            room = self.width - _visible_len(fixed) - 1
            if room < len(cwd.rstrip()) + 3:
                cwd, gist = _fit(cwd.rstrip(), max(room, 1)), ""
            else:
                gist = _fit(gist, room - len(cwd) - 2)
        return f"{fixed} {_paint(cwd, 'cwd', colour)}  {gist}".rstrip() + "\n"


def _visible_len(text: str) -> int:
    length, inside = 0, False
    for ch in text:
        if ch == "\033":
            inside = True
        elif inside:
            inside = ch != "m"
        else:
            length += 1
    return length


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "\u2026"


def json_lines(rows: Iterable[CallRow]) -> Iterator[str]:
    """The list as JSON Lines: one object per call, raw values."""
    for row in rows:
        yield json.dumps(row.as_json(), ensure_ascii=False) + "\n"


# --- one call -----------------------------------------------------------------------


def render_record(record: "CallRecord", *, colour: bool, home: str | None = None) -> str:
    """`yarp show`: the call's fields, input, output sources, view and snapshots."""
    row = record.row
    home = os.path.expanduser("~") if home is None else home
    out = [_paint(row.ref, "ref", colour) + "  " + _paint(status_text(row), row.state, colour) + "\n"]
    fields = [
        ("agent", f"{row.agent} (account {row.account})"),
        ("session", row.session),
        ("call id", record.source_call_id),
        ("tool", row.tool + (" (wrapped: exact streams)" if record.requires_streams else "")),
        ("model", " ".join(filter(None, (record.provider, record.model))) or "-"),
        ("cwd", short_cwd(row.cwd, home=home, shorten=False)),
        ("started", format_local(row.started_ms, millis=True, zone=True)),
        ("finished", "-" if row.finished_ms is None else
         f"{format_local(row.finished_ms, millis=True, zone=True)}  ({format_duration(row.duration_ms)})"),
    ]
    out += [f"{name + ':':<10}{one_line(str(value), 400)}\n" for name, value in fields]
    out.append(_section("input", colour))
    out += _json_block(record.input_before)
    if record.input_after is not None:
        out.append(_section("input after YARP", colour))
        out += _json_block(record.input_after)
    out.append(_section("output (exact, before YARP)", colour))
    out += _source_lines(record, colour)
    out.append(_section("view (what the agent was shown)" + ("; cut" if row.cut else ""), colour))
    out += _view_lines(record)
    out.append(_section("snapshots", colour))
    for s in record.snapshots:
        extra = f" {s.completeness}" if s.completeness else ""
        out.append(f"  {s.subject + '/' + s.stage:<22} {size(s.length):>6}  {s.compression:<4}  "
                   f"{format_local(s.captured_ms, millis=True)}  {s.sha256.hex()[:16]}  {s.media_type}{extra}\n")
    return "".join(out)


def _section(title: str, colour: bool) -> str:
    return "\n" + _paint(title, "dim", colour) + "\n"


def _json_block(value: object, limit: int = 4096) -> list[str]:
    if value is None:
        return ["  (not shown: not archived, over 1 MiB, or not JSON; its size is under snapshots)\n"]
    text = json.dumps(value, indent=2, ensure_ascii=False)
    cut = len(text) > limit
    lines = [f"  {_printable(line)}\n" for line in text[:limit].split("\n")]
    if cut:
        lines.append(f"  \u2026 ({len(text) - limit} more characters; 'yarp show --json REF' has it all)\n")
    return lines


def _source_lines(record: "CallRecord", colour: bool) -> list[str]:
    ref = record.row.ref
    if not record.sources:
        return ["  none: the call has no recovery source\n"]
    lines = []
    for source in record.sources:
        lines.append(f"  {source.name:<14} {size(source.length):>6}  complete={source.complete_label}\n")
    first = record.sources[0].name
    lines.append(_paint(f"  yarp read {ref} {first} 1:40\n  yarp search {ref} 'error|FAILED'\n"
                        f"  yarp restore {ref} {first} > {first}.out\n", "dim", colour))
    return lines


def _view_lines(record: CallRecord) -> list[str]:
    if not record.view:
        return ["  none: the call has no view yet\n"]
    lines = []
    for part in record.view:
        text = part.data.decode("utf-8", "replace")
        rows = text.split("\n")
        if rows and rows[-1] == "":
            rows.pop()
        if len(rows) > VIEW_HEAD + VIEW_TAIL:
            # The head and the tail, where a view's markers are; the rest is counted.
            rows = [*rows[:VIEW_HEAD], f"\u2026 {len(rows) - VIEW_HEAD - VIEW_TAIL} line(s) \u2026",
                    *rows[-VIEW_TAIL:]]
        lines.append(f"  [{part.name}, {size(part.length)}]\n")
        lines += [f"  {_printable(row)}\n" for row in rows]
        more = part.length - len(part.data)
        if more > 0:
            lines.append(f"  \u2026 ({more} more bytes not read)\n")
    return lines


def _printable(line: str) -> str:
    """A line without terminal escapes or other control characters (shown as `\\xNN`)."""
    if line.isprintable():
        return line
    return "".join(ch if ch.isprintable() or ch == "\t" else f"\\x{ord(ch):02x}" for ch in line.rstrip("\r"))


def record_json(record: "CallRecord") -> dict:
    """`yarp show --json`: the row, the call's other fields, input values, sources, view text and snapshots."""
    return {
        **record.row.as_json(),
        "source_call_id": record.source_call_id, "provider": record.provider, "model": record.model,
        "requires_streams": record.requires_streams, "input": record.input_before,
        "input_after": record.input_after,
        "sources": [{"name": s.name, "bytes": s.length, "complete": s.complete_label} for s in record.sources],
        "view": [{"name": p.name, "bytes": p.length, "text": p.data.decode("utf-8", "replace"),
                  "shown_bytes": len(p.data)} for p in record.view],
        "snapshots": [s.as_json() for s in record.snapshots],
    }
