"""Taking turns on a shared machine.

Run one tree's (or one engine's) whole sweep, then the next one's, and load
that comes and goes on the machine (other users, other jobs) lands on one of
them and looks like a difference between them.  lib/sysbench/runner.py keeps
every unit's servers and data ready and runs each (threads, repeat) step on
every unit in turn, in the order :func:`turn_order` gives, so a drift in load
falls on all of them alike.
"""
from __future__ import annotations

from typing import TypeVar

T = TypeVar("T")


def turn_order(units: list[T], repeat: int) -> list[T]:
    """Who runs first alternates: as listed on odd repeats, reversed on even ones."""
    return list(units) if repeat % 2 else list(reversed(units))
