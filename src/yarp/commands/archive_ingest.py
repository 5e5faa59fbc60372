"""`yarp archive ingest`: the long-lived, framed bridge that agent adapters drive."""

from __future__ import annotations

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
    return _serve(args.archive)


def run_fast(argv: list[str]) -> int | None:
    """Start without argparse (and its imports) for the adapters' usual command lines.

    Handles no arguments and ``--archive PATH`` / ``--archive=PATH``; anything
    else (``--help``, a usage error) returns None for the full parser.
    """
    if not argv:
        return _serve(None)
    if len(argv) == 2 and argv[0] == "--archive" and argv[1] and not argv[1].startswith("-"):
        return _serve(argv[1])
    if len(argv) == 1 and argv[0].startswith("--archive=") and len(argv[0]) > len("--archive="):
        return _serve(argv[0][len("--archive="):])
    return None


def _serve(archive: str | None) -> int:
    from yarp.clients.ingest import main
    from yarp.commands._archive import resolve_location

    return main(resolve_location(archive))
