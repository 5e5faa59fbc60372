"""The reducer families: what each kind of output treats as evidence, and how that evidence is found.

A rule names its reducer (`reducer = "build"`); its `Family` here says which
lines are evidence (byte literals, plus the rule's own `keep` pattern), what
the summary counts, which evidence is secondary (warnings beside errors, hunks
beside file headers) and how the budget is shared. `Evidence` finds the next
evidence line in a buffer at C speed whatever the input.

This module is data and search only: `yarp.view.selector` chooses the lines,
`yarp.view.reducers` writes the view.
"""

from __future__ import annotations

from yarp._record import Record


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
                 "fixable", "generic", "records")
    _defaults = {"counters": (), "count_lines_as": None, "secondary": (), "primary": (), "secondary_share": 0,
                 "noise": (), "min_context": 0, "section": None, "evidence_share": 50, "locations": (),
                 "file_starts": False, "fixable": (), "generic": False,
                 "records": False}
    name: str
    evidence: tuple[bytes, ...]
    search_hint: str
    #: (summary field, bytes) pairs counted with `bytes.count`, same newline convention.
    counters: tuple[tuple[str, bytes], ...]
    #: Whether `counters` count the records of the family's format (a diff's files, a log's commits): with
    #: none of them, the reducer recognised nothing of it (`git diff --stat`, `git log --oneline`) and
    #: leaves the stream to the view.
    records: bool
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
    #: The global view judges these outputs at least as well as this family's selection
    #: (docs/design/view.md): a shipped rule of the family leaves the stream to the cap,
    #: while a rule with its own `keep`/`drop` patterns still reduces with them.
    generic: bool


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
        generic=True,
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
        records=True,
    ),
    "log": Family(
        "log",
        (b"\ncommit ",),
        "commit|Author",
        counters=(("commits", b"\ncommit "),),
        min_context=6,
        evidence_share=85,
        records=True,
    ),
    "status": Family(
        "status",
        (
            b"\nOn branch", b"\nHEAD detached", b"ahead", b"behind", b"diverged", b"\nChanges",
            b"\nUntracked", b"\nUnmerged", b"conflict", b"modified:", b"deleted:", b"new file:",
            b"renamed:", b"typechange:",
        ),
        "modified|deleted",
        generic=True,
    ),
    "list": Family(
        "list",
        (b":\n", b" director", b"Permission denied", b"No such file"),
        "name|path",
        count_lines_as="entries",
        generic=True,
    ),
    "filter": Family("filter", (), "term|alternate"),
}


def match_path(buf: bytes, start: int, end: int) -> bytes | None:
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


class Evidence:
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
                path = match_path(buf, start, end)
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

