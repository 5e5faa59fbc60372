"""The `yarp` command line: a thin, lazily loaded layer over the library.

`COMMANDS` maps each command path to the module that implements it. A command
module exposes ``SUMMARY`` (one line), ``configure(parser)`` and ``run(args) ->
int``; it
translates arguments into library calls and nothing more. Options may come
before or after positionals (argparse's intermixed parsing), except in a
command whose last positional is a command line (``COMMAND_LINE = True``:
`yarp run`, `plan`, `rewrite`), where everything after ``--`` belongs to that
command. Only the
module of the command being run is imported, so `yarp run` (which wraps every
shell command an agent executes) pays for nothing else.

Every `YarpError` becomes one bounded line on stderr and its exit status
(64 usage, 65 data, 74 I/O); no traceback reaches the user.
"""

import sys

from yarp._version import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:
    from yarp.errors import YarpError

#: command path -> implementing module (inside `yarp.commands`).
COMMANDS: dict[tuple[str, ...], str] = {
    ("run",): "run",
    ("plan",): "plan",
    ("rewrite",): "rewrite",
    ("config", "show"): "config_show",
    ("search",): "search",
    ("calls",): "calls",
    ("show",): "show",
    ("read",): "read",
    ("restore",): "restore",
    ("archive", "stats"): "archive_stats",
    ("archive", "savings"): "archive_savings",
    ("archive", "export"): "archive_export",
    ("archive", "verify"): "archive_verify",
    ("archive", "prune"): "archive_prune",
    ("archive", "restore"): "archive_restore",
    ("archive", "ingest"): "archive_ingest",
    ("archive", "broker"): "archive_broker",
    ("hook", "install"): "hook_install",
    ("hook", "uninstall"): "hook_uninstall",
    ("import",): "import_",
    ("doctor",): "doctor",
}

#: `yarp hook AGENT`, one command per agent with command hooks (`yarp.clients.hook.hook_facts`), which
#: the agent starts twice for every tool call: its argument list is read by
#: `yarp.clients.hook.run_fast`, reached without importing `yarp.commands` and the command module
#: (0.7 M instructions of each event). `yarp.commands.hook_agent` still gives `--help`, and argparse
#: when `run_fast` declines.
HOOK = "hook"
#: `yarp run`, which wraps every shell command an agent runs: its common form goes to
#: `yarp.clients.run.run_fast` the same way, skipping `yarp.commands` and `yarp.commands.run`.
RUN = ("run",)

GROUPS = {
    "archive": "inspect, verify and maintain the tool-call archive",
    "config": "show the effective configuration",
    "hook": "agent hook entry points and their installation",
}


def _parser_class():
    """argparse, imported on demand, reporting usage errors as `UsageError` (exit 64)."""
    import argparse

    from yarp.errors import UsageError

    class _Parser(argparse.ArgumentParser):
        def error(self, message: str) -> None:  # type: ignore[override]
            # `yarp: ` is put in front of every error once (`_report`): the command path follows it.
            raise UsageError(f"{self.prog.removeprefix('yarp ')}: {message}")

    return _Parser, argparse.RawDescriptionHelpFormatter


def load_command(path: tuple[str, ...]):
    """Import the module of the command at `path` (a key of `COMMANDS`, or `yarp hook AGENT`) and return it."""
    if path not in COMMANDS:
        from yarp.commands.hook_agent import command

        return command(path[1])
    # __import__ rather than importlib: importing importlib costs `yarp run` about a millisecond.
    name = f"yarp.commands.{COMMANDS[path]}"
    __import__(name)
    return sys.modules[name]


def build_parser(path: tuple[str, ...], module):
    """The command's argument parser: its `SUMMARY` and epilog, `--archive` unless it opts out, then its own options."""
    parser_class, formatter = _parser_class()
    parser = parser_class(
        prog="yarp " + " ".join(path),
        description=module.SUMMARY,
        formatter_class=formatter,
        epilog=getattr(module, "EPILOG", None),
    )
    if getattr(module, "ARCHIVE_OPTION", True):
        parser.add_argument(
            "--archive",
            metavar="PATH",
            help="archive database to use (default: $YARP_ARCHIVE, config archive.path, "
            "else ~/.local/share/yarp/tool-calls.sqlite3)",
        )
    module.configure(parser)
    return parser


def parse_arguments(path: tuple[str, ...], module, rest: list[str]):
    """The command's arguments from `rest`: options before or after positionals.

    Raises `UsageError` for bad usage (`SystemExit` for `--help`).
    """
    parser = build_parser(path, module)
    if getattr(module, "COMMAND_LINE", False):
        return parser.parse_args(rest)  # everything after `--` is the command's own
    try:
        return parser.parse_intermixed_args(rest)
    except _usage_error():
        # Before Python 3.13, intermixed parsing takes a word after `--` that
        # starts with `-` for an option when no positional came before `--`
        # (`--json -- -x`); the classic parser reads that order exactly.
        if "--" not in rest:
            raise
        try:
            return parser.parse_args(rest)
        except _usage_error():
            pass
        raise


def _usage_error() -> type:
    """`UsageError`, for an `except` clause (loaded on a failure only, as `reported_errors`)."""
    from yarp.errors import UsageError

    return UsageError


def _overview(prefix: tuple[str, ...] = ()) -> str:
    lines = [f"usage: yarp {' '.join(prefix) + ' ' if prefix else ''}COMMAND [ARGS...]", ""]
    if not prefix:
        lines += ["Keep every agent tool call exactly; show the agent a pruned, capped view.", ""]
    lines.append("commands:")
    seen: set[str] = set()
    for path in [*COMMANDS, *_hook_paths(prefix)]:
        if path[: len(prefix)] != prefix:
            continue
        name = path[len(prefix)]
        if name in seen:
            continue
        seen.add(name)
        if len(path) > len(prefix) + 1:
            lines.append(f"  {name:<14} {GROUPS.get(name, '')}")
        else:
            lines.append(f"  {name:<14} {load_command(path).SUMMARY}")
    lines += ["", "Run 'yarp COMMAND --help' for a command's options."]
    if not prefix:
        lines.insert(0, f"yarp {__version__}")
    return "\n".join(lines) + "\n"


def _hook_paths(prefix: tuple[str, ...]) -> list[tuple[str, str]]:
    """`yarp hook AGENT` of every agent with command hooks, for the overview of `prefix`."""
    if prefix != (HOOK,):
        return []
    from yarp.agents import hooked

    return [(HOOK, name) for name in hooked()]


def _match(argv: list[str]) -> tuple[tuple[str, ...], list[str]] | None:
    for length in (2, 1):
        path = tuple(argv[:length])
        if path in COMMANDS:
            return path, argv[length:]
    if len(argv) > 1 and argv[0] == HOOK:
        from yarp.clients.hook import hook_facts

        if hook_facts(argv[1]) is not None:
            return (HOOK, argv[1]), argv[2:]
    return None


def main(argv: list[str] | None = None) -> int:
    """Run `yarp` with `argv` and return the exit status; a known failure never escapes as a traceback.

    A `YarpError` is reported in one bounded line with its exit code; Ctrl-C exits 130; a closed pipe exits 0.
    """
    whole_process = argv is None
    argv = sys.argv[1:] if whole_process else list(argv)
    try:
        if not argv or argv[0] in ("-h", "--help", "help"):
            sys.stdout.write(_overview())
            return 0
        if argv[0] == "--version":
            print(f"yarp {__version__}")
            return 0
        matched = _match(argv)
        if matched is None:
            if argv[0] in GROUPS and (len(argv) == 1 or argv[1] in ("-h", "--help")):
                sys.stdout.write(_overview((argv[0],)))
                return 0
            from yarp.errors import UsageError, bounded_text

            raise UsageError(f"unknown command: {bounded_text(' '.join(argv[:2]), 80)} (see 'yarp --help')")
        path, rest = matched
        # `yarp run`, the hooks and the ingest bridge start for every tool call or
        # session: they skip argparse when they can.
        if path not in COMMANDS:  # `yarp hook AGENT`
            from yarp.clients.hook import run_fast

            status = run_fast(path[1], rest)
        elif path == RUN:
            from yarp.clients.run import run_fast

            # A whole process dies by the signal that killed its command, as a shell would see it.
            status = run_fast(rest, whole_process)
        else:
            fast = getattr(load_command(path), "run_fast", None)
            status = fast(rest) if fast is not None else None
        if status is not None:
            if whole_process:
                _exit_now(status)
            return status
        module = load_command(path)  # imported already, unless a hook declined its fast path
        return int(module.run(parse_arguments(path, module, rest)) or 0)
    except reported_errors() as exc:
        _report(exc)
        return exc.exit_code
    except SystemExit as exc:  # argparse --help exits 0 through here
        from yarp.errors import EXIT_USAGE

        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (e.g. `yarp read … | head`); that is not an error.
        try:
            sys.stdout = None  # type: ignore[assignment]
        finally:
            return 0


def reported_errors() -> "type[YarpError]":
    """`YarpError`, for an `except` clause: it is evaluated only when an exception is
    being matched, so the commands that start for every tool call (`yarp run`, the
    hooks) finish without loading the error classes, whose 30 class statements cost
    each of them about 1 ms (docs/design/clients.md, "The error classes load on the
    first failure"). Their modules import a class where they raise it, and the hook
    client and the runner match a failure through one function each, which does the same."""
    from yarp.errors import YarpError

    return YarpError


def _exit_now(status: int) -> None:
    """End a per-tool-call process (`yarp run`, a hook, the bridge) without the interpreter's teardown.

    Once their answer is written these commands hold nothing that needs
    releasing (their files are closed and removed, no thread runs): flushing
    the standard streams is all an orderly exit would still do for them, and
    tearing down the modules they loaded cost every tool call about 3 ms of
    CPU (docs/design/clients.md, "Per-tool-call processes skip the interpreter's
    teardown"). In-process callers pass `argv` and get a return.
    """
    import os

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):  # reader gone, stream closed, or None (fd closed at start)
            pass
    os._exit(status)


def _report(exc: "YarpError") -> None:
    try:
        sys.stderr.write(f"yarp: {exc.message}\n")
        sys.stderr.flush()
    except OSError:
        pass
