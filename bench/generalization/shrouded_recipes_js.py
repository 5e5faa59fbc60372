"""Shrouded recipes for npm tools.

Each signal is written from the raw output's meaning, without any view of it being computed.
"""

from __future__ import annotations

from shrouded_common import Run, S, exits, recipe, sh, write  # noqa: F401 (used by the recipes)

NPM_PINS: list[str] = []
PY_PINS: list[str] = []
APT_PINS: dict[str, str] = {}
