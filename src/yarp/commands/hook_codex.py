"""`yarp hook codex`: the Codex command hook (one hook event on stdin)."""

from __future__ import annotations

AGENT = "codex"
SUMMARY = "Codex hook: archive one tool-call event read from stdin (installed by 'yarp hook install codex')"
EPILOG = """\
Reads one PreToolUse, PostToolUse or PostToolUseFailure event as JSON on stdin.
PreToolUse answers on stdout only to hand on a shell command rewritten to
'yarp run'; every other event, and every archive failure, prints nothing and
exits 0 so the tool runs untouched. Failures are reported once per session on
stderr.
"""


def configure(parser) -> None:
    return None


def run(args) -> int:
    from ..hooks.cli import run_hook

    return run_hook(AGENT, args.archive)
