"""Veiled recipes for npm tools.

Each signal is written from the raw output's meaning, without any view of it being computed.
"""

from __future__ import annotations

from veiled_common import Run, S, exits, recipe, sh, write  # noqa: F401 (used by the recipes)

NPM_PINS = ["c8@12.0.0", "@cucumber/cucumber@12.9.0", "@hapi/lab@26.0.1", "@hapi/code@9.0.3", "jscpd@5.4.2",
            "knip@6.48.0", "dependency-cruiser@17.3.9", "typedoc@0.28.20", "typescript@5.9.3", "ts-node@10.9.2",
            "browserify@17.0.1", "postcss-cli@12.0.0", "postcss@8.5.34", "stylus@0.64.0", "syncpack@13.0.4",
            "license-checker@25.0.1", "handlebars@4.7.10", "@stoplight/spectral-cli@6.16.3", "tsx@4.23.15"]
PY_PINS: list[str] = []
APT_PINS: dict[str, str] = {}
