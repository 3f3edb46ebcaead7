"""Unit tests for lib/suites/loader.py: requirement validation, suite_config loading and test selection.

Covers: lib/suites/loader.py, lib/servers/requirements.py
"""
import os
import re
import sys
import textwrap

import pytest

from lib.suites import loader as suites
from lib.errors import SuiteError, UsageError
from lib.servers.options import Option
from lib.servers.requirements import Requirements

TRIVIAL_TEST = textwrap.dedent("""\
    import unittest


    class {cls}(unittest.TestCase):
        def test_ok(self):
            self.assertTrue(True)
    """)


@pytest.fixture(autouse=True)
def _forget_loaded_suite_modules():
    yield
    for name in [n for n in sys.modules if n.startswith("kewpie_suites.")]:
        del sys.modules[name]


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def make_suite(root, name, config=None, tests=("x",), extra=None):
    """A suite directory with a suite_config.py (unless config is None) and trivial tests."""
    suite = root / name
    suite.mkdir(parents=True)
    if config is not None:
        write(suite / "suite_config.py", config)
    for test in tests:
        write(suite / f"{test}_test.py", TRIVIAL_TEST.format(cls=f"{test.capitalize()}Test"))
    for filename, text in (extra or {}).items():
        write(suite / filename, text)
    return suite


# ---------------------------------------------------------------- validate_requirements

def test_validate_requirements_good():
    result = suites.validate_requirements(
        [[], ["--innodb_file_per_table", "--log-bin=a --log-bin=b"], "--server-id=3"], "cfg")
    assert result == [[], [Option("innodb-file-per-table"), Option("log-bin", "b")],
                      [Option("server-id", "3")]]


def test_validate_requirements_tuples_accepted():
    assert suites.validate_requirements(((), ("--a",)), "cfg") == [[], [Option("a")]]


@pytest.mark.parametrize("value", [None, [], (), "--a", {"a": 1}, 3])
def test_validate_requirements_not_a_non_empty_list(value):
    with pytest.raises(SuiteError, match="cfg: server_requirements must be a non-empty list"):
        suites.validate_requirements(value, "cfg")


@pytest.mark.parametrize("value", [[None], [[], 5], [{"a": 1}]])
def test_validate_requirements_item_not_a_list(value):
    with pytest.raises(SuiteError, match=r"server_requirements\[\d\] must be a list"):
        suites.validate_requirements(value, "cfg")


@pytest.mark.parametrize("value", [[[1]], [[], ["--a", None]], [[b"--a"]]])
def test_validate_requirements_non_string_options(value):
    with pytest.raises(SuiteError, match=r"cfg: server_requirements\[\d\]: .*not a string"):
        suites.validate_requirements(value, "cfg")


def test_validate_requirements_bad_option_names_index():
    with pytest.raises(SuiteError, match=r"server_requirements\[1\]: .*long form"):
        suites.validate_requirements([[], ["-x"]], "cfg")


def test_validate_requirements_rejects_harness_options():
    with pytest.raises(SuiteError, match="--port"):
        suites.validate_requirements([["--port=3306"]], "cfg")


# ---------------------------------------------------------------- validate_requests

def test_validate_requests_none_and_empty():
    assert suites.validate_requests(None, 2, "cfg") == {}
    assert suites.validate_requests({}, 2, "cfg") == {}


def test_validate_requests_good():
    result = suites.validate_requests({"join_cluster": [(0, 1), [0, 2]]}, 3, "cfg")
    assert result == {"join_cluster": [(0, 1), (0, 2)]}


def test_validate_requests_empty_pairs():
    assert suites.validate_requests({"join_cluster": []}, 2, "cfg") == {"join_cluster": []}
    assert suites.validate_requests({"join_cluster": None}, 2, "cfg") == {"join_cluster": []}


def test_validate_requests_chain_is_allowed():
    assert suites.validate_requests({"join_cluster": [(0, 1), (1, 2)]}, 3, "cfg") == \
        {"join_cluster": [(0, 1), (1, 2)]}


@pytest.mark.parametrize("value", [[(0, 1)], "join_cluster", 5])
def test_validate_requests_not_a_dict(value):
    with pytest.raises(SuiteError, match="server_requests must be a dict"):
        suites.validate_requests(value, 2, "cfg")


def test_validate_requests_unknown_key():
    with pytest.raises(SuiteError, match="unknown server_requests key 'join_galera'"):
        suites.validate_requests({"join_galera": [(0, 1)]}, 2, "cfg")


@pytest.mark.parametrize("pairs", [[(0, 2)], [(-1, 0)], [(5, 0)]])
def test_validate_requests_index_out_of_range(pairs):
    with pytest.raises(SuiteError, match="does not name two of the 2 servers"):
        suites.validate_requests({"join_cluster": pairs}, 2, "cfg")


def test_validate_requests_pair_with_same_index():
    with pytest.raises(SuiteError, match=r"pair \(1, 1\)"):
        suites.validate_requests({"join_cluster": [(1, 1)]}, 2, "cfg")


@pytest.mark.parametrize("pairs", [[(0,)], [(0, 1, 2)], [("0", "1")], [0], (0, 1), [(0.0, 1)]])
def test_validate_requests_malformed_pair(pairs):
    with pytest.raises(SuiteError, match="index pairs"):
        suites.validate_requests({"join_cluster": pairs}, 3, "cfg")


def test_validate_requests_duplicate_joiner():
    with pytest.raises(SuiteError, match="twice as a joiner"):
        suites.validate_requests({"join_cluster": [(0, 2), (1, 2)]}, 3, "cfg")


def test_validate_requests_arbitrator():
    assert suites.validate_requests({"join_cluster": [(0, 1)], "arbitrator": True}, 2, "cfg") \
        == {"join_cluster": [(0, 1)], "arbitrator": True}
    with pytest.raises(SuiteError, match="arbitrator must be True or False"):
        suites.validate_requests({"arbitrator": "yes"}, 2, "cfg")
    with pytest.raises(SuiteError, match="two servers or more"):
        suites.validate_requests({"arbitrator": True}, 1, "cfg")


def test_arbitrator_needs_galera_nodes():
    assert suites.check_arbitrator({"arbitrator": True}, "galera", "cfg") is True
    assert suites.check_arbitrator({}, "mysql", "cfg") is False
    with pytest.raises(SuiteError, match="needs Galera nodes"):
        suites.check_arbitrator({"arbitrator": True}, "mysql", "cfg")


def test_validate_requests_non_iterable_pairs_raise_suite_error():
    with pytest.raises(SuiteError):
        suites.validate_requests({"join_cluster": 1}, 2, "cfg")


# ---------------------------------------------------------------- load_suite_config

def test_load_suite_config_valid(tmp_path):
    suite = make_suite(tmp_path, "rep", config="""\
        # a replication suite
        server_requirements = [[], ["--log_bin=mysql-bin"]]
        server_requests = {"join_cluster": [(0, 1)]}
        server_type = "mysql"
        """)
    cfg = suites.load_suite_config("rep", str(suite))
    assert cfg.name == "rep"
    assert cfg.path == str(suite)
    assert cfg.server_requirements == [[], [Option("log-bin", "mysql-bin")]]
    assert cfg.server_requests == {"join_cluster": [(0, 1)]}
    assert cfg.server_type == "mysql"


def test_load_suite_config_default_server_type_alias(tmp_path):
    suite = make_suite(tmp_path, "s", config="default_server_type = 'mysql'\n")
    cfg = suites.load_suite_config("s", str(suite))
    assert cfg.server_type == "mysql"
    assert cfg.server_requirements == [[]]


def test_load_suite_config_missing_file_gives_defaults(tmp_path):
    suite = make_suite(tmp_path, "plain")
    cfg = suites.load_suite_config("plain", str(suite))
    assert cfg.server_requirements == [[]]
    assert cfg.server_requests == {}
    assert cfg.server_type is None


def test_load_suite_config_config_may_import_and_compute(tmp_path):
    suite = make_suite(tmp_path, "s", config="""\
        import os
        n = 3
        server_requirements = [["--server-id=%d" % (i + 1)] for i in range(n)]
        """)
    cfg = suites.load_suite_config("s", str(suite))
    assert [o[0].value for o in cfg.server_requirements] == ["1", "2", "3"]
    assert cfg.server_requests == {}


def _names_file(message, path):
    return str(path) in message or os.path.relpath(path) in message


def test_load_suite_config_syntax_error_names_file_and_line(tmp_path):
    suite = make_suite(tmp_path, "broken", config="""\
        server_requirements = [[]]

        server_requests = {'join_cluster': [(0, 1)]
        x = 1
        """)
    with pytest.raises(SuiteError) as info:
        suites.load_suite_config("broken", str(suite))
    msg = str(info.value)
    cfg = suite / "suite_config.py"
    assert _names_file(msg, cfg)
    assert "syntax error" in msg
    assert "suite_config.py:3:" in msg or "suite_config.py:4:" in msg


def test_load_suite_config_syntax_error_simple_line(tmp_path):
    suite = make_suite(tmp_path, "broken", config="a = 1\nb = = 2\n")
    with pytest.raises(SuiteError, match=r"suite_config\.py:2: syntax error"):
        suites.load_suite_config("broken", str(suite))


def test_load_suite_config_runtime_error_names_file_and_line(tmp_path):
    suite = make_suite(tmp_path, "boom", config="a = 1\n\nb = 1 / 0\n")
    with pytest.raises(SuiteError) as info:
        suites.load_suite_config("boom", str(suite))
    msg = str(info.value)
    assert _names_file(msg, suite / "suite_config.py")
    assert "suite_config.py:3: ZeroDivisionError" in msg


def test_load_suite_config_name_error(tmp_path):
    suite = make_suite(tmp_path, "boom", config="server_requirements = [[]]\nserver_requests = nope\n")
    with pytest.raises(SuiteError, match=r"suite_config\.py:2: NameError"):
        suites.load_suite_config("boom", str(suite))


def test_load_suite_config_error_in_library_call_names_config_line(tmp_path):
    suite = make_suite(tmp_path, "boom", config="import os\n\nserver_requirements = [[os.path.join(1)]]\n")
    with pytest.raises(SuiteError, match=r"suite_config\.py:3: TypeError"):
        suites.load_suite_config("boom", str(suite))


def test_load_suite_config_invalid_requirements_names_file(tmp_path):
    suite = make_suite(tmp_path, "bad", config="server_requirements = [['--datadir=/tmp']]\n")
    with pytest.raises(SuiteError, match="--datadir"):
        suites.load_suite_config("bad", str(suite))


def test_load_suite_config_request_index_checked_against_server_count(tmp_path):
    suite = make_suite(tmp_path, "bad", config="""\
        server_requirements = [[], []]
        server_requests = {'join_cluster': [(0, 2)]}
        """)
    with pytest.raises(SuiteError) as info:
        suites.load_suite_config("bad", str(suite))
    assert "suite_config.py" in str(info.value)
    assert "2 servers" in str(info.value)


def test_load_suite_config_server_type_must_be_string(tmp_path):
    suite = make_suite(tmp_path, "bad", config="server_type = 3\n")
    with pytest.raises(SuiteError, match="server_type must be a string"):
        suites.load_suite_config("bad", str(suite))


# ---------------------------------------------------------------- discovery helpers

def test_available_suites_and_test_files(tmp_path):
    make_suite(tmp_path, "beta", tests=("b", "a"))
    make_suite(tmp_path, "alpha")
    (tmp_path / "_private").mkdir()
    (tmp_path / ".hidden").mkdir()
    (tmp_path / "notasuite.txt").write_text("x")
    other = tmp_path / "other"
    make_suite(other, "gamma")
    assert suites.available_suites([str(tmp_path), str(other), str(tmp_path / "missing")]) == \
        ["alpha", "beta", "gamma", "other"]
    extra = {"helper.py": "X = 1\n", "notes_test.txt": "x\n"}
    suite = tmp_path / "beta"
    for name, text in extra.items():
        write(suite / name, text)
    assert suites.test_files(str(suite)) == ["a_test.py", "b_test.py"]


def test_find_suite_searches_paths_in_order(tmp_path):
    first = make_suite(tmp_path / "p1", "s")
    make_suite(tmp_path / "p2", "s")
    assert suites.find_suite("s", [str(tmp_path / "p1"), str(tmp_path / "p2")]) == str(first)


# ---------------------------------------------------------------- select_tests

@pytest.fixture
def suitepath(tmp_path):
    root = tmp_path / "suites"
    make_suite(root, "alpha", config="server_requirements = [['--innodb-file-per-table']]\n",
               tests=("x", "y"),
               extra={"z_test.py": """\
                   import unittest

                   server_requirements = [[], ['--log_bin=mysql-bin']]


                   class ZTest(unittest.TestCase):
                       def test_ok(self):
                           pass
                   """})
    make_suite(root, "beta", tests=("x",))
    make_suite(root, "rep", config="""\
        server_requirements = [[], [], []]
        server_requests = {'join_cluster': [(0, 1), (0, 2)]}
        """, tests=("r",))
    return str(root)


@pytest.mark.parametrize("name", ["x", "x_test", "alpha.x_test", "alpha.x"])
def test_select_by_name_forms(suitepath, name):
    specs = suites.select_tests(["alpha"], [name], [suitepath], "mysql")
    assert [s.full_name for s in specs] == ["alpha.x_test"]
    spec = specs[0]
    assert spec.name == "x_test"
    assert spec.path == os.path.join(suitepath, "alpha", "x_test.py")
    assert hasattr(spec.module, "XTest")


def test_select_qualified_name_without_suite_flag(suitepath):
    specs = suites.select_tests([], ["beta.x_test"], [suitepath], "mysql")
    assert [s.full_name for s in specs] == ["beta.x_test"]


def test_select_all_tests_of_suites_sorted(suitepath):
    specs = suites.select_tests(["alpha", "beta"], [], [suitepath], "mysql")
    assert [s.full_name for s in specs] == ["alpha.x_test", "alpha.y_test", "alpha.z_test",
                                            "beta.x_test"]


def test_select_duplicate_suites_and_tests_deduplicated(suitepath):
    specs = suites.select_tests(["alpha", "alpha"], ["x", "x_test", "alpha.x"], [suitepath], "mysql")
    assert [s.full_name for s in specs] == ["alpha.x_test"]


def test_select_same_name_in_two_suites(suitepath):
    specs = suites.select_tests(["alpha", "beta"], ["x"], [suitepath], "mysql")
    assert [s.full_name for s in specs] == ["alpha.x_test", "beta.x_test"]
    specs = suites.select_tests(["alpha", "beta"], ["beta.x"], [suitepath], "mysql")
    assert [s.full_name for s in specs] == ["beta.x_test"]


def test_select_keeps_command_line_order(suitepath):
    specs = suites.select_tests(["alpha"], ["y", "x"], [suitepath], "mysql")
    assert [s.name for s in specs] == ["y_test", "x_test"]


def test_select_unknown_test(suitepath):
    with pytest.raises(UsageError, match="unknown test 'nope'"):
        suites.select_tests(["alpha"], ["nope"], [suitepath], "mysql")


def test_select_test_of_other_suite_is_unknown(suitepath):
    with pytest.raises(UsageError, match="unknown test 'beta.x'"):
        suites.select_tests(["alpha"], ["beta.x"], [suitepath], "mysql")


def test_select_unknown_suite_lists_known_suites(suitepath):
    with pytest.raises(UsageError) as info:
        suites.select_tests(["nosuch"], [], [suitepath], "mysql")
    msg = str(info.value)
    assert "unknown suite 'nosuch'" in msg
    assert "alpha, beta, rep" in msg
    assert suitepath in msg


def test_select_defaults_to_main(suitepath):
    with pytest.raises(UsageError, match="unknown suite 'main'"):
        suites.select_tests([], ["x"], [suitepath], "mysql")


def test_select_unknown_suite_with_no_suites_at_all(tmp_path):
    with pytest.raises(UsageError, match="known suites: none"):
        suites.select_tests(["a"], [], [str(tmp_path)], "mysql")


def test_suite_requirements_apply(suitepath):
    spec = suites.select_tests(["alpha"], ["x"], [suitepath], "mysql")[0]
    assert spec.requirements == Requirements(server_type="mysql",
                                             servers=((Option("innodb-file-per-table"),),),
                                             pairs=())
    assert spec.requirements.count == 1


def test_module_requirements_override_suite(suitepath):
    spec = suites.select_tests(["alpha"], ["z"], [suitepath], "mysql")[0]
    assert spec.requirements.servers == ((), (Option("log-bin", "mysql-bin"),))
    assert spec.requirements.count == 2
    assert spec.requirements.pairs == ()


def test_join_cluster_becomes_replication_for_mysql(suitepath):
    spec = suites.select_tests(["rep"], [], [suitepath], "mysql")[0]
    assert spec.requirements.server_type == "mysql"
    assert spec.requirements.pairs == ((0, 1), (0, 2))
    assert spec.requirements.count == 3


def test_join_cluster_pairs_kept_for_galera(tmp_path):
    make_suite(tmp_path, "gal", config="""\
        server_type = 'galera'
        server_requirements = [[], []]
        server_requests = {'join_cluster': [(0, 1)]}
        """)
    spec = suites.select_tests(["gal"], [], [str(tmp_path)], "mysql")[0]
    assert spec.requirements.server_type == "galera"
    assert spec.requirements.pairs == ((0, 1),)


def test_module_server_requests_with_suite_requirements(tmp_path):
    make_suite(tmp_path, "s", config="server_requirements = [[], []]\n", tests=(),
               extra={"m_test.py": "server_requests = {'join_cluster': [(0, 1)]}\n"})
    spec = suites.select_tests(["s"], [], [str(tmp_path)], "mysql")[0]
    assert spec.requirements.pairs == ((0, 1),)


def test_module_server_type_overrides_default(tmp_path):
    make_suite(tmp_path, "s", tests=(), extra={"m_test.py": "server_type = 'other'\n"})
    spec = suites.select_tests(["s"], [], [str(tmp_path)], "mysql")[0]
    assert spec.requirements.server_type == "other"


def test_module_with_bad_requirements(tmp_path):
    make_suite(tmp_path, "s", tests=(), extra={"m_test.py": "server_requirements = [['--port=1']]\n"})
    with pytest.raises(SuiteError, match="--port"):
        suites.select_tests(["s"], [], [str(tmp_path)], "mysql")


def _broken(tmp_path, source):
    make_suite(tmp_path, "s", tests=(), extra={"m_test.py": source, "ok_test.py": "X = 1\n"})
    specs = suites.select_tests(["s"], [], [str(tmp_path)], "mysql")
    assert [s.name for s in specs] == ["m_test", "ok_test"]
    assert not specs[1].broken  # the other module still loads and runs
    assert specs[0].broken
    return specs[0].load_error


def test_broken_test_module_names_file_and_line(tmp_path):
    error = _broken(tmp_path, "import os\n\nraise RuntimeError('bad')\n")
    assert re.search(r"m_test\.py:3: RuntimeError: bad", error)
    assert "kewpie_suites.s.m_test" not in sys.modules


def test_test_module_error_in_library_call_names_module_line(tmp_path):
    assert re.search(r"m_test\.py:3: TypeError", _broken(tmp_path, "import os\n\nos.path.join(1)\n"))


def test_test_module_syntax_error(tmp_path):
    error = _broken(tmp_path, "x = 1\ndef (:\n")
    assert re.search(r"m_test\.py:2: syntax error", error)
    assert "\n" not in error


def test_only_the_selected_modules_are_imported(tmp_path):
    make_suite(tmp_path, "s", tests=(), extra={"m_test.py": "x = 1\ndef (:\n",
                                               "ok_test.py": "X = 1\n"})
    specs = suites.select_tests(["s"], ["ok"], [str(tmp_path)], "mysql")
    assert [s.name for s in specs] == ["ok_test"] and not specs[0].broken
    assert "kewpie_suites.s.m_test" not in sys.modules


def test_storage_disk_reaches_the_requirements(tmp_path):
    suite = make_suite(tmp_path, "durable", config="storage = 'disk'\n")
    cfg = suites.load_suite_config("durable", str(suite))
    assert cfg.storage == "disk"
    specs = suites.select_tests(["durable"], [], [str(tmp_path)], "mysql")
    assert specs[0].requirements.on_disk
    assert suites.suite_requirements("durable", [str(tmp_path)], "mysql").on_disk


def test_storage_defaults_to_default_and_rejects_unknown_values(tmp_path):
    assert suites.load_suite_config("p", str(make_suite(tmp_path, "p"))).storage == "default"
    bad = make_suite(tmp_path, "bad", config="storage = 'ssd'\n")
    with pytest.raises(SuiteError, match="storage must be one of 'default', 'disk'"):
        suites.load_suite_config("bad", str(bad))


# ---------------------------------------------------------------- requirements_for
# (the Requirements a test gets are built here, and their equality drives reuse)

def _requirements(server_type, option_lists, pairs):
    import types
    module = types.ModuleType("m")
    module.server_requirements = option_lists
    module.server_requests = {"join_cluster": pairs}
    module.server_type = server_type
    return suites.requirements_for(suites.SuiteConfig("s", "/s"), module, "mysql", "m.py")


def test_requirements_for_merges_each_server():
    reqs = _requirements("mysql", [["--a=1", "--b", "--a=2"], []], [(0, 1)])
    assert reqs.server_type == "mysql"
    assert reqs.servers == ((Option("a", "2"), Option("b")), ())
    assert reqs.pairs == ((0, 1),)
    assert reqs.count == 2


def test_requirements_for_converts_lists_to_tuples():
    reqs = _requirements("mysql", [[], [], []], [[0, 1], [1, 2]])
    assert reqs.pairs == ((0, 1), (1, 2))
    assert isinstance(reqs.servers, tuple) and all(isinstance(s, tuple) for s in reqs.servers)
    hash(reqs)


def test_requirements_equality_drives_reuse():
    a = _requirements("mysql", [["--a=1"], ["--b"]], [(0, 1)])
    b = _requirements("mysql", [["--a=0", "--a=1"], ["--b"]], [(0, 1)])
    assert a == b
    assert a == Requirements("mysql", ((Option("a", "1"),), (Option("b"),)), ((0, 1),))
    assert a != _requirements("mysql", [["--a=1"], ["--b"]], [])
    assert a != _requirements("galera", [["--a=1"], ["--b"]], [(0, 1)])
    assert a != _requirements("mysql", [["--a=2"], ["--b"]], [(0, 1)])


def test_requirements_for_suite_default_without_module_declarations():
    import types
    reqs = suites.requirements_for(suites.SuiteConfig("s", "/s"), types.ModuleType("m"),
                                   "mysql", "m.py")
    assert reqs.count == 1 and reqs.servers == ((),) and reqs.pairs == ()
