"""`yarp archive verify`: check every Validation rule through a read-only connection."""

from __future__ import annotations

import json
import sys

from yarp.archive import verify
from yarp.commands import _archive
from yarp.errors import EXIT_DATA

SUMMARY = "check the archive's integrity, payloads, lifecycle rules and permissions"
EPILOG = """\
Checks SQLite integrity and foreign keys, the schema version, lifecycle and
snapshot values, archive references, result-text completeness, every payload's
decompression, length and SHA-256, file permissions (directory 0700, database,
-wal and -shm 0600, owned by you) and missing required snapshots. Incomplete
calls and unreferenced payloads are counted without failing.

Prints 'incomplete_calls: N' and then 'archive: ok', or one
'yarp: archive verification failed: ...' line per problem on stderr.
Progress is shown on a terminal (stderr), from the first check to the last;
nothing in a pipe. Payloads are checked one at a time.

Exit status: 0 ok, 65 verification failed (including corruption, unsupported
version, bad permissions), 74 archive missing or locked, 64 bad usage.

Examples:
  yarp archive verify
  yarp archive verify --json
"""


def configure(parser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON report (no progress)")


def _display(stream):
    """A terminal display of the checks: the step under way, then payloads and MiB verified so far."""
    from yarp.progress import TerminalProgress

    display = TerminalProgress(stream, "verifying payloads")
    mib = 1024 * 1024

    def show(done: int, total: int, done_bytes: int, total_bytes: int) -> None:
        display.update(done, total, f"({done_bytes / mib:.1f}/{total_bytes / mib:.1f} MiB)")

    return display, show


def run(args) -> int:
    location = _archive.resolve_location(args.archive)
    display = progress = None
    if not args.json and sys.stderr.isatty():
        display, progress = _display(sys.stderr)
    try:
        report = verify.verify_archive(location, progress=progress, phase=display.note if display else None)
    finally:
        if display is not None:
            display.close()
    if args.json:
        sys.stdout.write(json.dumps(report.to_json()) + "\n")
    else:
        out, err = verify.render(report)
        sys.stdout.write(out)
        sys.stdout.flush()
        sys.stderr.write(err)
    return 0 if report.ok else EXIT_DATA
