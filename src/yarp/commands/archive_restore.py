"""`yarp archive restore`: copy a call's original stdout/stderr bytes back to stdout/stderr."""

from __future__ import annotations

import sys

from yarp.archive import recovery
from yarp.commands import _archive
from yarp.errors import UsageError

SUMMARY = "copy an archived call's original stdout and stderr to stdout and stderr"
EPILOG = """\
The call is named by its source identity, as `yarp run` names it:
  yarp archive restore --archive-agent A --archive-account B \\
                       --archive-session S --archive-call C

Both streams are checked against their stored SHA-256 before any byte is
written; then stdout/before goes to stdout and stderr/before to stderr,
exactly (no cap, no marker).

Exit status: 0 restored, 64 bad usage, 65 call or streams not archived or
damaged, 74 archive unavailable.
"""


def configure(parser) -> None:
    for name, what in (("agent", "source agent"), ("account", "local account"),
                       ("session", "source session id"), ("call", "source call id")):
        parser.add_argument(f"--archive-{name}", metavar=name[0].upper(), help=what)


def run(args) -> int:
    values = (args.archive_agent, args.archive_account, args.archive_session, args.archive_call)
    if not all(values):
        raise UsageError("--archive-agent, --archive-account, --archive-session and --archive-call are all required")
    conn = _archive.open_archive(args.archive)
    try:
        call = recovery.find_call_by_source(conn, *values)
        stdout, stderr = recovery.stream_sources(conn, call)
        recovery.check_source(conn, stdout)
        recovery.check_source(conn, stderr)
        for source, stream in ((stdout, sys.stdout.buffer), (stderr, sys.stderr.buffer)):
            for chunk in recovery.iter_verified(conn, source):
                stream.write(chunk)
            stream.flush()
    finally:
        conn.close()
    return 0
