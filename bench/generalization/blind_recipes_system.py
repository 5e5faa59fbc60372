"""Blind recipes (system)."""

from __future__ import annotations
