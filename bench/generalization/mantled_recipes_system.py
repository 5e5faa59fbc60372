"""Mantled recipes (system): filled in as the half is recorded.

Each signal is written from the raw output's meaning, without any view of it being computed.
"""

from __future__ import annotations

from mantled_common import Run, S, exits, recipe, sh, vbin, write  # noqa: F401

NPM_PINS: list[str] = []
PY_PINS: list[str] = []
APT_PINS: dict[str, str] = {}
