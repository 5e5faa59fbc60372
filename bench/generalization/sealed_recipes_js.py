"""Sealed recipes (js)."""
