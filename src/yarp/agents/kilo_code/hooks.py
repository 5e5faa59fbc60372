"""Where Kilo Code's plugin is installed (layer `hooks`).

Kilo Code 7.7.7 loads every `.ts` file directly in `plugin/` (or `plugins/`)
of each of its config folders: the user's, `$XDG_CONFIG_HOME/kilo` (else
`~/.config/kilo`), and a project's `.kilo` (found upwards from the working
directory). Our folder, `yarp/`, sits beside `plugin/` in the same config
folder, and the entry file `plugin/yarp.ts` re-exports the plugin from it.
"""

from __future__ import annotations

import os


def config_dir(scope: str, environ=os.environ, cwd: str | None = None) -> str:
    """Kilo Code's config folder for `scope`: `$XDG_CONFIG_HOME/kilo` (user), `./.kilo` (project)."""
    if scope == "project":
        return os.path.join(os.path.abspath(cwd or os.getcwd()), ".kilo")
    home = environ.get("HOME") or os.path.expanduser("~")
    config_home = environ.get("XDG_CONFIG_HOME") or ""
    if not os.path.isabs(config_home):
        config_home = os.path.join(home, ".config")
    return os.path.join(config_home, "kilo")
