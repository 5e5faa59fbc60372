"""Claude Code (`@anthropic-ai/claude-code`): command hooks in its settings file.

The record `yarp.agents` reads (docs/design/agents.md lists the fields). Its
parts: `hooks` (the events decoded, the settings files), `broker` (the hook
service: the rewrite with the shell snapshot's names, the view that replaces
a large result), `transcripts` (`yarp import`'s reader).
"""

NAME = "claude-code"
LABEL = "Claude Code"
ADAPTER = "hooks"

# The hook process's facts (the events it forwards and `yarp hook install` registers, the one before
# the tool, whether requests carry the cap) are in hook.json beside this file: the registry sets them
# here as HOOK_EVENTS, BEFORE_TOOL and CAPS_VIEW.

# --- tools and results ----------------------------------------------------------------------

#: Tools (as the hook events name them) whose string `command` the broker may rewrite to `yarp run`.
SHELL_TOOLS = frozenset({"Bash"})
#: Archived tool names (lower-cased) by class, for savings; every other tool is "other".
TOOL_CLASSES = {"bash": "shell", "read": "read"}
#: What the host shows of an output without YARP, by (class, the call failed; None: either), as
#: `yarp.archive.savings.hosts.HostView` fields. Claude Code 2.1.197: Bash output over 30,000 bytes
#: is saved to a file and the model gets a preview of its first 2,000 characters inside a
#: <persisted-output> note; a failed command's text over 10,000 characters keeps its first and last
#: 5,000. Read stops at 25,000 tokens (about 100,000 bytes), keeping about 85 % of that; other tools
#: persist past 50,000 characters.
HOST_VIEWS = {
    ("shell", False): {"limit": 30_000, "overflow": 2_300},
    ("shell", True): {"limit": 10_000, "notice": 100},
    ("read", None): {"limit": 100_000, "overflow": 85_200},
    ("other", None): {"limit": 50_000, "overflow": 2_300},
}
#: Whether the adapter hands the model `result/after` itself (an unchanged result then withheld
#: nothing). Claude Code's hooks leave a result they do not replace to the host, which may cut it.
REPLACES_VIEW = False

# --- people: help, install, doctor ----------------------------------------------------------

HOOK_HELP = """\
Reads one PreToolUse, PostToolUse or PostToolUseFailure event as JSON on stdin
and hands it to the archive's broker (started on demand). PreToolUse answers on
stdout only to hand on a shell command rewritten to 'yarp run'; PostToolUse
only to replace a result the model would see with YARP's capped view (Claude
Code 2.1.121 and later). Every other event, and every archive failure, prints
nothing and exits 0 so the tool runs untouched. Failures are reported once per
session on stderr.
"""
#: `yarp hook install --help`: where the hooks go.
INSTALL_FILES = ("--user: ~/.claude/settings.json",
                 "--project: ./.claude/settings.local.json (Claude Code's own uncommitted file)")
#: Said after installing.
INSTALL_NOTES = ()
DOCTOR_NAME = "Claude Code hooks"
#: `yarp doctor`: which results the host lets YARP replace ({cap} is the configured cap).
RESULT_VIEW = {
    "host": "lets a PostToolUse hook replace any tool's result (updatedToolOutput, 2.1.121 on)",
    "ours": "YARP replaces Bash, Read and Grep results over {cap} with its view when the session's Claude Code "
            "takes it (a wrapped Bash command shows yarp run's)",
    "left": "other tools' results, and every result of an older Claude Code, are shown as Claude Code returns them",
}
#: `yarp import --help`: where the transcripts are.
TRANSCRIPTS = "~/.claude/projects (or $CLAUDE_CONFIG_DIR/projects)"
