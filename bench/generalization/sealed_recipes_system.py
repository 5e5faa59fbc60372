"""Sealed recipes (system)."""
