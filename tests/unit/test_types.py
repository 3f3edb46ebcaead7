"""The type checker over lib/: mypy, strict, with the settings of pyproject.toml's
``[tool.mypy]`` (docs/architecture.md, "House rules"), finds no error.

mypy keeps its cache in the checkout's git-ignored ``.mypy_cache/``: a first run
takes some seconds, a run after a change only re-checks what the change touches.

Covers: lib/ (every module, type-checked), pyproject.toml ([tool.mypy])
"""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.run_first  # ~40 s on a fresh clone: begun first (tests/unit/conftest.py)
def test_mypy_finds_no_error_in_lib():
    # run from the checkout: mypy reads pyproject.toml there (files, strictness, cache)
    proc = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    report = (proc.stdout + proc.stderr).strip()
    assert proc.returncode == 0, f"mypy found errors in lib/:\n{report}"
    assert report.startswith("Success: no issues found"), report
