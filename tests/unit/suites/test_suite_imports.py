"""``percona_tests.<suite>`` is the run's folder of that suite: the finder's answers (the
chosen folder over the suite paths' order, with or without __init__.py, sibling modules,
a suite no folder holds), modules of another folder forgotten when the run changes,
the shadowed folders, two folders of one name in a run refused; and which modules the
error-log warnings check fails (loader: kewpie_check_warnings, suite_config's
check_warnings).

Covers: lib/suites/suite_imports.py, lib/suites/loader.py
"""
import importlib
import sys
import textwrap

import pytest

from lib.errors import SuiteError, UsageError
from lib.suites import loader
from lib.suites.suite_imports import PACKAGE, SuitePackages, shadowed_by, use_suites


def _forget():
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, SuitePackages)]
    for name in [n for n in sys.modules
                 if n == PACKAGE or n.startswith(PACKAGE + ".") or n.startswith("kewpie_suites.")]:
        del sys.modules[name]


@pytest.fixture(autouse=True)
def _no_finder_left():
    _forget()  # another test of this process may have run select_tests
    yield
    _forget()


def write(path, text=""):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))


def suite(root, name, marker, init=False):
    write(root / name / "suite_config.py", f"fixture = {marker!r}\nserver_requirements = [[]]\n")
    write(root / name / "helper.py", f"""\
        from {PACKAGE}.{name} import suite_config
        WHO = suite_config.fixture
        """)
    if init:
        write(root / name / "__init__.py", "PACKAGE_INIT = True\n")
    return root / name


def test_suite_paths_in_order_and_the_chosen_folder_first(tmp_path):
    suite(tmp_path / "a", "upgrade", "a")
    suite(tmp_path / "b", "upgrade", "b")
    suite(tmp_path / "b", "other", "b-other", init=True)
    paths = [str(tmp_path / "a"), str(tmp_path / "b")]
    use_suites(paths, {})
    assert importlib.import_module(f"{PACKAGE}.upgrade.helper").WHO == "a"
    assert importlib.import_module(f"{PACKAGE}.other.helper").WHO == "b-other"
    assert importlib.import_module(f"{PACKAGE}.other").PACKAGE_INIT
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(f"{PACKAGE}.no_such_suite")
    # the run chose b's upgrade: a's modules are forgotten, b's answer
    use_suites(paths, {"upgrade": str(tmp_path / "b" / "upgrade")})
    assert f"{PACKAGE}.upgrade.helper" not in sys.modules
    assert f"{PACKAGE}.other.helper" in sys.modules  # unchanged folder: kept
    assert importlib.import_module(f"{PACKAGE}.upgrade.helper").WHO == "b"
    assert sum(isinstance(f, SuitePackages) for f in sys.meta_path) == 1
    assert isinstance(sys.meta_path[0], SuitePackages)


def test_a_namespace_package_of_the_same_name_loaded_before_is_replaced(tmp_path):
    ours = suite(tmp_path / "mine", "upgrade", "mine")
    write(tmp_path / "elsewhere" / PACKAGE / "upgrade" / "suite_config.py", "fixture = 'no'\n")
    sys.path.insert(0, str(tmp_path / "elsewhere"))
    try:
        assert importlib.import_module(f"{PACKAGE}.upgrade.suite_config").fixture == "no"
        use_suites([str(tmp_path / "mine")], {"upgrade": str(ours)})
        assert importlib.import_module(f"{PACKAGE}.upgrade.suite_config").fixture == "mine"
    finally:
        sys.path.remove(str(tmp_path / "elsewhere"))


def test_shadowed_by_names_the_other_folders_once(tmp_path):
    first = suite(tmp_path / "a", "upgrade", "a")
    second = suite(tmp_path / "b", "upgrade", "b")
    paths = [str(tmp_path / "a"), str(tmp_path / "b"), str(tmp_path / "b"), str(tmp_path / "c")]
    assert shadowed_by("upgrade", str(first), paths) == [str(second)]
    assert shadowed_by("upgrade", str(second), paths) == [str(first)]
    assert shadowed_by("other", str(tmp_path / "a" / "other"), paths) == []


def test_select_tests_loads_modules_against_their_own_folder(tmp_path):
    for root, marker in ((tmp_path / "user", "user"), (tmp_path / "kewpie", "kewpie")):
        suite(root, "upgrade", marker)
        write(root / "upgrade" / "x_test.py", f"""\
            import unittest
            from {PACKAGE}.upgrade.helper import WHO


            class XTest(unittest.TestCase):
                def test_ok(self):
                    pass
            """)
    paths = [str(tmp_path / "user"), str(tmp_path / "kewpie")]
    specs = loader.select_tests(["upgrade"], [], paths, "mysql")
    assert specs[0].module.WHO == "user"
    assert specs[0].suite.shadows == (str(tmp_path / "kewpie" / "upgrade"),)
    specs = loader.select_tests(["upgrade"], [], paths[::-1], "mysql")
    assert specs[0].module.WHO == "kewpie"


def test_two_folders_of_one_name_in_one_run_are_refused(tmp_path):
    suite(tmp_path / "a", "upgrade", "a")
    suite(tmp_path / "b", "upgrade", "b")
    paths = [str(tmp_path / "a"), str(tmp_path / "b")]
    with pytest.raises(UsageError, match="two suites called upgrade"):
        loader.select_tests([str(tmp_path / "a" / "upgrade"), str(tmp_path / "b" / "upgrade")],
                            [], paths, "mysql")


# ---------------------------------------------------------------- the warnings rule

MODULES = {
    "old_test.py": """\
        import unittest


        class Base2012(unittest.TestCase):
            kewpie_check_warnings = False


        class OldTest(Base2012):
            def test_ok(self):
                pass
        """,
    "new_test.py": """\
        import unittest


        class NewTest(unittest.TestCase):
            def test_ok(self):
                pass
        """,
}


@pytest.mark.parametrize("switch, expected", [
    ("", {"old_test": False, "new_test": True}),
    ("check_warnings = True\n", {"old_test": True, "new_test": True}),
    ("check_warnings = False\n", {"old_test": False, "new_test": False}),
])
def test_which_modules_the_warnings_check_fails(tmp_path, switch, expected):
    write(tmp_path / "s" / "suite_config.py", "server_requirements = [[]]\n" + switch)
    for name, text in MODULES.items():
        write(tmp_path / "s" / name, text)
    specs = loader.select_tests(["s"], [], [str(tmp_path)], "mysql")
    assert {spec.name: spec.check_warnings for spec in specs} == expected


def test_check_warnings_must_be_a_boolean(tmp_path):
    write(tmp_path / "s" / "suite_config.py", "check_warnings = 'yes'\n")
    with pytest.raises(SuiteError, match="check_warnings must be True"):
        loader.load_suite_config("s", str(tmp_path / "s"))


def test_the_2012_base_class_declares_report_only():
    from lib.kewpie2012.mysqlBaseTestCase import mysqlBaseTestCase
    assert mysqlBaseTestCase.kewpie_check_warnings is False
    assert loader.WARNINGS_ATTRIBUTE == "kewpie_check_warnings"
