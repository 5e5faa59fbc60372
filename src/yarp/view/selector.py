"""The line filter of a reducer: which lines of one stream its view shows, chosen chunk by chunk.

A `Selector` is fed a stream's complete lines in large buffers and keeps, in
bounded memory, what the view will show: the first lines (`head_lines`), the
evidence lines of its family with a little context after each (within the
evidence share of `max_output_bytes` and `max_important_lines`), and the last
lines (`tail_lines`). Within the evidence, secondary lines (warnings, hunks,
fixable findings) have a share of their own so later errors still fit; a
linter's location keeps the finding above it; a `git log` commit is kept as
its record (`commit` line and subject) or not at all; a diff's file headers
have their line counts taken.

It never writes: `yarp.view.reducers` turns what it chose into the view.
"""

from __future__ import annotations

from collections import deque

from yarp.limits import MARKER_COST
from yarp.view.families import SNIFF_LINES, Evidence, Family, match_path
from yarp.view.rules import Limits, Rule

#: Budget charged for a later omitted run's one-line marker (`[yarp: omitted N line(s)]`).
LINE_MARKER_COST = 32

#: Context lines kept after a secondary (warning, hunk) evidence line: its source and caret.
SECONDARY_CONTEXT = 2

#: Hex digits a commit record keeps of its id: what `git log --oneline` and kernel-size
#: repositories use to name a commit unambiguously.
ABBREV_HEX = 12


class Selector:
    """Chooses which lines of one stream to show, chunk by chunk, in bounded memory."""

    def __init__(self, family: Family, rule: Rule, limits: Limits) -> None:
        self.family = family
        self.limits = limits
        self.evidence = Evidence(family.evidence, rule.keep, family.file_starts)
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
        #: Lines longer than a chunk can carry, fed cut at `line_cap` (`feed_cut_line`).
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
            if match_path(buf, pos, end) is not None:
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

    def _close_evidence(self) -> None:
        self.important_open = False
        self.pending_context = 0

    def _keep_important(self, index: int, line: bytes) -> bool:
        if self.drop is not None and self.drop.search(line):
            return True
        cost = self._cost(line) + self._gap_cost(index)
        if len(self.kept) >= self.limits.max_important_lines or self.kept_bytes + cost > self.important_budget:
            self._close_evidence()
            return False
        self.kept[index] = line
        self.kept_bytes += cost
        self.last_kept = index
        return True

    def feed(self, buf: bytes) -> None:
        """Consume complete lines; `buf` ends with a newline."""
        base = self.lines
        self._count(buf, base)
        if self.head_open:
            self._take_head(buf, base)
        pos, index = 0, base
        if self.pending_context and self.important_open:
            pos, index = self._take_pending_context(buf, base)
        if self.important_open:
            self._take_evidence(buf, pos, index)
        count = buf.count(b"\n")
        if self.limits.tail_lines:
            self._take_tail(buf, base + count)
        self.lines = base + count

    def feed_cut_line(self, prefix: bytes) -> None:
        """Consume a line too long to carry whole: `prefix`, its start, cut at `line_cap`."""
        self.truncated_long.add(self.lines)
        self.feed(prefix + b"\n")

    def _count(self, buf: bytes, base: int) -> None:
        """What the summary counts, and the sections' line counts."""
        if base == 0 and self.evidence.file_starts:
            self._sniff_locations(buf)
        if self.family.section is not None:
            self._sections(buf, base)
        for name, prefix in self.family.counters:
            if prefix.startswith(b"\n"):  # lines that start with the rest of the prefix
                self.counters[name] += buf.count(prefix) + buf.startswith(prefix[1:])
            else:
                self.counters[name] += buf.count(prefix)

    def _take_head(self, buf: bytes, index: int) -> None:
        """The first lines that are not noise, while they fit the head's share."""
        pos = 0
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

    def _take_pending_context(self, buf: bytes, index: int) -> tuple[int, int]:
        """The context lines the previous buffer's last evidence line is still owed; returns
        the position after them and its line index."""
        pos = 0
        while self.pending_context and pos < len(buf):
            end = buf.index(b"\n", pos) + 1
            if not self._keep_important(index, buf[pos:end]):
                break
            self.pending_context -= 1
            pos = end
            index += 1
        return pos, index

    def _take_evidence(self, buf: bytes, pos: int, index: int) -> None:
        """From `pos` (the start of line `index`) on, each evidence line with what belongs to
        it, while the evidence budget lasts."""
        family = self.family
        next_hit = self.evidence.scanner(buf)
        while self.important_open:
            hit = next_hit(pos)
            if hit < 0:
                break
            start = buf.rfind(b"\n", 0, hit) + 1
            if start < pos:
                start = pos
            end = buf.index(b"\n", hit) + 1
            index += buf.count(b"\n", pos, start)
            line = buf[start:end]
            located = bool(family.locations) and line.lstrip().startswith(family.locations)
            finding = None  # the line above a location: the finding it belongs to
            if located and index - 1 > self.last_kept and start > 0:
                above = buf.rfind(b"\n", 0, start - 1) + 1
                if above >= pos:
                    finding = buf[above:start]
            secondary = bool(family.secondary_share) and (self._secondary(line) or (
                finding is not None and any(lit in finding for lit in family.fixable)))
            if secondary and not self._secondary_fits(index, line, finding):
                pos, index = end, index + 1  # skipped: the scan goes on for the errors after it
                continue
            subject = _subject_distance(buf, end, family.min_context) if family.min_context else 0
            if subject:
                taken = self._take_record(buf, end, index, line, subject)
                if taken is None:
                    break
                pos, index = taken
                if pos >= len(buf):
                    break
                continue
            taken = self._take_block(buf, end, index, line, finding, secondary, located)
            if taken is None:
                break
            pos, index, left = taken
            if pos >= len(buf):
                self.pending_context = left
                break

    def _secondary_fits(self, index: int, line: bytes, finding: bytes | None) -> bool:
        """Warnings (or hunks, or fixable findings) and their context have their own share of
        bytes and lines, their markers included: charge `line` (and its finding) to it, or
        say it is spent."""
        cost = self._cost(line) + self._gap_cost(index - (finding is not None))
        lines = 1
        if finding is not None:
            cost += self._cost(finding)
            lines += 1
        if (self.secondary_bytes + cost > self.secondary_budget
                or self.secondary_lines + lines > self.secondary_line_budget):
            return False
        self.secondary_bytes += cost
        self.secondary_lines += lines
        return True

    def _take_record(self, buf: bytes, end: int, index: int, line: bytes, subject: int) -> tuple[int, int] | None:
        """A commit shown as its record: its `commit` line (`line`, ending at `end`) and its
        subject `subject` lines below, kept together or not at all; the lines between records
        are counted, not marked. Returns the position after the subject and its line index,
        or None when the evidence budget is spent."""
        self.commits += 1
        subject_start = end
        for _ in range(subject - 1):
            subject_start = buf.index(b"\n", subject_start) + 1
        subject_end = buf.index(b"\n", subject_start) + 1
        subject_line = buf[subject_start:subject_end]
        previous = self.record_starts.get(self.commits - 1)
        marked = index != self.last_kept + 1 and (previous is None or self.last_kept < previous)
        short = _abbreviated(line)
        need = self._cost(short or line) + self._cost(subject_line) + (self._gap_cost(index) if marked else 0)
        if self.kept_bytes + need > self.important_budget or len(self.kept) + 2 > self.limits.max_important_lines:
            self._close_evidence()
            return None
        self.kept[index] = line
        if short is not None:
            self.abbreviated[index] = short
        self.kept[index + subject] = subject_line
        self.kept_bytes += need
        self.last_kept = index + subject
        self.record_starts[self.commits] = index
        self.records[index] = self.records[index + subject] = self.commits
        return subject_end, index + subject + 1

    def _take_block(self, buf: bytes, end: int, index: int, line: bytes, finding: bytes | None, secondary: bool,
                    located: bool) -> tuple[int, int, int] | None:
        """An evidence line (`line`, line `index`, ending at `end`) with its finding above it
        (a linter's ` --> file:line` belongs to it) and its context below. Returns the position
        after what was kept, its line index and the context lines still owed; None when the
        evidence budget is spent."""
        if finding is not None and not self._keep_important(index - 1, finding):
            return None
        if not self._keep_important(index, line):
            return None
        pos = end
        index += 1
        left = self._context_after(secondary, located)
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
        return pos, index, left

    def _context_after(self, secondary: bool, located: bool) -> int:
        """How many lines after an evidence line belong to it: a warning's block (and a
        location's) is its source and caret lines; errors keep the full context."""
        if self.family.file_starts:
            return 0  # a file's later matches are the head's and tail's to show
        if located and (2 * len(self.kept) > self.limits.max_important_lines
                        or 2 * self.kept_bytes > self.important_budget):
            return 0  # past half the evidence budget, a finding keeps its core: finding and location
        if secondary or located:
            return min(self.context, SECONDARY_CONTEXT + located)
        return self.context

    def _take_tail(self, buf: bytes, end_index: int) -> None:
        """The buffer's last lines that are not noise, into the tail (`end_index`: the line after `buf`)."""
        want = self.limits.tail_lines
        ends = []
        pos = len(buf) - 1
        number = end_index - 1
        noise = self.family.noise
        while len(ends) < want and pos >= 0:
            start = buf.rfind(b"\n", 0, pos) + 1
            if not (noise and self._is_noise(buf[start:pos + 1])):
                ends.append((number, start, pos + 1))
            pos = start - 1
            number -= 1
        for number, start, end in reversed(ends):
            self.tail.append((number, buf[start:end]))

    def chosen(self, total_lines: int) -> tuple[dict[int, bytes], set[int]]:
        """Once all `total_lines` are fed: the lines to show by index, and those of them the head
        or the tail holds (shown as they are)."""
        if self.open_section is not None:
            self.sections[self.open_section] = total_lines - self.open_section
        shown: dict[int, bytes] = dict(self.head)
        shown.update(self.kept)
        whole = {index for index, _ in self.head}
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
        return shown, whole

    def silent_gaps(self, order: list[int]) -> dict[int, int]:
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
