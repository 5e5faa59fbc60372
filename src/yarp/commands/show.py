"""`yarp show REF`: one archived call's whole record."""

from __future__ import annotations

import sys

from yarp.commands import _archive

SUMMARY = "show one archived call: who ran what, where, how it ended, its input, output, view and snapshots"
EPILOG = """\
Prints the call's agent, session, tool, model, working directory, start and
finish (local time, with the zone) and duration; its input (and the input
after YARP when YARP rewrote it); its exact output's recovery sources with
their sizes and the yarp read / search / restore commands that serve them;
its view (what the agent was shown), up to a quarter of
output.recovery_cap_bytes a part; and every snapshot: subject/stage, size,
compression, capture time, SHA-256 (first 16 hex digits), media type.
--json prints one object with raw values (Unix milliseconds, bytes, whole
digests). Nothing is printed of the exact output itself: yarp read has it.

Exit status: 0, 64 bad usage, 65 malformed or unknown reference, 74 archive unavailable.

Examples:
  yarp show yr_4f91d03ab8d44712a48fa8b0d671e3d2
  yarp calls -n 1 --json | jq -r .ref | xargs yarp show
"""


def configure(parser) -> None:
    parser.add_argument("ref", metavar="REF", help="archive reference (yr_ + 32 hex digits)")
    parser.add_argument("--json", action="store_true", help="print one JSON object, raw values")
    parser.add_argument("--color", "--colour", choices=("auto", "always", "never"), default="auto",
                        help="colour the headings (default: on a terminal, unless NO_COLOR is set)")


def run(args) -> int:
    from yarp.archive.calls.record import call_record
    from yarp.archive.calls.render import record_json, render_record
    from yarp.archive.recovery.lookup import check_ref
    from yarp.commands.calls import use_colour

    check_ref(args.ref)  # a malformed reference is refused before the archive is opened
    cap_bytes, _ = _archive.recovery_caps()
    conn = _archive.open_archive(args.archive)
    try:
        record = call_record(conn, args.ref, view_bytes=max(cap_bytes // 4, 1024))
    finally:
        conn.close()
    if args.json:
        import json

        sys.stdout.write(json.dumps(record_json(record), ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(render_record(record, colour=use_colour(args.color)))
    return 0
