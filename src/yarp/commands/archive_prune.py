"""`yarp archive prune --before TIME`: delete finished calls older than TIME, through the broker."""

from __future__ import annotations

import sys
import time

from yarp.times import parse_time

SUMMARY = "delete finished calls older than a time (through the broker), then vacuum"
EPILOG = """\
TIME is RFC 3339 with any offset (2026-01-31T00:00:00Z), a local date or time
(2026-01-31, '2026-01-31 14:30'), Unix milliseconds, or an age: --before 30d
deletes what finished more than 30 days ago.
Only finished calls are deleted; started (incomplete) calls are never pruned.
Prints 'pruned_calls: N' once the prune is done, however long it takes: the
broker prunes in short steps between other requests (captures go on) and
reports its progress, shown on a terminal. If the broker connection is lost,
or it goes 30 s without a word, the outcome is unknown: a running broker goes
on and commits; inspect 'yarp archive stats' / 'verify' before retrying.
"""
#: How long the prune may take to reach the broker and begin; once it runs, its progress renews the wait.
PRUNE_TIMEOUT_S = 30.0
#: What the terminal line says in each phase of the prune (`yarp.archive.prune`).
_PHASES = {"count": "pruning: counting calls", "calls": "pruning calls", "payloads": "pruning: unreferenced payloads",
           "vacuum": "pruning: returning free pages"}


def parse_before(text: str) -> int:
    """`--before` TIME (the command line's one grammar, `yarp.times`) → Unix milliseconds; `UsageError` otherwise."""
    return parse_time(text, "--before")


#: The name the benchmarks and tests know it by; it now reads every form, not only UTC.
parse_utc = parse_before


def configure(parser) -> None:
    parser.add_argument("--before", required=True, metavar="TIME",
                        help="delete finished calls that finished before TIME (RFC 3339, a date, or an age: 30d)")


def run(args) -> int:
    from yarp.clients.broker import BrokerClient
    from yarp.commands._archive import resolve_location
    from yarp.wire import operations as ops

    from yarp.wire import protocol

    timestamp_ms = parse_before(args.before)
    location = resolve_location(args.archive)
    display = _progress(sys.stderr) if sys.stderr.isatty() else None
    try:
        with BrokerClient(location) as client:
            reply = client.send(protocol.outgoing(ops.PruneBefore(timestamp_ms)), time.monotonic() + PRUNE_TIMEOUT_S,
                                on_progress=display)
    finally:
        if display is not None:
            display.close()
    print(f"pruned_calls: {reply.get('prunedCalls', 0)}")
    return 0


def _progress(stream):
    """A terminal line of the prune's progress frames: its phase, and what it has done of it."""
    from yarp.progress import TerminalProgress

    display = TerminalProgress(stream, _PHASES["count"])

    def show(progress: dict) -> None:
        label = _PHASES.get(progress.get("phase"))
        done, total = progress.get("done"), progress.get("total")
        if label is None or type(done) is not int or type(total) is not int:
            return
        display.label = label
        display.update(done, total)

    show.close = display.close
    return show
