"""`yarp hook codex`: the Codex command hook (one hook event on stdin)."""

from yarp.clients.hook import configure

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
__all__ = ["AGENT", "EPILOG", "SUMMARY", "configure", "run"]


def run(args) -> int:
    from yarp.clients.hook import run_hook

    return run_hook(AGENT, args.archive)
