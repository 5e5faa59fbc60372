"""`yarp read`: print an exact line or byte range of one call's recovery source."""

from __future__ import annotations

import json
import sys

from yarp.archive import recovery
from yarp.commands import _archive
from yarp.errors import UsageError

SUMMARY = "print an exact line or byte range of an archived call's output"
EPILOG = """\
Forms:
  yarp read REF [SOURCE] START:END          lines, 1-based, END inclusive
  yarp read REF [SOURCE] --bytes START:END  bytes, 0-based, END exclusive

SOURCE is stdout, stderr, result_text, source_output or result; without it the
first recovery source is read (stdout for wrapped shell calls). The bytes are
printed unchanged. Output is bounded by output.recovery_cap_bytes (32768) and
output.recovery_cap_lines (1900); a longer range stops at a whole line (or at a
UTF-8 character boundary inside one long line) and stderr names the next range.

Exit status: 0 printed, 64 bad usage, 65 bad reference or range, 74 archive unavailable.

Examples:
  yarp read yr_4f91d03ab8d44712a48fa8b0d671e3d2 stdout 116:120
  yarp read yr_4f91d03ab8d44712a48fa8b0d671e3d2 stderr --bytes 0:4096
"""


def configure(parser) -> None:
    parser.add_argument("ref", metavar="REF", help="archive reference")
    parser.add_argument("rest", nargs="*", metavar="[SOURCE] START:END", help="optional source, then a range")
    parser.add_argument("--bytes", dest="bytes_range", metavar="START:END",
                        help="read bytes [START, END) instead of lines")
    parser.add_argument("--json", action="store_true",
                        help="print a JSON object (text as UTF-8 with replacement characters)")


def _split(args) -> tuple[str | None, str, bool]:
    rest = list(args.rest)
    if args.bytes_range is not None:
        if len(rest) > 1:
            raise UsageError("expected: yarp read REF [SOURCE] --bytes START:END")
        return (rest[0] if rest else None), args.bytes_range, True
    if len(rest) == 1:
        return None, rest[0], False
    if len(rest) == 2:
        return rest[0], rest[1], False
    raise UsageError("expected: yarp read REF [SOURCE] START:END")


def run(args) -> int:
    recovery.check_ref(args.ref)
    name, text_range, in_bytes = _split(args)
    start, end = recovery.parse_range(text_range, minimum_start=0 if in_bytes else 1)
    cap_bytes, cap_lines = _archive.recovery_caps()
    conn = _archive.open_archive(args.archive)
    try:
        call = recovery.find_call(conn, args.ref)
        source = recovery.choose_source(recovery.recovery_sources(conn, call), name)
        if in_bytes:
            result = recovery.read_bytes(conn, source, start, end, cap_bytes=cap_bytes)
        else:
            result = recovery.read_lines(conn, source, start, end, cap_bytes=cap_bytes, cap_lines=cap_lines)
    finally:
        conn.close()
    hint = None
    if result.cut:
        flag = " --bytes" if result.mode == "bytes" else ""
        hint = f"yarp read {args.ref} {source.name}{flag} {result.next_range}"
    if args.json:
        sys.stdout.write(json.dumps({
            "ref": args.ref, "source": source.name, "complete": source.complete_label,
            "text": result.data.decode("utf-8", "replace"), "bytes": len(result.data),
            "cut": result.cut, "next": hint,
        }) + "\n")
        return 0
    out = sys.stdout.buffer
    out.write(result.data)
    out.flush()
    if hint:
        sys.stderr.write(f"yarp: output stopped at the recovery cap ({cap_bytes} bytes, {cap_lines} lines);"
                         f" continue with: {hint}\n")
    return 0
