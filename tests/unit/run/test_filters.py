"""Narrowing the selection: --do-test, --skip-test, --combination, --start-from,
disabled.txt and --enable-disabled over loaded TestSpecs (no server).

Covers: lib/run/filters.py, lib/suites/disabled.py, lib/suites/loader.py (TestSpec.full_name)
"""
import pytest

from lib.errors import SuiteError, UsageError
from lib.config import RunConfig, Selection
from lib.run.filters import matches, narrow
from lib.servers.requirements import Requirements
from lib.suites.disabled import read_disabled
from lib.suites.loader import SuiteConfig
from lib.suites.loader import TestSpec as Spec


def _spec(suite, name, combination="", disabled=""):
    return Spec(suite=SuiteConfig(suite, "/nowhere"), name=name, path="", module=None,
                    requirements=Requirements.declared("mysql", [[]]),
                    combination=combination, disabled=disabled)


SPECS = [_spec("main", "basic_test"), _spec("main", "crash_test"),
         _spec("rpl", "events_test", "row"), _spec("rpl", "events_test", "statement"),
         _spec("rpl", "slow_test", "row", disabled="bug 12"),
         _spec("rpl", "slow_test", "statement", disabled="bug 12")]


def _names(specs):
    return [s.full_name for s in specs]


def test_matches_prefix_or_regex():
    assert matches("main.ba", "main.basic_test", "basic_test")
    assert matches("basic", "main.basic_test", "basic_test")
    assert matches(r"^main\.(basic|crash)", "main.crash_test", "crash_test")
    assert matches("'row'", "rpl.events_test 'row'", "events_test")
    assert not matches("crash", "main.basic_test", "basic_test")


def test_do_skip_combination_start_from():
    cfg = RunConfig(selection=Selection(do_test=["main", "rpl.events"], skip_test=["crash"]))
    assert _names(narrow(cfg, list(SPECS))) == [
        "main.basic_test", "rpl.events_test 'row'", "rpl.events_test 'statement'"]
    cfg = RunConfig(selection=Selection(combinations=["statement"]))
    assert _names(narrow(cfg, list(SPECS))) == [
        "main.basic_test", "main.crash_test", "rpl.events_test 'statement'",
        "rpl.slow_test 'statement'"]
    cfg = RunConfig(selection=Selection(start_from="rpl.events"))
    assert _names(narrow(cfg, list(SPECS)))[0] == "rpl.events_test 'row'"
    with pytest.raises(UsageError, match="--start-from 'nope'"):
        narrow(RunConfig(selection=Selection(start_from="nope")), list(SPECS))
    with pytest.raises(UsageError, match="--combination mixed"):
        narrow(RunConfig(selection=Selection(combinations=["mixed"])), list(SPECS))


def test_disabled_stay_listed_and_enable_disabled_clears_them():
    specs = [_spec("rpl", "slow_test", disabled="bug 12")]
    assert narrow(RunConfig(), specs)[0].disabled == "bug 12"
    assert narrow(RunConfig(selection=Selection(enable_disabled=True)), specs)[0].disabled == ""


def test_read_disabled(tmp_path):
    (tmp_path / "disabled.txt").write_text("# why each is off\nslow : bug 12, times out\n"
                                           "crash_test: MDEV-1 # upstream\n\n")
    assert read_disabled(str(tmp_path)) == {"slow_test": "bug 12, times out",
                                            "crash_test": "MDEV-1"}
    (tmp_path / "disabled.txt").write_text("slow without a reason\n")
    with pytest.raises(SuiteError, match="disabled.txt:1: expected 'test_name : reason'"):
        read_disabled(str(tmp_path))
    assert read_disabled(str(tmp_path / "none")) == {}


def test_full_name_shows_the_combination():
    assert _spec("rpl", "events_test", "row").full_name == "rpl.events_test 'row'"
    assert _spec("main", "basic_test").full_name == "main.basic_test"
