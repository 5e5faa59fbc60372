"""`yarp archive prune --before TIME`: delete finished calls older than TIME, through the broker."""

from __future__ import annotations

import re
import time
from datetime import datetime, timezone

from yarp.errors import UsageError

SUMMARY = "delete finished calls older than a UTC time (through the broker), then vacuum"
EPILOG = """\
TIME is RFC 3339 in UTC with a Z suffix, e.g. 2026-01-31T00:00:00Z.
Only finished calls are deleted; started (incomplete) calls are never pruned.
Prints 'pruned_calls: N'. If the broker connection is lost before the answer,
the outcome is unknown: inspect 'yarp archive stats' / 'verify' before retrying.
"""
_RFC3339_UTC = re.compile(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?[Zz]\Z")
PRUNE_TIMEOUT_S = 30.0


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

    timestamp_ms = parse_utc(args.before)
    location = resolve_location(args.archive)
    with BrokerClient(location) as client:
        reply = client.request(ops.PruneBefore(timestamp_ms), time.monotonic() + PRUNE_TIMEOUT_S)
    print(f"pruned_calls: {reply.get('prunedCalls', 0)}")
    return 0
