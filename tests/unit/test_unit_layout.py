"""Unit test folders mirror the package tree (issue 44): a module's tests are found where
its package is.

The rule: a unit test file lives in the folder of tests/unit/ that mirrors the package of
the FIRST path its docstring's ``Covers:`` line names (list the test's main subject
first): ``lib/hunt/finding.py`` -> ``tests/unit/hunt/``, ``lib/modes/hunt/run.py`` ->
``tests/unit/modes/hunt/``, ``lib/config/`` -> ``tests/unit/config/``.  A path's package
is the nearest folder with an ``__init__.py``, from the path's own folder (a file's, or
the folder named) upwards (``lib/history/templates/`` -> ``lib/history/``).  A file whose
first path is in no package below lib/ stays at tests/unit/ itself: a top-level module
(``lib/cli.py``, ``lib/__init__.py``, ``kewpie.py``), lib/ as a whole (the house rules,
the type check, function length, the architecture doc's claims -- rules over the whole
tree), docs/, bench/, scripts/ or pyproject.toml.  Every folder of tests/unit/ is a
package (``__init__.py``) that mirrors one of lib/, and no two unit test files share a
name.

Covers: lib/ (its package tree, mirrored), tests/unit/
"""
import ast
import os
from collections import defaultdict

from tests.conftest import ROOT
from tests.parsed import parsed
from tests.unit.test_house_rules import _covers

UNIT = os.path.join(ROOT, "tests", "unit")


def home_of(first: str, root: str = ROOT) -> str:
    """The folder under tests/unit/ ('' for tests/unit/ itself) of a test whose first
    Covers: path is first (relative to the checkout root)."""
    parts = first.rstrip("/").split("/")
    if parts[0] != "lib" or len(parts) < 2:
        return ""
    folder = parts if os.path.isdir(os.path.join(root, *parts)) else parts[:-1]
    while len(folder) > 1 and not os.path.isfile(os.path.join(root, *folder, "__init__.py")):
        folder = folder[:-1]
    return "/".join(folder[1:])


def _unit_test_files():
    for dirpath, dirs, files in os.walk(UNIT):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.startswith("test_") and name.endswith(".py"):
                yield os.path.join(dirpath, name)


def misplaced(placed: dict[str, str], root: str = ROOT) -> list[str]:
    """One line per test file not where the rule puts it; placed maps a file's path
    (relative to tests/unit/) to its first Covers: path."""
    lines = []
    for rel, first in sorted(placed.items()):
        folder = home_of(first, root)
        if os.path.dirname(rel) != folder:
            where = f"tests/unit/{folder}/" if folder else "tests/unit/"
            why = f"lib/{folder}/" if folder else "no package below lib/"
            lines.append(f"tests/unit/{rel} belongs in {where} "
                         f"(its first Covers: path {first} is in {why})")
    return lines


def test_unit_test_folders_mirror_the_package_tree():
    placed = {}
    for path in _unit_test_files():
        covers = _covers(ast.get_docstring(parsed(path)))
        if covers:  # none: test_house_rules' Covers: rule fails for it
            placed[os.path.relpath(path, UNIT).replace(os.sep, "/")] = covers[0]
    problems = misplaced(placed)
    assert not problems, "misplaced unit tests (git mv them):\n" + "\n".join(problems)


def test_unit_test_folders_are_packages_of_lib():
    """tests/unit is a package and so is each folder in it, named for a package of lib/."""
    problems = []
    for dirpath, dirs, _files in os.walk(UNIT):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        rel = os.path.relpath(dirpath, UNIT)
        if not os.path.isfile(os.path.join(dirpath, "__init__.py")):
            problems.append(f"tests/unit/{rel}/ has no __init__.py")
        if rel != "." and not os.path.isfile(os.path.join(ROOT, "lib", rel, "__init__.py")):
            problems.append(f"tests/unit/{rel}/ mirrors no package (lib/{rel}/ is none)")
    assert not problems, "\n".join(problems)


def test_unit_test_names_are_unique():
    where = defaultdict(list)
    for path in _unit_test_files():
        where[os.path.basename(path)].append(os.path.relpath(path, ROOT))
    assert not {name: paths for name, paths in where.items() if len(paths) > 1}


def test_the_rule_places_planted_files():
    assert home_of("lib/hunt/finding.py") == "hunt"
    assert home_of("lib/hunt/wrongresult/oracle.py") == "hunt/wrongresult"
    assert home_of("lib/modes/hunt/run.py") == "modes/hunt"
    assert home_of("lib/config/") == "config"
    assert home_of("lib/history/templates/") == "history"   # not a package: its parent's
    for whole_tree in ("lib/", "lib/cli.py", "lib/__init__.py", "kewpie.py", "docs/architecture.md",
                       "bench/mtr_parity.py", "scripts/flake-hunt", "pyproject.toml"):
        assert home_of(whole_tree) == "", whole_tree
    assert misplaced({"test_a.py": "lib/hunt/finding.py", "run/test_b.py": "lib/cli.py",
                      "hunt/test_c.py": "lib/hunt/hang.py", "test_d.py": "lib/"}) == [
        "tests/unit/run/test_b.py belongs in tests/unit/ (its first Covers: path lib/cli.py "
        "is in no package below lib/)",
        "tests/unit/test_a.py belongs in tests/unit/hunt/ (its first Covers: path "
        "lib/hunt/finding.py is in lib/hunt/)"]
