"""The texts the global cap reads, as lines: classed by salience, their markers known, big ones read in bounded memory.

A `Stream` is one text to cap under its recovery source's name: a host's text
(`Stream(name, data, sal)`) or a spooled stream file (`Stream.from_file`). It
holds the text's lines, the salience class of every salient line, which lines
are markers (from a reducer's records, else by how they read: see
`yarp.view.markers`), and how each line prints in a view (cut at a UTF-8
boundary when too long). A file over `DENSE_LIMIT` is read in `CHUNK_BYTES`
chunks and only bounded windows of it are held (`SparseLines`).

This module never chooses lines (that is `yarp.view.cap`) and never writes.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import deque
from functools import lru_cache
from itertools import compress, count, repeat
from operator import eq

from yarp.view.blocks import BLOCK_CLASSES
from yarp.view.lines import split_lines
from yarp.view.markers import MARKER_LINES, RecordMarkers, TextMarkers, cut_note, gap_marker_fixed_bytes
from yarp.view.rarity import largest_values, rare_columns, rare_findings, rare_lines, rare_shapes, rare_values
from yarp.view.salience import FAILURE_CLASSES, Classifier, classifier
from yarp.view.templates import by_number, classed_alike, tally

#: A stream larger than this is scanned in chunks and only its head, tail and
#: the windows around its first and last salient lines are held.
DENSE_LIMIT = 4 << 20
CHUNK_BYTES = 1 << 20
EDGE_BYTES = 64 << 10
MAX_WINDOWS = 256
#: A failure line is shown whole up to this many times the line limit: a JSON log's one error record
#: of 1,451 bytes carries its message in the middle, which a cut to 1,024 bytes leaves out.
FAILURE_LINE_TIMES = 2
#: Each line's kind is kept (`Stream.firsts`) when at least one line in this many holds a trigger.
KINDS_SHARE = 8
#: What a line not held in memory reads as: never blank, never a lead or continuation line.
UNAVAILABLE = b"\x00"
#: The lines a context walk asks about one by one before it reads windows of them (`Stream.next_context`).
LINES_ASKED_ALONE = 8
#: The most lines a context walk reads at once past those (its first window is one line, each after it twice
#: the one before).
CONTEXT_WINDOW = 4096
#: What `Stream._mark_noise` says of a line, and where a context walk stops: a line that is not noise, or
#: noise alone (not `skippable`).
_PLAIN, _NOISE, _UNKNOWN = 0, 1, 2
_CONTEXT_LINE = re.compile(rb"\x00|(?<!\x01)\x01(?!\x01)")
#: The class of a found line that is not salient, None aside (plain, noise or a marker): a note is plain.
_NOT_SALIENT = ("note",)
#: How a diff's file header starts (`_is_diff`).
_DIFF_START = b"diff --git "


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


class SparseLines:
    """The lines of a big stream that were held: the rest read as `UNAVAILABLE`."""

    __slots__ = ("total", "held")

    def __init__(self, total: int, held: dict[int, bytes]) -> None:
        self.total, self.held = total, held

    def __len__(self) -> int:
        return self.total

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self.held.get(number, UNAVAILABLE) for number in range(*index.indices(self.total))]
        return self.held.get(index, UNAVAILABLE)

    def available(self) -> list[int]:
        """The indices of the lines held, in order."""
        return sorted(self.held)


class Stream:
    """One text to cap: its name in markers, its lines (without newlines), their classes and markers.

    `records` are the markers of the reducer that wrote the text (`ReduceStats.markers`);
    without them the text is one from outside, whose markers are known by how they read.
    """

    __slots__ = ("name", "lines", "final_newline", "markers", "ranges", "marker_bytes", "classes", "shown",
                 "extra_counts", "noise", "cut", "headings", "kinds", "templates", "banners", "noisy",
                 "standouts", "repeats", "firsts", "marks", "never_noise")

    def __init__(self, name: str, data: bytes, sal: Classifier, records=None) -> None:
        self.name = name
        self.final_newline = data.endswith(b"\n")
        body = data[:-1] if self.final_newline else data
        self.lines = split_lines(body) if data else []
        self.classes: dict[int, str] = {}
        self.shown: dict[int, bytes] = {}
        #: Whether a line is noise, for the lines asked so far; and what the noise patterns say, per line's bytes
        #: (`Classifier.noise_key`).
        self.noise: dict[int, bool] = {}
        self.noisy: dict[bytes, bool] = {}
        #: Salient lines of a big stream whose windows were not held, by class.
        self.extra_counts: dict[str, int] = {}
        #: Whether a line was shown cut short.
        self.cut = False
        #: The heading each line asked about sits under (`ranking.heading`), or None.
        self.headings: dict[int, int | None] = {}
        #: Per line asked, its kind and place (`ranking.kind`); per line's bytes, its template and file.
        self.kinds: dict[int, tuple[bytes, bytes]] = {}
        self.templates: dict[bytes, tuple[bytes, bytes]] = {}
        #: Per line's bytes a heading's walk from the margin asked, whether it is a banner.
        self.banners: dict[bytes, bool] = {}
        #: Findings whose message no other finding says, among many that repeat theirs: each its own kind.
        self.standouts: set[int] = set()
        #: Per line's bytes asked, whether several lines say it word for word (`ranking.repeated`).
        self.repeats: dict[bytes, bool] = {}
        #: Per line number, the number of the first line of its kind (`classed_alike`); None where few lines
        #: hold a trigger (`KINDS_SHARE`) or the lines were not classed at once (a big stream read in chunks).
        self.firsts: list[int | None] | None = None
        #: Per line, what a context walk read of it (`next_context`): `_NOISE`, `_PLAIN` or `_UNKNOWN`; and the
        #: classed lines (never noise), ascending. None until a walk asks.
        self.marks: bytearray | None = None
        self.never_noise: list[int] | None = None
        self._know_markers(records)
        if data:
            self._classify(body, sal)
        self._mark_header()

    def _know_markers(self, records) -> None:
        markers = self.markers = TextMarkers(self.lines, self.indices()) if records is None else RecordMarkers(records)
        # A reducer's view has its own line numbers: its omissions are named by search only.
        self.ranges = not markers.reduced
        #: The bytes of this stream's gap markers other than their numbers.
        self.marker_bytes = gap_marker_fixed_bytes(self.name, self.ranges)

    def _classify(self, body: bytes, sal: Classifier) -> None:
        """Class the salient lines: a buffer scan finds the lines holding a trigger, and only they are matched."""
        numbers, holding = sal.salient_line_numbers(body)  # the lines holding a trigger, and their triggers
        is_marker = self.markers.is_marker
        lines, classes, noise = self.lines, self.classes, self.noise
        # A line's triggers and class follow from its bytes alone: a line of a kind classed before in this
        # output takes that one's class (`classed_alike`): the same bytes (dense diagnostics repeat `  |`,
        # `error: aborting …`), or, where no entry its triggers reach tells one digit from another
        # (`Classifier.digit_blind`), the same but for its digits (17,500 findings of a few checks in files
        # named by number). A trigger holding a digit reaches a reader, so lines alike hold the same triggers.
        # A marker of a text from outside reads as one, by words that hold no digit: a kind's lines are
        # all markers or none, and its first line answers for them. A reducer's are known by number.
        by_bytes = isinstance(self.markers, TextMarkers)
        given: set[str | None] = set()
        held: set[tuple[bytes, ...]] = set()  # the triggers each kind of line holds

        def classes_of(asked: list[bytes], triggers: list[tuple[bytes, ...]]) -> list[str | None]:
            held.update(triggers)
            classes = sal.entry_classes(asked, triggers)
            # Asked of the lines joined first: a line each cost borg's 2,000 records, each a kind, 2 M instructions.
            if by_bytes and TextMarkers.any_in(b"\n" + b"\n".join(asked), 0, len(asked)):
                for number in compress(count(), map(bytes.startswith, asked, repeat(MARKER_LINES))):
                    classes[number] = None  # a marker, never salient
            given.update(classes)
            return classes

        # Each line's kind is kept where scanned lines are dense, for weighing their blocks (`spending.weighed`):
        # a list as long as the stream, which 200,000 lines of numbers holding no trigger would pay for alone.
        found_classes, self.firsts = classed_alike(lines, numbers, holding, sal.blind, sal.digit_blind, classes_of,
                                                   kinds=len(numbers) * KINDS_SHARE >= len(lines))
        if by_bytes:
            # Every class at once: a None class is plain, noise or a marker, which a view asks about apart;
            # a note is plain, whatever a noise pattern would say of it.
            classes.update(by_number(numbers, found_classes, _NOT_SALIENT))
            if "note" in given:
                notes = compress(numbers, map(eq, found_classes, repeat("note")))
                noise.update(zip(notes, repeat(False)))
        else:
            for number, cls in zip(numbers, found_classes):
                if cls is None or is_marker(number, lines[number]):
                    continue  # plain or noise (`is_noise` tells if a view asks), or a marker: never salient
                if cls == "note":
                    noise[number] = False  # a note is plain, whatever a noise pattern would say of it
                else:
                    classes[number] = cls
        self._classify_rare(body, sal, _is_diff(body, held, sal))

    def _classify_rare(self, body: bytes, sal: Classifier, diff: bool = False) -> None:
        """Class the lines that stand out (`yarp.view.rarity`), once the salient lines are classed."""
        lines, classes, is_marker = self.lines, self.classes, self.markers.is_marker
        findings, standouts = rare_findings(body, lines, classes, sal.finding)
        for number in findings:
            if not is_marker(number, lines[number]):
                classes[number] = "finding"
        self.standouts.update(number for number in standouts if not is_marker(number, lines[number]))
        rare = rare_lines(body, lines, classes, sal.first_word)
        shaped = rare_shapes(body, lines, rare, self.firsts)
        # A salient line of a shape seen at most twice stands out among the many of its class: the two
        # `totl is not defined` among 8,000 style errors.
        self.standouts.update(number for number in shaped if classes.get(number) in BLOCK_CLASSES
                              and not is_marker(number, lines[number]))
        for number in (rare + largest_values(body, lines, classes) + rare_values(body, lines, classes)
                       + [number for number in shaped if number not in classes] + rare_columns(body, lines, classes)):
            if not is_marker(number, lines[number]):
                classes[number] = "rare"
        if diff:
            # In a diff, added, removed and context lines are the files' text: `except re.error:` is code.
            for number in [n for n, cls in classes.items() if lines[n][:1] in (b"+", b"-", b" ")
                           and cls not in ("header", "summary") and not lines[n].startswith((b"+++ ", b"--- "))]:
                del classes[number]

    def _mark_header(self) -> None:
        # A reducer's first marker pair names the raw stream's recovery search: kept like a header.
        header = self.markers.header
        if header is not None:
            self.classes[header] = "header"

    def whole(self) -> bool:
        """Whether every line of the stream is held: all but a big stream read in chunks (`SparseLines`)."""
        return not isinstance(self.lines, SparseLines)

    def held(self, index: int) -> bool:
        """Whether line `index` is in memory (always, unless the stream is a big one read sparsely)."""
        return self.whole() or index in self.lines.held

    def indices(self):
        """The indices of the lines the cap may show: all of them, or only those held."""
        lines = self.lines
        return lines.available() if isinstance(lines, SparseLines) else range(len(lines))

    def is_noise(self, index: int) -> bool:
        """Whether line `index` is noise (a salient line never is); asked once per line."""
        if index < 0 or index >= len(self.lines) or index in self.classes:
            return False
        known = self.noise.get(index)
        if known is None:
            # Asked up to three times per line (as itself and as each neighbour's neighbour); what the
            # noise patterns say of a line follows from its bytes (`noise_key`: but for its digits, where
            # they read every digit alike), and dense output repeats lines.
            line = self.lines[index]
            sal = classifier()
            key = sal.noise_key(line)
            known = self.noisy.get(key)
            if known is None:
                known = self.noisy[key] = sal.is_noise(line)
            self.noise[index] = known
        return known

    def skippable(self, index: int) -> bool:
        """A noise line in a run of at least two: skipping a lone one would cost a marker line."""
        return self.is_noise(index) and (self.is_noise(index - 1) or self.is_noise(index + 1))

    def next_context(self, index: int, step: int, kept) -> int:
        """The first line from `index` on, in direction `step` (1 or -1), that is neither in `kept` nor
        `skippable`; -1 or the line count when there is none. A context walk passes runs of thousands
        of noise lines (`ok 812 - renders the badge`), so past its first lines it reads windows of lines,
        each twice the one before, each step at C speed: what the noise patterns say of the window's lines
        (`_mark_noise`, kept for the walk back), then where the first line stands that is not noise or is
        noise alone (`_CONTEXT_LINE`). Its first `LINES_ASKED_ALONE` lines are asked one by one, as they
        come: most walks stop there, a kept line is passed without asking, and a line can be half a
        mebibyte of JSON."""
        total = len(self.lines)
        for _ in range(total if not self.whole() else LINES_ASKED_ALONE):
            if not 0 <= index < total or (index not in kept and not self.skippable(index)):
                return index
            index += step
        if self.marks is None:
            self.marks = bytearray((_UNKNOWN,)) * total
        size = 1
        while 0 <= index < total:
            # The window's lines and the line past each of its ends, which tells whether its last is alone.
            low, high = (index, min(total, index + size)) if step > 0 else (max(0, index - size + 1), index + 1)
            outer_low, outer_high = max(0, low - 1), min(total, high + 1)
            self._mark_noise(outer_low, outer_high)
            if step > 0:
                marks, at, line_at = self.marks, index, lambda position: position
                ends = outer_high
            else:
                marks, at = self.marks[outer_low:outer_high][::-1], outer_high - 1 - index
                line_at, ends = (lambda position: outer_high - 1 - position), outer_high - outer_low
            while True:
                found = _CONTEXT_LINE.search(marks, at, ends)
                if found is None or (line_at(found.start()) == (high if step > 0 else low - 1)):
                    break  # every line of the window is skippable or kept
                if line_at(found.start()) not in kept:
                    return line_at(found.start())
                at = found.start() + 1
            index = high if step > 0 else low - 1
            size = min(2 * size, CONTEXT_WINDOW)
        return index

    def _mark_noise(self, low: int, high: int) -> None:
        """Fill `marks` for the lines from `low` up to `high` (exclusive) not marked yet: per line `_NOISE` if
        `is_noise` says so, else `_PLAIN`, each pass over them at C speed: the answers known by line (a note
        is never noise; `is_noise` keeps what it was asked, and is given what this reads), what the noise
        patterns said of each other line's key (`Classifier.noise_key`), then the classed lines unmarked."""
        marks = self.marks
        first = marks.find(_UNKNOWN, low, high)
        if first < 0:
            return
        last = marks.rfind(_UNKNOWN, low, high) + 1
        numbers = range(first, last)
        said = list(map(self.noise.get, numbers))
        if None in said:
            asked = [k for k, known in enumerate(said) if known is None]
            window = self.lines[first:last] if len(asked) == len(said) else [self.lines[first + k] for k in asked]
            sal, noisy = classifier(), self.noisy
            keys = sal.noise_keys(window)
            answers = list(map(noisy.get, keys))
            if None in answers:
                for k, key in enumerate(keys):
                    if answers[k] is None:
                        answers[k] = noisy.get(key)
                        if answers[k] is None:
                            answers[k] = noisy[key] = sal.is_noise(window[k])
            for k, answer in zip(asked, answers):
                said[k] = answer
            self.noise.update(zip([first + k for k in asked], answers))
        marks[first:last] = bytes(said)  # True is `_NOISE`, False `_PLAIN`
        never = self.never_noise
        if never is None:
            never = self.never_noise = sorted(self.classes)
        for number in never[bisect_left(never, first):bisect_left(never, last)]:
            marks[number] = _PLAIN

    def window(self, first: int, size: int, step: int) -> list[bytes]:
        """`size` lines from line `first` in direction `step` (1 or -1), in that order."""
        lines = self.lines
        sparse = isinstance(lines, SparseLines)
        if step > 0:
            return [lines[i] for i in range(first, first + size)] if sparse else lines[first:first + size]
        low = first - size + 1
        window = [lines[i] for i in range(low, first + 1)] if sparse else lines[low:first + 1]
        window.reverse()
        return window

    def first_not_context(self, span: list[bytes], first: int, step: int) -> int | None:
        """Where in `span` (lines `first`, `first + step`, …) the first line sits that a view
        would not take as context: noise in a run of noise, a marker, a line not held; None if none."""
        lines = self.lines
        held = lines.held if isinstance(lines, SparseLines) else None
        if held is None and self._quiet(span, first, step):
            return None
        is_marker = self.markers.is_marker
        for offset, line in enumerate(span):
            index = first + offset * step
            if self.skippable(index) or is_marker(index, line) or (held is not None and index not in held):
                return offset
        return None

    def _quiet(self, span: list[bytes], first: int, step: int) -> bool:
        """Whether no line of `span` can be noise or a marker (the common case), asked of the lines
        joined: one search of them when no noise pattern looks past its line."""
        sal = classifier()
        low, high = (first, first + len(span) - 1) if step > 0 else (first - len(span) + 1, first)
        joined = b"\n" + b"\n".join(span)
        if self.markers.any_in(joined, low, high):
            return False
        if sal.noise_lines_start is not None:
            return not (sal.noise_lines_start.search(joined) or sal.noise_lines_any.search(joined))
        noise_start, noise_any = sal.noise_start.match, sal.noise_any.search
        return not any([noise_start(line) or noise_any(line) for line in span])

    @classmethod
    def from_file(cls, name: str, path: str, sal: Classifier, records=None) -> "Stream":
        """Read a stream file: whole when small, else in chunks holding bounded windows."""
        import os

        size = os.path.getsize(path)
        with open(path, "rb") as handle:
            if size <= DENSE_LIMIT:
                return cls(name, handle.read(), sal, records)
            stream = cls(name, b"", sal, records)
            _SparseReader(sal, stream.markers.is_marker).read(stream, handle, size)
            stream._know_markers(records)
            stream._mark_header()
            return stream

    def line_bytes(self, index: int, limit: int) -> bytes:
        """What the view prints for line `index`, newline and any cut marker included: a line over
        `limit` (a failure line, `FAILURE_LINE_TIMES` that) shows its head, a note naming the bytes left
        out, and its tail on a line of its own."""
        line = _displayable(self.lines[index])
        last = index == len(self.lines) - 1 and not self.final_newline
        if len(line) > limit and self.classes.get(index) in FAILURE_CLASSES:
            limit *= FAILURE_LINE_TIMES  # what went wrong is what a view exists to show
        if len(line) > limit:
            head = utf8_floor(line, limit * 3 // 5)
            tail = len(line) - (limit - head)
            while tail < len(line) and (line[tail] & 0xC0) == 0x80:
                tail += 1
            self.cut = True
            return (line[:head] + b"\n" + cut_note(index + 1, head, tail, len(line)) + b"\n" + line[tail:]
                    + (b"" if last else b"\n"))
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


def _is_diff(body: bytes, held: set[tuple[bytes, ...]], sal: Classifier) -> bool:
    """Whether a line of `body` starts with `diff --git `. Such a line holds every scanned trigger inside
    those words, so where the scan looks for one, the sets of triggers its kinds of line hold (`held`: a
    kind's lines hold its first line's) answer no for most outputs; a search of the whole body (0.3 ms a
    MiB) is left to those that may be diffs."""
    inside = _triggers_inside(sal.triggers, _DIFF_START)
    if inside and not any(trigger in triggers for triggers in held for trigger in inside):
        return False
    return body.startswith(_DIFF_START) or b"\n" + _DIFF_START in body


@lru_cache(maxsize=4)
def _triggers_inside(triggers: tuple[bytes, ...], text: bytes) -> tuple[bytes, ...]:
    """The scanned `triggers` that `text` holds, worked out once per set of triggers."""
    return tuple(trigger for trigger in triggers if trigger in text)


class _SparseReader:
    """Fills a `Stream` from a big file in bounded memory: the lines of its first and
    last `EDGE_BYTES`, and for the first and the last `MAX_WINDOWS` salient lines
    their lead and continuation windows; every other salient line is only counted."""

    def __init__(self, sal: Classifier, is_marker) -> None:
        self.sal = sal
        self.is_marker = is_marker
        self.held: dict[int, bytes] = {}
        #: The windows kept, as (salient line, its class, [(line, bytes), ...]).
        self.first: list[tuple[int, str, list[tuple[int, bytes]]]] = []
        self.last: deque = deque(maxlen=MAX_WINDOWS)
        #: Salient lines whose windows were dropped, by class.
        self.extra: dict[str, int] = {}
        #: Windows still owed lines by the next chunk, as (lines still wanted, window).
        self.open_windows: list[tuple[int, list[tuple[int, bytes]]]] = []
        #: The last lines of the previous chunk: the lead of a salient line that opens the next.
        self.before: deque = deque(maxlen=sal.max_lead)
        #: Lines read so far: the index of the current chunk's first line.
        self.number = 0

    def read(self, stream: Stream, handle, size: int) -> None:
        """Read the `size` bytes of `handle` into `stream`: its lines held, their classes, the counts."""
        for body in _line_chunks(handle, size):
            lines = split_lines(body)
            if self.number == 0:
                self._hold_head(lines)
            self._fill_open_windows(lines)
            self._open_windows(body, lines)
            tail_lines = lines[-self.sal.max_lead:]
            first_tail = self.number + len(lines) - len(tail_lines)
            self.before.extend((first_tail + i, line) for i, line in enumerate(tail_lines))
            self.number += len(lines)
        total = self.number
        for index, cls, window in list(self.first) + list(self.last):
            stream.classes[index] = cls
            self.held.update(window)
        stream.final_newline = self._hold_tail(handle, size, total)
        stream.lines = SparseLines(total, {i: line for i, line in self.held.items() if 0 <= i < total})
        stream.extra_counts = self.extra

    def _hold_head(self, lines: list[bytes]) -> None:
        used = 0
        for index, line in enumerate(lines):
            used += len(line) + 1
            if used > EDGE_BYTES:
                break
            self.held[index] = line

    def _fill_open_windows(self, lines: list[bytes]) -> None:
        """Give the windows opened near the end of the previous chunk the lines they are still owed."""
        still = []
        for wanted, window in self.open_windows:
            take = lines[:wanted]
            window.extend((self.number + i, line) for i, line in enumerate(take))
            if wanted > len(take):
                still.append((wanted - len(take), window))
        self.open_windows = still

    def _open_windows(self, body: bytes, lines: list[bytes]) -> None:
        """A window around each salient line of the chunk that can be kept; the others are counted."""
        sal, number, is_marker = self.sal, self.number, self.is_marker
        # Past the first chunk, only failure, exit and traceback lines are looked for: the
        # tail is held whole anyway, and a few triggers keep the scan near memory speed.
        numbers, holding = sal.salient_line_numbers(body, None if number == 0 else sal.failure_triggers)
        # Each kind of line classed once (`classed_alike`): 8 MiB of diagnostics are 80,000 salient lines.
        classes, _ = classed_alike(lines, numbers, holding, sal.blind, sal.digit_blind, sal.entry_classes,
                                   kinds=False)
        salient = [(local, cls) for local, cls in by_number(numbers, classes, _NOT_SALIENT).items()
                   if not is_marker(number + local, lines[local])]
        # The first go to `first` while it has room; of the rest, only the chunk's last `MAX_WINDOWS` can
        # still be among the last at the end: the others, and every window they push out, are counted.
        room = max(0, MAX_WINDOWS - len(self.first))
        rest = salient[room:]
        if len(rest) > MAX_WINDOWS:
            counted = [cls for _, cls, _ in self.last] + [cls for _, cls in rest[:-MAX_WINDOWS]]
            tally(self.extra, counted)
            self.last.clear()
            salient = salient[:room] + rest[-MAX_WINDOWS:]
        for local, cls in salient:
            self._keep(number + local, cls, self._window(lines, local))

    def _window(self, lines: list[bytes], local: int) -> list[tuple[int, bytes]]:
        """Line `local` of the chunk with its lead lines (from the previous chunk too) and the
        lines after it; those past the chunk's end are owed by the next one."""
        sal = self.sal
        index = self.number + local
        lead = [(index - k, lines[local - k]) for k in range(min(sal.max_lead, local), 0, -1)]
        if local < sal.max_lead:
            lead = [item for item in self.before if item[0] >= index - sal.max_lead] + lead
        window = lead + [(index, lines[local])]
        span = max(sal.max_lines, sal.header_max_lines) + 1
        after = lines[local + 1: local + 1 + span]
        window.extend((index + 1 + i, line) for i, line in enumerate(after))
        if len(after) < span:
            self.open_windows.append((span - len(after), window))
        return window

    def _keep(self, index: int, cls: str, window: list[tuple[int, bytes]]) -> None:
        """Keep the window among the first `MAX_WINDOWS` or the last; a window dropped is counted."""
        entry = (index, cls, window)
        if len(self.first) < MAX_WINDOWS:
            self.first.append(entry)
            return
        last = self.last
        if len(last) == last.maxlen:
            dropped = last[0][1]
            self.extra[dropped] = self.extra.get(dropped, 0) + 1
        last.append(entry)

    def _hold_tail(self, handle, size: int, total: int) -> bool:
        """Hold the lines of the file's last `EDGE_BYTES`; return whether it ends with a newline."""
        tail_start = max(0, size - EDGE_BYTES)
        handle.seek(tail_start)
        tail = handle.read()
        final_newline = tail.endswith(b"\n")
        tail_lines = (tail[:-1] if final_newline else tail).split(b"\n")
        if tail_start > 0:
            tail_lines = tail_lines[1:]  # the first may be a partial line
        start = total - len(tail_lines)
        for offset, line in enumerate(tail_lines):
            self.held.setdefault(start + offset, line)
        return final_newline


def _line_chunks(handle, size: int):
    """The file's `size` bytes as chunks of whole lines (without the last newline), about
    `CHUNK_BYTES` each; of a line longer than a chunk only its last `EDGE_BYTES` are read."""
    carry = b""
    read = 0
    while read < size:
        data = handle.read(min(CHUNK_BYTES, size - read))
        if not data:
            break
        read += len(data)
        buf = carry + data
        if read < size:
            cut = buf.rfind(b"\n") + 1
            if cut == 0:
                carry = buf[-EDGE_BYTES:] if len(buf) > EDGE_BYTES else buf  # an endless line: keep its end
                continue
            buf, carry = buf[:cut], buf[cut:]
        else:
            carry = b""
        yield buf[:-1] if buf.endswith(b"\n") else buf
