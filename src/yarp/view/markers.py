"""The markers YARP writes into what the agent sees: their text, their size and the records behind them.

A marker is a line, or a pair of lines, standing where a view left something
out. A reducer (`yarp.view.reducers`) writes a view of one stream:

    [yarp summary: test; source_lines=812; ...]                    a `Summary`
    [yarp: omitted 120 line(s); ref=yr_…; stdout complete]          the first `Omission`,
    Search omitted output: yarp search yr_… 'FAILED|Error'          with its search
    [yarp: omitted 7 line(s), truncated 1 line(s)]                  a later `Omission`
    [yarp: 84 line(s) in this file's diff]                          a `SectionLines`

and hands the records to the cap beside the text (`ReduceStats.markers`). The
global cap (`yarp.view.cap`) writes its own: the main marker (`header`) at the
first omitted position, one line naming the reference, what was cut by class
(`omitted_counts`) and how to read the run it stands in for, then a search line
when the cut lines that matter give a hint (`search_pattern`); a `gap_marker`
for every other omitted run; a `cut_note` after a line cut short.

The cap must know which lines of its input are markers: never salient, a pair
kept or cut whole, a reducer's first pair kept like a header. `RecordMarkers`
says so from a reducer's records. `TextMarkers` says so from how the lines
read, and is the only place marker text is parsed: it serves text from outside
this process (a host's tool result, a command's raw output), which may hold a
view some other YARP wrote (a `yarp run` the agent's shell ran, a saved view
printed again) and comes with nothing else to say what it holds.

This module never decides what a view keeps; it only says how the markers read.
"""

from __future__ import annotations

import bisect
from itertools import compress, count, repeat
from operator import is_, methodcaller

from yarp._record import Record
from yarp.view.salience import FAILURE_CLASSES, classifier
from yarp.view.templates import grouped, tally

REDUCER_SUMMARY = b"[yarp summary: "
YARP_MARKER = b"[yarp: "
SEARCH_LINE = b"Search omitted output: "
REDUCER_MARKER = b"[yarp: omitted "
MARKER_LINES = (YARP_MARKER, SEARCH_LINE)
#: How a marker line starts inside lines joined with newlines (each after a newline).
_JOINED_MARKERS = (b"\n" + YARP_MARKER, b"\n" + SEARCH_LINE)
#: The bytes of `gap_marker` other than its numbers and the stream's name.
_RANGE_MARKER_BYTES = len(b"[yarp: omitted  line(s);  :]\n")
_VIEW_MARKER_BYTES = len(b"[yarp: omitted  line(s) of this view]\n")
#: Longest search pattern a main marker builds, and how many words it joins.
MAX_HINT_CHARS = 64
MAX_HINT_WORDS = 4
#: Worded lines a hint reads per class group before it settles for the words it has:
#: a thousand lines that repeat the same few leading words will not name new ones.
MAX_HINT_LINES = 1000
#: The lines a hint reads at first, at once (`search_pattern`); each run after reads twice as many.
HINT_RUN = 8
#: A run of omitted lines of one kind is described by a sample (`repetition`): the fewest lines, the
#: sample's most bytes, and how many runs of a view are described (the cap reserves their bytes).
MIN_LIKE_LINES = 5
LIKE_BYTES = 48
MAX_LIKES = 3
LIKE_RESERVE = LIKE_BYTES + 16
#: Omitted-line counts are reported in these groups, in this order.
COUNT_GROUPS = (("failure", FAILURE_CLASSES), ("summary", frozenset({"summary", "header"})),
                ("warning", frozenset({"warning"})))
#: Each grouped class's place in `COUNT_GROUPS`.
_GROUP_OF = {cls: place for place, (_, classes) in enumerate(COUNT_GROUPS) for cls in classes}
#: What a hint word may hold that lines of one kind hold differently (`search_pattern`).
_DIGITS = "0123456789"
_END = methodcaller("end")
_UNKNOWN = object()  # a line's word not known yet (`_words`)


def likes_for(cap: int) -> int:
    """How many runs a view under `cap` describes: one per 1,700 bytes of cap, at most `MAX_LIKES` (a
    1 KiB view keeps its bytes for lines)."""
    return min(MAX_LIKES, cap // 1700)


# --- what a reducer writes -------------------------------------------------------------------


class Marker(Record):
    """A marker a reducer wrote: `line` is the index, in its view, of the marker's first line.

    Only its kinds are made (`Summary`, `Omission`, `SectionLines`), and each
    gives its line(s) as `text()`, every line ending with a newline.
    """

    __slots__ = ("line",)
    line: int

    @property
    def height(self) -> int:
        """How many lines of the view the marker takes."""
        return 1


class Summary(Marker):
    """A reducer view's first line: its family and what it counted, as (field, number) pairs."""

    __slots__ = ("family", "fields")
    family: str
    fields: tuple[tuple[str, int], ...]

    def text(self) -> bytes:
        """`[yarp summary: FAMILY; FIELD=N; ...]`."""
        fields = "; ".join(f"{name}={value}" for name, value in self.fields)
        return f"[yarp summary: {self.family}; {fields}]\n".encode()


class Omission(Marker):
    """Lines a reducer left out of one stream, and where to find them.

    `omitted` lines of `stream` are missing here: its 1-based lines `first`..`last`
    (both 0 when the marker stands for no single run: the omissions inside the
    commits shown, or none at all), and `truncated` of the lines shown since the
    previous marker were cut short. `ref` and `completeness` name the archived
    stream they can be read from; `search` is the pattern of the search line the
    stream's first marker carries (None: a one-line marker, since the first pair
    already names the reference and the search). `within` names where the lines
    were left out when they are not one run (`the commits shown`).
    """

    __slots__ = ("omitted", "truncated", "first", "last", "stream", "ref", "completeness", "search", "within")
    _defaults = {"within": ""}
    omitted: int
    truncated: int
    first: int
    last: int
    stream: str
    ref: str
    completeness: str
    search: str | None
    within: str

    def text(self) -> bytes:
        """The pair naming the reference and the search, or (without `search`) one line."""
        extra = f", truncated {self.truncated} line(s)" if self.truncated else ""
        if self.search is None:
            # Repeating the reference and the search would cost ~170 bytes a run.
            return f"[yarp: omitted {self.omitted} line(s){extra}]\n".encode()
        where = f" within {self.within}" if self.within else ""
        return (
            f"[yarp: omitted {self.omitted} line(s){extra}{where}; ref={self.ref}; {self.stream} {self.completeness}]\n"
            f"Search omitted output: yarp search {self.ref} '{self.search}'\n"
        ).encode()

    @property
    def height(self) -> int:
        """Two lines with the search line, else one."""
        return 1 if self.search is None else 2


class SectionLines(Marker):
    """How many lines the section a kept line opens holds (a diff's file), shown after that line."""

    __slots__ = ("count",)
    count: int

    def text(self) -> bytes:
        """`[yarp: N line(s) in this file's diff]`."""
        return f"[yarp: {self.count} line(s) in this file's diff]\n".encode()


# --- which lines of the cap's input are markers ----------------------------------------------


class TextMarkers:
    """The markers of a text from outside this process, known by how they read.

    A line starting `[yarp: ` or `Search omitted output: ` is a marker; a
    `[yarp: ` line followed by a search line is a pair. A text whose first line
    starts `[yarp summary: ` is a reducer's view, and its first `[yarp: omitted `
    line (the raw stream's recovery search) is its header.
    """

    __slots__ = ("reduced", "header")

    def __init__(self, lines, indices) -> None:
        """`lines` the text's lines; `indices` those that can be read, in order."""
        #: Whether the text is a reducer's view, whose line numbers are its own.
        self.reduced = len(lines) > 0 and lines[0].startswith(REDUCER_SUMMARY)
        #: The line of the view's first marker pair, kept like a header.
        self.header = next((n for n in indices if lines[n].startswith(REDUCER_MARKER)), None) if self.reduced else None

    @staticmethod
    def is_marker(index: int, line: bytes) -> bool:
        """Whether line `index`, reading `line`, is a marker."""
        return line.startswith(MARKER_LINES)

    @staticmethod
    def unmarked(indices, lines, classes):
        """Those of `indices` that are neither a marker nor in `classes`, lazily."""
        return (i for i in indices if i not in classes and not lines[i].startswith(MARKER_LINES))

    @staticmethod
    def pair(lines, index: int) -> list[int]:
        """The marker at `index` with the other line of its pair, if it has one."""
        if lines[index].startswith(YARP_MARKER) and index + 1 < len(lines) and lines[index + 1].startswith(SEARCH_LINE):
            return [index, index + 1]
        if lines[index].startswith(SEARCH_LINE) and index > 0 and lines[index - 1].startswith(YARP_MARKER):
            return [index - 1, index]
        return [index]

    @staticmethod
    def any_in(joined: bytes, low: int, high: int) -> bool:
        """Whether any of lines `low`..`high` is a marker; `joined` holds them, each after a newline."""
        return _JOINED_MARKERS[0] in joined or _JOINED_MARKERS[1] in joined


class RecordMarkers:
    """The markers of a reducer's view, known from the records the reducer wrote."""

    __slots__ = ("reduced", "header", "_pairs", "_lines")

    def __init__(self, records) -> None:
        pairs: dict[int, tuple[int, ...]] = {}
        header = None
        reduced = False
        for record in records:
            if isinstance(record, Summary):
                reduced = True
                continue
            span = tuple(range(record.line, record.line + record.height))
            for line in span:
                pairs[line] = span
            if header is None and isinstance(record, Omission) and record.search is not None:
                header = record.line  # the pair naming the raw stream's recovery search
        self.reduced, self.header = reduced, header
        self._pairs = pairs
        self._lines = sorted(pairs)

    def is_marker(self, index: int, line: bytes) -> bool:
        """Whether line `index` is a marker."""
        return index in self._pairs

    def unmarked(self, indices, lines, classes):
        """Those of `indices` that are neither a marker nor in `classes`, lazily."""
        pairs = self._pairs
        return (i for i in indices if i not in classes and i not in pairs)

    def pair(self, lines, index: int) -> list[int]:
        """The marker at `index` with the other line of its pair, if it has one."""
        return list(self._pairs[index])

    def any_in(self, joined: bytes, low: int, high: int) -> bool:
        """Whether any of lines `low`..`high` is a marker."""
        at = bisect.bisect_left(self._lines, low)
        return at < len(self._lines) and self._lines[at] <= high


# --- what the cap writes ---------------------------------------------------------------------


def marker(source_bytes: int, cap: int, archive_ref: str, source: str, completeness: str,
           hint: str = "term|alternate") -> str:
    """The reference's marker pair (byte count, reference, search); it starts and ends with a newline.

    The cap writes `header` instead; the runner measures its budget by this form."""
    return (f"\n{_reference_line(source_bytes, cap, archive_ref, source, completeness)}"
            f"Search omitted output: yarp search {archive_ref} '{hint}'\n")


def _reference_line(source_bytes: int, cap: int, archive_ref: str, source: str, completeness: str) -> str:
    """The reference contract's marker line, as `marker` and `header` both begin."""
    return f"[yarp: {source_bytes} byte(s) capped at {cap}; ref={archive_ref}; {source} {completeness}]\n"


def header(source_bytes: int, cap: int, archive_ref: str, source: str, completeness: str, *, counts: str,
           runs: int, exit_code: int | None, hint: str, here: tuple[int, str] | None = None) -> str:
    """The cap's main marker, at the first omitted position.

    Its first line is the reference's marker line, unchanged (bytes, cap,
    reference, source and completeness); the search line follows only when a
    hint names omitted lines that matter; the last line is the marker of the
    run it stands in for: what was omitted by class (`counts`, from
    `omitted_counts`) and in how many runs, `here` (that run's size and how to
    read it: `read_range`) and the exit status. No other marker names that run."""
    status = f"; exit status {exit_code}" if exit_code is not None else ""
    spread = f" in {runs} runs" if runs > 1 else ""
    place = ""
    if here is not None:
        count, where = here
        joiner = " " if where == "of this view" else ": "
        place = f"; here {count}{joiner}{where}" if runs > 1 else f"{joiner}{where}"
    text = _reference_line(source_bytes, cap, archive_ref, source, completeness)
    if hint:
        text += f"Search omitted output: yarp search {archive_ref} '{hint}'\n"
    omitted = f"omitted {counts} line(s){spread}{place}" if counts != "0" else "long line(s) cut, none omitted"
    return text + f"[yarp: {omitted}{status}]\n"


def read_range(stream, start: int, end: int, archive_ref: str) -> tuple[int, str]:
    """The size of omitted run `start`..`end` of `stream` and how to read it: a `yarp read` range, or (in a
    reducer's view, whose own markers name the raw stream) `of this view`."""
    if stream.ranges:
        return end - start + 1, f"yarp read {archive_ref} {stream.name} {start + 1}:{end + 1}"
    return end - start + 1, "of this view"


def gap_marker(stream, start: int, end: int, like: str = "") -> bytes:
    """The marker for omitted lines `start`..`end`: with the raw line range when it has one, else the count
    only; `like` (`repetition`) says what the run's lines look like."""
    count = end - start + 1
    if stream.ranges:
        return f"[yarp: omitted {count} line(s){like}; {stream.name} {start + 1}:{end + 1}]\n".encode()
    return f"[yarp: omitted {count} line(s){like} of this view]\n".encode()


def repetition(stream, start: int, end: int) -> str:
    """` like "…"` when omitted run `start`..`end` of at least `MIN_LIKE_LINES` lines repeats one kind
    of line (its first two and last two lines have the same first and last words, numbers aside): the
    first of them, cut to `LIKE_BYTES`. Else "". Only the run's ends are read, which a big stream read
    in chunks holds as a small one does."""
    samples = (start, start + 1, end - 1, end)
    if end - start + 1 < MIN_LIKE_LINES or not all(stream.held(i) for i in samples):
        return ""
    lines = stream.lines
    kinds = set()
    for index in samples:
        words = lines[index].translate(None, b"0123456789").split()
        kinds.add((words[0], words[-1]) if words else None)
    if len(kinds) != 1 or None in kinds:
        return ""
    sample = lines[start].strip()
    cut = sample[:LIKE_BYTES]
    while cut and len(cut) < len(sample) and (sample[len(cut)] & 0xC0) == 0x80:
        cut = cut[:-1]
    text = cut.decode("utf-8", "replace").replace('"', "'")
    return f' like "{text}{"…" if len(cut) < len(sample) else ""}"'


def gap_marker_fixed_bytes(name: str, ranges: bool) -> int:
    """The bytes of a stream's gap markers other than their numbers (see `gap_marker_bytes`)."""
    return _RANGE_MARKER_BYTES + len(name.encode()) if ranges else _VIEW_MARKER_BYTES


def gap_marker_bytes(stream, start: int, end: int) -> int:
    """`len(gap_marker(stream, start, end))`, counted without building the marker:
    measuring runs is the cap's innermost step."""
    if stream.ranges:
        return stream.marker_bytes + len(str(end - start + 1)) + len(str(start + 1)) + len(str(end + 1))
    return stream.marker_bytes + len(str(end - start + 1))


def cut_note(number: int, head: int, tail: int, size: int) -> bytes:
    """The line between the head and the tail of a line shown cut short: its 1-based number, the
    1-based range of its bytes left out and its size."""
    return f"[yarp: line {number} cut: bytes {head + 1}:{tail} of {size} omitted]".encode()


def search_pattern(streams, kept: list[set[int]]) -> str:
    """A search for what was cut that matters: the leading words of the omitted lines of the highest class
    group (failure, then summary, then warning), or "" when no such line was omitted.

    Every word is taken from an omitted line of that group, so each finds at least one line worth
    reading; plain lines never give a hint (a word like `src` or `.` finds everything and nothing)."""
    sal = classifier()
    word, location = sal.word, sal.location
    # Each group's lines in line order, picked out at C speed (`grouped`): 17,500 warnings were passed over
    # once per group above theirs.
    by_group = [grouped(stream.classes, _GROUP_OF) for stream in streams]
    # The word a line gives, per kind of line (`Stream.firsts`: lines the same but for digits), when the kind's
    # first line asked gives a word without digits: the hint's patterns read every digit alike, so a kind's
    # lines give it at the same place.
    said = [{} for _ in streams]
    for place in range(len(COUNT_GROUPS)):
        words: list[str] = []
        budget = MAX_HINT_LINES
        for number, stream in enumerate(streams):
            shown, group = kept[number], by_group[number].get(place, ())
            # The omitted lines' words, a run of lines at a time, each run twice the one before (most hints
            # are found in the first lines; a loop line by line cost a dense output's thousand failures
            # 8 M instructions), up to as many as can still give a word, taken in order.
            at, size = 0, HINT_RUN
            while at < len(group) and budget and len(words) < MAX_HINT_WORDS:
                numbers = [index for index in group[at:at + min(size, budget)] if index not in shown]
                at += min(size, budget)
                size *= 2
                texts = list(filter(None, _words(stream, numbers, said[number], word, location)))
                budget -= len(texts)
                _take_words(words, texts)
            if len(words) >= MAX_HINT_WORDS or budget == 0:
                break
        if words:
            return "|".join(words)
    return ""


def _words(stream, numbers: list[int], said: dict, word, location) -> list:
    """The word each of lines `numbers` of `stream` gives past its location (`word`, `location`: the
    classifier's), None for a line that gives none or is a marker; a kind's word (`said`, per kind's first
    line) where it was found without digits, each other line's read at C speed."""
    lines, firsts = stream.lines, stream.firsts
    held = [lines[index] for index in numbers]
    if firsts is None:  # no kinds known: every line asked
        texts = _read_words(held, word, location)
    else:
        kinds = list(map(firsts.__getitem__, numbers))
        texts = list(map(said.get, kinds, repeat(_UNKNOWN)))
        asked = list(compress(count(), map(is_, texts, repeat(_UNKNOWN))))
        for k, text in zip(asked, _read_words([held[k] for k in asked], word, location)):
            texts[k] = text
            if kinds[k] is not None and not (text and any(character in _DIGITS for character in text)):
                said[kinds[k]] = text
    if b"\n[yarp" in b"\n" + b"\n".join(held):  # one search, where a line each cost a thousand instructions
        for k in compress(count(), map(bytes.startswith, held, repeat(b"[yarp"))):
            texts[k] = None  # a reducer's marker, kept like a header: no word of the output's
    return texts


def _read_words(lines: list[bytes], word, location) -> list[str | None]:
    """The word each of `lines` gives past its location, or None, read at C speed."""
    found = map(word.search, lines, map(_END, map(location.match, lines)))
    return [None if match is None else match.group().decode() for match in found]


def _take_words(words: list[str], texts: list[str]) -> None:
    """Add to `words` the `texts` (in order, each once) that fit the hint, while it has room for words."""
    for text in dict.fromkeys(texts):
        if len(words) >= MAX_HINT_WORDS:
            return
        if text not in words and len("|".join(words + [text])) <= MAX_HINT_CHARS:
            words.append(text)


def omitted_counts(streams, kept: list[set[int]]) -> str:
    """How many lines were omitted, by `COUNT_GROUPS` and then the others: `3 failure, 410 other`."""
    counts = {name: 0 for name, _ in COUNT_GROUPS}
    omitted = 0
    for number, stream in enumerate(streams):
        omitted += len(stream.lines) - len(kept[number])
        # Every salient line's class counted at once, then the few kept taken back.
        by_class: dict[str, int] = dict(stream.extra_counts)
        tally(by_class, stream.classes.values())
        classes = stream.classes
        for index in kept[number]:
            cls = classes.get(index)
            if cls is not None:
                by_class[cls] -= 1
        for cls, many in by_class.items():
            for name, group in COUNT_GROUPS:
                if cls in group:
                    counts[name] += many
    parts = [f"{value} {name}" for name, value in counts.items() if value]
    other = omitted - sum(counts.values())
    if other:
        parts.append(f"{other} other")
    return ", ".join(parts) or "0"
