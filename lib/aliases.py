"""The package's second name: ``kewpie.x`` and ``lib.x`` are one module.

The package is imported first under one of its names (the *canonical* one:
``lib`` in a checkout, ``kewpie`` when installed).  :func:`install_aliases`
puts a finder on ``sys.meta_path`` that answers imports of the other name
with the canonical modules themselves, so a class has one identity whichever
name a test file used.

- Canonical ``lib`` (a checkout): ``kewpie`` and ``kewpie.*`` are aliased by
  a finder placed first, ahead of the checkout's own ``kewpie.py`` script.
- Canonical ``kewpie`` (installed): ``lib`` and ``lib.*`` are aliased only
  when nothing else on ``sys.path`` is called ``lib``,
  and only once :func:`enable_lib_alias` was called — by kewpie itself before
  it loads suites (kewpie 2012 suites write ``from lib.util... import``), so a
  plain ``import kewpie`` adds no generic ``lib`` to anybody's interpreter.

A folder renamed inside the package keeps its old name the same way (:data:`MOVED`):
``lib.util.*``, kewpie 2012's own name for its API, is ``lib.kewpie2012.*``.
"""
from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import os
import sys
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from importlib.abc import Loader as _LoaderBase
else:
    _LoaderBase = object   # importlib.abc costs every command ~10 ms to import

NAMES = ("lib", "kewpie")
# Sub-packages renamed whose old names suites still import: (old, new), under either name.
MOVED = (("util", "kewpie2012"),)  # kewpie 2012's API (lib/util/ until issue 44)


class AliasFinder(_LoaderBase):
    """Resolves ``alias`` and ``alias.*`` to the modules of ``canonical``: a meta path
    finder and loader by protocol (``find_spec``, ``create_module``, ``exec_module``),
    not by ``importlib.abc``'s classes, whose import costs every command ~10 ms."""

    def __init__(self, alias: str, canonical: str, yields: bool = False) -> None:
        self.alias = alias
        self.canonical = canonical
        self.yields = yields  # a real package of the alias's name on sys.path wins

    def _ours(self, fullname: str) -> bool:
        """With ``yields``: the alias is ours unless sys.path has a real one."""
        top = sys.modules.get(self.alias)
        if top is not None:
            return top is sys.modules.get(self.canonical)
        return fullname == self.alias and \
            importlib.machinery.PathFinder.find_spec(self.alias) is None

    def real_name(self, fullname: str) -> str | None:
        """The canonical module name for fullname, or None when it is not ours."""
        if fullname == self.alias:
            return self.canonical
        if fullname.startswith(self.alias + "."):
            return self.canonical + fullname[len(self.alias):]
        return None

    def find_spec(self, fullname: str, path: object = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        """A spec whose loader hands back the canonical module, for names of the alias."""
        real = self.real_name(fullname)
        if real is None:
            return None
        if self.yields and not self._ours(fullname):
            return None
        real_spec = importlib.util.find_spec(real)
        if real_spec is None:
            return None
        return importlib.machinery.ModuleSpec(
            fullname, self, loader_state=real,
            is_package=real_spec.submodule_search_locations is not None)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        """The canonical module itself (imported now if it was not yet)."""
        module = importlib.import_module(spec.loader_state)
        spec.loader_state = module.__spec__  # given back by exec_module
        return module

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the module ran under its canonical name.  The import
        system set the alias's spec on it; give it its own back."""
        alias_spec = module.__spec__
        if alias_spec is not None and alias_spec.loader is self:
            module.__spec__ = alias_spec.loader_state


def _installed(alias: str) -> bool:
    return any(type(f).__name__ == "AliasFinder" and getattr(f, "alias", None) == alias
               for f in sys.meta_path)


def is_checkout_package(folder: str) -> bool:
    """Whether the package folder is a checkout's ``lib/`` (``kewpie.py`` beside it)."""
    parent = os.path.dirname(os.path.abspath(folder))
    return os.path.basename(os.path.abspath(folder)) == "lib" and \
        os.path.isfile(os.path.join(parent, "kewpie.py"))


def settle_name(name: str, folder: str) -> ModuleType | None:
    """Called by the package's ``__init__`` with its name and folder.

    Returns the module that must stand for ``name`` instead (a checkout's
    package imported as ``kewpie``, e.g. through an editable install, is
    loaded as ``lib``, its canonical name there), else None after making the
    other name an alias: ``kewpie`` in a checkout, first on ``sys.meta_path``
    so the checkout's ``kewpie.py`` script does not answer for it; and the old names
    of :data:`MOVED` folders aliases of their new ones."""
    if name == "kewpie" and is_checkout_package(folder):
        lib = sys.modules.get("lib")
        if lib is None:
            spec = importlib.util.spec_from_file_location(
                "lib", os.path.join(folder, "__init__.py"), submodule_search_locations=[folder])
            assert spec is not None and spec.loader is not None
            lib = importlib.util.module_from_spec(spec)
            sys.modules["lib"] = lib
            spec.loader.exec_module(lib)
        return lib
    if name == "lib" and not _installed("kewpie"):
        sys.meta_path.insert(0, AliasFinder("kewpie", "lib"))
    for old, new in MOVED:
        if not _installed(f"{name}.{old}"):
            sys.meta_path.insert(0, AliasFinder(f"{name}.{old}", f"{name}.{new}"))
    return None


def enable_lib_alias() -> None:
    """Make ``lib.*`` importable for suites when the package runs as ``kewpie``
    (installed).  A real ``lib`` on sys.path wins."""
    canonical = __name__.rsplit(".", 1)[0]
    if canonical != "lib" and not _installed("lib"):
        sys.meta_path.insert(0, AliasFinder("lib", canonical, yields=True))
