"""kewpie 2012's API lives in lib/kewpie2012/, and its old name still imports it: a 2012
suite's ``from lib.util.mysqlBaseTestCase import mysqlBaseTestCase`` gets the module of
lib/kewpie2012/ itself (one module, one class identity), under either package name, in a
fresh interpreter as in this one.

Covers: lib/aliases.py (MOVED), lib/kewpie2012/
"""
import importlib
import os
import subprocess
import sys

import pytest

import lib.aliases
import lib.kewpie2012.mysqlBaseTestCase as compat_base
from lib.kewpie2012 import randgen_methods

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OLD_STYLE = """\
from lib.util.mysqlBaseTestCase import mysqlBaseTestCase
from lib.util import randgen_methods
import lib.util.sysbench_methods
import lib.kewpie2012.mysqlBaseTestCase as new
import kewpie.util.mysqlBaseTestCase as other_name
assert mysqlBaseTestCase is new.mysqlBaseTestCase is other_name.mysqlBaseTestCase
assert new.__name__ == "lib.kewpie2012.mysqlBaseTestCase", new.__name__
assert lib.util.sysbench_methods.__spec__.name == "lib.kewpie2012.sysbench_methods"
print("ok", randgen_methods.__name__)
"""


def test_the_old_name_is_a_name_of_the_moved_folder():
    assert ("util", "kewpie2012") in lib.aliases.MOVED
    assert not os.path.exists(os.path.join(ROOT, "lib", "util"))


@pytest.mark.parametrize("old", ["lib.util.mysqlBaseTestCase", "kewpie.util.mysqlBaseTestCase"])
def test_an_old_style_import_gets_the_same_module(old):
    module = importlib.import_module(old)
    assert module is compat_base
    assert module.mysqlBaseTestCase is compat_base.mysqlBaseTestCase
    assert module.__spec__.name == "lib.kewpie2012.mysqlBaseTestCase"


def test_from_the_old_package_import_a_module():
    from lib.util import randgen_methods as old  # noqa: the 2012 form
    assert old is randgen_methods


def test_an_old_style_suite_imports_in_a_fresh_interpreter():
    done = subprocess.run([sys.executable, "-c", OLD_STYLE], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["ok", "lib.kewpie2012.randgen_methods"]
