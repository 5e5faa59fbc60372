"""Hidden recipes (js)."""
