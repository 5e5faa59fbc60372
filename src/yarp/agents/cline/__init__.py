"""Cline's CLI (`cline` on npm): hook files in its hooks folder; shell commands rewritten, no view after.

The record `yarp.agents` reads (docs/design/agents.md lists the fields). Its
parts: `hooks` (the events decoded, the answer that rewrites a command, the
hooks folders), `broker` (its service), `transcripts` (`yarp import`'s reader
of its session index and message files). Cline 3.0.65 runs an executable file
named for the event (`PreToolUse`, `PostToolUse`) from its hooks folders and
hands it the event as JSON on stdin; a `PreToolUse` answer's `overrideInput`
replaces the tool's input, which is how a `run_commands` call of one command
runs through `yarp run`. A `PostToolUse` answer can only add context or
cancel, so no other result is replaced: it is archived as Cline made it
(docs/adapters.md, "Cline").
"""

NAME = "cline"
LABEL = "Cline"
ADAPTER = "hooks"

# The hook process's facts are in hook.json beside this file (the registry sets them here as
# HOOK_EVENTS, BEFORE_TOOL, CAPS_VIEW, EVENT_MEMBER and SESSION_MEMBER): Cline's events name
# themselves in `hookName` (`tool_call`, `tool_result`) and their conversation in `taskId`.

# --- tools and results ----------------------------------------------------------------------

#: `run_commands` takes a list of commands; a call of exactly one is rewritten (`hooks.ClineEvent`).
SHELL_TOOLS = frozenset({"run_commands"})
TOOL_CLASSES = {"run_commands": "shell", "read_files": "read"}
#: Cline 3.0.65 (@cline/core 0.0.86, dist/index.js) cuts a command's output over 48,000 characters to
#: its first and last 24,000 with a one-line notice between (`maxChars ?? 48000`, "[... output
#: truncated: N chars total ...]"), and `read_files` returns at most 2,000 lines or 48,000 characters
#: of a file (its tool description: "at most 2000 lines / ~47k characters").
HOST_VIEWS = {
    ("shell", None): {"limit": 48_000, "overflow": 48_130},
    ("read", None): {"limit": 48_000, "overflow": 48_000, "lines": 2_000},
}
#: No hook may replace a result: what the model got is the tool's own (a shell call's is `yarp run`'s view).
REPLACES_VIEW = False

# --- people: help, install, doctor ----------------------------------------------------------

HOOK_HELP = """\
Reads one Cline hook event (hookName tool_call or tool_result) as JSON on stdin.
tool_call commits the call before the tool runs and, for a run_commands call of
one command that YARP would prune, answers with overrideInput: the same
command through `yarp run`, which keeps its exact output and prints the capped
view. tool_result archives the result as Cline made it (Cline lets no hook
replace a result). Archive failures print nothing on stdout and exit 0.
"""
INSTALL_FILES = ("--user: $CLINE_DIR/hooks/ (else ~/.cline/hooks/): PreToolUse, PostToolUse",
                 "--project: ./.clinerules/hooks/, running the yarp on PATH")
INSTALL_NOTES = ()
DOCTOR_NAME = "Cline hooks"
RESULT_VIEW = {
    "host": "lets no hook replace a tool's result (a PostToolUse hook may only add context or cancel)",
    "ours": "YARP runs a one-command run_commands call through `yarp run`, whose output the model gets capped "
            "at {cap}",
    "left": "every other result (file reads, several commands in one call) is shown as Cline returns it, "
            "and archived whole",
}
TRANSCRIPTS = "~/.cline/data/db/sessions.db and the sessions' message files (or under $CLINE_DATA_DIR, $CLINE_DIR)"
