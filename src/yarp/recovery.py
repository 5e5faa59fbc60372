"""Find archived calls and read their exact recovery sources, read-only.

The library behind `yarp search`, `yarp read`, `yarp restore` and
`yarp archive restore`. A call is found by its `archive_ref` or by its source
identity (agent, account, session, call id). Its recovery sources follow the
specification's order: `stdout/before` and `stderr/before` first, then
`result_text/before`, then `source_output/before`. Calls with none of these
fall back to `result/before` (the exact canonical JSON the tool returned), so
every executed call has something to restore.

Payload bytes are streamed from SQLite one chunk at a time (`blobopen` plus a
streaming Zstandard reader) and checked against their stored length and
SHA-256 while they stream, so memory stays bounded by the chunk size and the
output caps, and a damaged payload is refused instead of shown.

This module must never write to the archive and never put archived bytes into
an error message.
"""

from __future__ import annotations

import re
import sqlite3
from collections import deque
from collections.abc import Callable, Iterable, Iterator

from ._digest import payload_hasher
from .errors import DataError, InvalidReference, NotFound, UsageError, ValidationError
from .limits import (
    DEFAULT_SEARCH_CONTEXT,
    DEFAULT_SEARCH_MATCHES,
    MAX_LISTED_SCAN_CALLS,
    MAX_PATTERN_BYTES,
    MAX_SCAN_LINE_BYTES,
    MAX_SEARCH_LINE_BYTES,
    MAX_SEARCH_PATTERNS,
)
from .limits import RECOVERY_CHUNK_BYTES as CHUNK_BYTES
from .sqlite import map_error


REF_PATTERN = re.compile(r"yr_[0-9a-f]{32}\Z")

#: (source name, subject) in recovery order; every recovery source is a `before` snapshot.
RECOVERY_ORDER = (
    ("stdout", "stdout"),
    ("stderr", "stderr"),
    ("result_text", "result_text"),
    ("source_output", "source_output"),
)
FALLBACK_SOURCE = ("result", "result")
SOURCE_NAMES = tuple(name for name, _ in RECOVERY_ORDER) + (FALLBACK_SOURCE[0],)

_COMPLETE_LABEL = {"complete": "true", "incomplete": "false", "unknown": "unknown"}
_ANSI = re.compile(rb"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
#: `_ANSI` that never crosses a line end, for whole blocks: an OSC sequence cut
#: by b"\\n" ends there, as it does at the end of a single line.
_ANSI_LINES = re.compile(rb"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b\n]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def check_ref(ref: str) -> str:
    """Return `ref` if it is `yr_` plus 32 lowercase hex digits, else raise `InvalidReference`."""
    if not isinstance(ref, str) or not REF_PATTERN.match(ref):
        raise InvalidReference("archive reference must be yr_ followed by 32 lowercase hex digits")
    return ref


class _Record:
    """A small record with slots. Plain classes, not dataclasses: building the
    dataclasses here cost ~4 ms on every recovery command's start."""

    __slots__ = ()

    def __init__(self, *args, **kwargs) -> None:
        names = self.__slots__
        values = dict(zip(names, args))
        values.update(kwargs)
        for name in names:
            object.__setattr__(self, name, values[name] if name in values else self._defaults[name])

    _defaults: dict = {}

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and all(getattr(self, n) == getattr(other, n) for n in self.__slots__)

    def __hash__(self) -> int:
        return hash(tuple(getattr(self, n) for n in self.__slots__))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is read-only")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{n}={getattr(self, n)!r}' for n in self.__slots__)})"


class CallInfo(_Record):
    """The metadata of one archived call (never its payloads)."""

    __slots__ = ("id", "archive_ref", "tool_name", "started_at_ms", "finished_at_ms", "status", "requires_streams",
                 "is_error", "executed")


class Source(_Record):
    """One recovery source: a `before` snapshot and where its payload row lives."""

    __slots__ = ("name", "media_type", "completeness", "sha256", "compression", "length", "payload_rowid")

    @property
    def complete_label(self) -> str:
        return _COMPLETE_LABEL.get(self.completeness, "unknown")


_CALL_COLUMNS = ("id, archive_ref, tool_name, started_at_ms, finished_at_ms, status, requires_streams,"
                 " is_error, executed")


def _query(conn: sqlite3.Connection, sql: str, params: tuple = ()) -> list:
    try:
        return conn.execute(sql, params).fetchall()
    except sqlite3.Error as exc:
        raise map_error(exc, "reading archive") from None


def find_call(conn: sqlite3.Connection, ref: str) -> CallInfo:
    """The call with this archive_ref; `InvalidReference` or `NotFound` otherwise."""
    check_ref(ref)
    rows = _query(conn, f"SELECT {_CALL_COLUMNS} FROM tool_calls WHERE archive_ref = ?", (ref,))
    if not rows:
        raise NotFound("no archived call has this reference")
    return CallInfo(*rows[0])


def find_call_by_source(conn: sqlite3.Connection, agent: str, account: str, session: str, call: str) -> CallInfo:
    """The call recorded for a source identity; `NotFound` when it was never begun."""
    rows = _query(
        conn,
        f"SELECT {', '.join('c.' + c.strip() for c in _CALL_COLUMNS.split(','))} FROM tool_calls c"
        " JOIN sessions s ON s.id = c.session_id"
        " WHERE s.agent = ? AND s.account = ? AND s.source_session_id = ? AND c.source_call_id = ?",
        (agent, account, session, call),
    )
    if not rows:
        raise NotFound("no archived call matches these source identities")
    return CallInfo(*rows[0])


def recovery_sources(conn: sqlite3.Connection, call: CallInfo) -> list[Source]:
    """The call's recovery sources in the specification's order (maybe empty)."""
    rows = _query(
        conn,
        "SELECT s.subject, s.media_type, s.source_completeness, p.sha256, p.compression,"
        " p.uncompressed_byte_length, p.rowid FROM snapshots s JOIN payloads p ON p.sha256 = s.payload_sha256"
        " WHERE s.tool_call_id = ? AND s.stage = 'before'",
        (call.id,),
    )
    by_subject = {r[0]: r for r in rows}
    sources = []
    for name, subject in RECOVERY_ORDER + (FALLBACK_SOURCE,):
        if name == FALLBACK_SOURCE[0] and sources:
            break
        row = by_subject.get(subject)
        if row is None:
            continue
        completeness = row[2] if subject == "result_text" else "complete"
        sources.append(Source(name, row[1], completeness or "unknown", bytes(row[3]), row[4], row[5], row[6]))
    return sources


def stream_sources(conn: sqlite3.Connection, call: CallInfo) -> tuple[Source, Source]:
    """The exact stdout/before and stderr/before sources of a call."""
    sources = {s.name: s for s in recovery_sources(conn, call)}
    if "stdout" not in sources or "stderr" not in sources:
        raise NotFound("call has no archived stdout and stderr")
    return sources["stdout"], sources["stderr"]


def choose_source(sources: list[Source], name: str | None) -> Source:
    """The named source, or the first recovery source when no name is given."""
    if not sources:
        raise NotFound("call has no recovery source")
    if name is None:
        return sources[0]
    for source in sources:
        if source.name == name:
            return source
    if name not in SOURCE_NAMES:
        raise UsageError(f"unknown source; choose one of: {', '.join(s.name for s in sources)}")
    raise NotFound(f"source {name} is not archived for this call; choose one of: "
                   f"{', '.join(s.name for s in sources)}")


# --- exact bytes --------------------------------------------------------------------------


def iter_payload(conn: sqlite3.Connection, rowid: int, compression: str, *, chunk: int = CHUNK_BYTES) -> Iterator[bytes]:
    """Yield the uncompressed bytes of one payload row, chunk by chunk (no checks)."""
    try:
        blob = conn.blobopen("payloads", "body", rowid, readonly=True)
    except sqlite3.Error as exc:
        raise map_error(exc, "reading archived payload") from None
    with blob:
        if compression == "none":
            reader = blob
        elif compression == "zstd":
            import zstandard

            reader = zstandard.ZstdDecompressor().stream_reader(blob, read_size=chunk, read_across_frames=True)
        else:
            raise ValidationError("archived payload has an unknown compression")
        while True:
            try:
                data = reader.read(chunk)
            except sqlite3.Error as exc:
                raise map_error(exc, "reading archived payload") from None
            except Exception as exc:  # zstandard.ZstdError and friends
                if type(exc).__module__.startswith("zstandard") or "zstd" in type(exc).__name__.lower():
                    raise ValidationError("archived payload cannot be decompressed") from None
                raise
            if not data:
                return
            yield data


def iter_verified(conn: sqlite3.Connection, source: Source, *, chunk: int = CHUNK_BYTES) -> Iterator[bytes]:
    """Yield a source's exact bytes; raise after the last chunk if length or digest differ."""
    digest = payload_hasher()
    total = 0
    for data in iter_payload(conn, source.payload_rowid, source.compression, chunk=chunk):
        total += len(data)
        if total > source.length:
            raise ValidationError("archived payload is longer than its recorded length; run yarp archive verify")
        digest.update(data)
        yield data
    if total != source.length or digest.digest() != source.sha256:
        raise ValidationError("archived payload does not match its length and SHA-256; run yarp archive verify")


def check_source(conn: sqlite3.Connection, source: Source) -> None:
    """Stream a source once to prove its length and digest before any byte is emitted."""
    for _ in iter_verified(conn, source):
        pass


def utf8_safe_end(data: bytes, end: int) -> int:
    """Largest index <= end that does not split a UTF-8 sequence of `data`."""
    end = min(end, len(data))
    start = end
    # Step back over continuation bytes to the lead byte of the last sequence.
    while start > 0 and end - start < 4 and (data[start - 1] & 0xC0) == 0x80:
        start -= 1
    if start == 0 or end - start >= 4:
        return end
    lead = data[start - 1]
    need = 2 if lead >> 5 == 0b110 else 3 if lead >> 4 == 0b1110 else 4 if lead >> 3 == 0b11110 else 1
    have = end - (start - 1)
    return start - 1 if have < need else end


# --- read ------------------------------------------------------------------------------------


class ReadResult(_Record):
    """Exact bytes of a range, and where to continue when a cap cut it short."""

    __slots__ = ("data", "cut", "next_range", "mode")
    _defaults = {"cut": False, "next_range": None, "mode": "lines"}


def parse_range(text: str, *, minimum_start: int) -> tuple[int, int]:
    """Parse START:END (canonical unsigned integers, END >= START >= minimum_start)."""
    start, sep, end = text.partition(":")
    if not sep or not _canonical(start) or not _canonical(end):
        raise UsageError("range must be START:END with unsigned integers")
    first, last = int(start), int(end)
    if first < minimum_start or last < first:
        raise UsageError(f"range must satisfy {minimum_start} <= START <= END")
    return first, last


def _canonical(text: str) -> bool:
    return text.isascii() and text.isdigit() and (text == "0" or not text.startswith("0")) and len(text) <= 19


def read_lines(conn: sqlite3.Connection, source: Source, start: int, end: int, *, cap_bytes: int,
               cap_lines: int) -> ReadResult:
    """Lines START..END (1-based, inclusive), at most `cap_lines` lines and `cap_bytes` bytes.

    Whole lines are kept while they fit; when the first requested line alone is
    larger than the byte cap it is cut at a UTF-8 boundary and the rest is
    offered as a byte range. END past the last line reads to the last line;
    START past it is an error. Only the bytes that may be printed are held.
    """
    out = bytearray()
    current = bytearray()  # the current line, at most what could still be printed
    current_len = 0
    number = 1
    line_start = 0
    position = 0
    done = False
    cut: tuple[str, str] | None = None

    def decide() -> None:
        nonlocal done, cut
        if number - start >= cap_lines or (out and len(out) + current_len > cap_bytes):
            cut, done = (f"{number}:{end}", "lines"), True
        elif len(out) + current_len <= cap_bytes:
            out.extend(current)
        else:
            keep = utf8_safe_end(bytes(current), cap_bytes)
            out.extend(current[:keep])
            cut, done = (f"{line_start + keep}:{line_start + current_len}", "bytes"), True

    for data in iter_verified(conn, source):
        at = 0
        while at < len(data) and not done:
            newline = data.find(b"\n", at)
            stop = len(data) if newline < 0 else newline + 1
            if start <= number:
                room = cap_bytes + 4 - len(out) - len(current)
                if room > 0:
                    current += data[at:min(stop, at + room)]
                current_len += stop - at
            position += stop - at
            at = stop
            if newline >= 0:
                if start <= number:
                    decide()
                if not done:
                    number += 1
                    line_start = position
                    current.clear()
                    current_len = 0
                    done = number > end
    if not done and current_len and start <= number:
        decide()
    total = number if (done or position > line_start) else number - 1
    if start > total:
        raise DataError(f"line range {start}:{end} is past the end of {source.name} ({total} lines)")
    if cut is None:
        return ReadResult(bytes(out), False, None, "lines")
    return ReadResult(bytes(out), True, cut[0], cut[1])


def read_bytes(conn: sqlite3.Connection, source: Source, start: int, end: int, *, cap_bytes: int) -> ReadResult:
    """Bytes [START, END) of a source, at most `cap_bytes`, never cut inside a UTF-8 character."""
    if start > source.length:
        raise DataError(f"byte range {start}:{end} is past the end of {source.name} ({source.length} bytes)")
    end = min(end, source.length)
    want_end = end
    cut = False
    if end - start > cap_bytes:
        end, cut = start + cap_bytes, True
    out = bytearray()
    position = 0
    for data in iter_verified(conn, source):
        lo, hi = max(start, position), min(end + 4, position + len(data))
        if lo < hi:
            out += data[lo - position:hi - position]
        position += len(data)
    if cut:
        # `out` holds up to 4 bytes past the cap so a character that straddles it is detected.
        keep = utf8_safe_end(bytes(out), end - start)
        if keep == 0:
            keep = end - start  # not text: exact bytes win over an empty answer
        out = out[:keep]
        return ReadResult(bytes(out), True, f"{start + keep}:{want_end}", "bytes")
    return ReadResult(bytes(out[: end - start]), False, None, "bytes")


# --- search ------------------------------------------------------------------------------


class SearchOptions(_Record):
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
        raw = pattern.encode("utf-8", "surrogatepass")
        body = re.escape(raw) if options.fixed else raw
        parts.append(rb"\b(?:" + body + rb")\b" if options.word else rb"(?:" + body + rb")")
    try:
        # Bytes patterns: case folding and word boundaries are ASCII, as in the
        # reference, and lines are matched without decoding them first.
        return re.compile(b"|".join(parts), re.IGNORECASE if options.ignore_case else 0)
    except re.error:
        raise UsageError("invalid search pattern (use -F for literal text)") from None


def match_bytes(raw: bytes) -> bytes:
    """A line (without its b"\\n") as search matches it: no CR terminator, no terminal escapes."""
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    if b"\x1b" in raw:
        raw = _ANSI.sub(b"", raw)
    return raw


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
        self.previous: deque[tuple[int, bytes]] = deque(maxlen=max(options.before, 1))

    def keep(self, number: int, line: bytes, selected: bool) -> bool:
        lines = self.result.lines
        if number in lines:
            if selected:
                lines[number] = (lines[number][0], True)
            return True
        clipped = _clip(display_text(line))
        if self.used + len(clipped) + 16 > self.budget:
            return False
        self.used += len(clipped) + 16
        lines[number] = (clipped, selected)
        return True

    def line(self, number: int, line: bytes, selected: bool, before: Callable[[], list[tuple[int, bytes]]]) -> None:
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

    Lines are matched one at a time in meaning (see `match_bytes`), but a
    block-safe pattern runs once over each block of lines and only the lines it
    hits are looked at from Python; `-v` and line-sensitive patterns walk every line.
    """
    collector = _Collector(source, options, budget_bytes)
    blocks = iter_match_blocks(chunks, max_line=max_line)
    if options.invert or not block_safe(matcher):
        total = _scan_lines(blocks, matcher, options, collector)
    else:
        total = _scan_blocks(blocks, matcher, options, collector)
    return collector.finish(total)


def _scan_lines(blocks: Iterator[bytes], matcher: re.Pattern, options: SearchOptions, collector: _Collector) -> int:
    search, invert, previous, keep_previous = matcher.search, options.invert, collector.previous, options.before > 0
    number = 0
    for block in blocks:
        lines = block.split(b"\n")
        lines.pop()  # the empty piece after the block's last b"\n"
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


def _scan_blocks(blocks: Iterator[bytes], matcher: re.Pattern, options: SearchOptions, collector: _Collector) -> int:
    line_search = matcher.search
    # MULTILINE so ^ and $ hold at every line edge inside a block, as they do on one line.
    block_search = re.compile(matcher.pattern, matcher.flags | re.MULTILINE).search
    before = options.before
    tail: deque[tuple[int, bytes]] = deque(maxlen=max(before, 1))  # last lines of earlier blocks
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
                    end = block.find(b"\n", start)
                    if hit.end() <= end or line_search(block[block.rfind(b"\n", 0, start) + 1:end]):
                        count += 1
                    pos = end + 1
                collector.result.matches += count
                break
            hit = block_search(block, pos) if pos < size else None
            target = size if hit is None or hit.start() >= size else hit.start()
            # After-context lines between the last walked line and the hit (or block end).
            while collector.after_left and pos < target:
                end = block.find(b"\n", pos)
                if end >= target:
                    break
                collector.line(number, block[pos:end], False, list)
                pos, number = end + 1, number + 1
            if target >= size:
                break
            line_start = block.rfind(b"\n", pos, target) + 1 or pos
            number += block.count(b"\n", pos, line_start)
            end = block.find(b"\n", target)
            line = block[line_start:end]
            # A hit that ran past its line proves nothing; judge the line on its own.
            selected = hit.end() <= end or line_search(line) is not None

            def context(number=number, line_start=line_start) -> list[tuple[int, bytes]]:
                return _before_lines(block, line_start, number, base, tail, before)

            collector.line(number, line, selected, context)
            pos, number = end + 1, number + 1
        lines = block.count(b"\n")
        if before:
            last_lines = _before_lines(block, size, base + lines + 1, base, tail, before)
            tail.clear()
            tail.extend(last_lines)
        base += lines
    return base


def _before_lines(block: bytes, line_start: int, number: int, base: int, tail: deque,
                  before: int) -> list[tuple[int, bytes]]:
    """Up to `before` lines ending just before offset `line_start` (line `number`), oldest first."""
    out: list[tuple[int, bytes]] = []
    end = line_start - 1  # the b"\n" ending the line before
    current = number - 1
    while len(out) < before and current > base:
        start = block.rfind(b"\n", 0, end) + 1
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


def render_search(ref: str, results: list[SourceMatches], options: SearchOptions) -> str:
    """The reference's text form: header, per-source block, groups, read hints."""
    out = [f"[yarp search: ref={ref}]"]
    for index, res in enumerate(results):
        if index:
            out.append("--")
        out.append(
            f"[source={res.source.name} complete={res.source.complete_label} matches={res.matches}"
            f" showing={len(res.shown)} before={options.before} after={options.after}"
            f" max_results={options.max_results}]"
        )
        name = res.source.name
        for group_index, (first, last) in enumerate(res.groups):
            if group_index:
                out.append("--")
            for number in range(first, last + 1):
                entry = res.lines.get(number)
                if entry is None:
                    continue
                text, selected = entry
                sep = ":" if selected else "-"
                out.append(f"{name}{sep}{number}{sep}{text}")
        if res.omitted:
            out.append(f"[yarp search: {res.omitted} selected line(s) omitted]")
        for first, last in res.groups:
            out.append(f"Read exact context: yarp read {ref} {name} {first}:{last}")
    return "\n".join(out) + "\n"


def search_json(ref: str, results: list[SourceMatches], options: SearchOptions) -> dict:
    return {
        "ref": ref,
        "sources": [
            {
                "source": r.source.name,
                "complete": r.source.complete_label,
                "matches": r.matches,
                "showing": len(r.shown),
                "lines": [
                    {"line": n, "selected": sel, "text": text}
                    for n, (text, sel) in sorted(r.lines.items())
                ],
                "groups": [{"start": a, "end": b, "read": f"yarp read {ref} {r.source.name} {a}:{b}"}
                           for a, b in r.groups],
            }
            for r in results
        ],
        "before": options.before,
        "after": options.after,
        "max_results": options.max_results,
    }


# --- listing recent calls ------------------------------------------------------------------------




def list_calls(conn: sqlite3.Connection, *, tool: str | None = None, since_ms: int | None = None,
               until_ms: int | None = None, text: re.Pattern | None = None,
               limit: int = DEFAULT_SEARCH_MATCHES) -> tuple[list[CallInfo], bool]:
    """Recent calls, newest first, filtered; returns (calls, whether the scan hit its bound).

    `text` is matched line by line against each call's recovery sources (the
    exact text the tool produced), reading at most `MAX_LISTED_SCAN_CALLS` calls.
    """
    clauses, params = [], []
    if tool is not None:
        clauses.append("tool_name = ?")
        params.append(tool)
    if since_ms is not None:
        clauses.append("started_at_ms >= ?")
        params.append(since_ms)
    if until_ms is not None:
        clauses.append("started_at_ms < ?")
        params.append(until_ms)
    where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
    scan = limit if text is None else MAX_LISTED_SCAN_CALLS
    rows = _query(conn, f"SELECT {_CALL_COLUMNS} FROM tool_calls{where} ORDER BY started_at_ms DESC, id DESC"
                        f" LIMIT ?", (*params, scan + 1))
    bounded = len(rows) > scan
    calls = [CallInfo(*r) for r in rows[:scan]]
    if text is None:
        return calls[:limit], bounded and len(calls) >= limit
    found: list[CallInfo] = []
    for call in calls:
        if _call_matches(conn, call, text):
            found.append(call)
            if len(found) >= limit:
                return found, True
    return found, bounded


def _call_matches(conn: sqlite3.Connection, call: CallInfo, matcher: re.Pattern) -> bool:
    whole = block_safe(matcher)
    block_search = re.compile(matcher.pattern, matcher.flags | re.MULTILINE).search
    for source in recovery_sources(conn, call):
        for block in iter_match_blocks(iter_payload(conn, source.payload_rowid, source.compression)):
            if whole:
                pos, size = 0, len(block)
                while pos < size and (hit := block_search(block, pos)) is not None and hit.start() < size:
                    end = block.find(b"\n", hit.start())
                    if hit.end() <= end or matcher.search(block[block.rfind(b"\n", 0, hit.start()) + 1:end]):
                        return True
                    pos = end + 1
            else:
                lines = block.split(b"\n")
                lines.pop()
                if any(matcher.search(line) for line in lines):
                    return True
    return False


# --- command plumbing ----------------------------------------------------------------------


def resolve_location(explicit: str | None):
    """The archive a command should read: --archive, $YARP_ARCHIVE, config, default."""
    import os

    from . import config
    from .paths import resolve_archive

    return resolve_archive(explicit, os.environ, config.load().archive_path)


def open_archive(explicit: str | None) -> sqlite3.Connection:
    """Open the resolved archive read-only (permission and version checks included)."""
    from .sqlite import open_readonly

    return open_readonly(resolve_location(explicit))


def recovery_caps() -> tuple[int, int]:
    """(bytes, lines) bounds of direct recovery output, from the configuration."""
    from . import config

    cfg = config.load()
    return cfg.recovery_cap_bytes, cfg.recovery_cap_lines
