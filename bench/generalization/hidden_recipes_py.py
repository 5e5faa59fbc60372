"""Hidden recipes (py)."""
