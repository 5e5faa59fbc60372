"""`yarp archive savings`: how many output bytes YARP kept from the agent, per group."""

from __future__ import annotations

import os
import sys

from yarp.archive.savings import report as savings_report
from yarp.commands import _archive
from yarp.errors import UsageError
from yarp.times import time_option

SUMMARY = "show the context the views saved: net of what was read back or re-run, within the hosts' limits"
EPILOG = """\
Counts every finished call started in [--since, --until). Gross withheld is
what the agent's host would have shown of the outputs YARP cut (the agents
cut large outputs themselves, each its own way) less what YARP showed; net withheld takes off what the agent recovered with yarp
search|read|restore and what it re-ran (the same command again in the same
session within 10 minutes of a cut view, nothing edited between). Both in
bytes and estimated tokens (bytes / 4), in total and per group, then per rule
(its recall rate; "too aggressive" over 30 % of at least 20 cut calls) and
the commands that saved most. Calls whose view is unknown (a hook that
cannot replace a tool's output, imported history) are never savings.
Each finished call's numbers are kept in a disposable file under
$XDG_CACHE_HOME/yarp/savings/ (~/.cache/yarp/savings/), so a later report
computes only the calls finished since; the archive is only read.

TIME is RFC 3339 with any offset (2026-01-02T03:04:05Z), a local date or
time (2026-01-02, '2026-01-02 14:30'), Unix milliseconds, or an age (30m,
2h, 7d). Days (--by day) are UTC. On a terminal each group gets a bar: shown,
net withheld, then recovered or re-run; a report that takes longer than half
a second (the first over a large archive) shows its steps on stderr.

Exit status: 0, 74 archive missing, locked, corrupt or unsafe, 64 bad usage.

Examples:
  yarp archive savings
  yarp archive savings --by rule --since 2026-01-01T00:00:00Z
  yarp archive savings --by command --json
"""


#: A report still running after this long shows its steps on a terminal.
PROGRESS_AFTER_S = 0.5


def configure(parser) -> None:
    parser.add_argument("--since", type=time_option("--since"), metavar="TIME", help="calls started at or after TIME")
    parser.add_argument("--until", type=time_option("--until"), metavar="TIME", help="calls started before TIME")
    parser.add_argument("--by", choices=savings_report.GROUPINGS, default="tool", help="group by (default: tool)")
    parser.add_argument("--top", type=int, default=10, metavar="N", help="top commands to list (0-100, default 10)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args) -> int:
    if not 0 <= args.top <= 100:
        raise UsageError("--top must be between 0 and 100")
    if args.since is not None and args.until is not None and args.until <= args.since:
        raise UsageError("--until must be later than --since")
    display = None
    if not args.json and sys.stderr.isatty():
        from yarp.progress import TerminalProgress

        # A report that reads the sums is done in a blink; one that computes rows (the first over a
        # large archive) takes seconds, and says where it stands after the first half second.
        display = TerminalProgress(sys.stderr, "savings", after_s=PROGRESS_AFTER_S)
    try:
        report = savings_report.compute_for(_archive.resolve_location(args.archive), by=args.by, since_ms=args.since,
                                            until_ms=args.until, top=args.top,
                                            progress=display.note if display else None)
    finally:
        if display is not None:
            display.close()
    if args.json:
        import json

        sys.stdout.write(json.dumps(report.as_dict()) + "\n")
        return 0
    tty = sys.stdout.isatty()
    try:
        width = os.get_terminal_size(sys.stdout.fileno()).columns if tty else 80
    except OSError:
        width = 80
    ascii_only = (sys.stdout.encoding or "").lower().replace("-", "") != "utf8"
    color = tty and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"
    from yarp.archive.savings.render import render_text

    sys.stdout.write(render_text(report, width=min(max(width, 40), 120), color=color, ascii_only=ascii_only))
    return 0
