"""Blocks: the runs of lines a view keeps or drops together around each salient line.

Blocks keep a diagnostic together: a failure line takes up to `max_lead` lines
before it that lead into it (its location, source and caret lines; the line
above a caret line is always taken, being the source it points into) and the
indented, caret, frame and `E ` lines after it, up to `max_lines`; a header
takes its `index`/`---`/`+++` or `Author`/`Date` lines and a commit's subject.
Blocks of one rank that touch are merged into one `Unit`.

A view weighs, of a dense class, the blocks near a stream's ends and those of
its rare kinds (`yarp.view.spending.weighed`); `block_units` builds only
those. The patterns and limits are the salience data's
(`yarp.view.salience.Classifier`).
"""

from __future__ import annotations

import re
from operator import itemgetter

from yarp.view.salience import FAILURE_CLASSES, RANK, Classifier, is_blank
from yarp.view.templates import grouped

#: The classes a block is built around, and those of lines that end a block before them.
BLOCK_CLASSES = FAILURE_CLASSES | {"warning", "location", "finding"}
STOPS = ("summary", "header")
#: The class of a line that stands alone, without lead or continuation: a rare line among alike ones
#: (the one deleted file's row of a `diff --stat`), whose neighbours are the rows it stands out from.
LINE_CLASSES = ("rare",)
#: The rank of each class a block or a line standing alone is built around (`block_units`).
_RANKED = {cls: RANK[cls] for cls in RANK if cls in BLOCK_CLASSES or cls in STOPS or cls in LINE_CLASSES}


BLANK, OPENS = 1, 2
#: What a runner of many tasks puts before each line of one task's output: a package and its task
#: (`@shop/tax:build: `, `@shop/shipping: `, holding `@` or `/`), or a service's name and a bar
#: (`web-1  | `). A block's lines are read without it (`_bare`).
_TASK_PREFIX = re.compile(rb"(?:@?[A-Za-z][\w.-]*(?:/[\w.-]+)*(?::[A-Za-z][\w.-]*)?: |[A-Za-z][\w.-]* +\| )")
_START = itemgetter(0)  # a block's first line


class _Tests:
    """What the block patterns say of the lines asked so far, by the lines' bytes: dense output repeats
    its lines (`  |`, a blank line, the same note), and a dictionary answers faster than a pattern.
    `lead`: blank or a lead line; `caret`: a caret line; `continuation`: a continuation line; `opening`:
    what a line that does not go on is when a continuation line follows it; `located`: the indent of a
    line that starts with a location (`_located_indent`), else None."""

    __slots__ = ("lead", "caret", "continuation", "opening", "located", "prefix")

    def __init__(self) -> None:
        self.lead: dict[bytes, bool] = {}
        self.caret: dict[bytes, bool] = {}
        self.continuation: dict[bytes, bool] = {}
        #: `BLANK`, `OPENS` (ends with `:`, introducing what follows) or 0.
        self.opening: dict[bytes, int] = {}
        self.located: dict[bytes, int | None] = {}
        #: A line's task prefix (`_TASK_PREFIX`), or b"".
        self.prefix: dict[bytes, bytes] = {}


class _Bare:
    """The lines of one task's output read without its prefix (`_TASK_PREFIX`): another task's line reads
    as `_OTHER`, which no block pattern takes, so a block's walk stops there."""

    __slots__ = ("lines", "prefix")

    def __init__(self, lines, prefix: bytes) -> None:
        self.lines, self.prefix = lines, prefix

    def __len__(self) -> int:
        return len(self.lines)

    def __getitem__(self, index: int) -> bytes:
        line = self.lines[index]
        return line[len(self.prefix):] if line.startswith(self.prefix) else _OTHER


_OTHER = b"\x00"


class Unit:
    """A run of lines [start, end] of one stream kept or dropped together, with its rank."""

    __slots__ = ("stream", "start", "end", "rank", "parts")

    def __init__(self, stream: int, start: int, end: int, rank: int, anchor: int, head: int | None = None) -> None:
        self.stream, self.start, self.end, self.rank = stream, start, end, rank
        #: The blocks merged into this unit, each as (start, first line of its core,
        #: anchor line, end); the core (a location with the finding above it) is kept
        #: whole even when the block is not.
        self.parts = [(start, anchor if head is None else head, anchor, end)]

    def __repr__(self) -> str:
        return f"Unit({self.stream}, {self.start}, {self.end}, rank={self.rank})"


def block_units(lines: list[bytes], classes: dict[int, str], stream: int, sal: Classifier,
                weighed=None) -> list[Unit]:
    """The blocks of one stream: failure and warning blocks with their lead and
    continuation lines, header blocks, single summary lines. Failure blocks that
    touch are merged; a line belongs to the highest-ranked block that claims it.

    With `weighed`, only the blocks of the salient lines `weighed(a rank's salient lines)` keeps
    are built: those a view weighs (`spending.weighed`)."""
    by_rank = grouped(classes, _RANKED)  # each rank's salient lines in order, at C speed
    units: list[Unit] = []
    tests = _Tests()
    for rank in sorted(by_rank):
        anchors = by_rank[rank] if weighed is None else weighed(by_rank[rank])
        walk = [-1, -1, -1]
        groups = _merged([_block(lines, classes, i, sal, walk, tests) for i in anchors], rank)
        units.extend(_unit(stream, rank, group) for group in groups)
    return units


def _unit(stream: int, rank: int, group: list) -> Unit:
    start, end, parts = group
    unit = Unit(stream, start, end, rank, parts[0][2], parts[0][1])
    unit.parts = parts
    return unit


def _merged(blocks: list[tuple], rank: int) -> list[list]:
    """Blocks ((start, end, part) each, in anchor order) merged where they touch or overlap, in order
    of their starts, as [start, end, parts]: failure blocks also when one ends the line above the next."""
    reach = 1 if rank == 0 else 0
    out: list[list] = []
    for start, end, part in sorted(blocks, key=_START):
        if out and start <= out[-1][1] + reach:
            last = out[-1]
            last[1] = max(last[1], end)
            last[2].append(part)
        else:
            out.append([start, end, [part]])
    return out


def _block(lines, classes: dict, index: int, sal: Classifier, walk: list[int], tests: _Tests
           ) -> tuple[int, int, tuple[int, int, int, int]]:
    """The block of the salient line `index`, as (start, end, its part: (start, head, anchor, end)).
    Blocks are asked for in the order of their anchors; `walk` is the last forward walk (`_block_end`)."""
    cls = classes[index]
    if cls in BLOCK_CLASSES:
        text = lines if tests.prefix.get(lines[index]) == b"" else _bare(lines, index, tests)
        if text is not lines:
            walk[:] = (-1, -1, -1)  # a walk over one task's lines is not one over the stream's
        start = _lead_start(text, classes, index, sal, tests)
        head = index
        if cls == "location" and index > 0 and not is_blank(lines[index - 1]):
            head = min(start, index - 1)  # the finding the location belongs to
            start = head
        end = _block_end(text, classes, index, cls, sal, walk, tests)
        if text is not lines:
            walk[:] = (-1, -1, -1)
        return start, end, (start, head, index, end)
    end = _header_end(lines, classes, index, sal) if cls == "header" else index
    return index, end, (index, index, index, end)


def _bare(lines, index: int, tests: _Tests):
    """`lines` read without the task prefix of line `index` (`_Bare`) when a line next to it has the same
    one: a runner's `@shop/shipping:   ^` is a caret line of that task's output. Else `lines` itself."""
    line = lines[index]
    prefix = tests.prefix.get(line)
    if prefix is None:
        found = _TASK_PREFIX.match(line) if line[:1].isalpha() or line[:1] == b"@" else None
        prefix = found.group() if found is not None else b""
        if not (b"@" in prefix or b"/" in prefix or prefix.endswith(b"| ")):
            prefix = b""
        tests.prefix[line] = prefix
    if not prefix or not any(0 <= near < len(lines) and lines[near].startswith(prefix)
                             for near in (index - 1, index + 1)):
        return lines
    return _Bare(lines, prefix)


def _lead_start(lines, classes: dict, index: int, sal: Classifier, tests: _Tests | None = None) -> int:
    """The first line of what leads into line `index`: up to `max_lead` lines above it."""
    tests = tests or _Tests()
    leading, carets = tests.lead, tests.caret
    start = index
    back = index - 1
    lowest = max(0, index - sal.max_lead)
    below_caret = False  # the line above a caret line is the source it points into
    siblings = _sibling_indent(lines[index], sal, tests)
    while back >= lowest:
        line = lines[back]
        if classes.get(back) in STOPS or (siblings is not None and _is_sibling(line, siblings, sal, tests)):
            break
        if not below_caret:
            leads = leading.get(line)
            if leads is None:
                leads = leading[line] = bool(is_blank(line) or sal.lead.search(line))
            if not leads:
                break
        below_caret = carets.get(line)
        if below_caret is None:
            below_caret = carets[line] = bool(sal.caret.search(line))
        start = back
        back -= 1
    while start < index and is_blank(lines[start]):
        start += 1
    return start


def _block_end(lines, classes: dict, index: int, cls: str, sal: Classifier, walk: list[int],
               tests: _Tests | None = None) -> int:
    """The last line of the block of line `index`: its continuation lines, up to `max_lines` below it.

    `walk` is the previous walk of this rank, [its anchor, the line it stopped at, its end] (-1 when
    none, or a warning's). A line it walked past is walked past from any later anchor too (a warning
    aside): the tests read the line and its class, and the reach only widens. So a walk from an anchor
    the previous one passed goes on where that one stopped, with its end: a run of touching
    diagnostics is walked once, not once per anchor."""
    tests = tests or _Tests()
    continues, opening = tests.continuation, tests.opening
    warning = cls == "warning"
    # An indented finding's walk stops at its siblings: it is not one any other anchor's walk reuses.
    siblings = _sibling_indent(lines[index], sal, tests)
    alone = warning or siblings is not None
    end = index
    forward = index + 1
    if not alone and walk[0] < index < walk[1]:
        forward, end = walk[1], walk[2]
    last = min(len(lines), index + sal.max_lines + 1)  # the walk reads lines before it
    while forward < last:
        line = lines[forward]
        if siblings is not None and _is_sibling(line, siblings, sal, tests):
            break
        follows = classes.get(forward)
        if follows is not None:
            if follows in STOPS:
                break
            if follows in FAILURE_CLASSES or (warning and follows == "warning"):
                end = forward
                forward += 1
                continue
        goes_on = continues.get(line)
        if goes_on is None:
            goes_on = continues[line] = sal.continuation.search(line) is not None
        if goes_on:
            end = forward
            forward += 1
            continue
        # A blank line inside the block, or a line that introduces the indented lines after it
        # (`Read at 0x… by goroutine 9:` before its frames), when a continuation line follows.
        opens = opening.get(line)
        if opens is None:
            opens = opening[line] = BLANK if is_blank(line) else OPENS if line.rstrip().endswith(b":") else 0
        if not opens or forward + 1 >= last or classes.get(forward + 1) in STOPS:
            break
        after = lines[forward + 1]
        goes_on = continues.get(after)
        if goes_on is None:
            goes_on = continues[after] = sal.continuation.search(after) is not None
        if not goes_on:
            break
        if opens == OPENS:
            end = forward
        forward += 1
    walk[:] = (-1, -1, -1) if alone else (index, forward, end)
    return end


def _located_indent(line: bytes, sal: Classifier, tests: _Tests) -> int | None:
    """The indent (blanks before it) of a line that starts with a location, a finding's line (`sal.finding`);
    None for any other line. Kept per line's bytes: the anchors and the lines they walk repeat."""
    known = tests.located.get(line, -1)
    if known == -1:
        known = tests.located[line] = (len(line) - len(line.lstrip(b" \t"))
                                       if sal.finding.match(line) is not None else None)
    return known


def _sibling_indent(line: bytes, sal: Classifier, tests: _Tests) -> int | None:
    """The indent of an indented line that starts with a location (`  lib/a.js:6:21: … (no-undef)`):
    a finding in a list of such findings, whose block the next or previous one at its indent or less
    ends, not continues; None for any other line."""
    if line[:1] not in (b" ", b"\t"):
        return None
    return _located_indent(line, sal, tests)


def _is_sibling(line: bytes, indent: int, sal: Classifier, tests: _Tests) -> bool:
    """Whether `line` starts with a location at `indent` or less: a finding beside the anchor's."""
    located = _located_indent(line, sal, tests)
    return located is not None and located <= indent


def _header_end(lines, classes: dict, index: int, sal: Classifier) -> int:
    """The last line of a header's block: its `index`/`---`/`+++` or `Author`/`Date` lines, a commit's subject."""
    end = index
    forward = index + 1
    while forward < len(lines) and forward - index < sal.header_max_lines:
        line = lines[forward]
        if forward in classes:
            break
        if sal.header_continuation.search(line):
            end = forward
        elif is_blank(line):
            pass
        else:
            if line[:1] in (b" ", b"\t") and lines[index].startswith(b"commit "):
                end = forward  # the commit's subject
            break
        forward += 1
    return end
