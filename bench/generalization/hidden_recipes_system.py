"""Hidden recipes (system)."""
