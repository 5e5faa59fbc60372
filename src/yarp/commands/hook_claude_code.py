"""`yarp hook claude-code`: the Claude Code command hook (one hook event on stdin)."""

from ..hooks.cli import HOOK_EPILOG as EPILOG
from ..hooks.cli import configure

AGENT = "claude-code"
SUMMARY = "Claude Code hook: archive one tool-call event read from stdin (installed by 'yarp hook install claude-code')"
__all__ = ["AGENT", "EPILOG", "SUMMARY", "configure", "run", "run_fast"]


def run(args) -> int:
    from ..hooks.cli import run_hook

    return run_hook(AGENT, args.archive)


def run_fast(argv: list[str]) -> int | None:
    """The agent runs this for every tool call, twice: skip building a parser when we can."""
    from ..hooks.cli import run_fast as hook_fast

    return hook_fast(AGENT, argv)
