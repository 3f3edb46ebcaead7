"""Suite names are names, not paths: what ``--suite`` (and ``suite.test``) may say.

A suite is looked up by joining its name to each suite path, so a name with
``/`` or ``..`` (``--suite=../../../tmp/x/trav``) would import test modules
from anywhere.  A name is therefore one component (``main``,
``cluster_basic``); in ``--mode=mtr``, where mysql-test names nested suites
(``compat/oracle``), up to two, each a plain name.  A value that is a path is
accepted only when it is an existing directory given on purpose through
``--suitepath``: the suite path itself or a directory directly inside one.
Anything else is one :class:`~lib.errors.UsageError` line (exit status 2)
saying how to name the suite.
"""
from __future__ import annotations

import os
import re
from typing import Iterable

from ..errors import UsageError

COMPONENT = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_+-]*$")
MTR_DEPTH = 2   # compat/oracle


def name_problem(name: str, nested: bool = False) -> str | None:
    """Why name is not a plain suite name (None when it is); nested allows mysql-test's
    ``group/suite``."""
    parts = name.split("/")
    if not name:
        return "an empty suite name"
    if name.startswith("/"):
        return "an absolute path"
    if ".." in parts or "." in parts:
        return "a path that climbs out of the suite directories"
    if len(parts) > (MTR_DEPTH if nested else 1):
        return ("a path" if not nested else
                f"a path deeper than mysql-test's group/suite names ({'/'.join(parts[:2])})")
    for part in parts:
        if not COMPONENT.match(part):
            return f"{part!r} is not a name (letters, digits, '_', '-' and '+')"
    return None


def given_directory(value: str, suitepaths: Iterable[str]) -> str | None:
    """The real path of value when it is an existing directory that is one of suitepaths
    or directly inside one (a suite named by path on purpose); None otherwise."""
    if not value or not os.path.isdir(value):
        return None
    real = os.path.realpath(value)
    roots = {os.path.realpath(p) for p in suitepaths if p}
    if real in roots or os.path.dirname(real) in roots:
        return real
    return None


def check_suite_name(value: str, suitepaths: Iterable[str], nested: bool = False,
                     what: str = "") -> str | None:
    """The directory a path-valued suite names (see :func:`given_directory`), None for a
    plain name; UsageError (one line, starting with what, default ``--suite 'value'``)
    for a path that is neither."""
    problem = name_problem(value, nested)
    if problem is None:
        return None
    paths = list(suitepaths)
    found = given_directory(value, paths)
    if found is not None:
        return found
    raise UsageError(f"{what or f'--suite {value!r}'}: {problem}; a suite is named, not given as a path: "
                     f"pass its parent directory with --suitepath=DIR and its name with "
                     f"--suite=NAME (searched: {', '.join(paths) or 'no suite path'})")


def display_name(value: str) -> str:
    """The name a suite given by path is shown and matched by (its last component)."""
    return os.path.basename(os.path.normpath(value)) if name_problem(value, True) else value
