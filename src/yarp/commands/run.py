"""`yarp run -- CMD ARGS...`: run a command with exact stream capture and a pruned view."""

SUMMARY = "run a command, archive its exact stdout/stderr, then show a pruned, capped view"
EPILOG = """\
examples:
  yarp run -- pytest -q                    standalone: the call gets its own archive entry
  yarp run --archive-agent pi --archive-account me --archive-session S \\
           --archive-call C -- git log      tie the run to a call an adapter began

The exit status is the command's (128 + N after signal N); usage errors exit 64.
If archiving fails, the exact raw output is shown and the status is kept.
"""
#: The positional is the command line itself: what follows `--` is the command's, never ours.
COMMAND_LINE = True
_FLAGS = ("archive_agent", "archive_account", "archive_session", "archive_call")


def configure(parser) -> None:
    import argparse

    for flag in _FLAGS:
        parser.add_argument("--" + flag.replace("_", "-"), metavar=flag.split("_")[1].upper())
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- then the command and its arguments")


def run(args) -> int:
    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    return _start(command, [getattr(args, f) for f in _FLAGS], args.archive)


def _start(command: list[str], given: list[str | None], archive: str | None) -> int:
    if not command:
        from yarp.errors import UsageError

        raise UsageError("yarp run: expected -- followed by a command")
    if any(v is not None for v in given) and not all(v for v in given):
        from yarp.errors import UsageError

        raise UsageError("yarp run: the archive flags go together: --archive-agent, --archive-account, "
                         "--archive-session and --archive-call")
    from yarp.clients.run import run_command

    return run_command(command, tuple(given) if all(given) else None, archive)


def run_fast(argv: list[str]) -> int | None:
    """Parse the common `yarp run [--archive P] [--archive-* V]... -- CMD` without argparse.

    `yarp run` wraps every shell command an agent runs, so its start-up skips
    building a parser. Anything else (help, an unknown option, a missing value)
    returns None and takes the ordinary argparse path, with its messages.
    """
    names = {"--archive": "archive", **{"--" + f.replace("_", "-"): f for f in _FLAGS}}
    values: dict[str, str] = {}
    index = 0
    while index < len(argv):
        word = argv[index]
        if word == "--":
            given = [values.get(f) for f in _FLAGS]
            return _start(argv[index + 1:], given, values.get("archive"))
        name, eq, inline = word.partition("=")
        key = names.get(name)
        if key is None or key in values:
            return None
        if eq:
            values[key] = inline
            index += 1
        elif index + 1 < len(argv):
            values[key] = argv[index + 1]
            index += 2
        else:
            return None
    return None
