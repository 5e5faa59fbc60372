"""Where opencode's plugin is installed (layer `hooks`).

opencode loads each `.ts` file in `plugin/` of its config folders: the
user's, `$XDG_CONFIG_HOME/opencode` (else `~/.config/opencode`), and a
project's `.opencode`. Our folder, `yarp/`, sits beside `plugin/` in the same
config folder, and the entry file `plugin/yarp.ts` re-exports the plugin.
"""

from __future__ import annotations

import os


def config_dir(scope: str, environ=os.environ, cwd: str | None = None) -> str:
    """opencode's config folder for `scope`: `$XDG_CONFIG_HOME/opencode` (user), `./.opencode` (project)."""
    if scope == "project":
        return os.path.join(os.path.abspath(cwd or os.getcwd()), ".opencode")
    home = environ.get("HOME") or os.path.expanduser("~")
    config_home = environ.get("XDG_CONFIG_HOME") or ""
    if not os.path.isabs(config_home):
        config_home = os.path.join(home, ".config")
    return os.path.join(config_home, "opencode")
