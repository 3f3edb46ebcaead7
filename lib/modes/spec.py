"""What a mode is to the command line and to the dispatch (lib/modes/table.py lists
them): its name and help, its options and its section of the configuration, its run
function, and the few facts the command line checks before a mode runs."""
from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from ..config import ModeSection

if TYPE_CHECKING:
    from ..run.environment import RunEnvironment

Runner = Callable[["RunEnvironment"], int]


def no_options(parser: argparse.ArgumentParser) -> None:
    """A mode without options of its own."""


def no_section(args: argparse.Namespace) -> ModeSection:
    """A mode without a section of its own."""
    return ModeSection()


def nothing_misplaced(args: argparse.Namespace) -> str:
    """A mode without options another mode could be given by mistake."""
    return ""


def no_test_paths(test: str) -> bool:
    """A mode whose TEST arguments are all names."""
    return False


@dataclass(frozen=True)
class ModeSpec:
    """One mode, as lib/modes/table.py registers it.

    run: the mode over the run's environment, its exit status (its modules are imported
    when it runs: the folder's ``__init__.py`` stays light for ``--help``).
    add_options: adds the mode's option group to the command line; section: the mode's
    section of the configuration from the parsed options (called for every mode, so a bad
    value is one error whatever the mode; what only this mode needs is checked when
    ``args.mode`` is its name); misplaced: the error line when the mode's options were
    given to another mode ('' when none was).  list_tests: ``--list`` (None: the native
    list of suites' tests); workdir: opened fresh (a run's own logs) or kept (sweeps), or
    none (cleanup runs before it is opened).  known_bugs: --known-bugs/--allow-known judge
    its failures; nested_suites: suite names may have a '/' (mtr's compat/oracle);
    test_paths: which TEST arguments are paths, not ``suite.test`` names (made absolute
    when every one is: a reduce's finding folder)."""

    name: str
    summary: str
    run: Runner
    add_options: Callable[[argparse.ArgumentParser], None] = no_options
    section: Callable[[argparse.Namespace], ModeSection] = no_section
    misplaced: Callable[[argparse.Namespace], str] = nothing_misplaced
    list_tests: Runner | None = None
    workdir: str = "fresh"   # "fresh", "kept" or "none"
    known_bugs: bool = False
    nested_suites: bool = False
    test_paths: Callable[[str], bool] = no_test_paths
