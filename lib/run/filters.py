"""Narrowing a run's selection: ``--do-test``, ``--skip-test``, ``--combination``,
``--start-from`` and the suites' ``disabled.txt`` (``--enable-disabled``).

Patterns match ``suite.test`` (``suite.test 'combination'`` for a suite with
combinations) as mysql-test-run's do: a pattern matches when the name, or
the test's name without its suite, starts with it, or when it is found in
the name as a regular expression (``--do-test=rpl`` and
``--do-test='^main\\.(basic|crash)'`` both work).  Any mode can read these
fields of the RunConfig; :func:`narrow` is the native mode's use of them.
"""
from __future__ import annotations

import re
from typing import Iterable

from ..errors import UsageError
from ..config import RunConfig, Selection
from ..suites.loader import TestSpec


def check_patterns(selection: Selection) -> None:
    """UsageError naming a --do-test/--skip-test value that is not a regular expression."""
    for option, patterns in (("--do-test", selection.do_test),
                             ("--skip-test", selection.skip_test)):
        for pattern in patterns:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise UsageError(f"{option}={pattern!r} is not a regular expression: {exc}") from None


def matches(pattern: str, full_name: str, test_name: str) -> bool:
    """mysql-test-run's rule: a prefix of the name (with or without the suite), or a
    regular expression found in the full name."""
    if full_name.startswith(pattern) or test_name.startswith(pattern):
        return True
    try:
        return re.search(pattern, full_name) is not None
    except re.error:
        return False


def _any(patterns: Iterable[str], spec: TestSpec) -> bool:
    return any(matches(p, spec.full_name, spec.name) for p in patterns)


def narrow(config: RunConfig, specs: list[TestSpec]) -> list[TestSpec]:
    """specs after --do-test, --skip-test, --combination and --start-from; disabled tests
    stay in the list (reported as skipped) unless --enable-disabled, which clears the mark.
    UsageError when --combination or --start-from names nothing."""
    chosen = list(specs)
    if config.selection.do_test:
        chosen = [s for s in chosen if _any(config.selection.do_test, s)]
    if config.selection.skip_test:
        chosen = [s for s in chosen if not _any(config.selection.skip_test, s)]
    if config.selection.combinations:
        known = {s.combination for s in chosen if s.combination}
        unknown = [c for c in config.selection.combinations if c not in known]
        if unknown:
            raise UsageError(f"--combination {', '.join(unknown)}: no selected suite declares it "
                             f"(known: {', '.join(sorted(known)) or 'none'})")
        chosen = [s for s in chosen if not s.combination or s.combination in config.selection.combinations]
    if config.selection.start_from:
        chosen = _start_from(config.selection.start_from, chosen)
    if config.selection.enable_disabled:
        for spec in chosen:
            spec.disabled = ""
    return chosen


def _start_from(name: str, specs: list[TestSpec]) -> list[TestSpec]:
    """The specs from the first one named name (``suite.test``, ``test`` or the
    full name with its combination), in run order."""
    wanted = name if name.endswith(("_test", "'")) else f"{name}_test"
    for index, spec in enumerate(specs):
        short = f"{spec.suite.name}.{spec.name}"
        if wanted in (spec.full_name, short, spec.name) or name in (spec.full_name, short):
            return specs[index:]
    raise UsageError(f"--start-from {name!r}: no such test among the {len(specs)} selected; "
                     f"use --list to see them")
