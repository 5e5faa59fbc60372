"""`yarp calls`: the archived calls, newest first, one line each, filtered."""

from __future__ import annotations

import argparse
import os
import sys

from yarp.commands import _archive
from yarp.errors import UsageError
from yarp.times import time_option

SUMMARY = "list archived calls, newest first: when, agent, tool, command, status, duration, output size"
EPILOG = """\
One line per call: reference, start time (local), agent, tool, status (ok,
error or 'exit N', incomplete, not-run), duration, output size, 'cut' when
YARP's view cut the output, working directory, and what the call was about
(the command, the file, the pattern). Colour on a terminal, where long
lines are cut to its width; plain and whole in a pipe. --json prints one
JSON object per call (JSON Lines) with raw values: Unix milliseconds, bytes.

Filters narrow the list; a repeated --agent, --tool or --session matches any
of its values:
  --tool NAME      a tool, whatever its case, or a family of every agent's
                   tools: shell (Bash, bash, shell, run_shell_command, ...;
                   also 'bash'), read, write, edit, grep, glob, ls
  --cwd DIR        calls run in DIR or below it (relative to here)
  --session ID     an agent's session id, or its beginning
  --text PATTERN   calls whose archived output holds a line matching PATTERN
                   (as 'yarp search --text'; searches the range newest first)

TIME is RFC 3339 with any offset (2026-01-02T03:04:05Z), a local date or
time (2026-01-02, '2026-01-02 14:30'), Unix milliseconds, or an age (30m,
2h, 7d, 2w), as everywhere in yarp. yarp doctor's probe calls (agent
yarp-doctor) are listed only with --agent yarp-doctor.

Exit status: 0 calls listed, 1 none, 64 bad usage, 74 archive unavailable.

Examples:
  yarp calls
  yarp calls --tool shell --since 1h
  yarp calls --status error --cwd . -n 50
  yarp calls --agent yarp-run --text 'Traceback' --since yesterday
  yarp calls --json --limit 0 | jq -r 'select(.cut) | .ref'
  yarp show yr_4f91d03ab8d44712a48fa8b0d671e3d2
"""
#: Calls listed unless --limit says otherwise.
DEFAULT_LIMIT = 20


def _limit(text: str) -> int:
    if not text.isascii() or not text.isdigit() or len(text) > 9:
        raise argparse.ArgumentTypeError("expected a whole number (0 for all)")
    return int(text)


def configure(parser: argparse.ArgumentParser) -> None:
    from yarp.archive.calls.selection import STATUSES

    parser.add_argument("--agent", action="append", default=[], metavar="NAME", help="calls of this agent")
    parser.add_argument("--tool", action="append", default=[], metavar="NAME",
                        help="calls of this tool (any case) or family (shell, read, write, edit, grep, glob, ls)")
    parser.add_argument("--cwd", metavar="DIR", help="calls whose working directory is DIR or below it")
    parser.add_argument("--status", choices=tuple(STATUSES), help="calls that ended so")
    parser.add_argument("--since", type=time_option("--since"), metavar="TIME", help="calls started at or after TIME")
    parser.add_argument("--until", type=time_option("--until"), metavar="TIME", help="calls started before TIME")
    parser.add_argument("--session", action="append", default=[], metavar="ID",
                        help="calls of this session (its id or the beginning of it)")
    parser.add_argument("--text", metavar="PATTERN", help="calls whose archived output has a line matching PATTERN")
    parser.add_argument("-F", "--fixed-strings", action="store_true", help="--text is literal text")
    parser.add_argument("-i", "--ignore-case", action="store_true", help="--text matches case-insensitively")
    parser.add_argument("-n", "--limit", type=_limit, default=DEFAULT_LIMIT, metavar="N",
                        help=f"calls listed (default {DEFAULT_LIMIT}; 0 for all)")
    parser.add_argument("--json", action="store_true", help="one JSON object per call, raw values")
    parser.add_argument("--color", "--colour", choices=("auto", "always", "never"), default="auto",
                        help="colour the list (default: on a terminal, unless NO_COLOR is set)")


def use_colour(choice: str) -> bool:
    """Whether to colour stdout: `always`, `never`, or (`auto`) on a terminal without NO_COLOR or TERM=dumb."""
    if choice != "auto":
        return choice == "always"
    return sys.stdout.isatty() and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"


def _filter(args):
    from yarp.archive.calls.selection import CallFilter

    if args.since is not None and args.until is not None and args.until <= args.since:
        raise UsageError("--until must be later than --since")
    cwd = os.path.abspath(os.path.expanduser(args.cwd)) if args.cwd is not None else None
    return CallFilter(agents=tuple(args.agent), tools=tuple(args.tool), sessions=tuple(args.session), cwd=cwd,
                      status=args.status, since_ms=args.since, until_ms=args.until)


def run(args) -> int:
    from yarp.archive.calls.listing import iter_calls
    from yarp.archive.calls.selection import select

    flt = _filter(args)
    limit = args.limit or None
    matcher = _matcher(args)
    conn = _archive.open_archive(args.archive)
    stop = interrupted = None
    try:
        if matcher is not None:
            rows, stop, interrupted = _text_rows(conn, flt, matcher, limit, args)
            more = _never  # the stop line says what was left
        else:
            wanted = None if limit is None else limit + 1
            rows, more = _bounded(iter_calls(conn, select(conn, flt, limit=wanted), limit=wanted), limit)
        shown = _write(args, rows)
    finally:
        conn.close()
    if stop is not None:
        sys.stderr.write(stop + "\n")
    elif more() and sys.stdout.isatty() and not args.json:
        sys.stderr.write(f"(the newest {limit} shown; -n N for more, -n 0 for all)\n")
    if shown == 0 and sys.stderr.isatty() and not args.json:
        sys.stderr.write("No matching calls\n")
    if interrupted:
        return 130
    return 0 if shown else 1


def _never() -> bool:
    return False


def _bounded(rows, limit: int | None):
    """The first `limit` rows, and a function telling whether a row past them was found."""
    state = {"more": False}

    def take():
        for count, row in enumerate(rows):
            if limit is not None and count >= limit:
                state["more"] = True
                return
            yield row

    return take(), lambda: state["more"]


def _write(args, rows) -> int:
    from yarp.archive.calls.render import ListWriter, json_lines

    if args.json:
        lines = json_lines(rows)
    else:
        tty = sys.stdout.isatty()
        width = None
        if tty:
            try:
                width = os.get_terminal_size(sys.stdout.fileno()).columns
            except OSError:
                width = None
        lines = ListWriter(colour=use_colour(args.color), width=width).lines(rows)
    shown = 0
    for line in lines:
        sys.stdout.write(line)
        shown += 1
    sys.stdout.flush()
    return shown


def _matcher(args):
    if args.text is None:
        if args.fixed_strings or args.ignore_case:
            raise UsageError("-F and -i go with --text")
        return None
    from yarp.archive import recovery
    from yarp.commands.search import pattern_text

    return recovery.compile_patterns(recovery.SearchOptions(
        patterns=(pattern_text(args.text),), fixed=args.fixed_strings, ignore_case=args.ignore_case))


def _text_rows(conn, flt, matcher, limit: int | None, args):
    """The calls of the filter whose output matches, as `yarp search --text` finds them; and the
    stderr line saying what was not searched when the search stopped early."""
    from yarp.archive import recovery
    from yarp.archive.calls.listing import calls_by_id
    from yarp.commands.search import _progress
    from yarp.times import format_utc

    display = None
    if not args.json and sys.stderr.isatty():
        display = _progress(recovery.count_calls(conn, where=flt))
    try:
        listing = recovery.list_calls(conn, where=flt, text=matcher, limit=limit or 1 << 62, progress=display)
    finally:
        if display is not None:
            display.close()
    rows = calls_by_id(conn, [c.id for c in listing.calls])
    stop = None
    if listing.stop is not None and listing.oldest_ms is not None:
        oldest = format_utc(listing.oldest_ms)
        why = "interrupted" if listing.stop == "interrupted" else f"stopped at {len(rows)} matching call(s) (-n {limit})"
        stop = (f"yarp calls: {why}; searched the newest {listing.searched} call(s), back to {oldest};"
                f" {listing.not_searched} older call(s) not searched (continue with --until {oldest})")
    return rows, stop, listing.stop == "interrupted"
