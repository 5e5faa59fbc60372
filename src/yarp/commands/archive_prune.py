"""`yarp archive prune --before TIME`: delete finished calls older than TIME, through the broker."""

from __future__ import annotations

import re
import sys
import time
from datetime import datetime, timezone

from yarp.errors import UsageError

SUMMARY = "delete finished calls older than a UTC time (through the broker), then vacuum"
EPILOG = """\
TIME is RFC 3339 in UTC with a Z suffix, e.g. 2026-01-31T00:00:00Z.
Only finished calls are deleted; started (incomplete) calls are never pruned.
Prints 'pruned_calls: N' once the prune is done, however long it takes: the
broker prunes in short steps between other requests (captures go on) and
reports its progress, shown on a terminal. If the broker connection is lost,
or it goes 30 s without a word, the outcome is unknown: a running broker goes
on and commits; inspect 'yarp archive stats' / 'verify' before retrying.
"""
_RFC3339_UTC = re.compile(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?[Zz]\Z")
#: How long the prune may take to reach the broker and begin; once it runs, its progress renews the wait.
PRUNE_TIMEOUT_S = 30.0
#: What the terminal line says in each phase of the prune (`yarp.archive.prune`).
_PHASES = {"count": "pruning: counting calls", "calls": "pruning calls", "payloads": "pruning: unreferenced payloads",
           "vacuum": "pruning: returning free pages"}


def parse_utc(text: str) -> int:
    """RFC 3339 UTC (Z suffix) → Unix milliseconds; anything else is a usage error."""
    if not _RFC3339_UTC.match(text):
        raise UsageError("--before must be an RFC 3339 UTC time with a Z suffix, e.g. 2026-01-31T00:00:00Z")
    main, _, fraction = text[:-1].partition(".")
    try:
        moment = datetime.strptime(main.replace("t", "T"), "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc)
    except ValueError:
        raise UsageError("--before is not a valid calendar time") from None
    millis = int((fraction + "000")[:3]) if fraction else 0
    if moment.year < 1970:
        # Archive times are non-negative Unix milliseconds; an earlier bound is a typo, not a request.
        raise UsageError("--before must not be earlier than 1970-01-01T00:00:00Z")
    return int(moment.timestamp()) * 1000 + millis


def configure(parser) -> None:
    parser.add_argument("--before", required=True, metavar="TIME", help="RFC 3339 UTC time, Z suffix")


def run(args) -> int:
    from yarp.clients.broker import BrokerClient
    from yarp.commands._archive import resolve_location
    from yarp.wire import operations as ops

    from yarp.wire import protocol

    timestamp_ms = parse_utc(args.before)
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
