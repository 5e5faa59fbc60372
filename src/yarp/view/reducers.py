"""Streaming reducers: prune one spooled stream file into a bounded summary file.

A reducer reads the exact stream bytes in large chunks, keeps the lines a model
needs (the first and last lines, lines that match the family's evidence
pattern with a little context after them, and the rule's own `keep` lines),
and writes them in their original order with the contract's markers:

    [yarp summary: <family>; source_lines=N; ...]
    ...kept lines...
    [yarp: omitted N line(s)[, truncated M line(s)]; ref=yr_…; stdout complete]
    Search omitted output: yarp search yr_… 'term|alternate'

The markers are written as records (`yarp.view.markers`) and returned with
the view (`ReduceStats.markers`): the global cap takes the view's structure
from them, never from its text. What each family treats as evidence lives in
`yarp.view.families`, which lines are kept in `yarp.view.selector`; this
module drives the reading and writes the view.

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

from yarp._record import Record
from yarp.limits import DEFAULT_CAP_BYTES, MAX_CARRY_BYTES
from yarp.limits import REDUCER_CHUNK_BYTES as CHUNK_BYTES
from yarp.view.families import FAMILIES
from yarp.view.markers import Marker, Omission, SectionLines, Summary
from yarp.view.rules import Rule
from yarp.view.selector import Selector
from yarp.view.streams import utf8_floor


class ReduceStats(Record):
    """What a reducer did: bytes in and out, lines in and omitted, whether it changed anything,
    and the markers of the view it wrote (empty when it copied the stream unchanged)."""

    __slots__ = ("source_bytes", "shown_bytes", "source_lines", "omitted_lines", "reduced", "markers")
    _defaults = {"markers": ()}
    source_bytes: int
    shown_bytes: int
    source_lines: int
    omitted_lines: int
    reduced: bool
    markers: tuple[Marker, ...]


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
    if family.generic and not (rule.keep_patterns or rule.drop_patterns):
        return _copy(src_path, dst_path)
    limits = rule.limits_for(exit_code)
    if family.min_context and os.path.getsize(src_path) <= min(DEFAULT_CAP_BYTES, limits.max_output_bytes):
        # A log the default view shows whole keeps every full id, author and date.
        return _copy(src_path, dst_path)
    selector = Selector(family, rule, limits)
    try:
        with open(src_path, "rb") as src:
            source_bytes, final_newline = _feed(selector, _text_chunks(src))
    except _NotText:
        return _copy(src_path, dst_path)
    if family.records and not any(selector.counters.values()):
        return _copy(src_path, dst_path, lines=selector.lines)  # none of its records: the view judges it
    view = _ViewWriter(selector, ref=ref, stream=stream_name, hint=rule.search_hint or family.search_hint)
    omitted = view.write(total_lines=selector.lines, final_newline=final_newline, exit_code=exit_code)
    text = b"".join(view.pieces)
    if source_bytes - len(text) < max(limits.min_savings_bytes, 1):
        return _copy(src_path, dst_path, lines=selector.lines)
    with open(dst_path, "wb") as dst:
        dst.write(text)
    return ReduceStats(source_bytes, len(text), selector.lines, omitted, True, tuple(view.markers))


def _copy(src_path: str, dst_path: str, lines: int | None = None) -> ReduceStats:
    size = copy_stream(src_path, dst_path)
    return ReduceStats(size, size, -1 if lines is None else lines, 0, False)


class _NotText(Exception):
    """The stream holds a NUL byte or is not valid UTF-8: it is copied unchanged."""


def _text_chunks(src):
    """The file's bytes, `CHUNK_BYTES` at a time, each checked as the UTF-8 text so far;
    raises `_NotText` at the first chunk that shows it is not text, or at the end."""
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    while True:
        data = src.read(CHUNK_BYTES)
        if not data:
            break
        if b"\x00" in data:
            raise _NotText
        try:
            decoder.decode(data)
        except UnicodeDecodeError:
            raise _NotText from None
        yield data
    try:
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        raise _NotText from None


def _feed(selector: Selector, chunks) -> tuple[int, bool]:
    """Feed `selector` the complete lines of `chunks`; a line longer than `MAX_CARRY_BYTES`
    is fed cut at the selector's line cap, its rest skipped. Returns the bytes read and
    whether the stream ends with a newline."""
    source_bytes = 0
    carry = b""
    long_prefix: bytes | None = None  # prefix of a line longer than MAX_CARRY_BYTES
    for data in chunks:
        source_bytes += len(data)
        if long_prefix is not None:
            newline = data.find(b"\n")
            if newline < 0:
                continue
            selector.feed_cut_line(long_prefix)
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
    if long_prefix is not None:
        selector.feed_cut_line(long_prefix)
        return source_bytes, False
    if carry:
        selector.feed(carry + b"\n")
        return source_bytes, False
    return source_bytes, True


class _ViewWriter:
    """The view a reducer writes: its pieces of text and the records of the markers among them."""

    def __init__(self, selector: Selector, *, ref: str, stream: str, hint: str) -> None:
        self.selector = selector
        self.ref, self.stream, self.hint = ref, stream, hint
        self.pieces: list[bytes] = []
        self.markers: list[Marker] = []
        #: Lines written so far: the index in the view of the next one.
        self.lines = 0
        #: Whether the marker pair naming the reference and the search was written.
        self.named = False

    def _line(self, line: bytes) -> None:
        self.pieces.append(line)
        self.lines += 1

    def _mark(self, record: Marker) -> None:
        self.pieces.append(record.text())
        self.markers.append(record)
        self.lines += record.height

    def _omission(self, omitted: int, truncated: int, first: int = 0, last: int = 0, within: str = "") -> None:
        """A marker for omitted lines: the first one names the reference and the search."""
        search = None if self.named else self.hint
        self._mark(Omission(self.lines, omitted, truncated, first, last, self.stream, self.ref, "complete", search,
                            within))
        self.named = True

    def write(self, *, total_lines: int, final_newline: bool, exit_code: int | None) -> int:
        """Write the summary, the chosen lines and a marker per omitted run; return the lines omitted."""
        selector = self.selector
        shown, whole = selector.chosen(total_lines)
        order = sorted(shown)
        self._mark(_summary(selector, total_lines, exit_code))
        silent = selector.silent_gaps(order)
        # Records show ids cut to ABBREV_HEX digits; the pair naming the records counts them.
        short = {i for i in selector.abbreviated if i in shown and i not in whole}
        if silent:
            self._omission(sum(silent.values()), len(short), within="the commits shown")
        previous = -1
        truncated = 0
        for index in order:
            gap = index - previous - 1
            if gap and index not in silent:
                self._omission(gap, truncated, previous + 2, index)
                truncated = 0
            line, cut = self._shown_line(index, shown[index], short, bool(silent))
            truncated += cut
            if index == total_lines - 1 and not final_newline and line.endswith(b"\n"):
                line = line[:-1]
            self._line(line)
            if index in selector.sections and line.endswith(b"\n"):
                self._mark(SectionLines(self.lines, selector.sections[index]))
            previous = index
        gap = total_lines - previous - 1
        if gap or truncated:
            if self.pieces[-1] and not self.pieces[-1].endswith(b"\n"):
                self.pieces.append(b"\n")
            self._omission(gap, truncated, *((previous + 2, total_lines) if gap else (0, 0)))
        return total_lines - len(order)

    def _shown_line(self, index: int, line: bytes, short: set[int], silent: bool) -> tuple[bytes, int]:
        """Line `index` as shown (cut at the line cap, or a record's id abbreviated), and
        whether it counts as truncated."""
        selector = self.selector
        body_end = len(line) - 1 if line.endswith(b"\n") else len(line)
        if index in selector.truncated_long or body_end > selector.line_cap:
            cut = utf8_floor(line, min(body_end, selector.line_cap))
            return line[:cut] + line[body_end:], 1
        if index in short:
            return selector.abbreviated[index], not silent
        return line, 0


def _summary(selector: Selector, total_lines: int, exit_code: int | None) -> Summary:
    """The view's first line: its family, its size and what the family counts.

    It does not count the lines it shows: the global cap may cut the view
    further, and a count it no longer matched would mislead."""
    family = selector.family
    fields = [("source_lines", total_lines)]
    if family.count_lines_as:
        fields.append((family.count_lines_as, total_lines))
    fields.extend(selector.counters.items())
    if exit_code is not None:
        fields.append(("exit_status", exit_code))
    return Summary(0, family.name, tuple(fields))
