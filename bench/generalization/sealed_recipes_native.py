"""Sealed recipes (native)."""
