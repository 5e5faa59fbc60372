"""What the sealed half's recipes share: where its tools live, the recipe registry, the run environment.

The sealed half reuses the native generator's machinery (`Run`, `S`, `write`, `sh`, storage) and the
blind half's environment, with its own tool locations and registry, so that its cases land in
`manifest-sealed.json` only. Every recorded command runs in one environment: the pinned tools first on
PATH, a private HOME, `LANG=C.UTF-8`, `TZ=UTC`, no colours, no CI variable.
"""

from __future__ import annotations

import os

from blind_common import blind_env
from generate_native import Recipe, Run, S, Skip, exits, failing, sh, write  # noqa: F401 (re-exported)

SEALED = "/tmp/yarp-gen/sealed"
WORK = os.path.join(SEALED, "work")
HOME = os.path.join(SEALED, "home")
NPM = os.path.join(SEALED, "npm")
NPM_BIN = os.path.join(NPM, "node_modules", ".bin")
VENV = os.path.join(SEALED, "venv")
VENV_BIN = os.path.join(VENV, "bin")

# The pinned tools, installed outside the repository (npm prefix and venv above, Debian packages).
NPM_PINS = ["cspell@8.18.1", "write-good@1.0.8", "textlint@14.5.0", "textlint-rule-no-todo@2.0.1",
            "jsonlint@1.6.3", "ajv-cli@5.0.0", "@taplo/cli@0.7.0", "@coffeelint/cli@5.2.11", "tslint@6.1.3",
            "typescript@5.8.2", "jasmine@5.6.0", "uvu@0.5.6", "qunit@2.24.1", "html-validate@9.5.2",
            "madge@8.0.0", "depcheck@1.4.7", "flow-bin@0.266.1"]
PY_PINS = ["pycodestyle==2.13.0", "mccabe==0.7.0", "rstcheck==6.2.4", "doc8==1.1.2", "proselint==0.14.0",
           "djlint==1.36.4", "green==4.0.2", "autopep8==2.3.2", "check-jsonschema==0.33.0", "bashate==2.1.1",
           "tornado==6.4.2", "csvkit==2.1.0", "mdformat==0.7.22", "deptry==0.23.0"]
APT_PINS = {"subversion": "1.14.2-4+deb12u1", "xmlstarlet": "1.6.1-3", "acl": "2.3.1-3",
            "redis-server": "5:7.0.15-1~deb12u10", "bats": "1.8.2-1", "shunit2": "2.1.8-3",
            "check": "0.15.2-2+b1", "libcunit1-dev": "2.1-3-dfsg-2.6", "phpunit": "9.6.7-1+deb12u1",
            "lintian": "2.116.3+deb12u1", "sbcl": "2:2.2.9-1", "guile-3.0": "3.0.8-2",
            "fp-compiler": "3.2.2+dfsg-20", "gdc": "4:12.2.0-3", "valac": "0.56.3-1", "ocaml-dune": "2.9.3-1",
            "shfmt": "3.6.0-1+b2", "erlang-eunit": "1:25.2.3+dfsg-1+deb12u4", "ruby-minitest": "5.17.0-1"}

RECIPES: list[Recipe] = []


def recipe(name: str, tool: str, category: str, version: list[str], needs=()):
    """Register the decorated setup function as the sealed recipe `name`."""
    def register(setup):
        """Add the recipe; hand the setup function back unchanged."""
        RECIPES.append(Recipe(name, tool, category, list(version), setup, tuple(needs)))
        return setup
    return register


def sealed_env() -> dict[str, str]:
    """The blind half's environment with the sealed tools first on PATH and the sealed HOME."""
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


def as_nobody(argv: list[str]) -> list[str]:
    """`argv` run as the unprivileged user `nobody` (for tools that refuse root or need real denials)."""
    return ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", *argv]
