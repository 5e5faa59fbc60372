"""What the cowled half's recipes share: where its tools live, the recipe registry, the run environment.

The cowled half reuses the native generator's machinery (`Run`, `S`, `write`, `sh`, storage) and the
later halves' place (`half_cli.Place`: `/tmp/yarp-gen/cowled`), so that its cases land in
`manifest-cowled.json` only. Every recorded command runs in one environment: the pinned tools first on
PATH, a private HOME, `LANG=C.UTF-8`, `TZ=UTC`, no colours, no CI variable. Each recipe module pins its
own tools (`NPM_PINS`, `PY_PINS`, `APT_PINS`); `generate_cowled.install` installs them all.
"""

from __future__ import annotations

from generate_native import Recipe, Run, S, Skip, exits, failing, sh, write  # noqa: F401 (re-exported)
from half_cli import Place, redis_server, served, wait_port  # noqa: F401 (re-exported)

PLACE = Place("cowled")
WORK, HOME, NPM, VENV = PLACE.work, PLACE.home, PLACE.npm, PLACE.venv
RECIPES: list[Recipe] = PLACE.recipes
recipe, vbin, nbin, link_node_modules = PLACE.recipe, PLACE.vbin, PLACE.nbin, PLACE.link_node_modules
pyver, npmver = PLACE.pyver, PLACE.npmver
cowled_env = PLACE.env
