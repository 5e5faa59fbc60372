"""The global cap on agent-visible text: a salience-ordered view that fits.

All text is measured in UTF-8 bytes; at or under the cap nothing changes (0
disables the cap). Over it, the view keeps whole lines, in their original
order, chosen by the classes of `salience` and spent in this order:

    1. each stream's end (its last lines: how the command ended) and a
       reducer's summary line; a few long lines share the budget whole; then
       every summary line (`Found 16 errors.`, a tally), a few of one kind
    2. failure blocks (errors, exceptions, tracebacks, diagnostics, exit
       lines): every block's core first, the first of each kind before a
       second alike, then their messages, locations, following and lead lines,
       then blocks whole within a share (`yarp.view.spending`)
    3. headers, at most a few of one kind (a header naming a file is its own)
    4. location blocks and lines that stand out (`yarp.view.rarity`), as
       failures; beside failures, the first few of each kind only
    5. a bounded head and tail of context (noise such as PASSED lines and
       progress bars skipped): `CONTEXT_SHARES` of the budget
    6. warnings, one at a time: each kind once beside failures, else a few

What is left of the budget stays unspent: a view is no larger than what it has
to show. Every omitted run becomes one whole marker line naming its line range
in the recovery source (`yarp read REF SOURCE A:B`) and, for a long run of one
kind, a sample of it. The first omitted position carries the header: the
reference's marker line naming the archive reference, a search line when cut
lines that matter give a hint, and the first run's own marker with how many
lines of each class were cut and the exit status.
A line longer than the line limit shows its head and its tail around a note.
Markers are never cut, so the view is never larger than the cap unless the
cap cannot hold the header at all. The markers' text lives in
`yarp.view.markers`; the lines a view chooses among, and the reading of big
stream files in bounded memory, in `yarp.view.streams`.

The shared vectors in `tests/vectors/cap` hold this module to real outputs'
views; every adapter gets its view from here, through the broker.

Two entry points: `cap_blocks`/`cap_text` for text the agent's host produced
(source `result_text`) and `cap_files` for the runner, which caps the pruned
stdout and stderr together, given the markers of the reducers that pruned
them. Neither touches the archive: the caller commits the exact text before
it shows the capped form.
"""

from __future__ import annotations

import bisect
from functools import partial
from itertools import accumulate

from yarp.limits import DEFAULT_CAP_BYTES
from yarp.view.markers import (
    LIKE_RESERVE,
    MAX_HINT_CHARS,
    MIN_LIKE_LINES,
    gap_marker,
    gap_marker_bytes,
    header,
    omitted_counts,
    read_range,
    repetition,
    likes_for,
    search_pattern,
)
from yarp.view.ranking import ends
from yarp.view.blocks import LINE_CLASSES, block_units
from yarp.view.collector import collector_paused
from yarp.view.salience import Classifier, classifier
from yarp.view.spending import spend_alike, spend_on_blocks, weighed
from yarp.view.streams import SparseLines, Stream, gaps

# typing costs `yarp run` milliseconds; annotations only need it.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Sequence

#: At most this many lines share the budget as long lines; the note a cut line carries, at its longest.
FEW_LINES = 4
CUT_NOTE_BYTES = 64
#: The percent of the budget the head and the tail of context may take beyond what the signal
#: needs; the rest of the budget stays unspent.
CONTEXT_SHARES = (12, 20)
#: The most warnings of one kind a view shows: beside failures, the first of each kind (what is wrong is
#: shown; the header counts the rest), else a few.
WARNINGS_BESIDE_FAILURES = 1
MAX_WARNINGS = 2


def max_line_bytes(cap: int) -> int:
    """The longest line a view shows whole: a quarter of the cap, at least 64 and at most 1,024 bytes."""
    return max(64, min(1024, cap // 4))


class _View:
    """The lines chosen so far and the exact size of their rendering.

    `used` counts the kept lines and one marker per omitted run. Keeping lines
    changes only the runs between the kept neighbours of what is added, so the
    markers are re-measured there alone (a sorted list of each stream's kept
    lines finds the neighbours): adding stays cheap however many lines a view
    keeps.
    """

    def __init__(self, streams: list[Stream], cap: int, reserve: int) -> None:
        self.streams = streams
        lines = sum(len(stream.lines) for stream in streams)
        #: Whether the text is a few long lines (a minified JSON): they share the budget, where among
        #: many lines a line gets a quarter of the cap at most.
        self.few = lines <= FEW_LINES
        share = (cap - reserve) // max(1, lines) - 2 * CUT_NOTE_BYTES
        self.limit = max(max_line_bytes(cap), share) if self.few else max_line_bytes(cap)
        self.kept: list[set[int]] = [set() for _ in streams]
        self._order: list[list[int]] = [[] for _ in streams]
        self.budget = cap - reserve
        #: How many omitted runs of one kind the view describes (`_likes`); their bytes are in `reserve`.
        self.likes = likes_for(cap)
        self.used = sum(self._runs_cost(stream, -1, len(stream.lines), ()) for stream in streams)

    def cost(self, stream: int, index: int) -> int:
        cache = self.streams[stream].shown
        line = cache.get(index)
        if line is None:
            line = cache[index] = self.streams[stream].line_bytes(index, self.limit)
        return len(line)

    @staticmethod
    def _runs_cost(stream: Stream, low: int, high: int, inside) -> int:
        """Marker bytes of the omitted runs strictly between kept lines `low` and `high` (-1 and
        the line count stand for the stream's edges), with `inside` (ascending) kept between them."""
        cost = 0
        previous = low
        for index in (*inside, high):
            if index > previous + 1:
                cost += gap_marker_bytes(stream, previous + 1, index - 1)
            previous = index
        return cost

    def add_one(self, stream: int, index: int, ceiling: int | None = None) -> bool:
        """`add` for one line, the common case of extending the context: the same
        decision, reached by measuring only the run the line splits. With
        `ceiling`, a line whose own bytes would take `used` past it is refused too.

        Written out in full (no helper calls): the context walk calls it for
        every line it keeps, about a thousand times per capped view."""
        kept = self.kept[stream]
        if index in kept:
            return True
        source = self.streams[stream]
        lines = source.lines
        if isinstance(lines, SparseLines) and index not in lines.held:
            return False
        line = source.shown.get(index)
        if line is None:
            line = source.shown[index] = source.line_bytes(index, self.limit)
        used, budget = self.used, self.budget
        extra = len(line)
        if used + extra > (budget if ceiling is None or ceiling > budget else ceiling):
            return False
        order = self._order[stream]
        left = bisect.bisect_left(order, index)
        low = order[left - 1] if left else -1
        high = order[left] if left < len(order) else len(lines)
        # The run (low, high) had one marker; it becomes a marker on each side of `index` that is
        # not empty. A marker's bytes: the fixed part, the count, and (with ranges) both ends.
        fixed, ranges = source.marker_bytes, source.ranges
        count = high - low - 1
        delta = extra - fixed - len(str(count)) - (len(str(low + 2)) + len(str(high)) if ranges else 0)
        if index > low + 1:
            delta += fixed + len(str(index - low - 1)) + (len(str(low + 2)) + len(str(index)) if ranges else 0)
        if high > index + 1:
            delta += fixed + len(str(high - index - 1)) + (len(str(index + 2)) + len(str(high)) if ranges else 0)
        if used + delta > budget:
            return False
        kept.add(index)
        order.insert(left, index)
        self.used = used + delta
        return True

    def add_run(self, stream: int, index: int, step: int, ceiling: int) -> tuple[int, bool]:
        """`add_one(stream, index, ceiling)`, then the same for the lines after it in the
        walk's direction (`step` 1 or -1) while they are context lines (not kept, not in
        a run of noise, not a marker, held) and fit: the lines `add_one` would keep one
        by one, counted in one step from their running byte total.

        Returns the index the walk goes on from and whether a line was refused (which
        ends the walk). Past the first line, each added line sits next to the previous
        one, so only the omitted run between it and the next kept line (`outer`) changes
        size: after `m` more lines `used` is the added bytes plus that run's marker, whose
        size moves by a few digits at most. Every line whose running total fits with the
        largest marker a run can have is kept at once; the few after it are decided exactly.
        """
        if not self.add_one(stream, index, ceiling):
            return index, True
        source = self.streams[stream]
        order = self._order[stream]
        position = bisect.bisect_left(order, index)
        first = index + step
        # `at` is where the lines kept from the run go in `order`.
        if step > 0:
            outer = order[position + 1] if position + 1 < len(order) else len(source.lines)
            available, at = outer - first, position + 1
        else:
            outer = order[position - 1] if position else -1
            available, at = first - outer, position
        limit = self.budget if ceiling > self.budget else ceiling
        size = 16  # lines looked at in the first window: most runs end in a few (or the view is full)
        while True:
            used = self.used
            gap = _gap_bytes(source, first, outer, step)
            # A line costs a byte at least (its newline; only a last line without one may cost
            # nothing) and the run's marker can shrink by `gap` at most: more lines cannot fit.
            count = min(available, max(0, limit - used + gap + 2), size)
            if count == 0:
                return first, False
            window = source.window(first, count, step)
            totals = list(accumulate(self._costs(source, window, first, step)))
            fits = self._fitting(source, totals, first, outer, step, gap, limit)
            # The lines up to the refused one must be context lines, as the walk would find them.
            stop = source.first_not_context(window[:fits + 1], first, step)
            if stop is not None:
                fits, refused, ended = stop, False, True
            else:
                refused = ended = fits < count
            if fits:
                kept_now = range(first, first + fits) if step > 0 else range(first - fits + 1, first + 1)
                self.kept[stream].update(kept_now)
                order[at:at] = kept_now
                if step > 0:
                    at += fits
                self.used = used + totals[fits - 1] + _gap_bytes(source, first + fits * step, outer, step) - gap
                first += fits * step
                available -= fits
            if ended or fits < size:
                return first, refused
            size *= 2

    def _fitting(self, source: Stream, totals: list[int], first: int, outer: int, step: int, gap: int,
                 limit: int) -> int:
        """How many lines of a window (`totals`: their running byte totals; `gap`: the bytes of
        the run's marker before them) `add_one` would keep one by one: those whose bytes keep
        `used` within `limit` and, with the run's marker re-measured, within the budget."""
        used, budget = self.used, self.budget
        # The largest marker a run of this stream can have: a bound on how far a run's marker moves.
        largest = source.marker_bytes + len(str(len(source.lines))) * (3 if source.ranges else 1)
        # Every line whose running total fits beside the largest marker fits (both tests below hold).
        fits = bisect.bisect_right(totals, limit - used + gap - largest)
        while fits < len(totals):
            added = totals[fits]
            before = _gap_bytes(source, first + fits * step, outer, step)
            after = _gap_bytes(source, first + (fits + 1) * step, outer, step)
            if used + added + before - gap > limit or used + added + after - gap > budget:
                break
            fits += 1
        return fits

    def _costs(self, source: Stream, window: list[bytes], first: int, step: int) -> list[int]:
        """What each line of `window` (lines `first`, `first + step`, …) costs in the view.

        Lines that are ASCII and not over the line limit (nearly all) cost their length
        and a newline; the rest are rendered (and cached, as `cost` does)."""
        limit = self.limit
        if b"".join(window).isascii() and max(map(len, window)) <= limit:
            costs = [len(line) + 1 for line in window]
        else:
            shown, costs = source.shown, []
            for offset, line in enumerate(window):
                if line.isascii() and len(line) <= limit:
                    costs.append(len(line) + 1)
                    continue
                index = first + offset * step
                rendered = shown.get(index)
                if rendered is None:
                    rendered = shown[index] = source.line_bytes(index, limit)
                costs.append(len(rendered))
        last = len(source.lines) - 1
        if not source.final_newline and (first - last) * step <= 0 <= (first + (len(window) - 1) * step - last) * step:
            offset = (last - first) * step
            if window[offset].isascii() and len(window[offset]) <= limit:
                costs[offset] -= 1  # the last line has no newline to show
        return costs

    def add(self, stream: int, indices) -> bool:
        """Keep `indices` of `stream` if the view still fits; all or none."""
        kept = self.kept[stream]
        new = sorted({i for i in indices if i not in kept})
        if not new:
            return True
        if len(new) == 1:
            return self.add_one(stream, new[0])
        lines = self.streams[stream]
        if not all(lines.held(i) for i in new):
            return False
        extra = sum(self.cost(stream, i) for i in new)
        if self.used + extra > self.budget:
            return False
        order = self._order[stream]
        left = bisect.bisect_left(order, new[0])
        right = bisect.bisect_right(order, new[-1])
        low = order[left - 1] if left else -1
        high = order[right] if right < len(order) else len(lines.lines)
        between = order[left:right]
        delta = (extra + self._runs_cost(lines, low, high, sorted({*between, *new}))
                 - self._runs_cost(lines, low, high, between))
        if self.used + delta > self.budget:
            return False
        kept.update(new)
        order[left:right] = sorted({*between, *new})
        self.used += delta
        return True

    def full(self) -> bool:
        return self.budget - self.used < 2


def _gap_bytes(stream: Stream, first: int, outer: int, step: int) -> int:
    """Bytes of the marker for the omitted run from line `first` up to the kept line
    `outer` (exclusive) in direction `step`; 0 when the run is empty."""
    if step > 0:
        return gap_marker_bytes(stream, first, outer - 1) if first < outer else 0
    return gap_marker_bytes(stream, outer + 1, first) if first > outer else 0


def _select(view: _View, sal: Classifier) -> None:
    """Spend the budget: each stream's end and its summaries, failure blocks, headers, location blocks
    and lines that stand out, a bounded head and tail of context, then warnings. What is left stays
    unspent: a view is no larger than what it has to show (see `CONTEXT_SHARES`)."""
    streams = view.streams
    if view.few:  # long lines sharing the budget
        for number, stream in enumerate(streams):
            for index in range(len(stream.lines)):
                view.add(number, [index])
    for number, stream in enumerate(streams):
        if stream.markers.reduced and len(stream.lines):
            view.add(number, [0])  # a reducer's summary line says what the view is
        for index in ends(stream.lines, stream.final_newline, stream.markers.is_marker, view.budget):
            view.add(number, [index])
    units = []
    # Only the blocks a view weighs are built: a dense stream's first and last of a class and its rare kinds.
    for number, stream in enumerate(streams):
        units.extend(block_units(stream.lines, stream.classes, number, sal, partial(weighed, stream, view.budget)))
    # Summaries (`Found 16 errors.`, a tally) are single lines that say how it all ended: before the
    # failures' blocks, which could take the budget, wherever the summary stands (a tool that writes
    # it to stdout and its diagnostics to stderr puts it first in a host's text).
    alike = [u for u in units if u.rank == 1]
    spend_alike(view, [u for u in alike if streams[u.stream].classes.get(u.start) == "summary"], sal)
    failures = [u for u in units if u.rank == 0]
    spend_on_blocks(view, failures, sal)
    # Lines that stand out (`rare`, a dozen at most a stream) before headers, which may be one per file
    # of four hundred: the one real change of a recursive diff is not behind every file's name.
    located = [u for u in units if u.rank == 2]
    rare = [u for u in located if all(streams[u.stream].classes.get(p[2]) in LINE_CLASSES for p in u.parts)]
    spend_on_blocks(view, rare, sal, others=not failures)
    spend_alike(view, [u for u in alike if streams[u.stream].classes.get(u.start) != "summary"], sal)
    spend_on_blocks(view, [u for u in located if u not in rare], sal, others=not failures)  # a dozen rare at most
    head_share, tail_share = CONTEXT_SHARES
    _context(view, view.budget * head_share // 100, view.budget * tail_share // 100)
    # Warnings beside failures are each kind once: what is wrong is shown, the rest the header counts.
    spend_alike(view, [u for u in units if u.rank == 3], sal, WARNINGS_BESIDE_FAILURES if failures else MAX_WARNINGS)
    _fill_single_gaps(view)


def _fill_single_gaps(view: _View) -> None:
    """Show each omitted run of one line that is shorter than its marker (the blank line between a
    failure and its reason): the marker would say less in more bytes."""
    for number, stream in enumerate(view.streams):
        for start, end in list(gaps(len(stream.lines), view.kept[number])):
            if start == end and stream.held(start) and view.cost(number, start) < gap_marker_bytes(stream, start, end):
                view.add_one(number, start)


def _context(view: _View, head_share: int, tail_share: int) -> None:
    """Extend from the first line onward and the last line backward, skipping runs of noise,
    each direction until its share of newly spent bytes or the budget runs out."""
    streams = view.streams
    for share, forward in ((head_share, True), (tail_share, False)):
        start = view.used
        numbers = range(len(streams)) if forward else range(len(streams) - 1, -1, -1)
        stop = False
        for number in numbers:
            stream = streams[number]
            total = len(stream.lines)
            step = 1 if forward else -1
            index = 0 if forward else total - 1
            kept, lines, is_marker = view.kept[number], stream.lines, stream.markers.is_marker
            while True:
                index = stream.next_context(index, step, kept)  # past what is kept and runs of noise
                if not 0 <= index < total:
                    break
                if not is_marker(index, lines[index]):
                    index, stop = view.add_run(number, index, step, start + share)
                    if stop:
                        break
                    continue
                pair = stream.markers.pair(lines, index)
                needed = sum(view.cost(number, i) for i in pair if i not in view.kept[number])
                if view.used - start + needed > share or not view.add(number, pair):
                    stop = True
                    break
                index += step
            if stop:
                break


def _cap(streams: list[Stream], total: int, *, cap: int, archive_ref: str, completeness: str,
         exit_code: int | None, source: str | None, sal: Classifier) -> list[bytes]:
    """The view of `streams` (of `total` source bytes, over the cap): one output per stream."""
    view = _View(streams, cap, _reserve(streams, total, cap, archive_ref, completeness, exit_code))
    if view.budget - view.used > 0:
        _select(view, sal)
    else:
        view.kept = [set() for _ in streams]
    runs = sum(len(gaps(len(stream.lines), view.kept[n])) for n, stream in enumerate(streams))
    # A reducer's first marker pair, when shown, already names the search on the raw stream.
    paired = any(s.markers.header is not None and s.markers.header in view.kept[n] for n, s in enumerate(streams))
    hint = "" if paired else search_pattern(streams, view.kept)

    likes = _likes(view)

    def main_marker(stream: Stream, start: int | None = None, end: int | None = None) -> bytes:
        here = None if start is None else read_range(stream, start, end, archive_ref)
        if here is not None and (stream, start) in likes:
            here = (f"{here[0]}{likes[stream, start]}", here[1])
        return header(total, cap, archive_ref, source or stream.name, completeness,
                      counts=omitted_counts(streams, view.kept), runs=runs, exit_code=exit_code, hint=hint,
                      here=here).encode()

    out, placed = _render(view, main_marker, likes)
    if not placed:  # every line kept, some cut short: the marker follows the first cut line's stream
        number = next((n for n, stream in enumerate(streams) if stream.cut), 0)
        ends = out[number].endswith(b"\n") or not out[number]
        out[number] += (b"" if ends else b"\n") + main_marker(streams[number])
    return out


def _reserve(streams: list[Stream], total: int, cap: int, archive_ref: str, completeness: str,
             exit_code: int | None) -> int:
    """The most bytes the main marker can take beyond a gap marker: the longest name, search pattern, counts
    and range."""
    total_lines = sum(len(s.lines) for s in streams)
    worst_counts = ", ".join(f"{total_lines} {name}" for name in ("failure", "summary", "warning", "other"))
    longest = max(streams, key=lambda s: len(s.name))
    here = read_range(longest, total_lines - 1, 2 * total_lines - 2, archive_ref)
    return likes_for(cap) * LIKE_RESERVE + len(header(
        total, cap, archive_ref, "x" * len(longest.name), completeness, counts=worst_counts, runs=total_lines,
        exit_code=exit_code, hint="x" * MAX_HINT_CHARS, here=here).encode())


def _likes(view: _View) -> dict:
    """What the longest omitted runs of one kind look like (`markers.repetition`), by (stream, start):
    at most `likes_for(cap)` runs, whose bytes the budget reserved."""
    runs = sorted(((end - start, number, start, end) for number, stream in enumerate(view.streams)
                   for start, end in gaps(len(stream.lines), view.kept[number])), reverse=True)
    likes = {}
    for _, number, start, end in runs:
        if len(likes) >= view.likes or end - start + 1 < MIN_LIKE_LINES:
            break
        stream = view.streams[number]
        like = repetition(stream, start, end)
        if like:
            likes[stream, start] = like
    return likes


def _render(view: _View, main_marker, likes: dict) -> tuple[list[bytes], bool]:
    """Each stream's kept lines with a marker for every omitted run: the main marker
    (`main_marker(stream, start, end)`) for the first, a gap marker for the others;
    and whether there was one."""
    out: list[bytes] = []
    placed = False
    ends_newline = True
    for number, stream in enumerate(view.streams):
        pieces: list[bytes] = []
        index = 0
        for start, end in gaps(len(stream.lines), view.kept[number]):
            if start > index:
                shown = stream.shown_lines(index, start, view.limit)
                pieces.append(shown)
                ends_newline = shown.endswith(b"\n")
            if not ends_newline:
                pieces.append(b"\n")
            if placed:
                pieces.append(gap_marker(stream, start, end, likes.get((stream, start), "")))
            else:
                pieces.append(main_marker(stream, start, end))
                placed = True
            ends_newline = True
            index = end + 1
        if index < len(stream.lines):
            shown = stream.shown_lines(index, len(stream.lines), view.limit)
            pieces.append(shown)
            ends_newline = shown.endswith(b"\n")
        out.append(b"".join(pieces))
    return out, placed


@collector_paused
def cap_streams(
    texts: Sequence[tuple[str, bytes]],
    *,
    cap: int = DEFAULT_CAP_BYTES,
    archive_ref: str,
    completeness: str = "unknown",
    exit_code: int | None = None,
    source: str | None = None,
) -> list[bytes] | None:
    """Cap several named texts taken together; one output per text, or None when they fit.

    `texts` are (recovery source name, bytes) pairs in display order. The main
    marker names `source` if given, else the text holding the first omitted line.
    """
    total = sum(len(data) for _, data in texts)
    if cap <= 0 or total <= cap:
        return None
    sal = classifier()
    return _cap([Stream(name, data, sal) for name, data in texts], total, cap=cap, archive_ref=archive_ref,
                completeness=completeness, exit_code=exit_code, source=source, sal=sal)


def cap_text(
    data: bytes,
    *,
    cap: int = DEFAULT_CAP_BYTES,
    archive_ref: str,
    source: str = "result_text",
    completeness: str = "unknown",
    exit_code: int | None = None,
) -> bytes:
    """Cap one UTF-8 byte string, or return it unchanged."""
    capped = cap_streams([(source, data)], cap=cap, archive_ref=archive_ref, completeness=completeness,
                         exit_code=exit_code)
    return data if capped is None else capped[0]


def cap_blocks(
    blocks: Sequence[dict],
    *,
    cap: int = DEFAULT_CAP_BYTES,
    archive_ref: str,
    source: str = "result_text",
    completeness: str = "unknown",
    exit_code: int | None = None,
) -> list[dict] | None:
    """Cap a list of content blocks; return new blocks, or None when nothing changes.

    Text blocks are `{"type": "text", "text": str}`, measured joined without
    separators; the view of that joined text replaces them as one block at the
    first text block's place. Other blocks (images) keep their order and do not count.
    """
    texts = [b["text"] for b in blocks
             if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)]
    joined = "".join(texts).encode("utf-8")
    capped = cap_streams([(source, joined)], cap=cap, archive_ref=archive_ref, completeness=completeness,
                         exit_code=exit_code)
    if capped is None:
        return None
    out: list[dict] = []
    placed = False
    for block in blocks:
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
            if not placed:
                new_block = dict(block)
                new_block["text"] = capped[0].decode("utf-8")
                out.append(new_block)
                placed = True
            continue
        out.append(block)
    return out


@collector_paused
def cap_files(
    paths: Sequence[str],
    *,
    cap: int = DEFAULT_CAP_BYTES,
    archive_ref: str,
    source: str = "stdout",
    completeness: str = "complete",
    exit_code: int | None = None,
    names: Sequence[str] = ("stdout", "stderr"),
    markers: Sequence[Sequence | None] = (),
) -> list[bytes] | None:
    """Cap the joined contents of `paths` (pruned stdout then stderr).

    Returns one byte string per path (what to emit on that path's stream), or
    None when the joined size is at or under the cap and the files should be
    emitted as they are. `markers` holds, per path, the markers of the reducer
    that wrote it (`ReduceStats.markers`), or None for a stream as the command
    wrote it. `source` is accepted for compatibility; the main marker names the
    stream that holds the first omitted line.
    """
    import os

    sizes = [os.path.getsize(path) for path in paths]
    if cap <= 0 or sum(sizes) <= cap:
        return None
    sal = classifier()
    streams = [Stream.from_file(names[number] if number < len(names) else source, path, sal,
                                markers[number] if number < len(markers) else None)
               for number, path in enumerate(paths)]
    return _cap(streams, sum(sizes), cap=cap, archive_ref=archive_ref, completeness=completeness,
                exit_code=exit_code, source=None, sal=sal)
