"""Codex CLI (`@openai/codex`): command hooks in its `hooks.json`, the outcome read from its transcript.

The record `yarp.agents` reads (docs/design/agents.md lists the fields). Its
parts: `hooks` (the events decoded, the hooks files), `broker` (the hook
service: each call's outcome read from the session transcript, the view that
replaces a large output), `transcripts` (what a transcript record proves, and
`yarp import`'s reader).
"""

NAME = "codex"
LABEL = "Codex"
ADAPTER = "hooks"

# The hook process's facts are in hook.json beside this file (the registry sets them here as
# HOOK_EVENTS, BEFORE_TOOL, CAPS_VIEW, FAILURE_NOTICE). Codex has no PostToolUseFailure; Stop and
# SessionEnd settle calls that never got a post event. The failure notice is said whichever event failed.

# --- tools and results ----------------------------------------------------------------------

#: The hook events' shell tools (`exec_command` reaches hooks as `Bash`; the older `shell` tool
#: passes an argv list, which is recorded but never rewritten). Codex's commands are never rewritten.
SHELL_TOOLS = frozenset({"Bash", "shell"})
TOOL_CLASSES = {"exec_command": "shell", "shell": "shell", "local_shell": "shell", "shell_command": "shell"}
#: Codex 0.171.0: every tool output is cut to 10,000 tokens at 4 bytes a token, head and tail,
#: under a header and a truncation warning.
HOST_VIEWS = {
    ("shell", None): {"limit": 40_000, "notice": 250},
    ("other", None): {"limit": 40_000, "notice": 250},
}
#: Codex's hooks replace a result only with a view (a block); an unchanged one is the host's.
REPLACES_VIEW = False

# --- people: help, install, doctor ----------------------------------------------------------

HOOK_HELP = """\
Reads one PreToolUse, PostToolUse, Stop or SessionEnd event as JSON on stdin. Commands are
never rewritten. PostToolUse archives the command's output and exit code from
the session transcript and, when the output is over the cap, answers
{"decision": "block", "reason": VIEW} so the model gets YARP's capped view with
its yr_ marker. Every event also settles earlier calls of the session that got
no post event. Archive failures print nothing on stdout (Codex's own result
stands), are reported once per session on stderr, and exit 0.
"""
INSTALL_FILES = ("--user: $CODEX_HOME/hooks.json (else ~/.codex/hooks.json)",
                 "--project: ./.codex/hooks.json, running the yarp on PATH")
#: Codex runs an untrusted hook never and says nothing about it.
INSTALL_NOTES = (
    "Codex runs these hooks only after you trust them, and skips untrusted hooks without a word:",
    "  1. start `codex` in a terminal (in this project for --project),",
    "  2. type /hooks, review the entries that run `yarp hook codex`, and trust each of them.",
    "Trust is kept per entry in Codex's config.toml and lost when the entry changes (run this again, trust again).",
    "For one `codex exec` run without trusting: codex exec --dangerously-bypass-hook-trust ...",
)
DOCTOR_NAME = "Codex hooks"
#: Added to the doctor's line for installed hooks.
TRUST_NOTE = "Codex runs them only once trusted (/hooks in codex)"
RESULT_VIEW = {
    "host": "lets a PostToolUse hook replace the result of its shell, apply_patch and MCP tools (decision block)",
    "ours": "YARP replaces shell output over {cap} with its view",
    "left": "smaller output, and apply_patch and MCP results, are shown as Codex returns them",
    # The largest view the service hands Codex, whatever the cap (`broker.outcome.MAX_VIEW_CAP`, which
    # says why): Codex cuts a hook's text over 10,000 bytes to a preview.
    "max_cap": 9_900,
}
TRANSCRIPTS = "$CODEX_HOME/sessions and archived_sessions (else ~/.codex/...)"
