"""--mode=reduce of Pinolo findings on a real server: the planted UDF kw_nth (gcc-built,
tests/fixtures/hunt/planted_wrong.c) answers wrongly from its fourth call in a statement on,
so a looser query that reads more rows gets other answers -- buried in a trace with noise,
each finding is reduced to the statements it needs (judged again by Pinolo's own judge),
its case fails the bug's way on every code tree under both tools (the confirmation:
present in each) and, with the UDF fixed (the library built with -DKW_PLANTED_FIXED), passes
under kewpie --mode=mtr and mysql-test-run.pl:

- rows: ``Q`` reads two rows; the looser ``Q+`` reads three others first in the table's
  order, so kw_nth answers wrongly on Q's two: Q's rows are not within Q+'s (the case's
  ``comm -23`` of the client's sorted rows);
- count: ``Q`` reads its one row by a key (one call); ``Q+`` (an OR no key serves) scans
  the table and calls kw_nth on every row, so the row's call is the fifth and Q+ counts 0,
  fewer than Q's 1 (the case's counts in numeric order).

Covers: lib/hunt/wrongresult/pinolo.py, lib/hunt/wrongresult/withinform.py, lib/hunt/wrongresult/replay.py, lib/reduce/case.py, lib/reduce/mtrcase.py, lib/mtr/travel.py
"""
import json
import os
import re
import shutil
import tempfile

import pytest

from tests.fixtures.hunt.planted import (WRONG_LIBRARY, WRONG_SOURCE, build_plugin_dir,
                                        remove_plugin_dir)
from tests.fixtures.reduce.planted import build_fixed_library, write_finding
from tests.integration.test_reduce import MTR_ROOT, run_reference_mtr

UDF = "CREATE FUNCTION IF NOT EXISTS kw_nth RETURNS INTEGER SONAME 'kw_wrong.so'"
NOISE = [(1, "CREATE TABLE n1 (x INT)"), (1, "INSERT INTO n1 VALUES (1), (2), (3)"),
         (1, "UPDATE n1 SET x = x + 1"), (1, "CREATE TABLE n2 (y VARCHAR(8))"),
         (1, "INSERT INTO n2 VALUES ('a'), ('b')")]
ROWS_HEAD = "SELECT t1.`a`, kw_nth(t1.`a`) FROM `test`.`t1` AS t1 WHERE "
ROWS = [ROWS_HEAD + "(t1.`a` < 3)",
        "/* pinolo: looser */ " + ROWS_HEAD + "((t1.`a` < 3) OR (t1.`a` > 5))",
        "/* pinolo: tighter */ " + ROWS_HEAD + "((t1.`a` < 3) AND (t1.`b` = 1))"]
COUNT_HEAD = "SELECT COUNT(*) FROM `test`.`t2` AS t1 WHERE "
COUNTS = [COUNT_HEAD + "((kw_nth(t1.`a`) < 100) AND (t1.`k` = 5))",
          "/* pinolo: looser */ " + COUNT_HEAD + "((kw_nth(t1.`a`) < 100) AND ((t1.`k` = 5) "
          "OR (t1.`b` = 7)))",
          "/* pinolo: tighter */ " + COUNT_HEAD + "((kw_nth(t1.`a`) < 100) AND ((t1.`k` = 5) "
          "AND (t1.`b` = 0)))"]
WHY = {"rows": "statement 1's rows are not within statement 2's",
       "count": "statement 1 counts more rows than statement 2"}


@pytest.fixture(scope="module")
def plugin_dir():
    """A plugin directory holding kw_wrong.so (built with gcc now), removed after."""
    path = build_plugin_dir()
    yield path
    remove_plugin_dir(path)


def test_planted_pinolo_findings_reduced_to_cases_that_fail_only_with_the_bug(kewpie,
                                                                              plugin_dir,
                                                                              tmp_path):
    # rows: 10, 11, 12 first in the table's order, so Q+ reads them before Q's 1 and 2
    rows_trace = [(0, UDF), NOISE[0], (0, "CREATE TABLE t1 (a INT, b INT) ENGINE=MyISAM"),
                  NOISE[1],
                  (0, "INSERT INTO t1 VALUES (10, 1), (11, 1), (12, 1), (1, 1), (2, 1)"),
                  *NOISE[2:]]
    # count: eight rows, the fifth (k = 5) read by the key in Q, in a scan by Q+; no noise
    # (the rows finding shows the noise removed): the count form's case, end to end, for
    # fewer replays
    values = ", ".join(f"({i}, {i}, 0)" for i in range(1, 9))
    count_trace = [(0, UDF),
                   (0, "CREATE TABLE t2 (a INT, k INT, b INT, KEY (k)) ENGINE=MyISAM"),
                   (0, f"INSERT INTO t2 VALUES {values}")]
    # the cases' folder where the server's user reaches it (mariadb-test runs as that
    # user), at a path without '-' (mtr's --suite cannot take one)
    base = tempfile.mkdtemp(prefix="kwreduce", dir="/tmp")
    os.chmod(base, 0o755)
    try:
        rows = _reduced(kewpie, plugin_dir, tmp_path, base, rows_trace, ROWS, "rows",
                        "Pinolo (rows): rows of Q missing from the looser query: (1, 1); "
                        "(2, 2)")
        assert "LC_ALL=C comm -23 $MYSQL_TMP_DIR/kw_compared_1.rows " \
               "$MYSQL_TMP_DIR/kw_compared_2.rows" in open(rows).read()
        count = _reduced(kewpie, plugin_dir, tmp_path, base, count_trace, COUNTS, "count",
                         "Pinolo (count): the looser query counted 0 row(s), fewer than "
                         "Q's 1")
        text = open(count).read()
        assert "LC_ALL=C sort -n" in text and "comm -23" not in text, text
        _pass_when_fixed(kewpie, base, {"rows": rows, "count": count})
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _reduced(kewpie, plugin_dir, tmp_path, base, trace, queries, variant, detail):
    """The finding reduced into base/variant and confirmed on every tree under both
    tools; the case's path."""
    finding = write_finding(str(tmp_path / f"t0001-1-wrong-result-pinolo-{variant}"), trace,
                            [f"--plugin-dir={plugin_dir}"],
                            signature=("wrong-result", ["pinolo", "planted", variant]),
                            kind="wrong-result", oracle="pinolo", queries=queries,
                            detail=detail)
    out = os.path.join(base, variant)
    proc = kewpie.run("--mode=reduce", finding, f"--reduce-out={out}", "--reduce-parallel=1",
                      timeout=600)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    figures = json.load(open(os.path.join(out, "reduce.json")))
    text = open(figures["test"]).read()
    assert figures["statements_out"] <= 3, text       # the UDF, the table, its rows
    # the noise tables gone (as words: the case's "latin1" holds "n1")
    assert not re.search(r"\bn[12]\b", text), text
    for index, sql in enumerate(queries, 1):   # each statement unchanged, in its file
        assert f"kw_compared_{index}.sql KW_END_OF_SQL" in text and f"\n{sql};\n" in text
    assert f"--die wrong result (pinolo): {WHY[variant]}" in text, text
    # present on every tree under both tools (not "under mtr only")
    assert figures["present"] and not figures["absent"], figures["confirmation"]
    assert not any("only" in tree for tree in figures["present"]), figures["confirmation"]
    return figures["test"]


def _pass_when_fixed(kewpie, base, cases):
    """The reduced cases (variant -> its .test) in one suite, each beside a copy run with
    the UDF fixed: each case fails the bug's way, each copy passes, under kewpie
    --mode=mtr and mysql-test-run.pl."""
    suite = os.path.join(base, "kw_reduce")
    shutil.copytree(os.path.dirname(os.path.dirname(cases["rows"])), suite, symlinks=True,
                    ignore=shutil.ignore_patterns("reduced.*"))
    fixed = os.path.join(suite, "plugin", "fixed")
    build_fixed_library(fixed, WRONG_SOURCE, WRONG_LIBRARY)
    names = []
    for variant, test in cases.items():
        opts = open(test[:-len(".test")] + ".opt").read()
        assert "--plugin-dir=$MTR_SUITE_DIR/plugin" in opts, opts
        for name, plugins in ((variant, os.path.join(suite, "plugin")),
                              (f"{variant}_fixed", fixed)):
            shutil.copy(test, os.path.join(suite, "t", f"{name}.test"))
            shutil.copy(os.path.join(os.path.dirname(os.path.dirname(test)), "r",
                                     "reduced.result"),
                        os.path.join(suite, "r", f"{name}.result"))
            open(os.path.join(suite, "t", f"{name}.opt"), "w").write(
                opts.replace("$MTR_SUITE_DIR/plugin", plugins))
            names.append(name)
    mtr = kewpie.run("--mode=mtr", "--force", f"--suitepath={base}", "--suite=kw_reduce",
                     *[f"kw_reduce.{n}" for n in names], timeout=300)
    real = run_reference_mtr(suite, base, *names) \
        if os.path.isfile(os.path.join(MTR_ROOT, "mysql-test-run.pl")) else None
    for out in [mtr.stdout] + ([real.stdout] if real else []):
        for variant in cases:
            assert re.search(rf"kw_reduce\.{variant}\s+\[ fail \]", out), out[-3000:]
            assert f"wrong result (pinolo): {WHY[variant]}" in out, out[-3000:]
            assert re.search(rf"kw_reduce\.{variant}_fixed\s+\[ pass \]", out), out[-3000:]
