"""Python sources parsed once per test process.

The unit tests' rules over the whole tree (tests/unit/test_house_rules.py,
test_function_length.py, test_public_api.py, run/test_one_pipeline.py, ...) each read
every module of lib/: parsed anew each time, the ~380 modules cost about 1.3 s of CPU
per pass, and those rules made some twenty passes per run.  A tree returned here is
shared by every caller in the process: read it, never change it.
"""
from __future__ import annotations

import ast
import os
from functools import cache


def parsed(path: str | os.PathLike[str]) -> ast.Module:
    """The syntax tree of the Python file at path (read and parsed on its first use in
    this process only)."""
    return _parse(os.path.abspath(os.fspath(path)))


@cache
def _parse(path: str) -> ast.Module:
    with open(path, encoding="utf-8") as fh:
        return ast.parse(fh.read(), path)
