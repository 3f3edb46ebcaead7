"""``percona_tests.<suite>`` is the run's folder of that suite, wherever it lives.

kewpie 2012 test modules import their own suite by package path:
``from percona_tests.upgrade import suite_config``,
``from percona_tests.upgrade.upgradeBaseTestCase import upgradeBaseTestCase``.
A run's suites may live anywhere (a ``--suitepath`` directory that is not
called ``percona_tests`` and has no ``__init__.py``), and kewpie ships suites
of some of the same names.  :class:`SuitePackages`, a finder first on
``sys.meta_path``, answers those imports itself:

- ``percona_tests`` is a package of its own (no folder of its own);
- ``percona_tests.<suite>`` is the folder the run selected for that suite,
  else the first suite path holding a folder of that name (the order
  ``--suitepath`` gives, kewpie's own suites last), as :func:`use_suites`
  was told; its ``__init__.py`` runs when it has one;
- ``percona_tests.<suite>.<module>`` is then found in that folder by Python's
  own path finder.

So no ``PYTHONPATH`` is needed, and a suite never imports another folder's
``suite_config`` of the same name.  :func:`use_suites` installs the finder
(once per interpreter) and forgets modules it answered before for another
folder.  :func:`shadowed_by` names the other folders holding a suite of the
same name, for the line that says which one a run uses.
"""
from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
from types import ModuleType
from typing import TYPE_CHECKING, Mapping, Sequence

if TYPE_CHECKING:
    from importlib.abc import Loader as _LoaderBase
else:
    _LoaderBase = object   # importlib.abc costs every run ~10 ms to import (lib/aliases.py)

PACKAGE = "percona_tests"  # kewpie 2012's name for the suites' package


class SuitePackages(_LoaderBase):
    """Answers ``percona_tests`` and ``percona_tests.<suite>`` (see the module docstring):
    a meta path finder and loader by protocol (``find_spec``, ``create_module``,
    ``exec_module``)."""

    def __init__(self) -> None:
        self.suitepaths: tuple[str, ...] = ()
        self.chosen: dict[str, str] = {}  # suite name -> its folder in this run

    def folder_of(self, suite: str) -> str | None:
        """The folder ``percona_tests.<suite>`` stands for, or None when no suite path
        holds one."""
        if suite in self.chosen:
            return self.chosen[suite]
        for base in self.suitepaths:
            folder = os.path.join(base, suite)
            if os.path.isdir(folder):
                return os.path.realpath(folder)
        return None

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        """The spec of ``percona_tests`` or ``percona_tests.<suite>``; None for any other
        name (deeper modules are found in the suite's folder by the path finder)."""
        del path, target
        if fullname == PACKAGE:
            spec = importlib.util.spec_from_loader(fullname, self, is_package=True)
            return spec
        parent, _, suite = fullname.rpartition(".")
        if parent != PACKAGE:
            return None
        folder = self.folder_of(suite)
        if folder is None:
            return None
        init = os.path.join(folder, "__init__.py")
        if os.path.isfile(init):
            return importlib.util.spec_from_file_location(fullname, init,
                                                          submodule_search_locations=[folder])
        spec = importlib.util.spec_from_loader(fullname, self, is_package=True)
        if spec is not None:
            spec.submodule_search_locations = [folder]
        return spec

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        """The default module object."""
        del spec
        return None

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: a package without ``__init__.py`` is its folder."""
        del module

    def stale(self, name: str, module: ModuleType) -> bool:
        """Whether a loaded ``percona_tests`` module came from elsewhere than this
        finder's answer now (another folder, or the checkout's namespace package)."""
        if name == PACKAGE:
            return getattr(module.__spec__, "loader", None) is not self
        suite = name[len(PACKAGE) + 1:].split(".", 1)[0]
        folder = self.folder_of(suite)
        top = sys.modules.get(f"{PACKAGE}.{suite}", module)
        paths = list(getattr(top, "__path__", []) or [])
        return folder is None or not paths or os.path.realpath(paths[0]) != folder


def _finder() -> SuitePackages:
    """The interpreter's finder, first on ``sys.meta_path`` (installed on first use)."""
    for finder in sys.meta_path:
        if isinstance(finder, SuitePackages):
            return finder
    finder = SuitePackages()
    sys.meta_path.insert(0, finder)
    return finder


def use_suites(suitepaths: Sequence[str], chosen: Mapping[str, str]) -> None:
    """From now on ``percona_tests.<name>`` is ``chosen[name]`` (the run's suites), any
    other name the first of suitepaths holding it; modules loaded earlier for other
    folders are forgotten."""
    finder = _finder()
    finder.suitepaths = tuple(suitepaths)
    finder.chosen = {name: os.path.realpath(folder) for name, folder in chosen.items()}
    loaded = [(name, module) for name, module in list(sys.modules.items())
              if name == PACKAGE or name.startswith(PACKAGE + ".")]
    stale = {name for name, module in loaded if finder.stale(name, module)}
    if PACKAGE in stale:
        stale = {name for name, _ in loaded}
    for name in stale:
        del sys.modules[name]


def shadowed_by(name: str, folder: str, suitepaths: Sequence[str]) -> list[str]:
    """The other folders of suitepaths holding a suite called name (not folder itself)."""
    mine = os.path.realpath(folder)
    others: list[str] = []
    for base in suitepaths:
        other = os.path.join(base, name)
        if os.path.isdir(other) and os.path.realpath(other) != mine and \
                os.path.realpath(other) not in map(os.path.realpath, others):
            others.append(other)
    return others
