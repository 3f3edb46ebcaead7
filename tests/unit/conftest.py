"""The unit tests' order: tests marked ``run_first`` are collected first.

pytest-xdist's load scheduling (scripts/run-tests: ``-n 2``) hands tests to the
workers in collection order.  The type check (test_types.py, mypy over lib/: some 40 s
of CPU on a fresh clone, which has no mypy cache) was collected last of all, so one
worker ran it alone while the other had nothing left: begun first, it runs while the
other worker takes the rest.
"""
from __future__ import annotations

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Move the tests marked ``run_first`` to the front, keeping every other order."""
    items.sort(key=lambda item: item.get_closest_marker("run_first") is None)
