"""Blind recipes (js)."""

from __future__ import annotations
