"""--mode=reduce of a Radar finding on a real server: a planted difference between a table
and its raw copy -- the planted UDF kw_nth (gcc-built, tests/fixtures/hunt/planted_wrong.c)
answers wrongly from its fourth call in a statement on, so four rows read through an
index (in key order) and the same rows of the raw copy (no index: in the table's order)
get the wrong answer on another row -- buried in a trace with noise, is reduced to
the statements it needs; the case builds the raw copy as the reduction built it, fails
the bug's way on every code tree under both tools (the confirmation: present in each).

Covers: lib/hunt/wrongresult/radar.py, lib/hunt/wrongresult/replay.py, lib/hunt/wrongresult/copies.py, lib/reduce/mtrcase.py, lib/mtr/travel.py
"""
import json
import os
import re

import pytest

from tests.fixtures.hunt.planted import build_plugin_dir, remove_plugin_dir
from tests.fixtures.reduce.planted import write_finding

RAW_MARK = "/* radar: raw copies */ "
QUERY = "SELECT t1.`a`, kw_nth(t1.`a`) FROM `test`.`t1` AS t1 WHERE t1.`k` IN (1, 2, 3, 40)"


@pytest.fixture(scope="module")
def plugin_dir():
    """A plugin directory holding kw_wrong.so (built with gcc now), removed after."""
    path = build_plugin_dir()
    yield path
    remove_plugin_dir(path)


def _trace():
    # row 40 first: the index reads k = 1, 2, 3, 40 (the UDF wrong for 40), the raw copy
    # in the table's order 40, 1, 2, 3 (wrong for 3)
    rows = ", ".join(f"({i}, {i})" for i in [40] + list(range(1, 40)))
    statements = [(0, "CREATE FUNCTION IF NOT EXISTS kw_nth RETURNS INTEGER SONAME 'kw_wrong.so'"),
                  (1, "CREATE TABLE n1 (x INT)"),
                  (0, "CREATE TABLE t1 (a INT, k INT, KEY (k)) ENGINE=MyISAM"),
                  (1, "INSERT INTO n1 VALUES (1), (2), (3)"),
                  (0, f"INSERT INTO t1 VALUES {rows}"),
                  (1, "UPDATE n1 SET x = x + 1"),
                  (1, "CREATE TABLE n2 (y VARCHAR(8))"),
                  (1, "INSERT INTO n2 VALUES ('a'), ('b')"),
                  (0, "ANALYZE TABLE t1")]
    return statements


def test_planted_radar_difference_reduced_to_a_case_with_its_raw_copy(kewpie_reachable,
                                                                      plugin_dir, tmp_path):
    raw = RAW_MARK + QUERY.replace("`test`.`t1`", "`kw_oracle`.`kw_raw1`")
    finding = write_finding(str(tmp_path / "t0001-1-wrong-result-radar"), _trace(),
                            [f"--plugin-dir={plugin_dir}"],
                            signature=("wrong-result", ["radar", "planted"]),
                            kind="wrong-result", oracle="radar", queries=[QUERY, raw])
    # the case under a folder the servers' user can read (kewpie_reachable's 0755 base, not
    # pytest's 0700 tmp_path): kewpie --mode=mtr runs mariadb-test as that user
    out = os.path.join(os.path.dirname(kewpie_reachable.workdir), "out")
    proc = kewpie_reachable.run("--mode=reduce", finding, f"--reduce-out={out}",
                                "--reduce-parallel=1", timeout=600)
    assert proc.returncode == 0, proc.stdout[-4000:]
    figures = json.load(open(os.path.join(out, "reduce.json")))
    text = open(figures["test"]).read()
    # the UDF, the table and its rows; the noise gone
    assert figures["statements_out"] <= 4, text
    # the noise tables gone (as words: the case's "latin1" holds "n1")
    assert not re.search(r"\bn[12]\b", text), text
    assert "CREATE TABLE `kw_oracle`.`kw_raw1` (`a` int(11) NULL, `k` int(11) NULL) " \
           "ENGINE=MyISAM" in text, text
    assert text.index("INSERT INTO `kw_oracle`.`kw_raw1`") < text.index("--write_file") < \
        text.index("DROP SCHEMA IF EXISTS `kw_oracle`")
    assert figures["present"] and not figures["absent"], figures["confirmation"]
    # present on every tree under both tools (not "under mtr only")
    assert not any("only" in tree for tree in figures["present"]), figures["confirmation"]
