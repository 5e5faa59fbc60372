"""Qwen Code (`@qwen-code/qwen-code`): command hooks in its settings file; no rewrite, the view replaced after.

The record `yarp.agents` reads (docs/design/agents.md lists the fields). Its
parts: `hooks` (the events decoded, the answer that replaces a result, the
settings files), `transcripts` (`yarp import`'s reader of its chat files).
Qwen Code 0.24.4 ignores a `PreToolUse` hook's `updatedInput` (only its
permission-prompt path applies it, and a headless run never prompts), so no
command is rewritten; a `PostToolUse` hook that answers `continue: false`
hands the model its `stopReason` as the tool's whole result, which is how the
capped view replaces a large output (docs/adapters.md, "Qwen Code").
"""

NAME = "qwen-code"
LABEL = "Qwen Code"
ADAPTER = "hooks"

# The hook process's facts are in hook.json beside this file (the registry sets them here as
# HOOK_EVENTS, BEFORE_TOOL and CAPS_VIEW).

# --- tools and results ----------------------------------------------------------------------

#: No shell tool is rewritten: Qwen Code 0.24.4 drops a PreToolUse hook's `updatedInput`.
SHELL_TOOLS = frozenset()
TOOL_CLASSES = {"run_shell_command": "shell", "read_file": "read"}
#: Qwen Code 0.24.4 saves a result it cuts whole under ~/.qwen/tmp and hands the model a note naming
#: the file and a preview of its first and last lines: the shell tool cuts its text over 30,000
#: characters to a 4,000-character preview (4,484 characters in all for `seq 1 100000`); every other
#: tool's text over 25,000 characters or 1,000 lines is cut to a 25,000-character preview
#: (`truncateToolOutput`, `DEFAULT_SHELL_OUTPUT_THRESHOLD`, `DEFAULT_TRUNCATE_TOOL_OUTPUT_*`).
HOST_VIEWS = {
    ("shell", None): {"limit": 30_000, "overflow": 4_500},
    ("read", None): {"limit": 25_000, "overflow": 25_500, "lines": 1_000},
    ("other", None): {"limit": 25_000, "overflow": 25_500, "lines": 1_000},
}
#: The PostToolUse hook hands the model `result/after` (a `stopReason`) or leaves the tool's own result.
REPLACES_VIEW = True

# --- people: help, install, doctor ----------------------------------------------------------

HOOK_HELP = """\
Reads one PreToolUse, PostToolUse or PostToolUseFailure event as JSON on stdin.
PreToolUse commits the call before the tool runs (Qwen Code applies no
rewritten input, so nothing is rewritten). PostToolUse archives the result,
with the whole text Qwen Code saved for a large one, and, when Qwen Code cut
the text or the text the model would get is over the cap, answers
`continue: false` with YARP's capped view of the whole text (its yr_ marker)
as the reason, which Qwen Code hands the model instead. Archive failures
print nothing on stdout and exit 0.
"""
INSTALL_FILES = ("--user: $QWEN_HOME/settings.json (else ~/.qwen/settings.json)",
                 "--project: ./.qwen/settings.json, running the yarp on PATH")
INSTALL_NOTES = ()
DOCTOR_NAME = "Qwen Code hooks"
RESULT_VIEW = {
    "host": "lets a PostToolUse hook replace a successful tool's result (continue: false, its stopReason)",
    "ours": "YARP replaces every text result over {cap}, and every result Qwen Code cut, with its view of the "
            "whole text",
    "left": "smaller results and failures (PostToolUseFailure takes no replacement) are shown as Qwen Code "
            "returns them",
}
TRANSCRIPTS = "~/.qwen/projects/*/chats (or under $QWEN_RUNTIME_DIR, $QWEN_HOME)"
