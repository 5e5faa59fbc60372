"""Web recipes."""
RECIPES = []
