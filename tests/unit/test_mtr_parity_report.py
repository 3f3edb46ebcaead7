"""bench/mtr_parity.py's report: test times that differ much between the tools are listed
(a test with a race or a timeout can take a minute longer in one run of either tool).

Covers: bench/mtr_parity.py
"""
import importlib.util
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _load():
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    try:
        spec = importlib.util.spec_from_file_location("mtr_parity_under_test",
                                                      os.path.join(ROOT, "bench", "mtr_parity.py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # dataclasses look their module up there
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.pop(0)


def _run(parity, tool, times):
    tests = {name: parity.Verdict("pass", time_ms=ms) for name, ms in times.items()}
    return parity.ToolRun(tool, [], "/", 100.0, 0, "", "", "", tests)


def test_time_outliers_lists_the_largest_differences_first():
    parity = _load()
    mtr = _run(parity, "mtr", {"main.xa": 7200.0, "main.a": 100.0, "main.b": 9000.0})
    kewpie = _run(parity, "kewpie", {"main.xa": 57200.0, "main.a": 150.0, "main.b": 1000.0})
    lines = parity.time_outliers(mtr, kewpie)
    assert "differ by 5 s or more" in lines[1] and lines[1].endswith(": 2")
    assert lines[2].split()[0] == "main.xa" and lines[3].split()[0] == "main.b"
    assert not any("main.a " in line for line in lines)
    assert parity.time_outliers(mtr, mtr) == []


def test_a_tests_file_keeps_names_with_a_hash_and_drops_comments(tmp_path):
    parity = _load()
    names = tmp_path / "names.txt"
    names.write_text("# the sample\ngalera.galera#500   # a name with '#'\nbasic\n\n")
    assert parity.read_tests_file(str(names), "galera") == ["galera.galera#500", "galera.basic"]


def test_big_test_goes_to_both_tools():
    parity = _load()
    assert "--big-test" in parity.mtr_command("/v", "galera_3nodes", [], 2, "mysql", True)
    assert "--big-test" in parity.kewpie_command("/w", "/j.xml", "galera_3nodes", [], 2, True)
    assert "--big-test" not in parity.mtr_command("/v", "galera_3nodes", [], 2)
    assert parity.TARGETS["galera_sr"] == (0.98, 0.8)


def test_names_are_compared_as_the_tools_print_them():
    """Combinations are read in the order each tool printed them, never sorted: kewpie's
    name matches mtr's only when it lists them in mtr's order."""
    parity = _load()
    mtr = parity.parse_mtr_output(
        "mariabackup.incremental_backup '16k,undo0' w1 [ pass ]   2345\n")
    assert list(mtr) == ["mariabackup.incremental_backup,16k,undo0"]
    assert parity.normalize_name("mariabackup.incremental_backup,undo0,16k") == \
        "mariabackup.incremental_backup,undo0,16k"
