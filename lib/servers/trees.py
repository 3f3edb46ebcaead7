"""The run's code trees (``--basedir`` given several times) and which one a server runs.

The first ``--basedir`` is the tree under test, as in kewpie 2012.  Suites name
a tree per server (``server_basedirs = ['old', 'new']``) by label:

- ``''``, ``'default'``: the tree under test;
- ``'old'`` / ``'new'``: the lowest / highest server version among the trees;
- ``'10.11.18'``: the tree of that version;
- a path: that directory (discovered on first use).

With a single ``--basedir``, the trees fetched into the checkout's ``trees/``
folder (``scripts/get-tree VERSION``) are available too, so a plain
``./kewpie.py --suite=upgrade`` finds the second tree by itself.  Trees are
discovered once, when first needed.
"""
from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from ..errors import CodeTreeError, ServerStartError
from ..platform.logsetup import get_logger
from ..platform.trustedpath import Trust
from .codetree import CodeTree, discover

if TYPE_CHECKING:
    from .server import Server

VERSION_LABEL = re.compile(r"^\d+\.\d+\.\d+$")
DEFAULT_LABELS = ("", "default", "first")


class TreeSet:
    """The code trees a run may use; resolves a suite's label to a discovered tree."""

    def __init__(self, basedirs: list[str], fetched_dir: str = "",
                 trust: Trust | None = None) -> None:
        """trust: what the user trusts on purpose (each tree passes the trust rule when
        it is discovered: lib/servers/codetree.py ``check_tree_parts``)."""
        if not basedirs:
            raise CodeTreeError("no --basedir given")
        self.basedirs = [os.path.abspath(os.path.expanduser(b)) for b in basedirs]
        self.fetched_dir = fetched_dir if len(basedirs) == 1 else ""
        self.trust = trust
        self._trees: dict[str, CodeTree] = {}
        self._all: list[CodeTree] | None = None

    # ------------------------------------------------------------ discovery
    def tree(self, path: str) -> CodeTree:
        """The tree at path (discovered once)."""
        key = os.path.abspath(os.path.expanduser(path))
        if key not in self._trees:
            try:
                self._trees[key] = discover(key, trust=self.trust)
            except CodeTreeError as exc:
                if key == self.basedirs[0]:
                    raise
                raise CodeTreeError(f"second code tree {path}: {exc}") from None
        return self._trees[key]

    @property
    def first(self) -> CodeTree:
        """The tree under test (the first --basedir)."""
        return self.tree(self.basedirs[0])

    def fetched(self) -> list[str]:
        """The trees scripts/get-tree left in the checkout's trees/ (complete ones only)."""
        if not self.fetched_dir or not os.path.isdir(self.fetched_dir):
            return []
        names = sorted(os.listdir(self.fetched_dir))
        return [os.path.join(self.fetched_dir, n) for n in names
                if os.path.isfile(os.path.join(self.fetched_dir, n, ".complete"))]

    def all(self) -> list[CodeTree]:
        """Every tree: the --basedir ones, then the fetched ones (one per server binary)."""
        if self._all is None:
            trees: list[CodeTree] = []
            for path in self.basedirs + self.fetched():
                tree = self.tree(path)
                if all(os.path.realpath(t.server) != os.path.realpath(tree.server) for t in trees):
                    trees.append(tree)
            self._all = trees
        return self._all

    def extra(self) -> list[CodeTree]:
        """The trees other than the one under test (discovers them all)."""
        return self.all()[1:]

    # ------------------------------------------------------------ labels
    def resolve(self, label: str) -> CodeTree:
        """The tree a label names (see the module docstring); CodeTreeError saying what
        is available and how to get another tree when it names none."""
        label = (label or "").strip()
        if label.lower() in DEFAULT_LABELS:
            return self.first
        if label in ("old", "new"):
            trees = sorted(self.all(), key=lambda t: t.version.version_tuple if t.version else (0, 0, 0))
            versions = {t.label for t in trees}
            if len(versions) < 2:
                raise CodeTreeError(self._missing(label, f"two code trees of different versions, "
                                                         f"found only {', '.join(sorted(versions))}"))
            return trees[0] if label == "old" else trees[-1]
        if VERSION_LABEL.match(label):
            for tree in self.all():
                if tree.label == label:
                    return tree
            raise CodeTreeError(self._missing(label, f"a {label} code tree, found "
                                                     f"{', '.join(t.label for t in self.all())}"))
        if os.sep in label or os.path.isdir(label):
            return self.tree(label)
        raise CodeTreeError(f"unknown code tree {label!r}: use 'old', 'new', 'default', a "
                            f"version such as 10.11.18, or a path")

    def _missing(self, label: str, what: str) -> str:
        where = ", ".join(t.basedir for t in self.all())
        return (f"code tree {label!r} needs {what} (trees: {where}); fetch one with "
                f"scripts/get-tree VERSION or pass a second --basedir")

    def describe(self) -> str:
        """``10.11.19 (/usr), 10.11.18 (trees/10.11.18/usr)`` for the run header."""
        return ", ".join(f"{t.label} ({t.basedir})" for t in self.all())


def resolve_tree(server: "Server", basedir: "str | CodeTree") -> CodeTree:
    """The code tree basedir names for server (a label such as 'new', a version, a path:
    through the run's trees; a CodeTree as it is)."""
    if isinstance(basedir, CodeTree):
        return basedir
    trees = server.settings.trees or TreeSet([server.tree.given or server.tree.basedir])
    return trees.resolve(basedir)


def switch_tree(server: "Server", tree: CodeTree) -> None:
    """Run server on tree from its next start on (it must be stopped)."""
    if server.is_alive():
        raise ServerStartError(f"stop {server.name} before switching it to {tree.basedir}")
    if tree is not server.tree:
        get_logger().info(f"{server.name}: code tree {server.tree.label} -> {tree.label} "
                          f"({tree.basedir})")
    server.tree = tree
