"""What the hidden half's recipes share: where its tools live, the recipe registry, the run environment.

The hidden half reuses the native generator's machinery (`Run`, `S`, `write`, `sh`, storage) and the
blind half's environment, with its own tool locations and registry, so that its cases land in
`manifest-hidden.json` only. Every recorded command runs in one environment: the pinned tools first on
PATH, a private HOME, `LANG=C.UTF-8`, `TZ=UTC`, no colours, no CI variable.
"""

from __future__ import annotations

import os

from blind_common import blind_env
from generate_native import Recipe, Run, S, Skip, exits, failing, sh, write  # noqa: F401 (re-exported)

HIDDEN = "/tmp/yarp-gen/hidden"
WORK = os.path.join(HIDDEN, "work")
HOME = os.path.join(HIDDEN, "home")
NPM = os.path.join(HIDDEN, "npm")
NPM_BIN = os.path.join(NPM, "node_modules", ".bin")
VENV = os.path.join(HIDDEN, "venv")
VENV_BIN = os.path.join(VENV, "bin")

# The pinned tools, installed outside the repository (npm prefix and venv above, Debian packages).
NPM_PINS: list[str] = []
PY_PINS: list[str] = []
APT_PINS: dict[str, str] = {}

RECIPES: list[Recipe] = []


def recipe(name: str, tool: str, category: str, version: list[str], needs=()):
    """Register the decorated setup function as the hidden recipe `name`."""
    def register(setup):
        """Add the recipe; hand the setup function back unchanged."""
        RECIPES.append(Recipe(name, tool, category, list(version), setup, tuple(needs)))
        return setup
    return register


def hidden_env() -> dict[str, str]:
    """The blind half's environment with the hidden tools first on PATH and the hidden HOME."""
    env = blind_env()
    env["PATH"] = f"{VENV_BIN}:{NPM_BIN}:" + env["PATH"].split(":", 2)[2]
    env["HOME"] = HOME
    return env


def vbin(name: str) -> str:
    """A pinned PyPI tool's path."""
    return os.path.join(VENV_BIN, name)


def nbin(name: str) -> str:
    """A pinned npm tool's path."""
    return os.path.join(NPM_BIN, name)


def link_node_modules(root: str) -> None:
    """Give a project the pinned npm tools as its own node_modules (a symlink)."""
    os.symlink(os.path.join(NPM, "node_modules"), os.path.join(root, "node_modules"))
