"""kewpie's public API is the package itself (``from kewpie import ...``, ``from lib import
...`` in a checkout): every name of EXPORTS is the attribute it names, the type checkers'
block declares the same names, ``import kewpie`` imports none of them until one is used,
both package names give the same objects, the docs say what each name is, and the old
public module ``lib.testcase`` still works.  (That suites import nothing else is a house
rule: tests/unit/test_house_rules.py.)

Covers: lib/__init__.py, lib/testcase.py, docs/writing-tests.md, docs/pytest.md
"""
import ast
import importlib
import os
import re
import subprocess
import sys

import pytest

import lib
from tests.parsed import parsed

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOCS = ("docs/writing-tests.md", "docs/pytest.md")


def _type_checking_names():
    """(public name, module, attribute) of the imports under ``if TYPE_CHECKING:`` in
    lib/__init__.py."""
    tree = ast.parse(open(os.path.join(ROOT, "lib", "__init__.py")).read())
    found = set()
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and \
                node.test.id == "TYPE_CHECKING":
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom) and imp.level == 1, ast.dump(imp)
                found |= {(a.asname, imp.module, a.name) for a in imp.names}
    return found


def test_every_export_is_the_attribute_it_names():
    assert len(lib.EXPORTS) == len(set(lib.__all__)) == len(lib.__all__)
    for name, module, attribute in lib.EXPORTS:
        value = getattr(lib, name)
        assert value is getattr(importlib.import_module(f"lib.{module}"), attribute), name


def test_the_type_checkers_see_the_same_names():
    assert _type_checking_names() == set(lib.EXPORTS)


def test_both_names_give_the_same_objects():
    import kewpie
    from kewpie import Bank, KewpieTestCase
    assert kewpie is lib
    assert KewpieTestCase is lib.KewpieTestCase is importlib.import_module(
        "lib.suites.testcase").KewpieTestCase
    assert Bank is lib.consistency.Bank


def test_an_unknown_name_is_an_attribute_error_and_submodules_still_import():
    with pytest.raises(AttributeError, match="no attribute 'NoSuchThing'"):
        lib.NoSuchThing
    from lib import errors  # a module of the package, not an export
    assert errors.QueryError is lib.QueryError
    assert "KewpieTestCase" in dir(lib)


def test_the_old_public_module_still_works():
    from lib.testcase import ClusterTestCase, KewpieTestCase
    assert (KewpieTestCase, ClusterTestCase) == (lib.KewpieTestCase, lib.ClusterTestCase)


def test_importing_the_package_imports_no_export_until_one_is_used():
    probe = ("import sys, lib\n"
             "loaded = sorted(m for m in sys.modules if m.startswith(('lib.', 'kewpie.')))\n"
             "print(' '.join(loaded))\n"
             "from lib import SHIPPED\n"
             "print('lib.randgen.shipped' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    first, second = done.stdout.splitlines()
    assert first.split() == ["lib.aliases"]
    assert second == "True"


@pytest.mark.parametrize("name", lib.__all__)
def test_the_docs_say_what_each_name_is(name):
    text = "".join(open(os.path.join(ROOT, doc)).read() for doc in DOCS)
    assert re.search(rf"`{re.escape(name)}\b", text), f"{name} is in no table of {DOCS}"


def test_no_module_of_the_package_imports_the_public_api():
    """The API sits on top of every layer: a module imports what it needs from its
    module, never from the package (``from .. import Bank``)."""
    found = []
    lib_dir = os.path.join(ROOT, "lib")
    for dirpath, _, files in os.walk(lib_dir):
        depth = os.path.relpath(dirpath, lib_dir).count(os.sep) + (dirpath != lib_dir) + 1
        for name in (n for n in files if n.endswith(".py")):
            path = os.path.join(dirpath, name)
            for node in ast.walk(parsed(path)):
                if isinstance(node, ast.ImportFrom) and node.module is None and \
                        node.level == depth:
                    found += [f"{os.path.relpath(path, ROOT)}: {a.name}" for a in node.names
                              if a.name in lib.__all__]
    assert found == []
