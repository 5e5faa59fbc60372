"""`yarp search`: find lines in one call's exact recovery sources, or list recent calls."""

from __future__ import annotations

import argparse
import os
import sys

from yarp.archive import recovery
from yarp.commands import _archive
from yarp.errors import UsageError
from yarp.limits import (
    DEFAULT_SEARCH_CONTEXT,
    DEFAULT_SEARCH_MATCHES,
    MAX_SEARCH_CONTEXT,
    MAX_SEARCH_MATCHES,
)
from yarp.times import time_option

SUMMARY = "search one archived call's exact output, or find calls by their output"
EPILOG = f"""\
Forms:
  yarp search REF PATTERN [options]        search stdout, stderr, result text, source output
  yarp search REF -e P1 -e P2 [options]    any of up to 8 patterns
  yarp search [--tool T] [--since TIME] [--until TIME] [--text PATTERN]
                                           list calls (newest first); with --text,
                                           those whose output matches PATTERN
                                           ('yarp calls' lists them for people)

Output is bounded: at most -m selected lines per source ({DEFAULT_SEARCH_MATCHES} by default,
{MAX_SEARCH_MATCHES} at most), context -A/-B/-C 0-{MAX_SEARCH_CONTEXT} (default {DEFAULT_SEARCH_CONTEXT}), and
output.recovery_cap_bytes of text in total. Each group ends with the exact
'yarp read' command that prints it unchanged. Patterns match characters: output
is read as UTF-8, and -i and -w follow Unicode.

TIME is RFC 3339 with any offset, a local date or time (2026-01-02,
2026-01-02 14:30), Unix milliseconds, or an age (30m, 2h, 7d). --tool is
any tool name, whatever its case, or a family: shell (every agent's shell
tool: Bash, bash, shell, run_shell_command...), read, write, edit, grep,
glob, ls.

--text searches every call of the archive (or of --since/--until/--tool),
newest first, and lists at most -m; when it stops before the oldest call (at -m
matching calls, or on Ctrl-C, exit 130), one stderr line says how many calls it
searched and how many it did not, and names the --until that continues it. On
a terminal it shows its progress.

Exit status: 0 matches, 1 no matches, 64 bad usage, 65 bad reference or data,
74 archive unavailable (missing, locked, corrupt, unsafe permissions).

Examples:
  yarp search yr_4f91d03ab8d44712a48fa8b0d671e3d2 'error|FAILED'
  yarp search yr_4f91d03ab8d44712a48fa8b0d671e3d2 'literal (text)' -F -i -C 0
  yarp search --tool shell --since 2d --text 'panic'
"""


def _bounded(low: int, high: int):
    def parse(text: str) -> int:
        if not text.isascii() or not text.isdigit() or (len(text) > 1 and text.startswith("0")):
            raise argparse.ArgumentTypeError(f"expected a whole number from {low} to {high}")
        value = int(text)
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be between {low} and {high}")
        return value

    return parse


def parse_time_ms(text: str) -> int:
    """A time in the command line's one grammar (`yarp.times`), as Unix milliseconds; for a command
    that names the option in its own message (`UsageError` otherwise)."""
    from yarp.times import parse_time

    return parse_time(text)


def format_ms(value: int | None) -> str:
    """RFC 3339 UTC with milliseconds, the listing's exact form (read back by `--until`)."""
    if value is None:
        return "-"
    from yarp.times import format_utc

    return format_utc(value)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("ref", nargs="?", metavar="REF", help="archive reference (yr_ + 32 hex digits)")
    parser.add_argument("pattern", nargs="?", metavar="PATTERN", help="regular expression (Python syntax)")
    parser.add_argument("-e", "--regexp", action="append", default=[], metavar="PATTERN",
                        help="a pattern; repeat for alternatives (at most 8)")
    parser.add_argument("-F", "--fixed-strings", action="store_true", help="patterns are literal text")
    parser.add_argument("-i", "--ignore-case", action="store_true", help="match case-insensitively")
    parser.add_argument("-w", "--word-regexp", action="store_true", help="match whole words only")
    parser.add_argument("-v", "--invert-match", action="store_true", help="select lines that do not match")
    context = _bounded(0, MAX_SEARCH_CONTEXT)
    parser.add_argument("-A", "--after-context", type=context, metavar="N", help="lines after each match")
    parser.add_argument("-B", "--before-context", type=context, metavar="N", help="lines before each match")
    parser.add_argument("-C", "--context", type=context, metavar="N", help="lines before and after")
    parser.add_argument("-m", "--max-results", type=_bounded(1, MAX_SEARCH_MATCHES), default=DEFAULT_SEARCH_MATCHES,
                        metavar="N",
                        help=f"selected lines shown per source, or calls listed (default {DEFAULT_SEARCH_MATCHES})")
    listing = parser.add_argument_group("listing calls (no REF)")
    listing.add_argument("--tool", metavar="NAME",
                         help="only calls of this tool, any case; shell, read, edit... name every agent's")
    listing.add_argument("--since", type=time_option("--since"), metavar="TIME", help="calls started at or after TIME")
    listing.add_argument("--until", type=time_option("--until"), metavar="TIME", help="calls started before TIME")
    listing.add_argument("--text", metavar="PATTERN",
                         help="calls whose archived output matches PATTERN (searches the whole range)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def pattern_text(arg: str) -> str:
    """A pattern from the command line as UTF-8 text, whatever the locale decoded it with:
    archived output is matched as UTF-8 (`recovery.as_text`), and a byte of the argument
    that is not UTF-8 stays the same lone surrogate the output's byte becomes."""
    return os.fsencode(arg).decode("utf-8", "surrogateescape")


def _options(args) -> recovery.SearchOptions:
    patterns = list(args.regexp)
    if args.pattern is not None:
        if patterns:
            raise UsageError("give PATTERN or -e, not both; expected: yarp search REF PATTERN")
        patterns.append(args.pattern)
    before = args.before_context if args.before_context is not None else args.context
    after = args.after_context if args.after_context is not None else args.context
    return recovery.SearchOptions(
        patterns=tuple(pattern_text(p) for p in patterns),
        fixed=args.fixed_strings,
        ignore_case=args.ignore_case,
        word=args.word_regexp,
        invert=args.invert_match,
        before=DEFAULT_SEARCH_CONTEXT if before is None else before,
        after=DEFAULT_SEARCH_CONTEXT if after is None else after,
        max_results=args.max_results,
    )


def run(args) -> int:
    if args.ref is None:
        return _list(args)
    if args.tool or args.since is not None or args.until is not None or args.text is not None:
        raise UsageError("--tool, --since, --until and --text list calls; give them without REF")
    recovery.check_ref(args.ref)
    options = _options(args)
    recovery.compile_patterns(options)  # usage errors before the archive is opened
    cap_bytes, _ = _archive.recovery_caps()
    conn = _archive.open_archive(args.archive)
    try:
        call = recovery.find_call(conn, args.ref)
        results = recovery.search_call(conn, call, options, budget_bytes=cap_bytes)
    finally:
        conn.close()
    found = sum(r.matches for r in results)
    if args.json:
        import json  # only --json pays for the module

        sys.stdout.write(json.dumps(recovery.search_json(args.ref, results, options)) + "\n")
    elif found:
        sys.stdout.write(recovery.render_search(args.ref, results, options))
    else:
        sys.stdout.write("No matches\n")
    return 0 if found else 1


def _list(args) -> int:
    if args.pattern is not None or args.regexp:
        raise UsageError("missing archive reference; expected: yarp search REF PATTERN")
    matcher = None
    if args.text is not None:
        matcher = recovery.compile_patterns(recovery.SearchOptions(
            patterns=(pattern_text(args.text),), fixed=args.fixed_strings, ignore_case=args.ignore_case,
            word=args.word_regexp))
    from yarp.archive.calls.selection import CallFilter

    span = {"where": CallFilter(tools=(args.tool,) if args.tool is not None else (), since_ms=args.since,
                                until_ms=args.until)}
    conn = _archive.open_archive(args.archive)
    display = None
    try:
        if matcher is not None and not args.json and sys.stderr.isatty():
            display = _progress(recovery.count_calls(conn, **span))
        listing = recovery.list_calls(conn, **span, text=matcher, limit=args.max_results, progress=display)
    finally:
        if display is not None:
            display.close()
        conn.close()
    _write_listing(args, listing)
    if listing.stop is not None:
        sys.stderr.write(_stop_line(args, listing) + "\n")
    if listing.stop == "interrupted":
        return 130
    return 0 if listing.calls else 1


def _progress(total: int):
    """A terminal line for a long `--text` search: calls searched of the range, matches so far."""
    from yarp.progress import TerminalProgress

    display = TerminalProgress(sys.stderr, "yarp search: searching calls")

    def show(searched: int, found: int, started_ms: int) -> None:
        if searched % 256 == 0 or searched == total:
            display.update(searched, total, f"({found} found)")

    show.close = display.close
    return show


def _stop_line(args, listing: recovery.Listing) -> str:
    """One line saying what a `--text` search that stopped early searched and what it did not."""
    why = ("interrupted" if listing.stop == "interrupted"
           else f"stopped at {len(listing.calls)} matching call(s) (-m {args.max_results})")
    scope = " in the range" if args.tool is not None or args.since is not None or args.until is not None else ""
    if listing.oldest_ms is None:
        return f"yarp search: {why}; searched no call; {listing.not_searched} call(s){scope} not searched"
    oldest = format_ms(listing.oldest_ms)
    return (f"yarp search: {why}; searched the newest {listing.searched} call(s){scope}, back to {oldest};"
            f" {listing.not_searched} older call(s) not searched (continue with --until {oldest})")


def _write_listing(args, listing: recovery.Listing) -> None:
    calls, more = listing.calls, listing.more
    if args.json:
        import json

        sys.stdout.write(json.dumps({
            "calls": [{"ref": c.archive_ref, "tool": c.tool_name, "started_at_ms": c.started_at_ms,
                       "status": c.status, "is_error": None if c.is_error is None else bool(c.is_error)}
                      for c in calls],
            "more": more,
        }) + "\n")
        return
    if not calls:
        sys.stdout.write("No matching calls\n")
        return
    sys.stdout.write(f"[yarp search: calls={len(calls)}{' (more not shown; narrow with --since/--tool)' if more else ''}]\n")
    for c in calls:
        state = "incomplete" if c.status != "finished" else ("error" if c.is_error else "ok")
        tool = c.tool_name if c.tool_name.isprintable() else repr(c.tool_name)
        sys.stdout.write(f"{c.archive_ref} {format_ms(c.started_at_ms)} {state} {tool[:64]}\n")
    sys.stdout.write("Search one call: yarp search REF PATTERN\n")
