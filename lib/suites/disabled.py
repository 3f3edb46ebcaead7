"""A suite's ``disabled.txt``: tests that are not run, each with the reason why.

One test a line, ``test_name : reason`` (``test_name`` with or without
``_test``; ``#`` starts a comment), as mysql-test-run's ``disabled.def``.
A disabled test shows as skipped, with its reason, in rows and JUnit;
``--enable-disabled`` runs it.
"""
from __future__ import annotations

import os

from ..errors import SuiteError

FILENAME = "disabled.txt"


def read_disabled(suite_path: str) -> dict[str, str]:
    """{test module name (``x_test``): reason} from the suite's disabled.txt ({} without one)."""
    path = os.path.join(suite_path, FILENAME)
    if not os.path.exists(path):
        return {}
    result: dict[str, str] = {}
    with open(path) as fh:
        for number, raw in enumerate(fh, start=1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            name, sep, reason = line.partition(":")
            name, reason = name.strip(), reason.strip()
            if not sep or not name or not reason or " " in name:
                raise SuiteError(f"{path}:{number}: expected 'test_name : reason', got {raw.strip()!r}")
            if not name.endswith("_test"):
                name += "_test"
            result[name] = reason
    return result
