"""Factory's Droid (`@factory/cli`): command hooks in its settings file; shell commands rewritten, no view after.

The record `yarp.agents` reads (docs/design/agents.md lists the fields). Its
parts: `hooks` (the events decoded, the call identity live capture and
import both derive, the settings files), `broker` (the hook service: the
derived id, the rewrite, the finish, and the calls Droid sent no
`PostToolUse` for settled from its session file), `transcripts` (`yarp
import`'s reader of its session files, which the service reuses).
Droid 0.225.2 applies a `PreToolUse` hook's `updatedInput`, so a shell
command `yarp plan` wraps runs as `yarp run` and the model gets its capped
view; no hook answer replaces a result after the tool, so every other
result reaches the model as Droid made it, and is archived whole
(docs/adapters.md, "Droid").
"""

NAME = "droid"
LABEL = "Droid"
ADAPTER = "hooks"

# The hook process's facts are in hook.json beside this file (the registry sets them here as
# HOOK_EVENTS, BEFORE_TOOL and CAPS_VIEW). Droid sends no event after a tool that failed; Stop and
# SessionEnd settle such calls from the session file. No view is replaced after the tool, so
# requests carry no cap (CAPS_VIEW is false): a wrapped command's view is `yarp run`'s.

# --- tools and results ----------------------------------------------------------------------

SHELL_TOOLS = frozenset({"Execute"})
TOOL_CLASSES = {"execute": "shell", "read": "read"}
#: Droid 0.225.2 (its compiled bundle): a command's output over 12,000 characters (`maxLength`) is
#: summarised to its first and last 30 lines and the lines near words such as "error" (each line cut
#: to 600 characters), under a note naming the file that keeps it whole; `seq 1 100000` shows 421
#: characters, typical output about 60 lines of 60 characters. Read returns at most 2,400 lines
#: (`limit`) and 60,000 characters, the head and tail of a longer text under a note.
HOST_VIEWS = {
    ("shell", None): {"limit": 12_000, "overflow": 3_700},
    ("read", None): {"limit": 60_000, "notice": 200, "lines": 2_400},
}
#: No hook hands the model `result/after`: Droid shows every result it made.
REPLACES_VIEW = False

# --- people: help, install, doctor ----------------------------------------------------------

HOOK_HELP = """\
Reads one PreToolUse, PostToolUse, Stop or SessionEnd event as JSON on stdin.
PreToolUse commits the call before the tool runs and, when `yarp plan` would
wrap an Execute command, answers with the command rewritten to `yarp run`
(exact streams archived, the model shown yarp run's capped view). PostToolUse
archives the result (Droid lets no hook replace it). Droid sends no event
after a tool that failed: PostToolUse, Stop and SessionEnd finish such calls
of the session from its session file. Archive failures print nothing on
stdout, are reported once per session on stderr, and exit 0.
"""
INSTALL_FILES = ("--user: ~/.factory/settings.json (under $FACTORY_HOME_OVERRIDE when set)",
                 "--project: ./.factory/settings.json, running the yarp on PATH")
INSTALL_NOTES = ()
DOCTOR_NAME = "Droid hooks"
RESULT_VIEW = {
    "host": "lets a PreToolUse hook rewrite a command, but no hook replace a result",
    "ours": "YARP runs the shell commands it wraps through yarp run, whose view is capped at {cap}",
    "left": "every other result (reads, searches, edits, commands it leaves alone) is shown as Droid returns it "
            "(archived whole)",
}
TRANSCRIPTS = "~/.factory/sessions (under $FACTORY_HOME_OVERRIDE when set)"
