"""Comparisons of servers' data (checksums, row diffs)."""
