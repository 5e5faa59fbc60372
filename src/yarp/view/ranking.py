"""The order a view spends its budget in, judged by what lines say rather than by which tool printed them.

`yarp.view.salience` classes lines (failure, summary, location, warning, …);
`yarp.view.cap` spends the budget class by class. This module orders the
candidates inside a class so that a view generalizes to tools it was never
tuned on:

* **the output's own end** — the last lines of each stream usually say how the
  command ended (`1 file would fail to reformat`, `Found 3 errors`), so they
  are kept before anything else (`ends`);
* **diversity** — of many findings, the first of each kind (its template,
  `yarp.view.templates.template`: the line with its location, quoted names and
  numbers masked) comes before the second of any, the rarest kinds first, and
  a kind's findings in other files before more in the same file: two `F821
  Undefined name` errors among 300 `F401` findings, or ten findings in ten
  files, are seen before the eleventh alike (`diverse`);
* **where a finding is** — an indented finding (`  3:10  error  …`) is shown
  with the heading it sits under (the nearest line above it indented less),
  found by `heading`.

Which lines stand out from those around them is `yarp.view.rarity`'s.

Everything here reads only the lines it is asked about: a view's cost must not
grow with the lines it leaves out.
"""

from __future__ import annotations

from yarp.view.lines import banner_candidates, count_line, indent, line_indents
from yarp.view.salience import is_blank
from yarp.view.templates import tally, template

#: Lines of each stream's end kept first, and the most bytes they may take.
END_LINES = 6
END_BYTES = 400
#: How far above an indented finding its heading is looked for.
HEADING_REACH = 200
#: The lines a heading's walk reads in its first run; each run after it is twice the one before.
HEADING_RUN = 16
#: How far above a line standing alone the first line of its record is looked for (`record_start`).
RECORD_REACH = 8
#: How many times a line is said word for word, within how many lines of it each way, for it to be one
#: every record repeats (`repeated`).
REPEATED_LINES = 3
REPEAT_REACH = 1000


def ends(lines, final_newline: bool, is_marker, budget: int) -> list[int]:
    """The last `END_LINES` non-blank lines that are not markers, within `END_BYTES` and an eighth of
    the view's `budget`, last first."""
    out: list[int] = []
    used = 0
    most = min(END_BYTES, budget // 8)
    index = len(lines) - 1
    while index >= 0 and len(out) < END_LINES and len(lines) - index <= 16:
        line = lines[index]
        if line.strip(b" \t\r") and not is_marker(index, line):
            used += len(line) + 1
            if used > most and out:
                break
            out.append(index)
        index -= 1
    return out


def place(line: bytes, location) -> bytes:
    """The file a line names at its start (`src/a.py:3:1: …`), or b"" when it names none."""
    found = location.match(line)
    head = found.group(1) if found is not None and found.lastindex else None
    return head.split(b":", 1)[0] if head else b""


def kind(stream, index: int, sal) -> tuple[bytes, bytes]:
    """A finding's kind and place: the template of line `index` (`yarp.view.templates.template`) and the file it
    names or sits under (`sal` is the classifier, whose location pattern reads it).

    Kept per line of the stream (`stream.kinds`; a line's heading, once found, stays its heading), and
    its template and named file per line's bytes (`stream.templates`): dense output repeats lines."""
    found = stream.kinds.get(index)
    if found is not None:
        return found
    line = stream.lines[index]
    read = stream.templates.get(line)
    if read is None:
        read = stream.templates[line] = (template(line), place(line, sal.location))
    alike, where = read
    if index in stream.standouts:
        alike = line  # its quoted names are what it says that no other finding does
    if not where:
        above = heading(stream, index)
        where = b"" if above is None else stream.lines[above]
    found = stream.kinds[index] = (alike, where)
    return found


def diverse(items: list, keys: list[tuple[bytes, bytes]]) -> list:
    """`items` reordered by their `keys` ((kind, place) each): the first and the last as they were, then
    the first of each kind, rarest kinds first, then the first of each kind in each further place, then the rest, each pass
    in output order."""
    if len(items) < 3:
        return list(items)
    order = [0, len(items) - 1]
    taken = set(order)
    seen_kinds = {keys[0][0], keys[-1][0]}
    seen_places = {keys[0], keys[-1]}
    firsts = []
    for number, key in enumerate(keys):
        if number not in taken and key[0] not in seen_kinds:
            seen_kinds.add(key[0])
            seen_places.add(key)
            firsts.append(number)
            taken.add(number)
    # The rarest kinds first: a kind seen forty times is known from its first, a kind seen once is not.
    counts: dict[bytes, int] = {}
    tally(counts, [key[0] for key in keys])
    order.extend(sorted(firsts, key=lambda number: counts[keys[number][0]]))
    for number, key in enumerate(keys):
        if number not in taken and key not in seen_places:
            seen_places.add(key)
            order.append(number)
            taken.add(number)
    order.extend(number for number in range(len(items)) if number not in taken)
    return [items[number] for number in order]


def heading(stream, index: int) -> int | None:
    """The heading a finding sits under, within `HEADING_REACH` lines above it: for an indented line, the
    nearest line indented less (`  6. "shipped"` above its tab-indented fields; for a line that starts with a
    line and column, one that does not: `  8:16` and ` 10:7` are one list aligned right), or the first line of its
    paragraph when that is a path alone (`  src/rates19.js:1:17` above `  ✖  38:41  totl is not defined.`);
    for a line at the margin, the nearest banner (`*** Module x`, `=== file ===`) or bare file name
    (`src/a.js`) above it. None when there is none.

    The walk up reads the lines above in runs, each twice the one before (most walks end within a few
    lines, some cross two hundred), each run's indents (or, from the margin, the lines that may be banners:
    `yarp.view.lines.banner_candidates`) read at C speed. Blank lines and markers are passed over, so only a
    line that would end the walk is asked whether it is one."""
    memo = stream.headings
    known = memo.get(index, -2)
    if known != -2:
        return known
    lines = stream.lines
    own = indent(lines[index])
    numbered = bool(own) and _numbered(lines[index])  # asked of an indented finding only
    first = max(0, index - HEADING_REACH + 1)
    walk = _indented_run if own else _margin_run
    found = stop = None
    top, size = index, HEADING_RUN
    while stop is None and top > first:
        low = max(first, top - size)
        found, stop = walk(stream, index, low, top, own, numbered)
        top, size = low, 2 * size
    memo[index] = found
    return found


def _indented_run(stream, index: int, low: int, top: int, own: int, numbered: bool) -> tuple[int | None, bool | None]:
    """`heading`'s walk from the indented line `index` over lines `top - 1` down to `low`: (the heading,
    True) where it ends, else (None, None)."""
    lines, memo, is_marker = stream.lines, stream.headings, stream.markers.is_marker
    levels = line_indents(lines, low, top)
    for above in range(top - 1, low - 1, -1):
        level = levels[above - low]
        if not level and above + 1 < index and not lines[above].strip() and _lone_place(lines[above + 1], own):
            return above + 1, True  # the paragraph's first line names the file its findings are in
        if level < own and not (numbered and _numbered(lines[above])):
            hit = above
        elif level == own and above in memo:
            hit = memo[above]  # a line of the same indent above, whose heading is known: the same one
        else:
            continue
        text = lines[above]
        if text.strip() and not is_marker(above, text):
            return hit, True
    return None, None


def _margin_run(stream, index: int, low: int, top: int, own: int, numbered: bool) -> tuple[int | None, bool | None]:
    """`heading`'s walk from the line `index` at the margin over lines `top - 1` down to `low`: (the heading,
    True) where it ends, else (None, None). Whether a line is a banner is kept per its bytes."""
    lines, memo, is_marker, banners = stream.lines, stream.headings, stream.markers.is_marker, stream.banners
    candidates = set(banner_candidates(lines, low, top))
    for above in range(top - 1, low - 1, -1):
        banner = False
        if above in candidates:
            text = lines[above]
            banner = banners.get(text)
            if banner is None:
                banner = banners[text] = _maybe_banner(text) and is_banner(text)
        if banner:
            hit = above
        elif above in memo and not indent(lines[above]):
            hit = memo[above]
        else:
            continue
        text = lines[above]
        if text.strip() and not is_marker(above, text):
            return hit, True
    return None, None


#: The first bytes of a banner that is a run of signs (`is_banner`).
_BANNER_FIRST = (b"*", b"=", b"#", b"-", b">")


def _maybe_banner(line: bytes) -> bool:
    """What `is_banner` needs before it asks more: `.` or `: In `, or a line starting `In ` or with
    one of `_BANNER_FIRST`."""
    return line[:1] in _BANNER_FIRST or b"." in line or b": In " in line or line.startswith(b"In ")


def _numbered(line: bytes) -> bool:
    """Whether a line starts, past its indent, with a line and column (`19:55  warning …`): a finding of a
    list whose numbers are aligned to the right, so that its indent says nothing of where it sits."""
    first = line.split(None, 1)[:1]
    return bool(first) and first[0][:1].isdigit() and b":" in first[0] and first[0].replace(b":", b"").isdigit()


def _lone_place(line: bytes, own: int) -> bool:
    """Whether `line`, indented no more than `own` columns, is one path alone, with or without a line and
    column (`  src/rates19.js:1:17` heading a style checker's findings in that file)."""
    words = line.split()
    if len(words) != 1 or indent(line) > own:
        return False
    place = words[0].rstrip(b":0123456789")
    return b"/" in place and b"." in place[-6:]


def repeated(stream, index: int) -> bool:
    """Whether line `index` is said word for word on at least `REPEATED_LINES` lines within `REPEAT_REACH`
    lines of it (its stream held whole): a heading every record repeats. Kept per line's bytes
    (`stream.repeats`); a window, not the whole stream, is counted, so that asking about many headings
    of a long output stays cheap."""
    text = stream.lines[index]
    known = stream.repeats.get(text)
    if known is None:
        lines = stream.lines
        known = stream.repeats[text] = stream.whole() and count_line(
            lines, index - REPEAT_REACH, index + REPEAT_REACH, text) >= REPEATED_LINES
    return known


def record_start(lines, index: int) -> int | None:
    """The first line of the record line `index` sits in, its lines between blank lines (`# file: x`
    above its `user:nobody:rw-`), within `RECORD_REACH` lines above it; None when there is none: the
    heading of a line that stands alone (`yarp.view.rarity`) where `heading` finds none."""
    for above in range(index - 1, max(-1, index - RECORD_REACH - 1), -1):
        if is_blank(lines[above]):
            return above + 1 if above + 1 < index else None
    return None


def is_banner(line: bytes) -> bool:
    """Whether a line at the margin heads what follows: a run of `*`, `=`, `#` or `-` with words
    (`************* Module inventory.pricing`), a scope line (`src/a.c: In function ‘f’:`,
    `In script.sh line 3:`, `src/a.c: (in function f)`), or a lone file name (`src/widgets/a.js`)."""
    head = line[:3]
    if head in (b"***", b"===", b"###", b"---", b">>>") and line.strip(b"*=#-> \t"):
        return True
    if line.rstrip().endswith(b":") and (b": In " in line or line.startswith(b"In ")):
        return True  # `src/a.c: In function ‘f’:`, `In script.sh line 3:`
    if b": (in " in line and line.rstrip().endswith(b")"):
        return True  # splint's `src/item17.c: (in function item17_report)`
    words = line.split()
    return len(words) == 1 and b"." in words[0][-6:] and (b"/" in words[0] or line.endswith(b":")) and (
        not words[0][:1].isdigit())
