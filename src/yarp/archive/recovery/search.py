"""Search recovery sources line by line, in bounded memory and output.

`yarp search REF PATTERN` (and `--text`, through `listing`): a pattern is matched
against each line as the tool wrote it (terminal escapes and a trailing CR
removed), as text: the line is decoded from UTF-8 with `surrogateescape`, so
`.` and `[‘']` match a character, `-i` folds `É` to `é`, and each byte that is
not UTF-8 becomes one lone surrogate that only itself matches and that encodes
back to the same byte. Blocks of lines are scanned by one regular expression in
C where the pattern allows it, and only the selected lines and their context are
kept, within a byte budget.

This module must never write to the archive and never put archived bytes into
an error message.
"""

from __future__ import annotations

import re
import sqlite3
from collections import deque
from collections.abc import Callable, Iterable, Iterator

from yarp._record import Record
from yarp.archive.recovery.lookup import CallInfo, Source, recovery_sources
from yarp.archive.recovery.reading import iter_verified, utf8_safe_end
from yarp.errors import NotFound, UsageError
from yarp.limits import (
    DEFAULT_SEARCH_CONTEXT,
    DEFAULT_SEARCH_MATCHES,
    MAX_PATTERN_BYTES,
    MAX_SCAN_LINE_BYTES,
    MAX_SEARCH_LINE_BYTES,
    MAX_SEARCH_PATTERNS,
)

_ANSI = re.compile(rb"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
#: `_ANSI` that never crosses a line end, for whole blocks: an OSC sequence cut
#: by b"\\n" ends there, as it does at the end of a single line.
_ANSI_LINES = re.compile(rb"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b\n]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


class SearchOptions(Record):
    """What `yarp search` looks for and how much it shows."""

    __slots__ = ("patterns", "fixed", "ignore_case", "word", "invert", "before", "after", "max_results")
    _defaults = {"fixed": False, "ignore_case": False, "word": False, "invert": False,
                 "before": DEFAULT_SEARCH_CONTEXT, "after": DEFAULT_SEARCH_CONTEXT,
                 "max_results": DEFAULT_SEARCH_MATCHES}


def compile_patterns(options: SearchOptions) -> re.Pattern:
    """One regular expression that matches any of the patterns (`UsageError` if invalid)."""
    if not options.patterns:
        raise UsageError("missing search pattern; expected: yarp search REF PATTERN")
    if len(options.patterns) > MAX_SEARCH_PATTERNS:
        raise UsageError(f"search accepts at most {MAX_SEARCH_PATTERNS} patterns")
    parts = []
    for pattern in options.patterns:
        if not pattern or len(pattern.encode("utf-8", "surrogatepass")) > MAX_PATTERN_BYTES:
            raise UsageError(f"each search pattern must have 1 to {MAX_PATTERN_BYTES} UTF-8 bytes")
        body = re.escape(pattern) if options.fixed else pattern
        parts.append(r"\b(?:" + body + r")\b" if options.word else r"(?:" + body + r")")
    try:
        # Text patterns over text lines (see `as_text`): `.` is one character, and case
        # folding, `\w` and `\b` are Unicode. A pattern taken from a command line keeps
        # any byte that is not UTF-8 as the same lone surrogate `as_text` gives it.
        return re.compile("|".join(parts), re.IGNORECASE if options.ignore_case else 0)
    except re.error:
        raise UsageError("invalid search pattern (use -F for literal text)") from None


def match_bytes(raw: bytes) -> bytes:
    """A line (without its b"\\n") as search matches it: no CR terminator, no terminal escapes."""
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    if b"\x1b" in raw:
        raw = _ANSI.sub(b"", raw)
    return raw


def as_text(block: bytes) -> str:
    """Match-form bytes as the text patterns run over: UTF-8, each invalid byte one lone
    surrogate, so `as_bytes` gives back exactly `block` and "\\n" still ends every line."""
    return block.decode("utf-8", "surrogateescape")


def as_bytes(text: str) -> bytes:
    """The exact bytes `as_text` decoded `text` from."""
    return text.encode("utf-8", "surrogateescape")


def display_text(raw: bytes) -> str:
    """A line as search shows it: terminal escapes removed, other controls made visible."""
    text = match_bytes(raw).decode("utf-8", "replace")
    if _CONTROL.search(text):
        text = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
    return text


def _clip(text: str, limit: int = MAX_SEARCH_LINE_BYTES) -> str:
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    return data[: utf8_safe_end(data, limit - 3)].decode("utf-8", "replace") + "..."


class SourceMatches:
    """Search results for one source: selected and context lines, bounded."""

    __slots__ = ("source", "total_lines", "matches", "shown", "lines", "groups")

    def __init__(self, source: Source | None) -> None:
        self.source = source
        self.total_lines = 0
        self.matches = 0
        self.shown: list[int] = []
        self.lines: dict[int, tuple[str, bool]] = {}
        self.groups: list[tuple[int, int]] = []

    @property
    def omitted(self) -> int:
        """Selected lines counted but not shown (past `max_results` or the byte budget)."""
        return self.matches - len(self.shown)


def iter_match_blocks(chunks: Iterable[bytes], *, max_line: int = MAX_SCAN_LINE_BYTES) -> Iterator[bytes]:
    """Regroup a byte stream into blocks of whole lines in the form search matches them.

    Each yielded block is a run of lines, each ended by one b"\\n" (the
    stream's last, unterminated line gets one too). Every line is what
    `match_bytes` makes of it: cut to `max_line` bytes, one trailing CR removed,
    terminal escapes removed. So a block is exactly the per-line match forms
    joined, and one regular expression can run over it in C.
    """
    pending = b""
    for data in chunks:
        # A line wholly inside a piece no longer than `max_line` never needs cutting,
        # so only the line carried across pieces is ever measured.
        pieces = (data,) if len(data) <= max_line else (data[i:i + max_line] for i in range(0, len(data), max_line))
        for piece in pieces:
            first = piece.find(b"\n")
            if first < 0:
                if len(pending) < max_line:
                    pending = (pending + piece)[:max_line]
                continue
            last = piece.rfind(b"\n")
            if not pending and last == len(piece) - 1:
                block = piece  # the common case: no copy at all
            else:
                head = pending + piece[:first] if pending else piece[:first]
                block = b"".join((head[:max_line], memoryview(piece)[first:last + 1]))
            pending = piece[last + 1:]
            yield _match_form(block)
    if pending:
        yield _match_form(pending + b"\n")


def _match_form(block: bytes) -> bytes:
    # CR first, then escapes: the order `match_bytes` uses on each line.
    # Single-byte probes run at memchr speed; most output has neither byte.
    if b"\r" in block:
        block = block.replace(b"\r\n", b"\n")
    if b"\x1b" in block:
        block = _ANSI_LINES.sub(b"", block)
    return block


#: Regular-expression syntax whose meaning at a line's edge differs between one
#: line on its own and the same line inside a block (string anchors, lookaround,
#: atomic groups, possessive repeats, conditionals). Patterns containing any of
#: these byte sequences (even inside a class or escaped: a false alarm only costs
#: speed) are matched one line at a time.
_LINE_SENSITIVE = (b"\\A", b"\\Z", b"(?=", b"(?!", b"(?<", b"(?>", b"(?(", b"*+", b"++", b"?+", b"}+")


def block_safe(matcher: re.Pattern) -> bool:
    """Whether `matcher` may run over whole blocks (see `_LINE_SENSITIVE`)."""
    source = matcher.pattern
    if isinstance(source, str):
        source = source.encode("utf-8", "surrogatepass")
    return not any(token in source for token in _LINE_SENSITIVE)


class _Collector:
    """The bounded selection state of one source, fed lines in increasing order."""

    def __init__(self, source: Source | None, options: SearchOptions, budget_bytes: int) -> None:
        self.result = SourceMatches(source)
        self.options = options
        self.budget = budget_bytes
        self.used = 0
        self.after_left = 0
        self.previous: deque[tuple[int, str]] = deque(maxlen=max(options.before, 1))

    def keep(self, number: int, line: str, selected: bool) -> bool:
        lines = self.result.lines
        if number in lines:
            if selected:
                lines[number] = (lines[number][0], True)
            return True
        clipped = _clip(display_text(as_bytes(line)))
        if self.used + len(clipped) + 16 > self.budget:
            return False
        self.used += len(clipped) + 16
        lines[number] = (clipped, selected)
        return True

    def line(self, number: int, line: str, selected: bool, before: Callable[[], list[tuple[int, str]]]) -> None:
        """One line that is selected or within after-context; `before` yields its before-context."""
        if self.after_left:
            self.after_left -= 1
            self.keep(number, line, False)
        if selected:
            result = self.result
            result.matches += 1
            if len(result.shown) < self.options.max_results and self.keep(number, line, True):
                if self.options.before:
                    for context_number, context in before():
                        self.keep(context_number, context, False)
                result.shown.append(number)
                self.after_left = self.options.after

    @property
    def full(self) -> bool:
        """No later selected line can be shown or start context: only counting remains."""
        return self.after_left == 0 and len(self.result.shown) >= self.options.max_results

    def finish(self, total_lines: int) -> SourceMatches:
        result = self.result
        result.total_lines = total_lines
        before, after = self.options.before, self.options.after
        for selected_line in result.shown:
            first = max(1, selected_line - before)
            last = min(total_lines, selected_line + after)
            if result.groups and first <= result.groups[-1][1] + 1:
                result.groups[-1] = (result.groups[-1][0], max(result.groups[-1][1], last))
            else:
                result.groups.append((first, last))
        return result


def scan(chunks: Iterable[bytes], matcher: re.Pattern, options: SearchOptions, *, budget_bytes: int,
         source: Source | None = None, max_line: int = MAX_SCAN_LINE_BYTES) -> SourceMatches:
    """Search a byte stream; keep at most `max_results` selected lines and their
    context, within `budget_bytes` of displayed text.

    Lines are matched one at a time in meaning (see `match_bytes`, `as_text`), but
    a block-safe pattern runs once over each block of lines and only the lines it
    hits are looked at from Python; `-v` and line-sensitive patterns walk every line.
    """
    collector = _Collector(source, options, budget_bytes)
    blocks = map(as_text, iter_match_blocks(chunks, max_line=max_line))
    if options.invert or not block_safe(matcher):
        total = _scan_lines(blocks, matcher, options, collector)
    else:
        total = _scan_blocks(blocks, matcher, options, collector)
    return collector.finish(total)


def _scan_lines(blocks: Iterator[str], matcher: re.Pattern, options: SearchOptions, collector: _Collector) -> int:
    search, invert, previous, keep_previous = matcher.search, options.invert, collector.previous, options.before > 0
    number = 0
    for block in blocks:
        lines = block.split("\n")
        lines.pop()  # the empty piece after the block's last "\n"
        if collector.full:
            # Only the count is still needed.
            if invert:
                collector.result.matches += sum(1 for line in lines if search(line) is None)
            else:
                collector.result.matches += sum(1 for line in lines if search(line) is not None)
            number += len(lines)
            continue
        for line in lines:
            number += 1
            selected = (search(line) is not None) != invert
            if selected or collector.after_left:
                collector.line(number, line, selected, lambda: list(previous))
            if keep_previous:
                previous.append((number, line))
    return number


def _scan_blocks(blocks: Iterator[str], matcher: re.Pattern, options: SearchOptions, collector: _Collector) -> int:
    line_search = matcher.search
    # MULTILINE so ^ and $ hold at every line edge inside a block, as they do on one line.
    block_search = re.compile(matcher.pattern, matcher.flags | re.MULTILINE).search
    before = options.before
    tail: deque[tuple[int, str]] = deque(maxlen=max(before, 1))  # last lines of earlier blocks
    base = 0  # lines in earlier blocks
    for block in blocks:
        size = len(block)
        pos, number = 0, base + 1  # start offset and number of the next line not yet walked
        while True:
            if collector.full:
                # Counting only: one step per selected line, nothing kept.
                count = 0
                while pos < size:
                    hit = block_search(block, pos)
                    if hit is None:
                        break
                    start = hit.start()
                    if start >= size:
                        break
                    end = block.find("\n", start)
                    if hit.end() <= end or line_search(block[block.rfind("\n", 0, start) + 1:end]):
                        count += 1
                    pos = end + 1
                collector.result.matches += count
                break
            hit = block_search(block, pos) if pos < size else None
            target = size if hit is None or hit.start() >= size else hit.start()
            # After-context lines between the last walked line and the hit (or block end).
            while collector.after_left and pos < target:
                end = block.find("\n", pos)
                if end >= target:
                    break
                collector.line(number, block[pos:end], False, list)
                pos, number = end + 1, number + 1
            if target >= size:
                break
            line_start = block.rfind("\n", pos, target) + 1 or pos
            number += block.count("\n", pos, line_start)
            end = block.find("\n", target)
            line = block[line_start:end]
            # A hit that ran past its line proves nothing; judge the line on its own.
            selected = hit.end() <= end or line_search(line) is not None

            def context(number=number, line_start=line_start) -> list[tuple[int, str]]:
                return _before_lines(block, line_start, number, base, tail, before)

            collector.line(number, line, selected, context)
            pos, number = end + 1, number + 1
        lines = block.count("\n")
        if before:
            last_lines = _before_lines(block, size, base + lines + 1, base, tail, before)
            tail.clear()
            tail.extend(last_lines)
        base += lines
    return base


def _before_lines(block: str, line_start: int, number: int, base: int, tail: deque,
                  before: int) -> list[tuple[int, str]]:
    """Up to `before` lines ending just before offset `line_start` (line `number`), oldest first."""
    out: list[tuple[int, str]] = []
    end = line_start - 1  # the "\n" ending the line before
    current = number - 1
    while len(out) < before and current > base:
        start = block.rfind("\n", 0, end) + 1
        out.append((current, block[start:end]))
        end, current = start - 1, current - 1
    if len(out) < before:
        out.extend(entry for entry in reversed(tail) if entry[0] <= current and entry[0] > number - 1 - before)
    out.reverse()
    return out


def search_source(conn: sqlite3.Connection, source: Source, matcher: re.Pattern, options: SearchOptions,
                  *, budget_bytes: int) -> SourceMatches:
    """Search one source's verified bytes (see `scan`)."""
    return scan(iter_verified(conn, source), matcher, options, budget_bytes=budget_bytes, source=source)


def search_call(conn: sqlite3.Connection, call: CallInfo, options: SearchOptions, *,
                budget_bytes: int) -> list[SourceMatches]:
    """Search every recovery source of a call, in recovery order."""
    matcher = compile_patterns(options)
    sources = recovery_sources(conn, call)
    if not sources:
        raise NotFound("call has no recovery source to search")
    share = max(1024, budget_bytes // len(sources))
    return [search_source(conn, source, matcher, options, budget_bytes=share) for source in sources]
