"""Gemini CLI (`@google/gemini-cli`): command hooks that rewrite before the tool and replace the view after it.

The record `yarp.agents` reads (docs/design/agents.md lists the fields). Its
parts: `hooks` (the events decoded, the call identity live capture and
import both derive, the settings files), `broker` (the hook service: the
derived id, the rewrite, the view read by a tail call), `transcripts`
(`yarp import`'s reader of its session files).
"""

NAME = "gemini"
LABEL = "Gemini CLI"
ADAPTER = "hooks"

# The hook process's facts are in hook.json beside this file (the registry sets them here as
# HOOK_EVENTS, BEFORE_TOOL, CAPS_VIEW, REWRITE_OFF_ENV). Inside Gemini CLI's sandbox (it sets
# $SANDBOX) commands may not reach `yarp`: none is rewritten.

# --- tools and results ----------------------------------------------------------------------

SHELL_TOOLS = frozenset({"run_shell_command"})
TOOL_CLASSES = {"run_shell_command": "shell", "read_file": "read"}
#: Gemini CLI 0.61.0: shell output over 40,000 characters keeps 8,000 + 32,000 under a note;
#: read_file stops at 2,000 lines; other tools are not cut.
HOST_VIEWS = {
    ("shell", None): {"limit": 40_000, "notice": 250},
    ("read", None): {"limit": 20 * 1024 * 1024, "notice": 150, "lines": 2_000},
}
#: The AfterTool hook hands the model `result/after` (a tail call) or leaves the tool's own result.
REPLACES_VIEW = True

# --- people: help, install, doctor ----------------------------------------------------------

HOOK_HELP = """\
Reads one BeforeTool or AfterTool event as JSON on stdin. BeforeTool commits the
call before the tool runs and, when `yarp plan` would wrap a shell command,
answers with the arguments rewritten to `yarp run` (exact streams, a pruned
view). AfterTool archives the raw response and, when a response over the cap
reaches the model unpruned, answers with a tail call that has Gemini read YARP's
capped view (with its yr_ marker) instead. Archive failures print nothing on
stdout (Gemini's own result stands), are reported once per session on stderr,
and exit 0.
"""
INSTALL_FILES = ("--user: $GEMINI_CLI_HOME/.gemini/settings.json (else ~/.gemini/settings.json)",
                 "--project: ./.gemini/settings.json, running the yarp on PATH")
#: Gemini CLI reads no hook at all in a folder it does not trust.
INSTALL_NOTES = (
    "Gemini CLI runs these hooks only in a folder it trusts: answer its trust prompt once per folder",
    "(a headless `gemini -p` run takes --skip-trust). Project hooks load only if the folder was trusted",
    "when gemini started (or with GEMINI_CLI_TRUST_WORKSPACE=true).",
)
DOCTOR_NAME = "Gemini CLI hooks"
TRUST_NOTE = "Gemini CLI runs them only in folders it trusts"
RESULT_VIEW = {
    "host": "lets an AfterTool hook replace any tool's result (a tail call)",
    "ours": "YARP replaces every text result over {cap} with its view (a wrapped shell command shows yarp run's)",
    "left": "smaller results, and results holding an image or other non-text part, are shown as Gemini returns "
            "them",
}
TRANSCRIPTS = "~/.gemini/tmp/*/chats (or under $GEMINI_CLI_HOME)"
