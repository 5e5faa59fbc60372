"""`yarp hook AGENT`: an agent's command hook (one hook event on stdin), for every agent with command hooks.

The agent's record (`yarp.agents`) gives the help text; the work is
`yarp.clients.hook`, which `yarp.cli` reaches directly for the common form.
"""

from yarp.clients.hook import configure

ARCHIVE_OPTION = True


class HookCommand:
    """The command module `yarp.cli` expects, for one agent: `SUMMARY`, `EPILOG`, `configure`, `run`."""

    ARCHIVE_OPTION = ARCHIVE_OPTION

    def __init__(self, record) -> None:
        self.agent = record.NAME
        self.SUMMARY = (f"{record.LABEL} hook: archive one tool-call event read from stdin "
                        f"(installed by 'yarp hook install {record.NAME}')")
        self.EPILOG = record.HOOK_HELP

    @staticmethod
    def configure(parser) -> None:
        """Hook commands take no options beyond --archive."""
        configure(parser)

    def run(self, args) -> int:
        """Forward the event on stdin (argparse's path: `yarp.cli` takes the common form to `run_fast`)."""
        from yarp.clients.hook import run_hook

        return run_hook(self.agent, args.archive)


def command(agent: str) -> HookCommand:
    """The command of `yarp hook AGENT` (`UsageError` for an agent without command hooks)."""
    from yarp.agents import hook_record

    record = hook_record(agent)
    if record is None:
        from yarp.errors import UsageError

        raise UsageError(f"unknown command: hook {agent[:40]} (see 'yarp hook --help')")
    return HookCommand(record)
