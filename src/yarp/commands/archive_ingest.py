"""`yarp archive ingest`: the long-lived, framed bridge that agent adapters drive."""

from __future__ import annotations

import os

SUMMARY = "bridge an agent adapter's framed capture requests to the broker (one per agent session)"
EPILOG = """\
Reads 8-byte big-endian length-prefixed JSON requests on stdin and answers one
JSON acknowledgement line per request on stdout. See docs/ingest-protocol.md.
Exit status: 0 at EOF on a frame boundary, 74 on a malformed frame or request,
an invalid deadline, or a broker that cannot be reached.
"""


def configure(parser) -> None:
    pass


def run(args) -> int:
    from ..config import load
    from ..ingest import main
    from ..paths import resolve_archive

    return main(resolve_archive(args.archive, os.environ, load().archive_path))
