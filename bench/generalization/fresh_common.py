"""What the fresh half's recipes share: where its tools live, the recipe registry, the run environments.

The fresh half reuses the native generator's machinery (`Run`, `S`, `write`, `sh`, storage and the
signal check) and adds its own registry, so that its cases land in `manifest-fresh.json` only.
"""

from __future__ import annotations

import os

from generate_native import Recipe, Run, S, Skip, exits, failing, sh, write  # noqa: F401 (re-exported)

FRESH = "/tmp/yarp-gen/fresh"
WORK = os.path.join(FRESH, "work")
NPM = os.path.join(FRESH, "npm")
NPM_BIN = os.path.join(NPM, "node_modules", ".bin")
VENV = os.path.join(FRESH, "venv")
VENV_BIN = os.path.join(VENV, "bin")
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]

# The pinned tools, installed outside the repository (npm prefix and venv above).
NPM_PINS = ["typescript@5.9.3", "jest@30.5.2", "mocha@12.0.3", "vitest@5.1.2", "rollup@4.69.3",
            "webpack@5.113.0", "webpack-cli@7.3.1"]
PY_PINS = ["pytest==9.2.0", "coverage==7.18.0", "Flask==3.1.3", "SQLAlchemy==2.1.9", "csvkit==2.1.0"]
APT_PINS = {"rsync": "3.5.0+ds1-0+deb12u1", "cpplint": "1.6.1-2", "clang-tidy": "1:14.0-55.7~deb12u1"}


RECIPES: list[Recipe] = []


def recipe(name: str, tool: str, category: str, version: list[str], needs=()):
    """Register the decorated setup function as the fresh recipe `name`."""
    def register(setup):
        RECIPES.append(Recipe(name, tool, category, list(version), setup, tuple(needs)))  # no apt packages
        return setup
    return register


def node_env() -> dict[str, str]:
    """The pinned npm tools first on PATH, no colours, no update notices."""
    return {"PATH": f"{NPM_BIN}:/usr/local/bin:/usr/bin:/bin", "NO_COLOR": "1", "FORCE_COLOR": "0",
            "NPM_CONFIG_UPDATE_NOTIFIER": "false", "NPM_CONFIG_FUND": "false", "CI": "", "HOME": FRESH}


def py_env() -> dict[str, str]:
    """The pinned Python tools first on PATH, a fixed hash seed, no bytecode files."""
    return {"PATH": f"{VENV_BIN}:/usr/local/bin:/usr/bin:/bin", "PYTHONHASHSEED": "0",
            "PYTHONDONTWRITEBYTECODE": "1", "NO_COLOR": "1", "COLUMNS": "100"}


def link_node_modules(root: str) -> None:
    """Give a project the pinned npm tools as its own node_modules (a symlink)."""
    os.symlink(os.path.join(NPM, "node_modules"), os.path.join(root, "node_modules"))
