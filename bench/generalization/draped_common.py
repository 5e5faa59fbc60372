"""What the draped half's recipes share: where its tools live, the recipe registry, the run environment.

The draped half reuses the native generator's machinery (`Run`, `S`, `write`, `sh`, storage) and the
later halves' place (`half_cli.Place`: `/tmp/yarp-gen/draped`), so that its cases land in
`manifest-draped.json` only. Every recorded command runs in one environment: the pinned tools first on
PATH, a private HOME, `LANG=C.UTF-8`, `TZ=UTC`, no colours, no CI variable. Each recipe module pins its
own tools (`NPM_PINS`, `PY_PINS`, `APT_PINS`); `generate_draped.install` installs them all.
"""

from __future__ import annotations

from generate_native import Recipe, Run, S, Skip, exits, failing, sh, write  # noqa: F401 (re-exported)
from half_cli import Place, redis_server, served, wait_port  # noqa: F401 (re-exported)

PLACE = Place("draped")
WORK, HOME, NPM, VENV = PLACE.work, PLACE.home, PLACE.npm, PLACE.venv
RECIPES: list[Recipe] = PLACE.recipes
recipe, vbin, nbin, link_node_modules = PLACE.recipe, PLACE.vbin, PLACE.nbin, PLACE.link_node_modules
pyver, npmver = PLACE.pyver, PLACE.npmver
draped_env = PLACE.env
