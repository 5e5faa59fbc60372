"""Streaming reducers: prune one spooled stream file into a bounded summary file.

A reducer reads the exact stream bytes in large chunks, keeps the lines a model
needs (the first and last lines, lines that match the family's evidence
pattern with a little context after them, and the rule's own `keep` lines),
and writes them in their original order with the contract's markers:

    [yarp summary: <family>; source_lines=N; shown_lines=K; ...]
    ...kept lines...
    [yarp: omitted N line(s)[, truncated M line(s)]; ref=yr_…; stdout complete]
    Search omitted output: yarp search yr_… 'term|alternate'

Memory is bounded by the chunk size plus the rule's limits, whatever the input
size. Lines are bytes and are never decoded for output. A stream that is not
valid UTF-8 or contains a NUL byte is copied unchanged, and so is any stream
whose reduction would not save the rule's `min_savings_bytes`.

This module never decides whether to reduce (that is `rules.select_rule`) and
never touches the archive; the caller archives the exact stream first.
"""

from __future__ import annotations

import codecs
import os
from collections import deque

from yarp._record import Record
from yarp.limits import DEFAULT_CAP_BYTES, MARKER_COST, MAX_CARRY_BYTES
from yarp.limits import REDUCER_CHUNK_BYTES as CHUNK_BYTES
from yarp.view.rules import Limits, Rule
from yarp.view.streams import utf8_floor


class Family(Record):
    """What one reducer kind treats as evidence, and how it summarises a stream.

    Evidence is a tuple of byte literals, searched with `bytes.find` (C speed,
    whatever the input): a literal starting with a newline matches lines that
    start with the rest of it, any other literal matches anywhere in a line.
    Regular-expression alternations were measured at 3-26 MB/s on streams with
    no evidence at all; literals keep the worst case above 100 MB/s.
    """

    __slots__ = ("name", "evidence", "search_hint", "counters", "count_lines_as", "secondary", "primary",
                 "secondary_share", "noise", "min_context", "section", "evidence_share", "locations", "file_starts",
                 "fixable")
    _defaults = {"counters": (), "count_lines_as": None, "secondary": (), "primary": (), "secondary_share": 0,
                 "noise": (), "min_context": 0, "section": None, "evidence_share": 50, "locations": (),
                 "file_starts": False, "fixable": ()}
    name: str
    evidence: tuple[bytes, ...]
    search_hint: str
    #: (summary field, bytes) pairs counted with `bytes.count`, same newline convention.
    counters: tuple[tuple[str, bytes], ...]
    #: Field name under which the summary reports the line count (search results, file lists).
    count_lines_as: str | None
    #: Evidence lines holding one of `secondary` and none of `primary` (warnings
    #: beside errors, hunks beside file headers) may spend only `secondary_share`
    #: percent of the evidence budget, so later failures still fit.
    secondary: tuple[bytes, ...]
    primary: tuple[bytes, ...]
    secondary_share: int
    #: Lines holding one of these (PASSED, ok) are counted, never shown as head or tail context.
    noise: tuple[bytes, ...]
    #: Keep each evidence line's following lines through its subject: the first line
    #: indented four spaces after a blank line, within `min_context` lines (git log).
    min_context: int
    #: A line-start literal opening a section whose line count is shown after it (diff files).
    section: bytes | None
    #: Percent of the output budget evidence may spend; the head and tail share the rest.
    evidence_share: int
    #: Evidence lines starting (after indentation) with one of these are locations:
    #: kept with the line above them (the finding) and a short context.
    locations: tuple[bytes, ...]
    #: Search results: each file's first `path:N:` match is evidence (without context),
    #: so every file that matched is seen before the head and tail are filled.
    file_starts: bool
    #: A finding holding one of these is one its tool repairs itself (ruff's `[*]`): its
    #: location block is secondary, so the findings left for the reader come first.
    fixable: tuple[bytes, ...]


#: Budget charged for a later omitted run's one-line marker (`[yarp: omitted N line(s)]`).
LINE_MARKER_COST = 32

#: Context lines kept after a secondary (warning, hunk) evidence line: its source and caret.
SECONDARY_CONTEXT = 2

#: Lines that only say a test passed.
PASSED_LINES = (b" PASSED", b" ... ok\n", b"\nok ", b"\n--- PASS: ", b"\n=== RUN ", "\u2713".encode(),
                "\u2714".encode())

FAMILIES: dict[str, Family] = {
    "test": Family(
        "test",
        (
            b"FAIL", b"ERROR", b"Error", b"error:", b"error[", b"Traceback", b"panicked", b"assert",
            b"\nE ", b"\n>  ", b"\nnot ok", b" failed", b" passed", b"\nRan ", b"\nOK",
            b"\ntest result:", b"\nTests:", b"\nTest Suites:", "\u2715".encode(), b"\n---- ",
            b"\npanic:", b"Exception", b"\n___", b": in ", b": \n",
        ),
        "FAILED|Error",
        counters=(("passed_lines", b" PASSED"), ("ok_lines", b"\nok ")),
        noise=PASSED_LINES,
    ),
    "build": Family(
        "build",
        (
            b"error", b"Error", b"ERROR", b"ERR!", b"warning", b"Warning", b"WARN", b"note:",
            b"help:", b" --> ", b"undefined reference", b"fatal", b"Failed", b"failed",
            b"Successfully", b"\nFound ", b"problem", b"\nmake", b"\nFinished",
        ),
        "error|warning",
        counters=(("error_mentions", b"error"), ("warning_mentions", b"warning")),
        secondary=(b"warning", b"Warning", b"WARN", b"note:", b"help:"),
        primary=(b"error", b"Error", b"ERROR", b"ERR!", b"fatal", b"failed", b"Failed", b"undefined reference"),
        secondary_share=40,
        locations=(b"--> ",),
        fixable=(b" [*] ",),
        noise=(b"\n   Compiling ", b"\n  Downloaded ", b"\n  Downloading ", b"\nDownloading ",
               b"\nCollecting ", b"\n  Using cached "),
    ),
    "search": Family("search", (), "term|alternate", count_lines_as="matches", file_starts=True),
    "diff": Family(
        "diff",
        (b"\ndiff --git ", b"\n@@ ", b"\n+++ ", b"\nBinary files ", b"\ncommit "),
        "^diff|^@@",
        counters=(("files", b"\ndiff --git "), ("hunks", b"\n@@ ")),
        secondary=(b"@@ ",),
        primary=(b"diff --git ", b"commit "),
        secondary_share=50,
        section=b"diff --git ",
        evidence_share=80,
    ),
    "log": Family(
        "log",
        (b"\ncommit ",),
        "commit|Author",
        counters=(("commits", b"\ncommit "),),
        min_context=6,
        evidence_share=85,
    ),
    "status": Family(
        "status",
        (
            b"\nOn branch", b"\nHEAD detached", b"ahead", b"behind", b"diverged", b"\nChanges",
            b"\nUntracked", b"\nUnmerged", b"conflict", b"modified:", b"deleted:", b"new file:",
            b"renamed:", b"typechange:",
        ),
        "modified|deleted",
    ),
    "list": Family(
        "list",
        (b":\n", b" director", b"Permission denied", b"No such file"),
        "name|path",
        count_lines_as="entries",
    ),
    "filter": Family("filter", (), "term|alternate"),
}


def _match_path(buf: bytes, start: int, end: int) -> bytes | None:
    """The path of a `path:N:` search result line (grep -n, rg -n, git grep -n), else None."""
    colon = buf.find(b":", start, end)
    if colon <= start:
        return None
    digits = colon + 1
    while digits < end and 48 <= buf[digits] <= 57:
        digits += 1
    if digits == colon + 1 or digits >= end or buf[digits] != 58:
        return None
    return buf[start:colon]


def _run_end(buf: bytes, start: int, key: bytes) -> int:
    """The start of the first line after `start`'s that does not begin with `key`, found by
    bisection: a search tool prints one file's matches together, so a file costs a few
    probes whatever its number of matches."""
    lo, hi = start, len(buf)
    while True:
        after = buf.find(b"\n", lo) + 1
        if after >= hi:
            return hi
        probe = buf.rfind(b"\n", after - 1, (after + hi) // 2) + 1
        if buf.startswith(key, probe):
            lo = probe
        else:
            hi = probe


#: Lines in a row without a `path:N:` location after which a search stream is taken to
#: have none (grep -C prints at most 2C+1 such lines between matches).
MAX_PATHLESS_LINES = 64
#: First lines of a search stream looked at for a `path:N:` location.
SNIFF_LINES = 8


class _Evidence:
    """Finds the next evidence line start in a buffer from literals plus an optional regex
    (and, for search results, each file's first match).

    Each source keeps its next hit cached and only searches again once the
    scan has passed it, so one buffer costs one pass per source.
    """

    __slots__ = ("anywhere", "line_start", "regex", "file_starts", "last_path", "misses")

    def __init__(self, literals: tuple[bytes, ...], regex, file_starts: bool = False) -> None:
        self.anywhere = tuple(lit for lit in literals if not lit.startswith(b"\n"))
        self.line_start = tuple(lit for lit in literals if lit.startswith(b"\n"))
        self.regex = regex
        self.file_starts = file_starts
        #: The path of the last search result seen, carried across buffers.
        self.last_path: bytes | None = None
        #: Lines in a row without a `path:N:` location.
        self.misses = 0

    def __bool__(self) -> bool:
        return bool(self.anywhere or self.line_start or self.regex is not None or self.file_starts)

    def _file_start_finder(self, buf: bytes):
        cursor = [0]

        def find_file(p: int) -> int:
            start = max(p, cursor[0])
            size = len(buf)
            while start < size:
                end = buf.find(b"\n", start)
                if end < 0:
                    end = size
                path = _match_path(buf, start, end)
                if path is None:
                    # Output without `path:N:` lines (one file searched, no -n) is left to
                    # the head and tail: a line-by-line scan would cost its throughput.
                    self.misses += 1
                    if self.misses > MAX_PATHLESS_LINES:
                        self.file_starts = False
                        break
                    start = end + 1
                    continue
                self.misses = 0
                if path != self.last_path:
                    self.last_path = path
                    cursor[0] = end + 1
                    return start
                start = _run_end(buf, start, path + b":")
            cursor[0] = size
            return -1

        return find_file

    def scanner(self, buf: bytes):
        """A function next_hit(pos) -> offset of the first evidence byte at or after pos, or -1."""
        sources = []
        for lit in self.anywhere:
            sources.append((lambda p, lit=lit: buf.find(lit, p)))
        for lit in self.line_start:
            def find_line(p, lit=lit, bare=lit[1:]):
                if p == 0 and buf.startswith(bare):
                    return 0
                hit = buf.find(lit, p - 1 if p else 0)
                return hit + 1 if hit >= 0 else -1
            sources.append(find_line)
        if self.regex is not None:
            search = self.regex.search
            sources.append(lambda p: (m.start() if (m := search(buf, p)) else -1))
        if self.file_starts:
            sources.append(self._file_start_finder(buf))
        cache = [None] * len(sources)
        big = len(buf) + 1

        def next_hit(pos: int) -> int:
            best = big
            for number, find in enumerate(sources):
                hit = cache[number]
                if hit is None or (0 <= hit < pos):
                    hit = find(pos)
                    cache[number] = hit
                if 0 <= hit < best:
                    best = hit
            return best if best < big else -1

        return next_hit


class ReduceStats(Record):
    """What a reducer did: bytes in and out, lines in and omitted, and whether it changed anything."""

    __slots__ = ("source_bytes", "shown_bytes", "source_lines", "omitted_lines", "reduced")
    source_bytes: int
    shown_bytes: int
    source_lines: int
    omitted_lines: int
    reduced: bool


def copy_stream(src_path: str, dst_path: str) -> int:
    """Copy a stream file unchanged in kernel space when possible; return its size."""
    with open(src_path, "rb") as src, open(dst_path, "wb") as dst:
        return copy_fd(src.fileno(), dst.fileno())


def copy_fd(src_fd: int, dst_fd: int) -> int:
    """Copy everything from `src_fd` to `dst_fd` (copy_file_range, then sendfile, then read/write)."""
    total = 0
    step = 8 << 20
    try:
        while True:
            moved = os.copy_file_range(src_fd, dst_fd, step)
            if moved == 0:
                return total
            total += moved
    except (AttributeError, OSError):
        pass
    try:
        while True:
            moved = os.sendfile(dst_fd, src_fd, None, step)
            if moved == 0:
                return total
            total += moved
    except (AttributeError, OSError):
        pass
    while True:
        data = os.read(src_fd, CHUNK_BYTES)
        if not data:
            return total
        view = memoryview(data)
        while view:
            written = os.write(dst_fd, view)
            view = view[written:]
        total += len(data)


class _Selector:
    """Chooses which lines of one stream to show, chunk by chunk, in bounded memory."""

    def __init__(self, family: Family, rule: Rule, limits: Limits) -> None:
        self.family = family
        self.limits = limits
        self.evidence = _Evidence(family.evidence, rule.keep, family.file_starts)
        self.drop = rule.drop
        self._share_budget()
        self.line_cap = limits.max_line_bytes
        self.lines = 0  # complete lines consumed so far
        self.head: list[tuple[int, bytes]] = []
        self.head_bytes = 0
        self.head_open = limits.head_lines > 0
        self.kept: dict[int, bytes] = {}
        self.kept_bytes = 0
        self.last_kept = -2
        self.important_open = bool(self.evidence) and limits.max_important_lines > 0
        self.pending_context = 0
        self.tail: deque[tuple[int, bytes]] = deque(maxlen=limits.tail_lines or 1)
        self.counters = {name: 0 for name, _ in family.counters}
        self.truncated_long: set[int] = set()
        self.secondary_budget = self.important_budget * family.secondary_share // 100
        self.secondary_bytes = 0
        # The share holds for lines too: the line bound must leave room for later errors.
        self.secondary_line_budget = limits.max_important_lines * family.secondary_share // 100
        self.secondary_lines = 0
        self.context = limits.context_lines
        #: Kept section-opening line index -> lines in its section (diff files).
        self.sections: dict[int, int] = {}
        self.open_section: int | None = None
        #: Log family: the commits shown as records (`commit` line and subject) so far,
        #: record ordinal -> its `commit` line index, and kept line index -> ordinal. The lines between a record's kept lines
        #: (Author, Date, message, files) are omitted without a marker of their own.
        self.commits = 0
        self.record_starts: dict[int, int] = {}
        self.records: dict[int, int] = {}
        #: Record `commit` lines shown with an abbreviated id (unless the head or tail holds them).
        self.abbreviated: dict[int, bytes] = {}

    def _share_budget(self) -> None:
        """Evidence gets the family's share of the output budget (half by default);
        the first and last lines share the rest (or all of it without evidence)."""
        limits = self.limits
        budget = limits.max_output_bytes
        has_evidence = bool(self.evidence) and limits.max_important_lines > 0
        parts = (limits.head_lines > 0) + (limits.tail_lines > 0)
        edge = budget * (100 - self.family.evidence_share) // 100 if has_evidence else budget
        self.head_budget = edge // parts if limits.head_lines and parts else 0
        self.tail_budget = edge // parts if limits.tail_lines and parts else 0
        self.important_budget = budget - self.head_budget - self.tail_budget if has_evidence else 0

    def _sniff_locations(self, buf: bytes) -> None:
        """Search output whose first lines hold no `path:N:` location (one file searched,
        no -n) has no file starts: the head and tail get the whole budget, as before."""
        pos = 0
        for _ in range(SNIFF_LINES):
            end = buf.find(b"\n", pos)
            if end < 0:
                break
            if _match_path(buf, pos, end) is not None:
                return
            pos = end + 1
        self.evidence.file_starts = False
        self._share_budget()
        self.important_open = bool(self.evidence) and self.limits.max_important_lines > 0

    def _cost(self, line: bytes) -> int:
        return min(len(line), self.line_cap + 1)

    def _is_noise(self, line: bytes) -> bool:
        """`line` (with its newline) holds a noise literal, by the evidence newline convention."""
        for lit in self.family.noise:
            if lit.startswith(b"\n"):
                if line.startswith(lit[1:]):
                    return True
            elif lit.endswith(b"\n"):
                if line.endswith(lit):
                    return True
            elif lit in line:
                return True
        return False

    def _sections(self, buf: bytes, base: int) -> None:
        """Count the lines of each section (a diff's files) opened in `buf`."""
        section = self.family.section
        starts = [0] if buf.startswith(section) else []
        hit = buf.find(b"\n" + section)
        while hit >= 0:
            if hit + 1 < len(buf):
                starts.append(hit + 1)
            hit = buf.find(b"\n" + section, hit + 1)
        previous, index = 0, base
        for start in starts:
            index += buf.count(b"\n", previous, start)
            previous = start
            if self.open_section is not None:
                self.sections[self.open_section] = index - self.open_section
            if len(self.sections) < self.limits.max_important_lines:
                self.open_section = index
            else:
                self.open_section = None

    def _secondary(self, line: bytes) -> bool:
        family = self.family
        return (bool(family.secondary) and any(lit in line for lit in family.secondary)
                and not any(lit in line for lit in family.primary))

    def _gap_cost(self, index: int) -> int:
        """What keeping line `index` next costs in markers: none when it follows the last kept line."""
        if index == self.last_kept + 1:
            return 0
        return MARKER_COST if self.last_kept < 0 else LINE_MARKER_COST

    def _keep_important(self, index: int, line: bytes) -> bool:
        if self.drop is not None and self.drop.search(line):
            return True
        cost = self._cost(line) + self._gap_cost(index)
        if len(self.kept) >= self.limits.max_important_lines or self.kept_bytes + cost > self.important_budget:
            self.important_open = False
            self.pending_context = 0
            return False
        self.kept[index] = line
        self.kept_bytes += cost
        self.last_kept = index
        return True

    def feed(self, buf: bytes) -> None:
        """Consume complete lines; `buf` ends with a newline."""
        base = self.lines
        count = buf.count(b"\n")
        if base == 0 and self.evidence.file_starts:
            self._sniff_locations(buf)
        if self.family.section is not None:
            self._sections(buf, base)
        for name, prefix in self.family.counters:
            if prefix.startswith(b"\n"):  # lines that start with the rest of the prefix
                self.counters[name] += buf.count(prefix) + buf.startswith(prefix[1:])
            else:
                self.counters[name] += buf.count(prefix)

        if self.head_open:
            pos = 0
            index = base
            while pos < len(buf) and self.head_open:
                end = buf.index(b"\n", pos) + 1
                line = buf[pos:end]
                if self.family.noise and self._is_noise(line):
                    pos = end
                    index += 1
                    continue
                cost = self._cost(line)
                if len(self.head) >= self.limits.head_lines or self.head_bytes + cost > self.head_budget:
                    self.head_open = False
                    break
                self.head.append((index, line))
                self.head_bytes += cost
                pos = end
                index += 1

        pos = 0
        index = base
        if self.pending_context and self.important_open:
            while self.pending_context and pos < len(buf):
                end = buf.index(b"\n", pos) + 1
                if not self._keep_important(index, buf[pos:end]):
                    break
                self.pending_context -= 1
                pos = end
                index += 1

        if self.important_open:
            context = self.context
            count_pos, count_index = pos, index
            next_hit = self.evidence.scanner(buf)
            while self.important_open:
                hit = next_hit(pos)
                if hit < 0:
                    break
                start = buf.rfind(b"\n", 0, hit) + 1
                if start < pos:
                    start = pos
                end = buf.index(b"\n", hit) + 1
                index = count_index + buf.count(b"\n", count_pos, start)
                count_pos, count_index = start, index
                line = buf[start:end]
                located = bool(self.family.locations) and line.lstrip().startswith(self.family.locations)
                finding = None  # the line above a location: the finding it belongs to
                if located and index - 1 > self.last_kept and start > 0:
                    above = buf.rfind(b"\n", 0, start - 1) + 1
                    if above >= pos:
                        finding = buf[above:start]
                secondary = bool(self.family.secondary_share) and (self._secondary(line) or (
                    finding is not None and any(lit in finding for lit in self.family.fixable)))
                if secondary:
                    # Warnings (or hunks, or fixable findings) and their context have their
                    # own share of bytes and lines, their markers included: past it they are
                    # skipped, and the scan goes on for the errors (or file headers) after them.
                    cost = self._cost(line) + self._gap_cost(index - (finding is not None))
                    lines = 1
                    if finding is not None:
                        cost += self._cost(finding)
                        lines += 1
                    if (self.secondary_bytes + cost > self.secondary_budget
                            or self.secondary_lines + lines > self.secondary_line_budget):
                        pos = end
                        count_pos, count_index = pos, index + 1
                        continue
                    self.secondary_bytes += cost
                    self.secondary_lines += lines
                subject = _subject_distance(buf, end, self.family.min_context) if self.family.min_context else 0
                if subject:
                    # A commit is shown as its record, its `commit` line and subject, kept
                    # together or not at all; the lines between records are counted, not marked.
                    self.commits += 1
                    subject_start = end
                    for _ in range(subject - 1):
                        subject_start = buf.index(b"\n", subject_start) + 1
                    subject_end = buf.index(b"\n", subject_start) + 1
                    subject_line = buf[subject_start:subject_end]
                    previous = self.record_starts.get(self.commits - 1)
                    marked = index != self.last_kept + 1 and (previous is None or self.last_kept < previous)
                    short = _abbreviated(line)
                    need = (self._cost(short or line) + self._cost(subject_line)
                            + (self._gap_cost(index) if marked else 0))
                    if (self.kept_bytes + need > self.important_budget
                            or len(self.kept) + 2 > self.limits.max_important_lines):
                        self.important_open = False
                        self.pending_context = 0
                        break
                    self.kept[index] = line
                    if short is not None:
                        self.abbreviated[index] = short
                    self.kept[index + subject] = subject_line
                    self.kept_bytes += need
                    self.last_kept = index + subject
                    self.record_starts[self.commits] = index
                    self.records[index] = self.records[index + subject] = self.commits
                    pos = subject_end
                    count_pos, count_index = pos, index + subject + 1
                    if pos >= len(buf):
                        break
                    continue
                if finding is not None and not self._keep_important(index - 1, finding):
                    break  # a linter's ` --> file:line` belongs to the finding on the line above it
                if not self._keep_important(index, line):
                    break
                pos = end
                index += 1
                # A warning's block (and a location's) is its source and caret lines;
                # errors keep the full context.
                if self.family.file_starts:
                    left = 0  # a file's later matches are the head's and tail's to show
                elif located and (2 * len(self.kept) > self.limits.max_important_lines
                                  or 2 * self.kept_bytes > self.important_budget):
                    left = 0  # past half the evidence budget, a finding keeps its core: finding and location
                else:
                    left = min(context, SECONDARY_CONTEXT + located) if secondary or located else context
                while left and pos < len(buf):
                    nxt = buf.index(b"\n", pos) + 1
                    if secondary:
                        cost = self._cost(buf[pos:nxt])
                        if (self.secondary_bytes + cost > self.secondary_budget
                                or self.secondary_lines >= self.secondary_line_budget):
                            left = 0
                            break
                    if not self._keep_important(index, buf[pos:nxt]):
                        break
                    if secondary:
                        self.secondary_bytes += cost
                        self.secondary_lines += 1
                    pos = nxt
                    index += 1
                    left -= 1
                count_pos, count_index = pos, index
                if pos >= len(buf):
                    self.pending_context = left
                    break

        want = self.limits.tail_lines
        if want:
            ends = []
            pos = len(buf) - 1
            number = base + count - 1
            noise = self.family.noise
            while len(ends) < want and pos >= 0:
                start = buf.rfind(b"\n", 0, pos) + 1
                if not (noise and self._is_noise(buf[start:pos + 1])):
                    ends.append((number, start, pos + 1))
                pos = start - 1
                number -= 1
            for number, start, end in reversed(ends):
                self.tail.append((number, buf[start:end]))
        self.lines = base + count

    def render(self, *, total_lines: int, final_newline: bool, ref: str, stream: str, hint: str,
               exit_code: int | None = None) -> tuple[bytes, int]:
        shown: dict[int, bytes] = {}
        for index, line in self.head:
            shown[index] = line
        shown.update(self.kept)
        whole = {index for index, _ in self.head}  # head and tail lines are shown as they are
        if self.limits.tail_lines:
            tail = list(self.tail)
            used = 0
            keep_from = len(tail)
            for position in range(len(tail) - 1, -1, -1):
                used += self._cost(tail[position][1])
                if used > self.tail_budget:
                    break
                keep_from = position
            for index, line in tail[keep_from:]:
                shown[index] = line
                whole.add(index)
        drop = self.drop
        if drop is not None:
            shown = {i: line for i, line in shown.items() if not drop.search(line)}
        order = sorted(shown)
        omitted_total = total_lines - len(order)
        fields = [f"source_lines={total_lines}", f"shown_lines={len(order)}"]
        if self.family.count_lines_as:
            fields.append(f"{self.family.count_lines_as}={total_lines}")
        fields.extend(f"{name}={value}" for name, value in self.counters.items())
        if exit_code is not None:
            fields.append(f"exit_status={exit_code}")
        if self.open_section is not None:
            self.sections[self.open_section] = total_lines - self.open_section
        summary = f"[yarp summary: {self.family.name}; {'; '.join(fields)}]\n".encode()
        silent = self._silent_gaps(order)
        out = [summary]
        named = False  # the first marker is the full pair naming the reference and the search
        # Records show ids cut to ABBREV_HEX digits; the pair naming the records counts them.
        short = {i for i in self.abbreviated if i in shown and i not in whole}
        if silent:
            out.append(_marker(sum(silent.values()), len(short), ref, stream, hint, within="the commits shown"))
            named = True
        previous = -1
        truncated = 0
        for index in order:
            gap = index - previous - 1
            if gap and index not in silent:
                out.append(_marker(gap, truncated, ref, stream, hint) if not named else _line_marker(gap, truncated))
                named = True
                truncated = 0
            line = shown[index]
            body_end = len(line) - 1 if line.endswith(b"\n") else len(line)
            if index in self.truncated_long or body_end > self.line_cap:
                cut = utf8_floor(line, min(body_end, self.line_cap))
                line = line[:cut] + line[body_end:]
                truncated += 1
            elif index in short:
                line = self.abbreviated[index]
                truncated += not silent
            if index == total_lines - 1 and not final_newline and line.endswith(b"\n"):
                line = line[:-1]
            out.append(line)
            if index in self.sections and line.endswith(b"\n"):
                out.append(f"[yarp: {self.sections[index]} line(s) in this file's diff]\n".encode())
            previous = index
        gap = total_lines - previous - 1
        if gap or truncated:
            if out[-1] and not out[-1].endswith(b"\n"):
                out.append(b"\n")
            out.append(_marker(gap, truncated, ref, stream, hint) if not named else _line_marker(gap, truncated))
        return b"".join(out), omitted_total

    def _silent_gaps(self, order: list[int]) -> dict[int, int]:
        """Omitted runs inside one commit's record (between its `commit` line, its subject and
        the next record): shown line index after the run -> the run's length."""
        silent: dict[int, int] = {}
        if not self.records:
            return silent
        starts, records = self.record_starts, self.records
        previous = -1
        for index in order:
            gap = index - previous - 1
            ordinal = records.get(index)
            if gap and ordinal is not None:
                # A subject follows its own commit line; a commit line follows the previous record.
                owner = ordinal if starts[ordinal] != index else ordinal - 1
                if owner in starts and previous >= starts[owner]:
                    silent[index] = gap
            previous = index
        return silent


#: Hex digits a commit record keeps of its id: what `git log --oneline` and kernel-size
#: repositories use to name a commit unambiguously.
ABBREV_HEX = 12


def _abbreviated(line: bytes) -> bytes | None:
    """A plain `commit <full id>` line cut to `commit <12 hex digits>`, else None
    (decorated lines keep their branch and tag names whole)."""
    body = line[:-1] if line.endswith(b"\n") else line
    digits = body[7:]
    if body.startswith(b"commit ") and len(digits) in (40, 64) and not digits.strip(b"0123456789abcdef"):
        return body[:7 + ABBREV_HEX] + line[len(body):]
    return None


def _subject_distance(buf: bytes, pos: int, within: int) -> int:
    """How many lines from `pos` reach a subject line (four-space indent after a blank line), or 0."""
    previous_blank = False
    for distance in range(1, within + 1):
        end = buf.find(b"\n", pos)
        if end < 0:
            return 0
        line = buf[pos:end]
        if previous_blank and line.startswith(b"    "):
            return distance
        previous_blank = not line.strip()
        pos = end + 1
    return 0


def _marker(omitted: int, truncated: int, ref: str, stream: str, hint: str, within: str = "") -> bytes:
    """The contract's marker pair: the run's size, the archive reference and a search for it."""
    extra = f", truncated {truncated} line(s)" if truncated else ""
    where = f" within {within}" if within else ""
    return (
        f"[yarp: omitted {omitted} line(s){extra}{where}; ref={ref}; {stream} complete]\n"
        f"Search omitted output: yarp search {ref} '{hint}'\n"
    ).encode()


def _line_marker(omitted: int, truncated: int) -> bytes:
    """A later omitted run: one line, since the stream's first marker already names the
    reference and the search, and repeating them would cost ~170 bytes a run."""
    extra = f", truncated {truncated} line(s)" if truncated else ""
    return f"[yarp: omitted {omitted} line(s){extra}]\n".encode()


def reduce_stream(
    rule: Rule | None,
    exit_code: int,
    src_path: str,
    dst_path: str,
    *,
    ref: str,
    stream_name: str,
) -> ReduceStats:
    """Write the pruned form of `src_path` to `dst_path` (or an exact copy), in bounded memory.

    `rule` is the selected reduce rule (None copies unchanged); `exit_code` picks
    the success or failure limits; `ref` is the call's archive reference and
    `stream_name` (`stdout` / `stderr`) names the recovery source in markers.
    """
    if rule is None or rule.action != "reduce" or rule.reducer not in FAMILIES:
        return _copy(src_path, dst_path)
    family = FAMILIES[rule.reducer]
    limits = rule.limits_for(exit_code)
    if family.min_context and os.path.getsize(src_path) <= min(DEFAULT_CAP_BYTES, limits.max_output_bytes):
        # A log the default view shows whole keeps every full id, author and date.
        return _copy(src_path, dst_path)
    selector = _Selector(family, rule, limits)
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    source_bytes = 0
    carry = b""
    long_prefix: bytes | None = None  # prefix of a line longer than MAX_CARRY_BYTES
    with open(src_path, "rb") as src:
        while True:
            data = src.read(CHUNK_BYTES)
            if not data:
                break
            source_bytes += len(data)
            if b"\x00" in data:
                return _copy(src_path, dst_path)
            try:
                decoder.decode(data)
            except UnicodeDecodeError:
                return _copy(src_path, dst_path)
            if long_prefix is not None:
                newline = data.find(b"\n")
                if newline < 0:
                    continue
                selector.truncated_long.add(selector.lines)
                selector.feed(long_prefix + b"\n")
                long_prefix = None
                data = data[newline + 1 :]
            if carry:
                data = carry + data
                carry = b""
            last = data.rfind(b"\n")
            if last < 0:
                if len(data) > MAX_CARRY_BYTES:
                    long_prefix = data[: utf8_floor(data, selector.line_cap)]
                else:
                    carry = data
                continue
            if last + 1 < len(data):
                carry = data[last + 1 :]
                data = data[: last + 1]
            selector.feed(data)
    try:
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return _copy(src_path, dst_path)
    final_newline = True
    if long_prefix is not None:
        selector.truncated_long.add(selector.lines)
        selector.feed(long_prefix + b"\n")
        final_newline = False
    elif carry:
        selector.feed(carry + b"\n")
        final_newline = False
    total_lines = selector.lines
    hint = rule.search_hint or family.search_hint
    text, omitted = selector.render(
        total_lines=total_lines, final_newline=final_newline, ref=ref, stream=stream_name, hint=hint,
        exit_code=exit_code,
    )
    if source_bytes - len(text) < max(limits.min_savings_bytes, 1):
        return _copy(src_path, dst_path, lines=total_lines)
    with open(dst_path, "wb") as dst:
        dst.write(text)
    return ReduceStats(source_bytes, len(text), total_lines, omitted, True)


def _copy(src_path: str, dst_path: str, lines: int | None = None) -> ReduceStats:
    size = copy_stream(src_path, dst_path)
    return ReduceStats(size, size, -1 if lines is None else lines, 0, False)
