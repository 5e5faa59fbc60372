"""`yarp hook codex`: the Codex command hook (one hook event on stdin)."""

from ..hooks.cli import configure

AGENT = "codex"
SUMMARY = "Codex hook: archive one tool-call event read from stdin (installed by 'yarp hook install codex')"
EPILOG = """\
Reads one PreToolUse, PostToolUse, Stop or SessionEnd event as JSON on stdin. Commands are
never rewritten. PostToolUse archives the command's output and exit code from
the session transcript and, when the output is over the cap, answers
{"decision": "block", "reason": VIEW} so the model gets YARP's capped view with
its yr_ marker. Every event also settles earlier calls of the session that got
no post event. Archive failures print nothing on stdout (Codex's own result
stands), are reported once per session on stderr, and exit 0.
"""
__all__ = ["AGENT", "EPILOG", "SUMMARY", "configure", "run", "run_fast"]


def run(args) -> int:
    from ..hooks.cli import run_hook

    return run_hook(AGENT, args.archive)


def run_fast(argv: list[str]) -> int | None:
    """The agent runs this for every tool call, twice: skip building a parser when we can."""
    from ..hooks.cli import run_fast as hook_fast

    return hook_fast(AGENT, argv)
