"""`yarp hook gemini`: the Gemini CLI command hook (one hook event on stdin)."""

from yarp.clients.hook import configure

AGENT = "gemini"
SUMMARY = "Gemini CLI hook: archive one tool-call event read from stdin (installed by 'yarp hook install gemini')"
EPILOG = """\
Reads one BeforeTool or AfterTool event as JSON on stdin. BeforeTool commits the
call before the tool runs and, when `yarp plan` would wrap a shell command,
answers with the arguments rewritten to `yarp run` (exact streams, a pruned
view). AfterTool archives the raw response and, when a response over the cap
reaches the model unpruned, answers with a tail call that has Gemini read YARP's
capped view (with its yr_ marker) instead. Archive failures print nothing on
stdout (Gemini's own result stands), are reported once per session on stderr,
and exit 0.
"""
__all__ = ["AGENT", "EPILOG", "SUMMARY", "configure", "run"]


def run(args) -> int:
    from yarp.clients.hook import run_hook

    return run_hook(AGENT, args.archive)
