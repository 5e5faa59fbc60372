"""`yarp rewrite`: print the command an adapter should run (rewritten or original)."""

from __future__ import annotations

import sys

from yarp.commands.plan import COMMAND_LINE, add_planning_options  # noqa: F401  (COMMAND_LINE: as in `yarp plan`)

SUMMARY = "print the shell command to run: wrapped in 'yarp run' when a rule reduces it, else the original"
EPILOG = """\
Takes the same options and command text as 'yarp plan' and prints only the
command to execute, followed by one newline.
"""
ARCHIVE_OPTION = False


def configure(parser) -> None:
    add_planning_options(parser)


def run(args) -> int:
    from yarp.commands.plan import make_plan

    text, plan = make_plan(args)
    sys.stdout.write((plan.command if plan.execution == "rewrite" else text) + "\n")
    return 0
