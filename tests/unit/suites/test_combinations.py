"""A suite's combinations: parsed, checked, and applied after the suite's options.

Covers: lib/suites/combinations.py, lib/suites/loader.py (with_combination)
"""
import re

import pytest

from lib.errors import SuiteError
from lib.servers.options import parse_options
from lib.servers.requirements import Requirements
from lib.suites.combinations import parse_combinations
from lib.suites.loader import with_combination


def test_combinations_apply_after_the_suite_options():
    combos = parse_combinations({
        "row": {"options": ["--binlog-format=ROW"]},
        "mb": {"wsrep_sst_method": "mariabackup", "server_options": [[], ["--max-connections=9"]]},
    }, 2, "suite_config.py")
    assert [c.name for c in combos] == ["row", "mb"]
    reqs = Requirements.declared("mysql", [parse_options(["--binlog-format=MIXED"]), []])
    row = with_combination(reqs, combos[0])
    assert [o.as_arg() for o in row.servers[0]] == ["--binlog-format=ROW"]
    mb = with_combination(reqs, combos[1])
    assert "--wsrep-sst-method=mariabackup" in [o.as_arg() for o in mb.servers[0]]
    assert "--max-connections=9" in [o.as_arg() for o in mb.servers[1]]


@pytest.mark.parametrize("value, message", [
    (["row"], "must be a dict"),
    ({"bad name": {"options": []}}, "must be a word"),
    ({"x": {"flavour": 1}}, "must be a dict with some of"),
    ({"x": {"options": ["--port=1"]}}, "set by kewpie"),
    ({"x": {"server_options": [[], [], []]}}, "at most 2 option lists"),
])
def test_bad_combinations(value, message):
    with pytest.raises(SuiteError, match=re.escape(message)):
        parse_combinations(value, 2, "suite_config.py")
