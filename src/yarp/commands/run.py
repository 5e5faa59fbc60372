"""`yarp run -- CMD ARGS...`: run a command with exact stream capture and a pruned view."""

from __future__ import annotations

import argparse

from ..errors import UsageError

SUMMARY = "run a command, archive its exact stdout/stderr, then show a pruned, capped view"
EPILOG = """\
examples:
  yarp run -- pytest -q                    standalone: the call gets its own archive entry
  yarp run --archive-agent pi --archive-account me --archive-session S \\
           --archive-call C -- git log      tie the run to a call an adapter began

The exit status is the command's (128 + N after signal N); usage errors exit 64.
If archiving fails, the exact raw output is shown and the status is kept.
"""
_FLAGS = ("archive_agent", "archive_account", "archive_session", "archive_call")


def configure(parser) -> None:
    for flag in _FLAGS:
        parser.add_argument("--" + flag.replace("_", "-"), metavar=flag.split("_")[1].upper())
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- then the command and its arguments")


def run(args) -> int:
    from ..runner import run_command

    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        raise UsageError("yarp run: expected -- followed by a command")
    given = [getattr(args, f) for f in _FLAGS]
    if any(v is not None for v in given) and not all(v for v in given):
        raise UsageError("yarp run: the archive flags go together: --archive-agent, --archive-account, "
                         "--archive-session and --archive-call")
    return run_command(command, tuple(given) if all(given) else None, args.archive)
