"""`yarp run -- CMD ARGS...`: run a command with exact stream capture and a pruned view.

`yarp.cli` hands the common form straight to `yarp.clients.run.run_fast`; this
module gives `--help` and the argparse path for everything else.
"""

SUMMARY = "run a command, archive its exact stdout/stderr, then show a pruned, capped view"
EPILOG = """\
examples:
  yarp run -- pytest -q                    standalone: the call gets its own archive entry
  yarp run --archive-agent A --archive-account me --archive-session S \\
           --archive-call C -- git log      tie the run to a call an adapter began
  yarp run --archive-agent A --archive-account me --archive-session S \\
           --archive-parent C -- npm test   a call of its own inside the adapter's session
  yarp run --pass -- git diff | less        output passes through as it comes (no view)

The exit status is the command's; a command killed by signal N kills yarp by N
(a caller sees 128 + N); usage errors exit 64.
If archiving fails, the exact raw output is shown and the status is kept.
"""
#: The positional is the command line itself: what follows `--` is the command's, never ours.
COMMAND_LINE = True


def configure(parser) -> None:
    import argparse

    from yarp.clients.run import VALUE_FLAGS

    for flag in VALUE_FLAGS:
        parser.add_argument("--" + flag.replace("_", "-"), metavar=flag.split("_")[1].upper())
    parser.add_argument("--pass", action="store_true", dest="passing",
                        help="pass the output through as it comes (no view), for a pipe, a file or $(...)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- then the command and its arguments")


def run(args) -> int:
    from yarp.clients.run import VALUE_FLAGS, start

    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    return start(command, {f: getattr(args, f) for f in VALUE_FLAGS}, args.archive, passing=args.passing)
