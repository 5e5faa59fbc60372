"""`yarp archive export --format parquet DIR`: the archive as Parquet files, one per table."""

from __future__ import annotations

import json
import sys

from yarp.archive.sqlite import open_readonly
from yarp.commands import _archive
from yarp.times import time_option

SUMMARY = "export the archive as Parquet files for DuckDB, Spark or Trino (private files)"
EPILOG = """\
Writes sessions.parquet, calls.parquet, snapshots.parquet (payloads decoded to
text where they are text, exact bytes otherwise) and payloads.parquet (sizes)
into DIR, created 0700 when absent; every file is 0600. Existing export files
are never replaced: use one directory per export. Timestamps are UTC
timestamps, flags booleans, digests lowercase hex. Needs pyarrow (the 'export'
extra). Nothing leaves the machine.

Without --since/--until every call is exported. With them, only finished calls
the archive received in [--since, --until) are: the later of their finish time
and their last snapshot's capture time. --until defaults to one minute ago, so
consecutive windows (each --since the previous --until) export each call once.
TIME is RFC 3339 with any offset, a local date or time (2026-01-02,
'2026-01-02 14:30'), Unix milliseconds, or an age (30m, 2h, 7d).

On a terminal, stderr shows the table being written and its rows so far.

Exit status: 0, 64 bad usage or existing export file, 74 archive missing,
locked, corrupt or unsafe, or pyarrow missing.

Examples:
  yarp archive export --format parquet ~/yarp-export
  yarp archive export --format parquet exports/2026-01 --since 2026-01-01T00:00:00Z --until 2026-02-01T00:00:00Z
  duckdb -c "SELECT tool_name, count(*) FROM 'exports/*/calls.parquet' GROUP BY 1"
"""


def configure(parser) -> None:
    parser.add_argument("directory", metavar="DIR", help="directory to write the Parquet files into")
    parser.add_argument("--format", choices=("parquet",), required=True, help="output format (parquet)")
    parser.add_argument("--since", type=time_option("--since"), metavar="TIME", help="calls received at or after TIME")
    parser.add_argument("--until", type=time_option("--until"), metavar="TIME", help="calls received before TIME")
    parser.add_argument("--json", action="store_true", help="print the summary as one JSON object")


def run(args) -> int:
    from yarp.archive.export import export_parquet

    display = progress = None
    if sys.stderr.isatty():
        from yarp.progress import TerminalProgress

        display = TerminalProgress(sys.stderr, "exporting")
        progress = lambda table, done, total: display.note(f"{table} {done}/{total} rows")
    conn = open_readonly(_archive.resolve_location(args.archive))
    try:
        summary = export_parquet(conn, args.directory, since_ms=args.since, until_ms=args.until, progress=progress)
    finally:
        conn.close()
        if display is not None:
            display.close()
    if args.json:
        sys.stdout.write(json.dumps(summary) + "\n")
    else:
        for table, info in summary["tables"].items():
            sys.stdout.write(f"{table}: {info['rows']} rows\n")
        sys.stdout.write(f"payload_bytes: {summary['payload_bytes']}\ndirectory: {summary['directory']}\n")
    return 0
