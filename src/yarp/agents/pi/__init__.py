"""Pi (`@mariozechner/pi-coding-agent`): a TypeScript extension copied into Pi's extensions folder.

The record `yarp.agents` reads (docs/design/agents.md lists the fields). The
extension (`index.ts`, `extension.ts`, `package.json` here, with the shared
`../ts/`) talks to `yarp archive ingest` and makes its operations itself.
Its parts: `hooks` (where the extension is installed), `transcripts`
(`yarp import`'s reader).
"""

NAME = "pi"
LABEL = "Pi"
ADAPTER = "extension"

#: The extension's own files in this folder, copied to `<install folder>/pi/`; `package.json`
#: (Pi's package manifest) is written at the install folder's root, naming them.
EXTENSION_FILES = ("index.ts", "extension.ts")
EXTENSION_MANIFEST = True

# --- tools and results ----------------------------------------------------------------------

TOOL_CLASSES = {"bash": "shell", "read": "read"}
#: Pi 0.73.1: 2,000 lines or 50 KiB, whichever comes first; bash keeps the tail, read the head.
HOST_VIEWS = {
    ("shell", None): {"limit": 51_200, "notice": 90, "lines": 2_000},
    ("read", None): {"limit": 51_200, "notice": 70, "lines": 2_000},
    ("other", None): {"limit": 51_200, "notice": 40},
}
#: The extension hands the model `result/after` in `tool_result`.
REPLACES_VIEW = True

# --- people: install, doctor ----------------------------------------------------------------

INSTALL_FILES = ("--user: $PI_CODING_AGENT_DIR/extensions/yarp/ (else ~/.pi/agent/extensions/yarp/)",
                 "--project: ./.pi/extensions/yarp/")
INSTALL_NOTES = ("Pi loads it at its next start; `yarp doctor` checks it.",)
DOCTOR_NAME = "Pi extension"
RESULT_VIEW = {
    "host": "lets an extension replace any tool's result (tool_result)",
    "ours": "YARP replaces the text of every result over {cap} with its view (a wrapped bash command shows "
            "yarp run's)",
    "left": "smaller results are shown as Pi returns them, images always",
}
TRANSCRIPTS = "~/.pi/agent/sessions (or $PI_CODING_AGENT_DIR/sessions)"
