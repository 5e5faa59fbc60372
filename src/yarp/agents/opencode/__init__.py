"""opencode (`opencode-ai`): a TypeScript plugin copied into its config folder.

The record `yarp.agents` reads (docs/design/agents.md lists the fields). The
plugin (`plugin.ts` here, with the shared `../ts/`) talks to `yarp archive
ingest` and makes its operations itself; opencode loads it through one entry
file, `<config>/plugin/yarp.ts`. Its parts: `hooks` (where the plugin is
installed), `transcripts` (`yarp import`'s reader of its session store).
"""

NAME = "opencode"
LABEL = "opencode"
ADAPTER = "extension"

#: The plugin's own files in this folder, copied to `<install folder>/opencode/`.
EXTENSION_FILES = ("plugin.ts",)
#: The entry opencode loads, outside our folder: (its path under the agent's config folder, the
#: module it re-exports from, the name it exports).
EXTENSION_ENTRY = ("plugin/yarp.ts", "opencode/plugin.ts", "YarpPlugin")

# --- tools and results ----------------------------------------------------------------------

TOOL_CLASSES = {"bash": "shell", "read": "read"}
#: opencode 1.18.33: 2,000 lines or 50 KiB; bash keeps the tail, read and the rest the head.
HOST_VIEWS = {
    ("shell", None): {"limit": 51_200, "notice": 110, "lines": 2_000},
    ("read", None): {"limit": 51_200, "notice": 90, "lines": 2_000},
    ("other", None): {"limit": 51_200, "notice": 170, "lines": 2_000},
}
#: The plugin hands the model `result/after` in `tool.execute.after`.
REPLACES_VIEW = True

# --- people: install, doctor ----------------------------------------------------------------

INSTALL_FILES = ("--user: $XDG_CONFIG_HOME/opencode/yarp/ and plugin/yarp.ts (else ~/.config/opencode/...)",
                 "--project: ./.opencode/yarp/ and ./.opencode/plugin/yarp.ts")
INSTALL_NOTES = ("opencode loads it at its next start; `yarp doctor` checks it.",)
DOCTOR_NAME = "opencode plugin"
RESULT_VIEW = {
    "host": "lets a plugin replace any tool's result (tool.execute.after)",
    "ours": "YARP replaces the text of every result over {cap} with its view, MCP results included (a wrapped "
            "bash command shows yarp run's)",
    "left": "smaller results are shown as opencode returns them, images always",
}
TRANSCRIPTS = "its session store $XDG_DATA_HOME/opencode/opencode.db (else ~/.local/share/...)"
