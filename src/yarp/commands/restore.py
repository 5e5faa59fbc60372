"""`yarp restore`: write one call's exact original bytes to stdout or a new private file."""

from __future__ import annotations

import json
import os
import sys

from yarp.archive import recovery
from yarp.commands import _archive
from yarp.errors import ArchiveError, UsageError
from yarp.private_files import create_private

SUMMARY = "write an archived call's exact original output to stdout or a file"
EPILOG = """\
Forms:
  yarp restore REF [SOURCE]                   exact bytes to stdout
  yarp restore REF [SOURCE] --output FILE     exact bytes to a new file (mode 0600)

SOURCE is stdout, stderr, result_text, source_output or result (default: the
first recovery source). The bytes are checked against their stored SHA-256
before anything is written. FILE must not exist yet and is never reached
through a symbolic link. Not bounded by the recovery cap: this is the whole source.

Exit status: 0 written, 64 bad usage, 65 bad reference or damaged payload,
74 archive unavailable or FILE cannot be created.

Examples:
  yarp restore yr_4f91d03ab8d44712a48fa8b0d671e3d2 > stdout.log
  yarp restore yr_4f91d03ab8d44712a48fa8b0d671e3d2 stderr --output stderr.log
"""


def configure(parser) -> None:
    parser.add_argument("ref", metavar="REF", help="archive reference")
    parser.add_argument("source", nargs="?", metavar="SOURCE", help="which recovery source (default: the first)")
    parser.add_argument("--output", "-o", metavar="FILE", help="create FILE (0600) instead of writing stdout")
    parser.add_argument("--json", action="store_true", help="with --output: print what was written as JSON")


def create_private_output(path: str) -> int:
    """Open a new file 0600 for writing, refusing existing files and symlinks."""
    try:
        return create_private(path)
    except FileExistsError:
        raise UsageError("output file already exists; choose a new path") from None
    except OSError as exc:
        raise ArchiveError(f"cannot create output file: {exc.strerror}") from None


def run(args) -> int:
    recovery.check_ref(args.ref)
    if args.json and not args.output:
        raise UsageError("--json needs --output (stdout carries the restored bytes)")
    conn = _archive.open_archive(args.archive)
    try:
        call = recovery.find_call(conn, args.ref)
        source = recovery.choose_source(recovery.recovery_sources(conn, call), args.source)
        if args.output is None:
            # Prove the bytes first: a damaged payload must not reach stdout half-written.
            recovery.check_source(conn, source)
            out = sys.stdout.buffer
            for chunk in recovery.iter_verified(conn, source):
                out.write(chunk)
            out.flush()
            return 0
        fd = create_private_output(args.output)
        try:
            with os.fdopen(fd, "wb") as handle:
                for chunk in recovery.iter_verified(conn, source):
                    handle.write(chunk)
                handle.flush()
                os.fsync(handle.fileno())
        except BaseException:
            # Never leave a partial or unverified copy behind.
            os.unlink(args.output)
            raise
    finally:
        conn.close()
    if args.json:
        sys.stdout.write(json.dumps({"ref": args.ref, "source": source.name, "bytes": source.length,
                                     "sha256": source.sha256.hex()}) + "\n")
    return 0
