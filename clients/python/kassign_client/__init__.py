"""A small typed Python client of the kassign service."""
