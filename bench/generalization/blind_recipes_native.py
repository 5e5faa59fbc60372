"""Blind recipes (native)."""

from __future__ import annotations
