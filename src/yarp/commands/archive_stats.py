"""`yarp archive stats`: safe counts and sizes, never archived content."""

from __future__ import annotations

import json
import sys

from yarp.archive import stats
from yarp.archive.sqlite import open_readonly
from yarp.commands import _archive

SUMMARY = "print safe counts and sizes of the archive (never its content)"
EPILOG = """\
Prints one 'name: value' line per statistic: first the reference keys
(sessions, calls, incomplete_calls, logical_payload_bytes, stored_payload_bytes,
database_bytes, oldest_call_ms, newest_call_ms), then calls by status, is_error
and executed, snapshots by subject and stage, payload counts and compression,
and the database, WAL and shared-memory file sizes. Opens the archive read-only.

Exit status: 0, 74 archive missing, locked, corrupt or unsafe, 64 bad usage.

Examples:
  yarp archive stats
  yarp archive stats --json
"""


def configure(parser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args) -> int:
    location = _archive.resolve_location(args.archive)
    conn = open_readonly(location)
    try:
        values = stats.archive_stats(conn, location)
    finally:
        conn.close()
    sys.stdout.write(json.dumps(values) + "\n" if args.json else stats.render(values))
    return 0
