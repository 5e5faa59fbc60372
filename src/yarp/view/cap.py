"""The global cap on agent-visible text: a salience-ordered view that fits.

All text is measured in UTF-8 bytes; at or under the cap nothing changes (0
disables the cap). Over it, the view keeps whole lines, in their original
order, chosen by the classes of `salience` and spent in this order:

    1. failure blocks (errors, exceptions, tracebacks, diagnostics with their
       source and caret lines, exit lines): the first and the last whole, then
       every failure line, then the other blocks whole, then what fits of the
       blocks that did not (their lead lines, then following lines one by one)
    2. summaries and headers (test and build summaries, diff file headers,
       commit lines with their subjects)
    3. location blocks (a linter's ` --> file:line` with its finding), as failures
    4. head and tail context (noise such as PASSED lines and progress bars skipped)
    5. warning blocks
    6. the rest, from the head onward and from the tail backward

Every omitted run becomes one whole marker line naming its line range in the
recovery source (`yarp read REF SOURCE A:B`); the first omitted position also
carries the main marker, which names the archive reference, how many lines of
each class were cut and a search pattern built from the cut lines' leading
words. A line longer than `max_line_bytes(cap)` is shown cut at a UTF-8
boundary and followed by a marker line. Markers are never cut, so the view is
never larger than the cap unless the cap cannot hold the main marker at all.

`hooks/pi/src/cap.ts` is this module's twin: the shared vectors in
`tests/vectors/cap` hold both to the same view for the same input.

Two entry points as before: `cap_blocks`/`cap_text` for text the agent's host
produced (source `result_text`) and `cap_files` for the runner, which caps the
pruned stdout and stderr together. Neither touches the archive: the caller
commits the exact text before it shows the capped form.
"""

from __future__ import annotations

import bisect
from itertools import accumulate

from yarp.limits import DEFAULT_CAP_BYTES
from yarp.view.salience import FAILURE_CLASSES, RANK, Classifier, block_units, classifier, is_blank

# typing costs `yarp run` milliseconds; annotations only need it.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Sequence

COMPLETENESS = ("complete", "incomplete", "unknown")
#: Longest search pattern a main marker builds, and how many words it joins.
MAX_HINT_CHARS = 64
MAX_HINT_WORDS = 4
#: Worded lines a hint reads per class group before it settles for the words it has:
#: a thousand lines that repeat the same few leading words will not name new ones.
MAX_HINT_LINES = 1000
#: Omitted-line counts are reported in these groups, in this order.
COUNT_GROUPS = (("failure", FAILURE_CLASSES), ("summary", frozenset({"summary", "header"})),
                ("warning", frozenset({"warning"})))
#: Give up a phase after this many candidates in a row did not fit.
MAX_MISSES = 64
REDUCER_SUMMARY = b"[yarp summary: "
YARP_MARKER = b"[yarp: "
SEARCH_LINE = b"Search omitted output: "
CUT_NOTE = b"[yarp: line "
REDUCER_MARKER = b"[yarp: omitted "
MARKER_LINES = (YARP_MARKER, SEARCH_LINE)
#: A stream larger than this is scanned in chunks and only its head, tail and
#: the windows around its first and last salient lines are held.
DENSE_LIMIT = 4 << 20
CHUNK_BYTES = 1 << 20
EDGE_BYTES = 64 << 10
MAX_WINDOWS = 256
#: What a line not held in memory reads as: never blank, never a lead or continuation line.
UNAVAILABLE = b"\x00"
#: The bytes of `gap_marker` other than its numbers and the stream's name.
_RANGE_MARKER_BYTES = len(b"[yarp: omitted  line(s);  :]\n")
_VIEW_MARKER_BYTES = len(b"[yarp: omitted  line(s) of this view]\n")
#: Every byte but those a hint's word starts with (`salience.HINT_PATTERNS["word"]`).
_NOT_WORD_START = bytes(sorted(set(range(256)) - set(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")))


def marker(source_bytes: int, cap: int, archive_ref: str, source: str, completeness: str,
           hint: str = "term|alternate") -> str:
    """The main marker's first two lines; it starts and ends with a newline."""
    return (
        f"\n[yarp: {source_bytes} byte(s) capped at {cap}; ref={archive_ref}; {source} {completeness}]\n"
        f"Search omitted output: yarp search {archive_ref} '{hint}'\n"
    )


def max_line_bytes(cap: int) -> int:
    """The longest line a view shows whole: a quarter of the cap, at least 64 and at most 1,024 bytes."""
    return max(64, min(1024, cap // 4))


def utf8_floor(data: bytes, limit: int) -> int:
    """The largest cut position <= limit that does not split a UTF-8 sequence."""
    if limit >= len(data):
        return len(data)
    cut = limit
    while cut > 0 and (data[cut] & 0xC0) == 0x80:
        cut -= 1
    return cut


def _displayable(line: bytes) -> bytes:
    """The line as UTF-8: invalid bytes become U+FFFD, as the agent's host would show them."""
    if line.isascii():
        return line
    try:
        line.decode("utf-8")
        return line
    except UnicodeDecodeError:
        return line.decode("utf-8", "replace").encode("utf-8")


class SparseLines:
    """The lines of a big stream that were held: the rest read as `UNAVAILABLE`."""

    __slots__ = ("total", "held")

    def __init__(self, total: int, held: dict[int, bytes]) -> None:
        self.total, self.held = total, held

    def __len__(self) -> int:
        return self.total

    def __getitem__(self, index: int) -> bytes:
        return self.held.get(index, UNAVAILABLE)

    def available(self) -> list[int]:
        """The indices of the lines held, in order."""
        return sorted(self.held)


class Stream:
    """One text to cap: its name in markers, its lines (without newlines) and classes."""

    __slots__ = ("name", "lines", "final_newline", "ranges", "marker_bytes", "classes", "shown", "extra_counts",
                 "noise")

    def __init__(self, name: str, data: bytes, sal: Classifier) -> None:
        self.name = name
        self.final_newline = data.endswith(b"\n")
        body = data[:-1] if self.final_newline else data
        self.lines = body.split(b"\n") if data else []
        # A reducer's view has its own line numbers: its omissions are named by search only.
        self.ranges = not data.startswith(REDUCER_SUMMARY)
        #: The bytes of this stream's gap markers other than their numbers.
        self.marker_bytes = _RANGE_MARKER_BYTES + len(name.encode()) if self.ranges else _VIEW_MARKER_BYTES
        self.classes: dict[int, str] = {}
        self.shown: dict[int, bytes] = {}
        #: Whether a line is noise, for the lines asked so far.
        self.noise: dict[int, bool] = {}
        #: Salient lines of a big stream whose windows were not held, by class.
        self.extra_counts: dict[str, int] = {}
        if not data:
            return
        found = sal.salient_lines(body)
        previous, number = 0, 0
        for offset in sorted(found):
            number += body.count(b"\n", previous, offset)
            previous = offset
            line = self.lines[number]
            if line.startswith(MARKER_LINES):
                continue  # a reducer's own marker: kept or cut with its pair, never salient
            cls = sal.classify(line, found[offset])
            if cls not in ("plain", "noise"):
                self.classes[number] = cls
            else:
                self.noise[number] = cls == "noise"  # asked already: the context walk need not ask again
        if not self.ranges:
            # A reducer's first marker pair names the raw stream's recovery search: kept like a header.
            first = next((n for n, line in enumerate(self.lines) if line.startswith(REDUCER_MARKER)), None)
            if first is not None:
                self.classes[first] = "header"

    def held(self, index: int) -> bool:
        """Whether line `index` is in memory (always, unless the stream is a big one read sparsely)."""
        lines = self.lines
        return not isinstance(lines, SparseLines) or index in lines.held

    def indices(self):
        """The indices of the lines the cap may show: all of them, or only those held."""
        lines = self.lines
        return lines.available() if isinstance(lines, SparseLines) else range(len(lines))

    @classmethod
    def from_file(cls, name: str, path: str, sal: Classifier) -> "Stream":
        """Read a stream file: whole when small, else in chunks holding bounded windows."""
        import os

        size = os.path.getsize(path)
        with open(path, "rb") as handle:
            if size <= DENSE_LIMIT:
                return cls(name, handle.read(), sal)
            return _sparse(cls(name, b"", sal), handle, size, sal)

    def line_bytes(self, index: int, limit: int) -> bytes:
        """What the view prints for line `index`, newline and any cut marker included."""
        line = _displayable(self.lines[index])
        last = index == len(self.lines) - 1 and not self.final_newline
        if len(line) > limit:
            cut = utf8_floor(line, limit)
            note = f"{CUT_NOTE.decode()}{index + 1} cut after {cut} of {len(line)} byte(s)]"
            return line[:cut] + b"\n" + note.encode() + (b"" if last else b"\n")
        return line if last else line + b"\n"

    def shown_lines(self, start: int, stop: int, limit: int) -> bytes:
        """What the view prints for the kept lines `start`..`stop - 1`: joined at once
        when they are ASCII and none is over `limit`, else line by line."""
        lines = self.lines
        if not isinstance(lines, SparseLines):
            run = lines[start:stop]
            text = b"\n".join(run)
            if text.isascii() and max(map(len, run)) <= limit:
                return text if stop == len(lines) and not self.final_newline else text + b"\n"
        shown = self.shown
        return b"".join(shown.get(index) or self.line_bytes(index, limit) for index in range(start, stop))


def _sparse(stream: Stream, handle, size: int, sal: Classifier) -> Stream:
    """Fill `stream` from a big file in bounded memory: head and tail bytes' lines,
    and for the first and the last `MAX_WINDOWS` salient lines their lead and
    continuation windows; every other salient line is only counted."""
    from collections import deque

    held: dict[int, bytes] = {}
    classes: dict[int, str] = {}
    extra: dict[str, int] = {}
    first: list[tuple[int, str, list[tuple[int, bytes]]]] = []
    last: deque = deque(maxlen=MAX_WINDOWS)
    open_windows: list[tuple[int, list[tuple[int, bytes]]]] = []  # (lines still wanted, window)
    before: deque = deque(maxlen=sal.max_lead)
    number = 0
    carry = b""
    read = 0
    while read < size:
        data = handle.read(min(CHUNK_BYTES, size - read))
        if not data:
            break
        read += len(data)
        buf = carry + data
        cut = buf.rfind(b"\n") + 1
        if read < size:
            if cut == 0:
                carry = buf[-EDGE_BYTES:] if len(buf) > EDGE_BYTES else buf  # an endless line: keep its end
                continue
            buf, carry = buf[:cut], buf[cut:]
        else:
            carry = b""
        body = buf[:-1] if buf.endswith(b"\n") else buf
        lines = body.split(b"\n")
        if number == 0:
            used = 0
            for index, line in enumerate(lines):
                used += len(line) + 1
                if used > EDGE_BYTES:
                    break
                held[index] = line
        # Lines still owed to windows opened near the end of the previous chunk.
        still = []
        for wanted, window in open_windows:
            take = lines[:wanted]
            window.extend((number + i, line) for i, line in enumerate(take))
            if wanted > len(take):
                still.append((wanted - len(take), window))
        open_windows = still
        previous, local = 0, 0
        # Past the first chunk, only failure, exit and traceback lines are looked for: the
        # tail is held whole anyway, and a few triggers keep the scan near memory speed.
        found = sal.salient_lines(body, None if number == 0 else sal.failure_triggers)
        for offset in sorted(found):
            local += body.count(b"\n", previous, offset)
            previous = offset
            if lines[local].startswith(MARKER_LINES):
                continue
            cls = sal.classify(lines[local], found[offset])
            if cls in ("plain", "noise"):
                continue
            index = number + local
            lead = [(index - k, lines[local - k]) for k in range(min(sal.max_lead, local), 0, -1)]
            if local < sal.max_lead:
                lead = [item for item in before if item[0] >= index - sal.max_lead] + lead
            window = lead + [(index, lines[local])]
            span = max(sal.max_lines, sal.header_max_lines) + 1
            after = lines[local + 1: local + 1 + span]
            window.extend((index + 1 + i, line) for i, line in enumerate(after))
            if len(after) < span:
                open_windows.append((span - len(after), window))
            entry = (index, cls, window)
            if len(first) < MAX_WINDOWS:
                first.append(entry)
            else:
                if len(last) == last.maxlen:
                    dropped = last[0][1]
                    extra[dropped] = extra.get(dropped, 0) + 1
                last.append(entry)
        tail_lines = lines[-sal.max_lead:]
        first_tail = number + len(lines) - len(tail_lines)
        before.extend((first_tail + i, line) for i, line in enumerate(tail_lines))
        number += len(lines)
    total = number
    for index, cls, window in list(first) + list(last):
        classes[index] = cls
        held.update(window)
    tail_start = max(0, size - EDGE_BYTES)
    handle.seek(tail_start)
    tail = handle.read()
    final_newline = tail.endswith(b"\n")
    tail_body = tail[:-1] if final_newline else tail
    tail_lines = tail_body.split(b"\n")
    if tail_start > 0:
        tail_lines = tail_lines[1:]  # the first may be a partial line
    start = total - len(tail_lines)
    for offset, line in enumerate(tail_lines):
        held.setdefault(start + offset, line)
    stream.lines = SparseLines(total, {i: line for i, line in held.items() if 0 <= i < total})
    stream.final_newline = final_newline
    stream.classes = classes
    stream.extra_counts = extra
    stream.ranges = not held.get(0, b"").startswith(REDUCER_SUMMARY)
    if not stream.ranges:
        # As for a reducer's view read whole: its gap markers take the count-only form,
        # and its first marker pair is kept like a header.
        stream.marker_bytes = _VIEW_MARKER_BYTES
        first = next((n for n in stream.indices() if stream.lines[n].startswith(REDUCER_MARKER)), None)
        if first is not None:
            classes[first] = "header"
    return stream


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
        self.limit = max_line_bytes(cap)
        self.kept: list[set[int]] = [set() for _ in streams]
        self._order: list[list[int]] = [[] for _ in streams]
        self.budget = cap - reserve
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
        a run of noise, not a reducer's marker, held) and fit: the lines `add_one` would
        keep one by one, counted in one step from their running byte total.

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
        lines, order, total = source.lines, self._order[stream], len(source.lines)
        position = bisect.bisect_left(order, index)
        first = index + step
        if step > 0:
            outer = order[position + 1] if position + 1 < len(order) else total
            available = outer - first
        else:
            outer = order[position - 1] if position else -1
            available = first - outer
        budget = self.budget
        limit = budget if ceiling > budget else ceiling
        # The largest marker a run of this stream can have: a bound on how far a run's marker moves.
        largest = source.marker_bytes + len(str(total)) * (3 if source.ranges else 1)
        held = lines.held if isinstance(lines, SparseLines) else None
        sal = classifier()
        noise_start, noise_any = sal.noise_start.match, sal.noise_any.search
        lines_start, lines_any = sal.noise_lines_start, sal.noise_lines_any
        at = position + 1 if step > 0 else position  # where the next kept lines go in `order`
        size = 16  # lines looked at in the first window: most runs end in a few (or the view is full)
        while True:
            used = self.used
            gap = _gap_bytes(source, first, outer, step)
            # A line costs a byte at least (its newline; only a last line without one may cost
            # nothing) and the run's marker can shrink by `gap` at most: more lines cannot fit.
            count = min(available, max(0, limit - used + gap + 2), size)
            if count == 0:
                return first, False
            if step > 0:
                window = lines[first:first + count] if held is None else [lines[i] for i in range(first, first + count)]
            else:
                window = lines[first - count + 1:first + 1] if held is None else [
                    lines[i] for i in range(first - count + 1, first + 1)]
                window.reverse()
            totals = list(accumulate(self._costs(source, window, first, step)))
            # Every line whose running total fits beside the largest marker fits (both tests below hold).
            fits = bisect.bisect_right(totals, limit - used + gap - largest)
            while fits < count:
                # Line `fits` is refused if its own bytes take `used` past the limit or, with
                # the run's marker re-measured, past the budget: `add_one`'s two tests.
                added = totals[fits]
                before = _gap_bytes(source, first + fits * step, outer, step)
                after = _gap_bytes(source, first + (fits + 1) * step, outer, step)
                if used + added + before - gap > limit or used + added + after - gap > budget:
                    break
                fits += 1
            # The lines up to the refused one must be context lines, as the walk would find them:
            # when none is noise or a marker (the common case) one search of them joined says so.
            span = window[:fits + 1]
            if held is not None:
                quiet = False
            elif lines_start is not None:
                text = b"\n" + b"\n".join(span)
                quiet = not (b"\n" + YARP_MARKER in text or b"\n" + SEARCH_LINE in text
                             or lines_start.search(text) or lines_any.search(text))
            else:
                quiet = not any([noise_start(line) or noise_any(line) or line.startswith(MARKER_LINES)
                                 for line in span])
            for offset in range(0 if quiet else len(span)):
                line_index = first + offset * step
                if (_skippable(source, line_index) or window[offset].startswith(MARKER_LINES)
                        or (held is not None and line_index not in held)):
                    fits, refused, ended = offset, False, True
                    break
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


def gaps(total: int, kept: set[int]) -> list[tuple[int, int]]:
    """The omitted runs [start, end] of a stream of `total` lines."""
    out = []
    start = 0
    for index in sorted(kept):
        if index > start:
            out.append((start, index - 1))
        start = index + 1
    if start < total:
        out.append((start, total - 1))
    return out


def gap_marker(stream: Stream, start: int, end: int) -> bytes:
    """The marker for omitted lines `start`..`end`: with the raw line range when it has one, else the count only."""
    count = end - start + 1
    if stream.ranges:
        return f"[yarp: omitted {count} line(s); {stream.name} {start + 1}:{end + 1}]\n".encode()
    return f"[yarp: omitted {count} line(s) of this view]\n".encode()


def gap_marker_bytes(stream: Stream, start: int, end: int) -> int:
    """`len(gap_marker(stream, start, end))`, counted without building the marker:
    measuring runs is the cap's innermost step."""
    if stream.ranges:
        return stream.marker_bytes + len(str(end - start + 1)) + len(str(start + 1)) + len(str(end + 1))
    return stream.marker_bytes + len(str(end - start + 1))


def _gap_bytes(stream: Stream, first: int, outer: int, step: int) -> int:
    """Bytes of the marker for the omitted run from line `first` up to the kept line
    `outer` (exclusive) in direction `step`; 0 when the run is empty."""
    if step > 0:
        return gap_marker_bytes(stream, first, outer - 1) if first < outer else 0
    return gap_marker_bytes(stream, outer + 1, first) if first > outer else 0


def _marker_pair(stream: Stream, index: int) -> list[int]:
    """A reducer's marker line and its search line are kept or cut together."""
    lines = stream.lines
    if lines[index].startswith(YARP_MARKER) and index + 1 < len(lines) and lines[index + 1].startswith(SEARCH_LINE):
        return [index, index + 1]
    if lines[index].startswith(SEARCH_LINE) and index > 0 and lines[index - 1].startswith(YARP_MARKER):
        return [index - 1, index]
    return [index]


def _select(view: _View, sal: Classifier) -> None:
    streams = view.streams
    units = []
    for number, stream in enumerate(streams):
        units.extend(block_units(stream.lines, stream.classes, number, sal))
    _spend_on_blocks(view, [u for u in units if u.rank == 0])
    misses = 0
    for unit in units:
        if unit.rank == 1 and misses < MAX_MISSES and not view.full():
            misses = 0 if view.add(unit.stream, range(unit.start, unit.end + 1)) else misses + 1
    _spend_on_blocks(view, [u for u in units if u.rank == 2])
    _context(view, view.budget // 8, view.budget // 4)
    misses = 0
    for unit in units:
        if unit.rank == 3 and misses < MAX_MISSES and not view.full():
            misses = 0 if view.add(unit.stream, range(unit.start, unit.end + 1)) else misses + 1
    _context(view, view.budget, view.budget)


def _spend_on_blocks(view: _View, blocks: list) -> None:
    """The first and the last block whole; then every block's core (its anchor line,
    or a location with its finding); then the other blocks whole; then, for blocks
    that did not fit, each anchor's lead (location, source, caret) and its
    following lines one by one."""
    order = _first_last_rest(blocks)
    whole: set[int] = set()  # ids of the blocks kept whole
    for unit in order[:2]:
        if not view.full() and view.add(unit.stream, range(unit.start, unit.end + 1)):
            whole.add(id(unit))
    misses = 0
    cores = [(u.stream, head, anchor) for u in blocks if id(u) not in whole for _, head, anchor, _ in u.parts]
    for stream, head, anchor in _first_last_rest(cores):
        if misses >= MAX_MISSES or view.full():
            break
        misses = 0 if view.add(stream, range(head, anchor + 1)) else misses + 1
    misses = 0
    for unit in order[2:]:
        if misses >= MAX_MISSES or view.full():
            break
        if view.add(unit.stream, range(unit.start, unit.end + 1)):
            whole.add(id(unit))
            misses = 0
        else:
            misses += 1
    skipped = [u for u in blocks if id(u) not in whole]
    misses = 0
    for unit in skipped:
        for start, _, anchor, _ in unit.parts:
            if misses >= MAX_MISSES or view.full():
                break
            misses = 0 if view.add(unit.stream, range(start, anchor + 1)) else misses + 1
    for unit in skipped:
        for _, _, anchor, end in unit.parts:
            for index in range(anchor + 1, end + 1):
                if misses >= MAX_MISSES or view.full() or not view.add(unit.stream, [index]):
                    misses += 1
                    break


def _first_last_rest(items: list) -> list:
    """The first, the last, then the others in order: the first error and the final one matter most."""
    if len(items) < 2:
        return list(items)
    return [items[0], items[-1]] + items[1:-1]


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
            kept, lines = view.kept[number], stream.lines
            while 0 <= index < total:
                if index in kept or _skippable(stream, index):
                    index += step
                    continue
                if not lines[index].startswith(MARKER_LINES):
                    index, stop = view.add_run(number, index, step, start + share)
                    if stop:
                        break
                    continue
                pair = _marker_pair(stream, index)
                needed = sum(view.cost(number, i) for i in pair if i not in view.kept[number])
                if view.used - start + needed > share or not view.add(number, pair):
                    stop = True
                    break
                index += step
            if stop:
                break


def _noise(stream: Stream, index: int) -> bool:
    if index < 0 or index >= len(stream.lines) or index in stream.classes:
        return False
    known = stream.noise.get(index)
    if known is None:
        # Asked up to three times per line (as itself and as each neighbour's neighbour).
        known = stream.noise[index] = classifier().is_noise(stream.lines[index])
    return known


def _skippable(stream: Stream, index: int) -> bool:
    """A noise line in a run of at least two: skipping a lone one would cost a marker line."""
    return _noise(stream, index) and (_noise(stream, index - 1) or _noise(stream, index + 1))


def _hint(streams: list[Stream], kept: list[set[int]]) -> str:
    """A search pattern for what was cut: leading words of the highest class omitted."""
    sal = classifier()
    word, location = sal.word, sal.location
    for _, group in COUNT_GROUPS + (("other", None),):
        words: list[str] = []
        budget = MAX_HINT_LINES
        for number, stream in enumerate(streams):
            lines, classes, shown = stream.lines, stream.classes, kept[number]
            # Lines with no word at all (numbers, rules) are skipped before finding where their text starts.
            if group is None:
                candidates = (i for i in _worded_lines(stream, shown, word)
                              if i not in classes and not lines[i].startswith(MARKER_LINES))
            else:
                candidates = (i for i in sorted(classes)
                              if i not in shown and classes[i] in group and word.search(lines[i]) is not None)
            for index in candidates:
                line = lines[index]
                found = word.search(line, location.match(line).end())
                if found is None:
                    continue
                text = found.group().decode()
                if text not in words and len("|".join(words + [text])) <= MAX_HINT_CHARS:
                    words.append(text)
                budget -= 1
                if len(words) >= MAX_HINT_WORDS or budget == 0:
                    break
            if len(words) >= MAX_HINT_WORDS or budget == 0:
                break
        if words:
            return "|".join(words)
    return "."


def _worded_lines(stream: Stream, kept: set[int], word):
    """The omitted lines of `stream` that contain a word, in order.

    A word never spans a newline, so one search over an omitted run's joined
    lines finds the next line worth reading: an output of numbers or rules is
    skipped run by run instead of line by line."""
    lines = stream.lines
    if isinstance(lines, SparseLines):
        yield from (i for i in lines.available() if i not in kept and word.search(lines[i]) is not None)
        return
    for start, end in gaps(len(lines), kept):
        run = None  # the run's lines joined, built when a line without a word is met
        index, offset = start, 0
        while index <= end:
            line = lines[index]
            if word.search(line) is not None:
                yield index
            else:
                if run is None:
                    run = b"\n".join(lines[start:end + 1])
                    if not run.translate(None, _NOT_WORD_START):
                        break  # no byte a word starts with (numbers, rules): a C-speed pass says so
                found = word.search(run, offset)
                if found is None:
                    break
                index += run.count(b"\n", offset, found.start())
                offset = run.rfind(b"\n", offset, found.start()) + 1
                line = lines[index]
                yield index
            offset += len(line) + 1
            index += 1


def _counts(streams: list[Stream], kept: list[set[int]]) -> str:
    counts = {name: 0 for name, _ in COUNT_GROUPS}
    omitted = 0
    for number, stream in enumerate(streams):
        omitted += len(stream.lines) - len(kept[number])
        for index, cls in stream.classes.items():
            if index not in kept[number]:
                for name, group in COUNT_GROUPS:
                    if cls in group:
                        counts[name] += 1
        for cls, count in stream.extra_counts.items():
            for name, group in COUNT_GROUPS:
                if cls in group:
                    counts[name] += count
    parts = [f"{value} {name}" for name, value in counts.items() if value]
    other = omitted - sum(counts.values())
    if other:
        parts.append(f"{other} other")
    return ", ".join(parts) or "0"


def _details(counts: str, exit_code: int | None) -> str:
    status = f"; exit status {exit_code}" if exit_code is not None else ""
    return f"[yarp: omitted {counts} line(s){status}]\n"


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


def _cap(streams: list[Stream], total: int, *, cap: int, archive_ref: str, completeness: str,
         exit_code: int | None, source: str | None, sal: Classifier) -> list[bytes]:
    """The view of `streams` (of `total` source bytes, over the cap)."""
    total_lines = sum(len(s.lines) for s in streams)
    worst_counts = ", ".join(f"{total_lines} {name}" for name in ("failure", "summary", "warning", "other"))
    reserve = len(marker(total, cap, archive_ref, "x" * max(len(s.name) for s in streams), completeness,
                         "x" * MAX_HINT_CHARS).encode()) + len(_details(worst_counts, exit_code).encode())
    view = _View(streams, cap, reserve)
    if view.budget - view.used > 0:
        _select(view, sal)
    else:
        view.kept = [set() for _ in streams]
    out: list[bytes] = []
    main_placed = False
    ends_newline = True
    for number, stream in enumerate(streams):
        kept = view.kept[number]
        pieces: list[bytes] = []
        index = 0
        for start, end in gaps(len(stream.lines), kept) + [(len(stream.lines), -1)]:
            if start > index:
                shown = stream.shown_lines(index, start, view.limit)
                pieces.append(shown)
                ends_newline = shown.endswith(b"\n")
            if end < 0:
                break
            if not ends_newline:
                pieces.append(b"\n")
            if not main_placed:
                name = source or stream.name
                text = marker(total, cap, archive_ref, name, completeness, _hint(streams, view.kept))
                pieces.append(text[1:].encode())
                pieces.append(_details(_counts(streams, view.kept), exit_code).encode())
                main_placed = True
            pieces.append(gap_marker(stream, start, end))
            ends_newline = True
            index = end + 1
        out.append(b"".join(pieces))
    if not main_placed:  # every line kept, some cut short: the marker follows the first cut line's stream
        number = next((n for n, stream in enumerate(streams) if len(stream.lines) and any(
            CUT_NOTE in line for line in stream.shown.values())), 0)
        name = source or streams[number].name
        tail = marker(total, cap, archive_ref, name, completeness, _hint(streams, view.kept))[1:].encode()
        ends = out[number].endswith(b"\n") or not out[number]
        out[number] += (b"" if ends else b"\n") + tail + _details(_counts(streams, view.kept), exit_code).encode()
    return out


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


def cap_files(
    paths: Sequence[str],
    *,
    cap: int = DEFAULT_CAP_BYTES,
    archive_ref: str,
    source: str = "stdout",
    completeness: str = "complete",
    exit_code: int | None = None,
    names: Sequence[str] = ("stdout", "stderr"),
) -> list[bytes] | None:
    """Cap the joined contents of `paths` (pruned stdout then stderr).

    Returns one byte string per path (what to emit on that path's stream), or
    None when the joined size is at or under the cap and the files should be
    emitted as they are. `source` is accepted for compatibility; the main
    marker names the stream that holds the first omitted line.
    """
    import os

    sizes = [os.path.getsize(path) for path in paths]
    if cap <= 0 or sum(sizes) <= cap:
        return None
    sal = classifier()
    streams = [Stream.from_file(names[number] if number < len(names) else source, path, sal)
               for number, path in enumerate(paths)]
    return _cap(streams, sum(sizes), cap=cap, archive_ref=archive_ref, completeness=completeness,
                exit_code=exit_code, source=None, sal=sal)
