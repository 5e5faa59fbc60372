"""Kilo Code (`@kilocode/cli`): opencode's plugin, under Kilo's name, copied into its config folder.

The record `yarp.agents` reads (docs/design/agents.md lists the fields). Kilo
Code's CLI is a fork of opencode: the same plugin API (`tool.execute.before`
may rewrite a command, `tool.execute.after` replace a result) and the same
session store, in its own folders (`~/.config/kilo/`, `~/.local/share/kilo/kilo.db`).
So its plugin (`plugin.ts` here) is opencode's plugin made with this agent's
name, installed with opencode's file beside it (`EXTENSION_BASE`), and its
store is read by opencode's reader. Its parts: `hooks` (where the plugin is
installed), `transcripts` (`yarp import`'s reader of its session store).
"""

NAME = "kilo-code"
LABEL = "Kilo Code"
ADAPTER = "extension"

#: The plugin's own files in this folder, copied to `<install folder>/kilo-code/`.
EXTENSION_FILES = ("plugin.ts",)
#: The agent whose extension this one is built on: its files are installed beside ours (opencode's
#: `plugin.ts`, which ours imports as `../opencode/plugin.ts`).
EXTENSION_BASE = "opencode"
#: The entry Kilo loads, outside our folder: (its path under Kilo's config folder, the module it
#: re-exports from, the name it exports).
EXTENSION_ENTRY = ("plugin/yarp.ts", "kilo-code/plugin.ts", "YarpPlugin")

# --- tools and results ----------------------------------------------------------------------

TOOL_CLASSES = {"bash": "shell", "read": "read"}
#: Kilo Code 7.7.7, as opencode: 2,000 lines or 50 KiB; bash keeps the tail under a note naming its
#: spill file (about 110 characters, the path's length), read and the rest the head.
HOST_VIEWS = {
    ("shell", None): {"limit": 51_200, "notice": 110, "lines": 2_000},
    ("read", None): {"limit": 51_200, "notice": 90, "lines": 2_000},
    ("other", None): {"limit": 51_200, "notice": 170, "lines": 2_000},
}
#: The plugin hands the model `result/after` in `tool.execute.after`.
REPLACES_VIEW = True

# --- people: install, doctor ----------------------------------------------------------------

INSTALL_FILES = ("--user: $XDG_CONFIG_HOME/kilo/yarp/ and plugin/yarp.ts (else ~/.config/kilo/...)",
                 "--project: ./.kilo/yarp/ and ./.kilo/plugin/yarp.ts")
INSTALL_NOTES = ("Kilo Code loads it at its next start; `yarp doctor` checks it.",)
DOCTOR_NAME = "Kilo Code plugin"
RESULT_VIEW = {
    "host": "lets a plugin replace any tool's result (tool.execute.after)",
    "ours": "YARP replaces the text of every result over {cap} with its view, MCP results included (a wrapped "
            "bash command shows yarp run's)",
    "left": "smaller results are shown as Kilo Code returns them, images always",
}
TRANSCRIPTS = "its session store $XDG_DATA_HOME/kilo/kilo.db (else ~/.local/share/...)"
