"""Pure logic of DQE's and CERT's findings judged again (their reduce paths): which copy
a DQE finding's statements name and what it was made from (the SELECT's mark; for an
older finding, the columns the statements read, which choose the candidates), the
mysqltest lines of DQE's comparison (rows found, touched, removed) and of CERT's
(each EXPLAIN read, the estimate computed in SQL as the oracle computes it), CERT's
findings read as performance findings (their own kind, their own confirmation line).

Covers: lib/hunt/wrongresult/dqe.py, lib/hunt/wrongresult/cert.py, lib/hunt/wrongresult/checkforms.py, lib/hunt/wrongresult/replay.py, lib/reduce/case.py, lib/mtr/travel.py
"""
import json
import random

import pytest

from lib.hunt.wrongresult.cert import CERTOracle, _floored, floored_expression
from lib.hunt.wrongresult.checkforms import (cert_lines, dqe_lines, found_digest, id_digest,
                                             sql_text)
from lib.hunt.wrongresult.dqe import (COPY_MARK, candidates_query, columns_read,
                                      copy_origin)
from lib.hunt.wrongresult.execute import Outcome
from lib.hunt.wrongresult.oracle import Check, Rebuilt
from lib.hunt.wrongresult.replay import finding_kind, mtr_check
from lib.mtr.travel import reproduced
from lib.reduce.case import ReduceError, read_input
from lib.reduce.mtrcase import case_text

# c6fabc5728c7's statements (or19-sf3 trial 6), written before the mark
OLD = ("SELECT t1.kw_rowid FROM `kw_oracle`.`kw_dqe2` AS t1 WHERE (EXISTS (SELECT * FROM "
       "`test`.`xv2_2` AS s1 WHERE (CONCAT(s1.`r1`, s1.`r1`) <=> LPAD(t1.`c2`, 2, 'x'))))",
       "UPDATE `kw_oracle`.`kw_dqe2` AS t1 SET t1.kw_touched = 1 WHERE (EXISTS (SELECT * FROM "
       "`test`.`xv2_2` AS s1 WHERE (CONCAT(s1.`r1`, s1.`r1`) <=> LPAD(t1.`c2`, 2, 'x'))))",
       "DELETE FROM `kw_oracle`.`kw_dqe2` WHERE (EXISTS (SELECT * FROM `test`.`xv2_2` AS s1 "
       "WHERE (CONCAT(s1.`r1`, s1.`r1`) <=> LPAD(`kw_oracle`.`kw_dqe2`.`c2`, 2, 'x'))))")
MARKED = (COPY_MARK.format(original="`test`.`t1`") + OLD[0],) + OLD[1:]


def test_a_dqe_finding_names_its_copy_and_what_it_was_made_from():
    assert copy_origin(MARKED) == ("`kw_oracle`.`kw_dqe2`", ("test", "t1"))
    assert copy_origin(OLD) == ("`kw_oracle`.`kw_dqe2`", None)     # before the mark
    odd = (COPY_MARK.format(original="`te``st`.`t 1`") + OLD[0],) + OLD[1:]
    assert copy_origin(odd)[1] == ("te`st", "t 1")
    for bad in (OLD[:2], ("SELECT 1 FROM `test`.`t1`",) + OLD[1:], ("UPDATE x",) + OLD[1:]):
        with pytest.raises(ValueError):
            copy_origin(bad)


def test_an_old_dqe_findings_candidates_are_the_tables_with_every_column_it_reads():
    assert columns_read(OLD, "`kw_oracle`.`kw_dqe2`") == ["c2"]   # not kw_touched, not s1's
    join = ("SELECT t1.kw_rowid FROM `kw_oracle`.`kw_dqe1` AS t1 JOIN `test`.`t2` AS t2 ON "
            "t1.`a` = t2.`b` WHERE t1.`c``d` > 0",)
    assert columns_read(join, "`kw_oracle`.`kw_dqe1`") == ["a", "c`d"]
    sql = candidates_query(["c2", "it's"])
    assert "COLUMN_NAME IN ('c2', 'it''s')" in sql and "= 2 ORDER BY 1, 2" in sql
    assert "'kw_oracle'" in sql and "'BASE TABLE', 'SYSTEM VERSIONED'" in sql
    assert "COLUMNS" not in candidates_query([])


SEEN_INNODB = Rebuilt(("SET SESSION sql_mode = 'NO_ENGINE_SUBSTITUTION'",
                       "CREATE SCHEMA IF NOT EXISTS `kw_oracle`",
                       "CREATE TABLE `kw_oracle`.`kw_dqe2` LIKE `test`.`t1`"),
                      ("DROP SCHEMA IF EXISTS `kw_oracle`",),
                      (json.dumps({"copy": "`kw_oracle`.`kw_dqe2`", "transactional": True,
                                   "pristine": "", "columns": ["`c0`", "`c2`"]}),))


def test_dqes_mysqltest_check_compares_the_rows_found_touched_and_removed():
    text = "\n".join(mtr_check("dqe", MARKED, ";", SEEN_INNODB))
    found = found_digest(MARKED[0])
    assert found.startswith(COPY_MARK.format(original="`test`.`t1`") + "SELECT CONCAT(COUNT("
                            "DISTINCT t1.kw_rowid), ':', IFNULL(MD5(GROUP_CONCAT(DISTINCT "
                            "t1.kw_rowid ORDER BY t1.kw_rowid)), '')) FROM `kw_oracle`.`kw_dqe2`")
    assert found.endswith(MARKED[0].split(" FROM ", 1)[1])      # the same FROM and WHERE
    # the copy built first, each DML in a transaction rolled back, the copy dropped last
    order = ["SET SESSION sql_mode", "CREATE TABLE `kw_oracle`.`kw_dqe2` LIKE",
             "CREATE TABLE `kw_oracle`.`kw_ids` ENGINE=MyISAM AS SELECT kw_rowid FROM "
             "`kw_oracle`.`kw_dqe2`;", f"let $kw_found= `{found}`;", "START TRANSACTION;",
             MARKED[1] + ";", "let $kw_updated= `SELECT ROW_COUNT()`;",
             f"FROM `kw_oracle`.`kw_dqe2` WHERE kw_touched = 1`;", "ROLLBACK;",
             MARKED[2] + ";", "let $kw_deleted= `SELECT ROW_COUNT()`;",
             "WHERE i.kw_rowid NOT IN (SELECT kw_rowid FROM `kw_oracle`.`kw_dqe2`)`;",
             "ROLLBACK;", "--die wrong result (dqe): ", "DROP SCHEMA IF EXISTS `kw_oracle`;"]
    at = [text.index(part, text.index(order[n - 1]) + 1 if n else 0)
          for n, part in enumerate(order)]
    assert at == sorted(at), text
    assert "'$kw_touched' LIKE '$kw_updated:%'" in text
    # a copy without transactions is put back from its pristine copy
    myisam = Rebuilt(SEEN_INNODB.statements, SEEN_INNODB.undo, (json.dumps(
        {"copy": "`kw_oracle`.`kw_dqe2`", "transactional": False,
         "pristine": "`kw_oracle`.`kw_dqe2_pristine`", "columns": ["`c0`", "`c2`"]}),))
    lines = dqe_lines(MARKED, myisam)
    assert "START TRANSACTION;" not in lines and lines.count("DELETE FROM `kw_oracle`.`kw_dqe2`;") == 2
    assert lines.count("INSERT INTO `kw_oracle`.`kw_dqe2` (`c0`, `c2`, kw_rowid) SELECT `c0`, "
                       "`c2`, kw_rowid FROM `kw_oracle`.`kw_dqe2_pristine`;") == 2
    assert dqe_lines(MARKED, Rebuilt()) == []                   # no copy seen: no check
    assert id_digest("x") == "CONCAT(COUNT(x), ':', IFNULL(MD5(GROUP_CONCAT(x ORDER BY x)), ''))"


def test_floored_expression_computes_what_floored_computes():
    rng = random.Random(4)
    names = ["a", "b", "c", "d", "e"]
    for _ in range(200):
        factors = [(n, round(rng.uniform(0, 3), 2)) for n in names]
        groups = rng.choice([[], [frozenset("de")], [frozenset("bcd"), frozenset("cd")],
                             [frozenset("bcd"), frozenset("d")], [frozenset("b"), frozenset("e")]])
        sql = floored_expression([(n, str(v)) for n, v in factors], groups)
        assert eval(sql.replace("GREATEST", "max")) == pytest.approx(_floored(factors, groups))
    assert floored_expression([], []) == "1"


PLAN_Q = {"rows": [["1", "t1", "ALL"], ["1", "t2", "range"], ["2", "x", "ALL"]],
          "floored": [["t2"]]}
PLAN_R = {"rows": [["1", "t1", "ALL"], ["1", "t2", "range"], ["2", "x", "ALL"]],
          "floored": [["t2"]]}
CERT_Q = ("EXPLAIN EXTENDED SELECT t1.`a` FROM `test`.`t1` AS t1 LEFT JOIN `test`.`t2` AS t2 "
          "ON t1.`a` = t2.`b` AND t2.`k` > 3",
          "SET STATEMENT use_stat_tables='NEVER' FOR EXPLAIN EXTENDED SELECT t1.`a` FROM "
          "`test`.`t1` AS t1 LEFT JOIN `test`.`t2` AS t2 ON t1.`a` = t2.`b` AND t2.`k` > 3 "
          "WHERE t1.`a` LIKE 'x\\\\%'")


def test_certs_mysqltest_check_reads_each_estimate_as_the_oracle_computes_it():
    seen = Rebuilt(seen=(json.dumps(PLAN_Q), json.dumps(PLAN_R)))
    lines = mtr_check("cert", CERT_Q, ";", seen)
    text = "\n".join(lines)
    assert "PREPARE kw_q1 FROM 'EXPLAIN EXTENDED SELECT t1.`a` FROM" in text
    # a backslash: hex, whatever NO_BACKSLASH_ESCAPES says
    assert f"PREPARE kw_q2 FROM {sql_text(CERT_Q[1])};" in text and "CONVERT(X'" in text
    assert "let $kw_t1_2= query_get_value(EXECUTE kw_q1, table, 2);" in text
    assert "let $kw_i2_4= query_get_value(EXECUTE kw_q2, id, 4);" in text   # no 4th row
    assert "'$kw_a1_2' = 'range'" in text and "'$kw_i1_4' = 'No such row'" in text
    # the second block's table is read for the plan, not counted in the estimate
    assert "$kw_r1_3" not in text and "let $kw_r1_2= query_get_value(EXECUTE kw_q1, rows, 2);" in text
    estimate = ("(IF(LOCATE('Const row not found', '$kw_x2_1'), 1, (IFNULL($kw_r2_1, 0)) * "
                "IFNULL($kw_f2_1, 100) / 100)) * GREATEST(1, (IF(LOCATE('Const row not found', "
                "'$kw_x2_2'), 1, (IFNULL($kw_r2_2, 0)) * IFNULL($kw_f2_2, 100) / 100)))")
    assert f"let $kw_e2= `SELECT {estimate}`;" in text
    # the bound of Q: its range step's slack, the tolerance
    assert "(IFNULL($kw_r1_2, 0) + 3) * IFNULL($kw_f1_2, 100) / 100" in text
    assert f"let $kw_more= `SELECT {estimate} > (" in text and ") * 1.011 + 1e-9`;" in text
    assert text.index("--skip the plans") < text.index("--die performance (cert): ")
    assert cert_lines(CERT_Q, Rebuilt()) == []
    assert sql_text("it's") == "'it''s'"
    assert sql_text("a\\b") == "CONVERT(X'615C62' USING utf8mb4)"


def test_cert_keeps_each_plan_as_mysqltest_shows_it():
    oracle = CERTOracle()
    check = Check(CERT_Q, "and")
    oracle._notes = {CERT_Q[0]: "select `test`.`t1`.`a` AS `a` from `test`.`t1` left join "
                                "`test`.`t2` on(`test`.`t2`.`b` = `test`.`t1`.`a`) where 1",
                     CERT_Q[1]: "select 1 from dual where 0"}
    row = ("1", "SIMPLE", "t1", "ALL", None, None, None, None, 10, 100.0, "")
    impossible = (1, "SIMPLE", None, None, None, None, None, None, None, None, "Impossible WHERE")
    seen = oracle.seen(check, [Outcome(rows=(row, ("1", "SIMPLE", "t2", "ref") + row[4:])),
                               Outcome(rows=(impossible,))])
    assert json.loads(seen[0]) == {"rows": [["1", "t1", "ALL"], ["1", "t2", "ref"]],
                                   "floored": [["t2"]]}
    assert json.loads(seen[1]) == {"rows": [["1", "NULL", "NULL"]], "floored": []}


def _finding(tmp_path, kind, oracle, queries):
    folder = tmp_path / f"t0003-1-{kind}-9a4e"
    folder.mkdir()
    data = {"format": "kewpie-hunt-finding/1", "kind": kind, "oracle": oracle,
            "signature": {"id": "9a4e", "kind": kind, "parts": [oracle, "shape"]},
            "title": f"{oracle} | shape", "topology": {"kind": "single", "servers": [{}]},
            "trial": {"options": []},
            "details": {"queries": list(queries), "detail": "CERT (and): the restricted ..."}}
    (folder / "finding.json").write_text(json.dumps(data))
    (folder / "trace.jsonl").write_text(
        '{"seq": 1, "server": "s0", "conn": 7, "sql": "CREATE TABLE t1 (a INT)"}\n')
    return folder


def test_cert_findings_are_performance_findings_reduced_as_their_own_kind(tmp_path):
    assert finding_kind("cert") == "performance" and finding_kind("dqe") == "wrong-result"
    case = read_input(str(_finding(tmp_path, "performance", "cert", CERT_Q)))
    assert case.judged_again and case.compared == CERT_Q
    text = case_text(case, case.statements, {}, rebuilt=Rebuilt(
        seen=(json.dumps(PLAN_Q), json.dumps(PLAN_R))))
    assert "# the performance finding (cert)" in text and "wrong result" not in text
    # a CERT finding called a wrong result is no finding kewpie writes
    (tmp_path / "x").mkdir()
    with pytest.raises(ReduceError, match="cannot be reduced yet"):
        read_input(str(_finding(tmp_path / "x", "wrong-result", "cert", CERT_Q)))
    row = "kw_reduce.reduced                 [ fail ]\n"
    assert reproduced(row + "performance (cert): the restricted query", "kw_reduce", "reduced",
                      "performance")
    assert not reproduced(row + "wrong result (cert): ...", "kw_reduce", "reduced", "performance")
    assert not reproduced(row + "performance (cert): ...", "kw_reduce", "reduced", "wrong-result")
