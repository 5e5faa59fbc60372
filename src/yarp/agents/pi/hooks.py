"""Where Pi's extension is installed, and its package manifest (layer `hooks`).

Pi loads an extension folder from `$PI_CODING_AGENT_DIR/extensions/` (else
`~/.pi/agent/extensions/`) for the user and `./.pi/extensions/` for a project;
our folder, `yarp/`, sits there with a `package.json` naming the entry.
"""

from __future__ import annotations

import os


def config_dir(scope: str, environ=os.environ, cwd: str | None = None) -> str:
    """Pi's extensions folder for `scope`, which holds ours."""
    if scope == "project":
        return os.path.join(os.path.abspath(cwd or os.getcwd()), ".pi", "extensions")
    home = environ.get("HOME") or os.path.expanduser("~")
    agent_dir = environ.get("PI_CODING_AGENT_DIR") or ""
    if not os.path.isabs(agent_dir):
        agent_dir = os.path.join(home, ".pi", "agent")
    return os.path.join(agent_dir, "extensions")


def manifest(shipped: dict, prefix: str) -> dict:
    """The package manifest at the installed folder's root: the shipped one (`package.json` beside the
    extension, naming `./index.ts`) with its entries under `prefix` (`./pi/`), where they are installed."""
    entries = shipped["pi"]["extensions"]
    return {**shipped, "pi": {"extensions": [prefix + os.path.normpath(name) for name in entries]}}
