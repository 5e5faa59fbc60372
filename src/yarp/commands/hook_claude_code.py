"""`yarp hook claude-code`: the Claude Code command hook (one hook event on stdin)."""

from yarp.clients.hook import HOOK_EPILOG as EPILOG
from yarp.clients.hook import configure

AGENT = "claude-code"
SUMMARY = "Claude Code hook: archive one tool-call event read from stdin (installed by 'yarp hook install claude-code')"
__all__ = ["AGENT", "EPILOG", "SUMMARY", "configure", "run"]


def run(args) -> int:
    from yarp.clients.hook import run_hook

    return run_hook(AGENT, args.archive)
