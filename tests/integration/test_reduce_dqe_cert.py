"""--mode=reduce of a DQE and of a CERT finding on a real server, each buried in a trace
with noise:

- DQE: the planted UDF kw_third (gcc-built, tests/fixtures/hunt/planted_wrong.c) answers
  wrongly in every third statement that calls it, so of a SELECT, an UPDATE and a DELETE
  of one condition over its copy of a MyISAM table one touches other rows; the finding's
  SELECT names the table its copy was made from.  The case makes the copy as the
  reduction made it, compares the rows found, touched and removed, and fails the bug's
  way on every code tree under both tools;
- CERT (a performance finding, never a wrong result): the restriction's EXPLAIN runs
  under a planted setting (``use_stat_tables='NEVER', optimizer_use_condition_selectivity=1``:
  no histogram, every condition 100%), so after ``ANALYZE TABLE ... PERSISTENT FOR ALL``
  the query is estimated at 9 rows and its restriction at 100 under the same plan.  The
  case reads both EXPLAINs and dies with ``performance (cert):`` on every code tree.

Covers: lib/hunt/wrongresult/dqe.py, lib/hunt/wrongresult/cert.py, lib/hunt/wrongresult/checkforms.py, lib/hunt/wrongresult/replay.py, lib/reduce/case.py, lib/mtr/travel.py
"""
import json
import os
import re

import pytest

from tests.fixtures.hunt.planted import build_plugin_dir, remove_plugin_dir
from tests.fixtures.reduce.planted import write_finding

MARK = "/* dqe: a copy of `test`.`t1` */ "
COND = "(kw_third(t1.`a`) < 100)"
DQE_QUERIES = [f"{MARK}SELECT t1.kw_rowid FROM `kw_oracle`.`kw_dqe1` AS t1 WHERE {COND}",
               f"UPDATE `kw_oracle`.`kw_dqe1` AS t1 SET t1.kw_touched = 1 WHERE {COND}",
               "DELETE FROM `kw_oracle`.`kw_dqe1` WHERE "
               + COND.replace("t1.`a`", "`kw_oracle`.`kw_dqe1`.`a`")]
SETTING = "use_stat_tables='NEVER', optimizer_use_condition_selectivity=1"
CERT_QUERIES = ["EXPLAIN EXTENDED SELECT t1.`a` FROM `test`.`t1` AS t1 WHERE (t1.`a` < 10)",
                f"SET STATEMENT {SETTING} FOR EXPLAIN EXTENDED SELECT t1.`a` FROM `test`.`t1` "
                f"AS t1 WHERE ((t1.`a` < 10)) AND (t1.`b` = 1)"]
NOISE = [(1, "CREATE TABLE n1 (x INT)"), (1, "INSERT INTO n1 VALUES (1), (2), (3)"),
         (1, "UPDATE n1 SET x = x + 1"), (1, "CREATE TABLE n2 (y VARCHAR(8))"),
         (1, "INSERT INTO n2 VALUES ('a'), ('b')")]


@pytest.fixture(scope="module")
def plugin_dir():
    """A plugin directory holding kw_wrong.so (built with gcc now), removed after."""
    path = build_plugin_dir()
    yield path
    remove_plugin_dir(path)


def _reduced(kewpie, finding):
    # the case under a folder the servers' user can read (kewpie_reachable's 0755 base):
    # kewpie --mode=mtr runs mariadb-test as that user
    out = os.path.join(os.path.dirname(kewpie.workdir), "out")
    proc = kewpie.run("--mode=reduce", finding, f"--reduce-out={out}", "--reduce-parallel=1",
                      timeout=900)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    figures = json.load(open(os.path.join(out, "reduce.json")))
    # present on every tree under both tools (not "under mtr only")
    assert figures["present"] and not figures["absent"], figures["confirmation"]
    assert not any("only" in tree for tree in figures["present"]), figures["confirmation"]
    return figures, open(figures["test"]).read(), open(figures["report"]).read()


def test_planted_dqe_difference_reduced_to_a_case_with_its_copy(kewpie_reachable, plugin_dir,
                                                                tmp_path):
    rows = ", ".join(f"({i}, {i})" for i in range(1, 11))
    trace = [(0, "CREATE FUNCTION IF NOT EXISTS kw_third RETURNS INTEGER SONAME 'kw_wrong.so'"),
             NOISE[0], (0, "CREATE TABLE t1 (a INT, k INT, KEY (k)) ENGINE=MyISAM"), NOISE[1],
             (0, f"INSERT INTO t1 VALUES {rows}"), *NOISE[2:]]
    finding = write_finding(str(tmp_path / "t0001-1-wrong-result-dqe"), trace,
                            [f"--plugin-dir={plugin_dir}"],
                            signature=("wrong-result", ["dqe", "planted"]),
                            kind="wrong-result", oracle="dqe", queries=DQE_QUERIES)
    figures, text, _ = _reduced(kewpie_reachable, finding)
    assert figures["statements_out"] <= 3, text       # the UDF, the table, its rows
    # the noise tables gone (as words: the case's "latin1" holds "n1")
    assert not re.search(r"\bn[12]\b", text), text
    order = ["CREATE TABLE `kw_oracle`.`kw_dqe1` LIKE `test`.`t1`",
             "CREATE TABLE `kw_oracle`.`kw_dqe1_pristine` ENGINE=MyISAM",
             "let $kw_found=", DQE_QUERIES[1], "DELETE FROM `kw_oracle`.`kw_dqe1`;",
             DQE_QUERIES[2], "--die wrong result (dqe)", "DROP SCHEMA IF EXISTS `kw_oracle`"]
    at = [text.index(part) for part in order]
    assert at == sorted(at), text


def test_planted_cert_estimate_reduced_to_a_performance_case(kewpie_reachable, tmp_path):
    rows = ", ".join(f"({i}, {i % 3})" for i in range(1, 101))
    trace = [NOISE[0], (0, "CREATE TABLE t1 (a INT, b INT) ENGINE=MyISAM"), NOISE[1],
             (0, f"INSERT INTO t1 VALUES {rows}"), NOISE[2],
             (0, "ANALYZE TABLE t1 PERSISTENT FOR ALL"), *NOISE[3:]]
    finding = write_finding(str(tmp_path / "t0001-1-performance-cert"), trace, [],
                            signature=("performance", ["cert", "planted"]),
                            kind="performance", oracle="cert", queries=CERT_QUERIES)
    figures, text, report = _reduced(kewpie_reachable, finding)
    assert figures["statements_out"] <= 3, text       # the table, its rows, ANALYZE
    # the noise tables gone (as words: the case's "latin1" holds "n1")
    assert not re.search(r"\bn[12]\b", text), text
    assert f"PREPARE kw_q2 FROM 'SET STATEMENT {SETTING.replace(chr(39), 2 * chr(39))} FOR " \
           f"EXPLAIN EXTENDED" in text, text
    assert "--die performance (cert)" in text and "wrong result" not in text
    assert "Kind: performance (oracle cert)" in report and "wrong result" not in report
