"""Where kewpie's own files live, in a checkout and installed: the one place that knows.

A checkout is the folder holding ``kewpie.py`` and ``lib/`` (this package):
its suites, grammars and scripts are beside the package, and the default
workdir and code trees are inside it.  Installed (a wheel), the package is
``kewpie`` and carries the same files under ``kewpie/_data/``
(``percona_tests/``, ``randgen/``, ``scripts/``, ``std_data/``); the default workdir and
``trees/`` are then in the current directory, as with kewpie 2012.
"""
from __future__ import annotations

import os
import sys

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
PACKAGE = __name__.rsplit(".", 1)[0]  # "lib" in a checkout, "kewpie" installed
DATA_FOLDER = "_data"


def checkout_root() -> str | None:
    """The checkout this package sits in, or None when it is installed."""
    parent = os.path.dirname(PACKAGE_DIR)
    if os.path.basename(PACKAGE_DIR) == "lib" and os.path.isfile(os.path.join(parent, "kewpie.py")):
        return parent
    return None


def data_root() -> str:
    """The folder holding ``percona_tests/``, ``randgen/``, ``scripts/`` and ``std_data/``."""
    return checkout_root() or os.path.join(PACKAGE_DIR, DATA_FOLDER)


def data_path(*parts: str) -> str:
    """A shipped file or folder, e.g. ``data_path("randgen", "conf", "kewpie")``."""
    return os.path.join(data_root(), *parts)


def run_root() -> str:
    """Where a run's defaults live (``workdir/``, ``trees/``): the checkout, or the
    current directory for an installed kewpie."""
    return checkout_root() or os.getcwd()


def module_command(module: str) -> tuple[list[str], dict[str, str]]:
    """``python -m <this package>.<module>`` and the environment additions it needs
    (the checkout on PYTHONPATH, so the child finds the same package)."""
    argv = [sys.executable, "-m", f"{PACKAGE}.{module}"]
    root = checkout_root()
    if root is None:
        return argv, {}
    path = os.environ.get("PYTHONPATH")
    return argv, {"PYTHONPATH": root + (os.pathsep + path if path else "")}
