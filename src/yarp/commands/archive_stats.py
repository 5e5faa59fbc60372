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
and the database, WAL and shared-memory file sizes with their total
(total_file_bytes: the WAL can hold far more than the database file until the
broker checkpoints it). Opens the archive read-only.

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
    values = with_total(values)
    sys.stdout.write(json.dumps(values) + "\n" if args.json else stats.render(values))
    return 0


def with_total(values: dict) -> dict:
    """`values` with `total_file_bytes` (database + WAL + shared memory) right after `shm_bytes`."""
    total = sum(values.get(key) or 0 for key in ("database_bytes", "wal_bytes", "shm_bytes"))
    shown = {}
    for key, value in values.items():
        shown[key] = value
        if key == "shm_bytes":
            shown["total_file_bytes"] = total
    return shown
