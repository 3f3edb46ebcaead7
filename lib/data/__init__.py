"""Test data loaders written in SQL (tables, rows, a write load)."""
