"""`yarp plan`: how an adapter should run one shell command, as JSON."""

from __future__ import annotations

import json
import os
import sys

SUMMARY = "decide whether a shell command is wrapped by 'yarp run' and how its result is treated"
EPILOG = """\
The command text is the single argument after the options (quote it), or
standard input when no argument is given (one trailing newline
removed); several arguments are joined with
single spaces. With --json the answer is one line:

  {"version":1,"execution":{"kind":"original"}|{"kind":"rewrite","command":"..."},
   "result":{"kind":"ordinary"|"recovery"}}

Only a single simple command that exactly one reduce rule selects is rewritten,
as 'yarp run [archive flags] -- <original text unchanged>' (the reference
planning). With --compound, every output-producing simple command inside
lists, pipelines, redirections and substitutions gets 'yarp run' in front of
its name ('--pass' where its output goes into a pipe, a file or '$(...)'),
and the rewrite says how it archives: "wrapped":"whole" (one simple command:
the adapter's call holds the streams) or "wrapped":"segments" (each wrapped
command records its own call, named by --archive-parent, under the adapter's).
"""
ARCHIVE_OPTION = False
#: The positional is the command text: what follows `--` is the command's, never ours.
COMMAND_LINE = True


def configure(parser) -> None:
    parser.add_argument("--json", action="store_true", help="print the plan as one JSON object")
    add_planning_options(parser)


def add_planning_options(parser) -> None:
    parser.add_argument("--compound", action="store_true",
                        help="wrap every output-producing command of a compound command (see below)")
    parser.add_argument("--launcher", metavar="TEXT", default="yarp",
                        help="shell text that runs yarp in the agent's shell, e.g. a quoted absolute path (default: yarp)")
    parser.add_argument("--archive-agent", metavar="A", help="agent of the call begun by the adapter")
    parser.add_argument("--archive-account", metavar="B", help="account of that call")
    parser.add_argument("--archive-session", metavar="S", help="source session id of that call")
    parser.add_argument("--archive-call", metavar="C", help="source call id of that call")
    parser.add_argument(
        "--rule-pack", metavar="PATH", action="append", default=[],
        help="extra rule pack loaded after config rules.packs (repeatable)",
    )
    parser.add_argument("command", nargs="*", help="the shell command text (default: read standard input)")


def make_plan(args):
    from yarp.config import load
    from yarp.errors import UsageError
    from yarp.limits import MAX_COMMAND_BYTES
    from yarp.view.plan import ArchiveIdentity, plan_command
    from yarp.view.rules import load_rules

    archive = ArchiveIdentity.from_flags(args.archive_agent, args.archive_account, args.archive_session, args.archive_call)
    if args.command:
        text = " ".join(args.command)
    else:
        data = sys.stdin.buffer.read(MAX_COMMAND_BYTES + 1)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise UsageError("the command on standard input is not UTF-8") from None
        if text.endswith("\n") and len(data) <= MAX_COMMAND_BYTES:
            text = text[:-1]  # the newline `echo CMD | yarp plan` adds is not part of the command
    config = load()
    rules = load_rules(list(config.rule_packs) + list(args.rule_pack))
    # The adapter runs this in the agent's environment: its PATH is the shell's.
    return text, plan_command(text, rules, archive, launcher=args.launcher, compound=args.compound,
                              search_path=os.environ.get("PATH"), cwd=os.getcwd())


def run(args) -> int:
    _, plan = make_plan(args)
    if args.json:
        sys.stdout.write(json.dumps(plan.to_json(), separators=(",", ":"), ensure_ascii=False) + "\n")
    else:
        lines = [f"execution: {plan.execution}"]
        if plan.command is not None:
            lines.append(f"command: {plan.command}")
        if plan.wrapped is not None:
            lines.append(f"wrapped: {plan.wrapped} ({plan.segments} command(s))")
        if plan.unwrapped:
            lines.append("left in the shell: " + ", ".join(plan.unwrapped))
        lines += [f"result: {plan.result}", f"reason: {plan.reason}"]
        sys.stdout.write("\n".join(lines) + "\n")
    return 0
