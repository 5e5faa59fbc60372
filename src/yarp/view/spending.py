"""How a view spends its budget on blocks of salient lines: cores first, then their context, within shares.

`yarp.view.cap` decides the order of the classes (failures, summaries and
headers, locations, context, warnings); this module spends the budget within
one class. A block (`blocks.Unit`) is a salient line, its anchor, with the
lines that lead into it and follow it. What matters in a block is its anchor,
where it was (a location, the heading it sits under) and its message; the rest
is context that is shown only while a share of the budget allows it. Kinds
that repeat are shown once each before a second alike (`ranking.diverse`).

`view` is the cap's `_View`: it adds lines all or none within the budget
(`add`), reports `used`, `budget` and `full()`, and holds the `streams`.
"""

from __future__ import annotations

from bisect import bisect_left

from yarp.view.blocks import LINE_CLASSES
from yarp.view.lines import lines_at_margin, lines_starting
from yarp.view.ranking import diverse, heading, indent, kind, record_start, repeated
from yarp.view.salience import Classifier, is_blank
from yarp.view.templates import places, tally, templates

#: A view weighs every block of one class of a stream when they are at most four per this many bytes of its
#: budget (224 for the default 5,120, `FEWEST_AT_END` at the least): building that many costs little.
BYTES_PER_WHOLE_CLASS = 80
#: Past that, it weighs the first and the last, one at each end per this many bytes of its budget (21 for the
#: default) and `FEWEST_AT_END` at the least, and as many again of its rare kinds (`weighed`): half as many
#: again as the one-line blocks a view can show. One per 160 bytes weighed half as many again for the same
#: signal lines of both corpora, at 5.5 M more instructions a dense MiB; one per 320 would save 2.8 M more and
#: leave no slack (docs/design/view.md, "Ninth round" and "Tenth round").
BYTES_PER_END_BLOCK = 240
FEWEST_AT_END = 16
#: Every finding of a kind (its template) said at most this many times in a stream is weighed, wherever it
#: stands: eclint's eight `invalid indent style` in one file among 900 `trailing whitespace` (`weighed`).
RARE_KIND = 16
#: The most blocks of one class a view weighs over all its streams (`_ends_of`), half from each end.
MAX_CANDIDATES = 1000
#: What marks a finding its tool fixes by itself (ruff, `[*]`).
FIXABLE = b" [*] "
#: Give up a phase after this many candidates in a row did not fit.
MAX_MISSES = 64
#: Lines after an anchor a block that did not fit whole may still show (its source, caret and
#: labels); a compiler's long chain of notes beyond them is left to `yarp read`.
FOLLOWING_LINES = 6
#: Lines after the anchor of a summary or warning too long to show whole that come with its own line
#: when they fit (`spend_alike`): its source line and caret.
CORE_FOLLOWING = 2
#: How many headings above one another a block's core brings, the nearest first (`_headings`).
HEADING_LEVELS = 3
#: How far above a failure block the lines naming where its frames were are looked for (`_where`).
WHERE_REACH = 8
#: The classes of lines that, without a heading, bring the first line of their record: a line standing
#: alone, and a finding (`Lines executed:0.00% of 6` under its `File 'src/mod251.c'`).
RECORD_HEADED = (*LINE_CLASSES, "finding")
#: The most summaries, headers or warnings of one kind a view shows (`spend_alike`); also the blocks of
#: one kind a failure class weighs in its first round (`spend_on_blocks`).
MAX_ALIKE = 4
#: The percent of the budget failure blocks may take whole beyond their cores and nearest lines.
WHOLE_SHARE = 40
#: How a stack frame line starts, indentation aside: Python's `File "…", line N`, and the `at …`
#: of JavaScript, Java, C# and Rust.
FRAME_STARTS = (b'File "', b"at ")
#: Paths of code the user did not write: an installed package, a language's own library, a
#: dependency cache, an interpreter's frozen module. A frame outside them is the user's.
LIBRARY_PATHS = (b"site-packages", b"dist-packages", b"/lib/python", b"node_modules", b"<frozen ", b"node:internal",
                 b"/usr/lib/", b"/usr/local/lib/", b"/rustc/", b".cargo/registry", b"/go/pkg/mod/", b"(internal/",
                 b"(<anonymous>)", b"<string>")


def weighed(stream, budget: int, anchors: list[int]) -> list[int]:
    """The anchors of one class of `stream` (in line order) whose blocks a view of `budget` weighs: all when they
    are few (`BYTES_PER_WHOLE_CLASS`); else the first and the last `budget // BYTES_PER_END_BLOCK` each, every standout
    (`Stream.standouts`), and, as many again as at the two ends, from between them: every finding of a kind
    said at most `RARE_KIND` times and the first of each kind the ends do not hold, the rarest kinds first.

    A view shows a hundred findings at most, but which kinds are rare is known only from all of them: their
    templates (`yarp.view.templates`, compiled) cost a tenth of a microsecond a line, a block and
    its weighing about ten. So a dense output's cost follows what its view can show, not its length."""
    if len(anchors) <= 4 * max(FEWEST_AT_END, budget // BYTES_PER_WHOLE_CLASS):
        return anchors
    end = max(FEWEST_AT_END, budget // BYTES_PER_END_BLOCK)
    lines, standouts = stream.lines, stream.standouts
    middle = anchors[end:-end]
    # Lines of a kind (`Stream.firsts`) share their template: each kind's is made once.
    keys = templates(lines, middle, stream.firsts)
    at_ends = templates(lines, anchors[:end] + anchors[-end:], stream.firsts)
    counts: dict[bytes, int] = {}
    tally(counts, keys)
    tally(counts, at_ends)
    rare = {key for key, count in counts.items() if count <= RARE_KIND}
    # Every finding of a rare kind, picked out of the 8,000 by one compiled pass (a run of one kind's key
    # object asked once).
    chosen = {middle[at]: keys[at] for at in places(keys, rare)} if rare else {}
    # Each kind's first anchor between the ends, found by a search per kind (a few dozen kinds among 8,000).
    ends = set(at_ends)
    chosen.update((middle[keys.index(key)], key) for key in counts if key not in ends)
    inside = [anchor for anchor in standouts if middle[0] <= anchor <= middle[-1]]
    if inside:
        inside = [anchor for anchor in inside if middle[bisect_left(middle, anchor)] == anchor]
        for anchor in inside:
            chosen.pop(anchor, None)  # weighed as a standout, beside the kinds
    # The rarest kinds first, each kind's in line order.
    ordered = sorted(chosen, key=lambda anchor: (counts[chosen[anchor]], anchor))
    return sorted({*anchors[:end], *anchors[-end:], *inside, *ordered[:2 * end]})


def spend_alike(view, units: list, sal: Classifier, most: int = MAX_ALIKE) -> None:
    """Summaries, headers or warnings whole, the first of each kind first (`ranking.diverse`), and at
    most `most` of one kind: four hundred `___ test_case_N ___` headers say nothing the first
    few do not. Touching warnings merged into one unit are weighed one by one: a checker's one
    `Potential leak` among style findings is its own kind, not the first finding's."""
    streams = view.streams
    parts = _ends_of([(u.stream, *part) for u in units for part in u.parts], MAX_CANDIDATES, streams)
    keys = [kind(streams[p[0]], p[3], sal) for p in parts]
    seen: dict[bytes, int] = {}
    chosen = []
    for part, (alike, _) in _standouts_first(diverse(list(zip(parts, keys)), keys), streams):
        line = streams[part[0]].lines[part[3]]
        if streams[part[0]].classes.get(part[3]) == "header" and b"/" in b"".join(line.split(None, 3)[1:3]):
            alike = line  # a header naming a file (`--- a/src/x.py`) is news for each file, not one of a kind
        seen[alike] = seen.get(alike, 0) + 1
        if seen[alike] <= most:
            chosen.append(part)
    misses = 0
    for number, start, head, anchor, end in chosen:
        if misses >= MAX_MISSES or view.full():
            break
        if view.add(number, range(start, end + 1)):
            misses = 0
        elif view.add(number, range(head, anchor + 1)):
            # Too long whole (a checker's chain of notes): its own line, and its source and caret if they fit.
            misses = 0
            view.add(number, range(anchor + 1, min(end, anchor + CORE_FOLLOWING) + 1))
        else:
            misses += 1


def spend_on_blocks(view, blocks: list, sal: Classifier, others: bool = True) -> None:
    """Spend on failure or location blocks in three rounds: the first `MAX_ALIKE` blocks of each
    kind, then the others of a kind already seen (forty `B101 assert_used` findings do not push out
    the location of the one `High` finding; none when not `others`: beside failures, the header
    counts the hundredth `unused variable` instead), then the findings the tool fixes itself (`[*]`).

    Each round (`_spend_on_parts`): every block's core first (its anchor line with its lead, or a
    location with its finding, and the heading it sits under), the first of each kind before a
    second alike (`ranking.diverse`); then each block's message or last line, its stack frames in
    the user's own code (`_own_frames`), the lines naming
    where its frames were, up to `FOLLOWING_LINES` after each anchor, and the lead lines. Then the
    blocks whole, in the same order, with at most `WHOLE_SHARE` percent of the budget. The rest of
    a block is context the view leaves out."""
    streams = view.streams
    location = sal.location
    parts = _ends_of([(u.stream, start, head, anchor, end) for u in blocks for start, head, anchor, end in u.parts],
                     MAX_CANDIDATES, streams)
    # A location block's kind is its finding's (`F841 Local variable …` above ` --> pkg/m.py:5:5`).
    keys = [kind(streams[p[0]], p[2], sal) for p in parts]
    seen: dict[bytes, int] = {}
    rounds: tuple[list, list, list] = ([], [], [])
    for part, key in _standouts_first(diverse(list(zip(parts, keys)), keys), streams):
        seen[key[0]] = seen.get(key[0], 0) + 1
        # A finding its tool repairs itself (ruff's `[*]`) waits for the ones left to the reader.
        fixable = FIXABLE in streams[part[0]].lines[part[2]]
        rounds[2 if fixable else int(seen[key[0]] > MAX_ALIKE)].append(part)
    if not others:
        shown = {(p[0], p[3]) for chosen in (rounds[0], rounds[2]) for p in chosen}
        rounds[1].clear()
        blocks = [u for u in blocks if any((u.stream, part[2]) in shown for part in u.parts)]
    for chosen in rounds:
        _spend_on_parts(view, chosen, location)
    start, share = view.used, view.budget * WHOLE_SHARE // 100
    # A block is ordered by its anchor's kind: worked out above already where the anchor is its own head.
    known = {(p[0], p[3]): key for p, key in zip(parts, keys) if p[2] == p[3]}
    blocks = _ends_of(blocks, MAX_CANDIDATES, streams, _block_anchors)
    anchors = [(u.stream, u.parts[0][2]) for u in blocks]
    limit = view.limit
    for unit in diverse(blocks, [known.get(at) or kind(streams[at[0]], at[1], sal) for at in anchors]):
        stream = streams[unit.stream]
        lines, kept, skippable = stream.lines, view.kept[unit.stream], stream.skippable
        fixed, last = stream.marker_bytes, len(lines) - 1
        index, end = unit.start, unit.end
        while index <= end:
            if view.used - start > share or view.full():
                return
            # A line kept already, one whose bytes alone exceed what is left (a line within the line
            # limit shows at least its bytes), one inside an omitted run whose bytes and the marker it
            # would split off exceed it, or a run of noise inside the block (forty `--- PASS` subtests
            # under a `--- FAIL`) leaves the view as it is: `add_one` is not asked.
            remaining = view.budget - view.used
            while index <= end and (index in kept or remaining < len(lines[index]) <= limit or skippable(index) or (
                    remaining < len(lines[index]) + fixed and len(lines[index]) <= limit and 0 < index < last
                    and index - 1 not in kept and index + 1 not in kept)):
                index += 1
            if index <= end:
                view.add_one(unit.stream, index)
                index += 1


def _ends_of(items: list, most: int, streams: list, where=lambda part: (part[0], (part[3],))) -> list:
    """The first and the last `most // 2` of `items`, with those between whose anchor (`where` gives an
    item's stream and anchors; a part's by default) is a stream's standout (`Stream.standouts`): the
    one finding no other says, wherever it stands among a thousand alike."""
    if len(items) <= most:
        return items
    half = most // 2
    middle = items[half:-half]
    if any(stream.standouts for stream in streams):
        middle = [item for item in middle if _standout(streams, *where(item))]
    else:
        middle = []
    return items[:half] + middle + items[-half:]


def _standouts_first(ordered: list, streams: list) -> list:
    """`ordered` ((part, key) each, in the order `ranking.diverse` gave) with the parts whose anchor is a
    standout first: among many findings of kinds seen once, the one no other finding resembles."""
    if not any(stream.standouts for stream in streams):
        return ordered
    first: list = []
    rest: list = []
    for item in ordered:
        (first if _standout(streams, item[0][0], (item[0][3],)) else rest).append(item)
    return first + rest


def _block_anchors(unit) -> tuple[int, list[int]]:
    """A unit's stream and the anchor lines of its blocks."""
    return unit.stream, [part[2] for part in unit.parts]


def _standout(streams: list, number: int, anchors) -> bool:
    """Whether one of `anchors` is a standout of stream `number`."""
    standouts = streams[number].standouts
    return any(anchor in standouts for anchor in anchors)


def _spend_on_parts(view, parts: list, location) -> None:
    """The cores of `parts` ((stream, start, head, anchor, end) each, in order), then their messages
    and last lines, the lines following their anchors, where their frames were, and their leads."""
    streams = view.streams
    misses = 0
    for number, start, head, anchor, _ in parts:
        if misses >= MAX_MISSES or view.full():
            break
        stream = streams[number]
        above = _headings(stream, anchor)
        if not above and stream.classes.get(anchor) in RECORD_HEADED:
            start = record_start(stream.lines, anchor)
            above = [] if start is None else [start]
        misses = 0 if view.add(number, [*range(head, anchor + 1), *above]) else misses + 1
    # Then, each pass over every block: the line after an anchor when the block ends there (often its
    # message: `index out of bounds: …` after `panicked at`) and a block's last line (where it was
    # raised: `tests/t.py:85: AssertionError`); the lines following each anchor; the lead lines.
    for pick in (_message_and_last, _own_frames, _following, _where, _lead):
        misses = 0
        for number, start, head, anchor, end in parts:
            if misses >= MAX_MISSES or view.full():
                break
            stream = streams[number]
            if stream.classes.get(anchor) in LINE_CLASSES:
                continue  # a rare line stands alone: its neighbours are what it stands out from
            skippable = stream.skippable
            for index in pick(stream.lines, start, head, anchor, end, location):
                if skippable(index):
                    continue  # noise in a run (`--- PASS` subtests under a `--- FAIL`) says nothing of the block
                if not view.add_one(number, index):
                    misses += 1
                    break
    # Last, the step a stream's first failure broke off: the line just above its block
    # (`Running upgrade a1b2 -> b7c8` before the `Traceback`), the first block of each stream only.
    firsts: dict[int, int] = {}
    for number, start, *_ in parts:
        firsts[number] = min(start, firsts.get(number, start))
    for number, start in firsts.items():
        step = _step_before(streams[number].lines, start)
        if step is not None and not view.full():
            view.add_one(number, step)


def _headings(stream, anchor: int) -> list[int]:
    """The heading line `anchor` sits under (`ranking.heading`) and, while that one is indented, the one it
    sits under, `HEADING_LEVELS` at most: prospector's `inventory/stock08.py` over `  Line: 38` over
    `    pylint: undefined-variable …`; past a heading every record repeats, its record's first line."""
    found: list[int] = []
    above = heading(stream, anchor)
    while above is not None and len(found) < HEADING_LEVELS:
        found.append(above)
        first = record_start(stream.lines, above) if repeated(stream, above) else None
        if first is not None and first not in found and len(found) < HEADING_LEVELS:
            # Every record says it word for word (`Config file: …/.linthtmlrc.json` under each `File: …`): it
            # does not say which record this is, the first line of its record does.
            found.append(first)
            above = first
        if not indent(stream.lines[above]):
            break
        above = heading(stream, above)
    return found


def _message_and_last(lines, start: int, head: int, anchor: int, end: int, location) -> list[int]:
    """The line after an anchor its block ends at (its message), past one blank line when the anchor ends
    with a colon (`failed decoding '12,50' with …:`, a blank line, `Reason: invalid value …`); and a long
    block's last line."""
    message = []
    if anchor == end:
        after = anchor + 1
        if after + 1 < len(lines) and is_blank(lines[after]) and lines[anchor].rstrip().endswith(b":"):
            after += 1
        if after < len(lines) and not is_blank(lines[after]):
            message.append(after)
    return message + ([end] if end > anchor + FOLLOWING_LINES and not is_blank(lines[end]) else [])


def _own_frames(lines, start: int, head: int, anchor: int, end: int, location) -> list[int]:
    """The frames of a stack in the user's own code (`LIBRARY_PATHS` aside), each with the source
    line Python prints under it: among thirty frames of a framework, the one migration that failed."""
    found = []
    for i in lines_starting(lines, anchor + 1, end + 1, FRAME_STARTS):  # most blocks hold none: asked at C speed
        line = lines[i].lstrip()
        if not any(path in line for path in LIBRARY_PATHS):
            found.append(i)
            if line.startswith(b'File "') and i < end:
                found.append(i + 1)
    return found


def _step_before(lines, start: int) -> int | None:
    """The nearest line above `start`, a blank one aside, when it is not indented (a frame or a
    continuation belongs to something else): the step a log was at when the failure began."""
    for index in range(start - 1, max(-1, start - 3), -1):
        line = lines[index]
        if line.strip(b" \t\r\n"):
            return index if line[:1] not in (b" ", b"\t") else None
    return None


def _following(lines, start: int, head: int, anchor: int, end: int, location) -> range:
    return range(anchor + 1, min(end, anchor + FOLLOWING_LINES) + 1)


def _where(lines, start: int, head: int, anchor: int, end: int, location) -> list[int]:
    """The lines of a block, or up to `WHERE_REACH` above it, that start with a location
    (`tests/t.py:85: `): where each frame of a chain was."""
    return [i for i in lines_at_margin(lines, start - WHERE_REACH, end + 1) if location.match(lines[i]).group(1)]


def _lead(lines, start: int, head: int, anchor: int, end: int, location) -> range:
    return range(head - 1, start - 1, -1)
