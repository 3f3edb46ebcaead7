"""Pure logic of an oracle's finding judged again (the reduce path of the plan and rewrite
oracles' wrong results): which oracles can be, the check's variant, the mysqltest check
that dies while the compared statements disagree (each run unchanged by the client), the finding folder read
with the compared statements after the trace, the reduced case's text; Radar's: which
original each raw copy of its statements stands for, the copies' statements built before
the comparison and dropped after it.

Covers: lib/hunt/wrongresult/replay.py, lib/hunt/wrongresult/rowsform.py, lib/hunt/wrongresult/radar.py, lib/reduce/case.py, lib/reduce/mtrcase.py
"""

import pytest

from lib.reduce.case import ReduceError, read_input
from lib.reduce.mtrcase import case_text
from lib.hunt.wrongresult.dqp import _after_select
from lib.hunt.wrongresult.oracle import Rebuilt
from lib.hunt.wrongresult.radar import RAW_MARK, raw_names
from lib.hunt.wrongresult.replay import REPLAYABLE, mtr_check, not_replayable, variant_of
from lib.hunt.wrongresult.rowsform import END_OF_STATEMENT, UNPADDED, compare_lines, file_of
from tests.unit.hunt.wrongresult.findingfolder import oracle_finding

Q = "SELECT t1.`a`, COUNT(*) FROM `test`.`t1` AS t1 GROUP BY t1.`a`"
P = ("SELECT k1, SUM(a1) FROM (SELECT t1.`a` AS k1, COUNT(*) AS a1 FROM `test`.`t1` AS t1 "
     "WHERE (t1.`b` > 0) GROUP BY t1.`a`) AS tlp GROUP BY k1")


def test_which_oracles_are_judged_again_and_why_not():
    for name in ("tlp", "norec", "dqp", "eet", "coddtest", "tlp-aggregate", "tlp-distinct",
                 "tlp-groupby", "tlp-having", "radar", "dqe", "cert", "pinolo"):
        assert name in REPLAYABLE and not_replayable(name) == ""
    assert not_replayable("nosuch") == "it is no oracle of lib/hunt/wrongresult"


def test_variant_of_a_finding():
    assert variant_of("EET (aggregate): rows only in Q: ...") == "aggregate"
    assert variant_of("tlp-groupby (aggregates): rows only ...") == "aggregates"
    assert variant_of("WHERE counted 3 row(s), ...") == ""


def _statement_in(lines, index):
    """The text statement index's file holds (the lines between its write_file and end)."""
    start = lines.index(f"--write_file {file_of(index, 'sql')} {END_OF_STATEMENT}")
    end = lines.index(END_OF_STATEMENT, start)
    return lines[start + 1:end]


def test_the_mysqltest_check_runs_each_compared_statement_unchanged_and_compares_its_rows():
    lines = mtr_check("tlp-groupby", [Q, P])
    # each statement as the oracle sent it, after the oracle's sql_mode (no CTE, no digest)
    assert _statement_in(lines, 1) == [UNPADDED, Q + ";"]
    assert _statement_in(lines, 2) == [UNPADDED, P + ";"]
    assert not any("WITH kw_q" in line or "MD5(" in line for line in lines)
    # run by the client (utf8mb4, the text as it is, one line a row), listed (every byte
    # that is not printable ASCII escaped), sorted as bytes (the order comm needs)
    at = lines.index("--exec $MYSQL --default-character-set=utf8mb4 --binary-mode --batch "
                     "--skip-column-names test < $MYSQL_TMP_DIR/kw_compared_2.sql > "
                     "$MYSQL_TMP_DIR/kw_compared_2.out")
    assert lines[at + 1:at + 3] == [
        "--exec LC_ALL=C sed -n 'l 0' $MYSQL_TMP_DIR/kw_compared_2.out > "
        "$MYSQL_TMP_DIR/kw_compared_2.rows",
        "--exec LC_ALL=C sort $MYSQL_TMP_DIR/kw_compared_2.rows -o "
        "$MYSQL_TMP_DIR/kw_compared_2.rows"]
    # compared with the first's rows; a difference (diff_files' 1 or 2) dies the old way
    at = lines.index("--diff_files $MYSQL_TMP_DIR/kw_compared_1.rows "
                     "$MYSQL_TMP_DIR/kw_compared_2.rows")
    assert lines[at - 1] == "--error 0,1,2" and lines[at + 1:at + 9] == [
        "if ($errno)", "{", "  --enable_result_log",
        "  --echo # the rows of statement 1, sorted",
        "  --cat_file $MYSQL_TMP_DIR/kw_compared_1.rows",
        "  --echo # the rows of statement 2, sorted",
        "  --cat_file $MYSQL_TMP_DIR/kw_compared_2.rows",
        "  --die wrong result (tlp-groupby): statement 2 gives other rows than statement 1"]
    # the files of an earlier round (a concurrent case) or run are gone first, and after
    assert lines.count("--remove_files_wildcard $MYSQL_TMP_DIR kw_compared_*") == 2
    # CODDTest: the folded statement (the last) against Q, not the auxiliary query
    folded = mtr_check("coddtest", [Q, "SELECT 5", Q.replace("COUNT(*)", "COUNT(5)")])
    assert any(line.startswith(f"--write_file {file_of(3, 'sql')}") for line in folded)
    assert not any(line.startswith(f"--write_file {file_of(2, 'sql')}") for line in folded)
    assert "statement 3 gives other rows" in "\n".join(folded)
    # a statement the old digest could not take (a leading WITH: no columns read) has a check
    eet = mtr_check("eet", ["WITH c AS (SELECT 1) SELECT * FROM c", Q])
    assert _statement_in(eet, 1)[1] == "WITH c AS (SELECT 1) SELECT * FROM c;"
    norec = "\n".join(mtr_check("norec", ["SELECT COUNT(*) FROM t WHERE p",
                                          "SELECT SUM(p IS TRUE) FROM t"]))
    # NoREC: each count as the statement gives it, compared as numbers (a NULL sum: 0)
    assert "let $kw_n2= `SELECT SUM(p IS TRUE) FROM t`;" in norec
    assert ("IFNULL(NULLIF('$kw_n1', 'NULL'), 0) + 0 = IFNULL(NULLIF('$kw_n2', 'NULL'), 0) + 0"
            in norec)
    # Pinolo's: three statements and the variant its judging saw
    # (tests/unit/hunt/wrongresult/test_reduce_pinolo.py)
    assert mtr_check("pinolo", [Q, P]) == [] == mtr_check("pinolo", [Q, P, Q])


# a DQP pair of the modifier variant (SQL_BUFFER_RESULT, as a254a3958dfa's of or19-sf8),
# which the old digest's CTE refused (1234, "Incorrect usage/placement of
# 'SQL_BUFFER_RESULT'"): its case was recorded "not reproduced by the printed commands"
DQP_Q = "SELECT ROUND(t1.`c1`, 1) FROM `test`.`t1` AS t1"
DQP_PLAN = "/* dqp: modifier SQL_BUFFER_RESULT */ " + _after_select(DQP_Q, "SQL_BUFFER_RESULT")


def test_a_dqp_pair_with_sql_buffer_result_gives_a_valid_case():
    plans = mtr_check("dqp", [DQP_Q, DQP_PLAN, "SET STATEMENT join_cache_level=3 FOR " + DQP_PLAN],
                      "|||")
    assert DQP_PLAN.endswith("SELECT SQL_BUFFER_RESULT ROUND(t1.`c1`, 1) FROM `test`.`t1` AS t1")
    # each plan as the oracle sent it: the modifier and the SET STATEMENT where they were
    assert _statement_in(plans, 1) == [UNPADDED, DQP_Q + ";"]
    assert _statement_in(plans, 2) == [UNPADDED, DQP_PLAN + ";"]
    assert sum(line.strip().startswith("--die wrong result (dqp): statement") for line in plans) == 2
    # no line is SQL mysqltest sends itself (so no delimiter): the client runs the files
    assert not any(line.endswith("|||") for line in plans)
    assert compare_lines("dqp", [DQP_Q, DQP_PLAN], [1])[2:9] == [
        f"--write_file {file_of(1, 'sql')} {END_OF_STATEMENT}", UNPADDED, DQP_Q + ";",
        END_OF_STATEMENT,
        f"--exec $MYSQL --default-character-set=utf8mb4 --binary-mode --batch "
        f"--skip-column-names test < {file_of(1, 'sql')} > {file_of(1, 'out')}",
        f"--exec LC_ALL=C sed -n 'l 0' {file_of(1, 'out')} > {file_of(1, 'rows')}",
        f"--exec LC_ALL=C sort {file_of(1, 'rows')} -o {file_of(1, 'rows')}"]


def _finding(tmp_path, oracle="tlp-groupby", queries=(Q, P)):
    return oracle_finding(tmp_path, oracle, queries,
                          f"{oracle} (aggregates): rows only in the whole query: ...")


def test_an_oracles_finding_reads_with_its_compared_statements_after_the_trace(tmp_path):
    case = read_input(str(_finding(tmp_path)))
    assert case.judged_again and case.compared == (Q, P)
    assert [(s.seq, s.conn, s.sql) for s in case.statements[2:]] == [(3, 8, Q), (4, 8, P)]
    assert [s.seq for s in case.failing] == [3, 4]     # what truncate and related keep
    text = case_text(case, case.statements, {})
    assert "connect (kw_oracle,localhost,root,,test);" in text
    assert "FLUSH TABLES;" in text and "--die wrong result (tlp-groupby)" in text
    assert text.index("--die") < text.index("DROP DATABASE test")
    # the compared statements speak utf8mb4 as in the replay, not mysqltest's latin1,
    # though every statement is ASCII (260c13e64ad4's 'a%' took latin1's collation)
    assert text.index("connect (kw_oracle,") < text.index("SET NAMES utf8mb4;") < \
        text.index("--write_file $MYSQL_TMP_DIR/kw_compared_1.sql")


@pytest.mark.parametrize("oracle, words", [("nosuch", "no oracle of lib/hunt/wrongresult")])
def test_an_oracle_not_judged_again_says_why(tmp_path, oracle, words):
    with pytest.raises(ReduceError, match=words):
        read_input(str(_finding(tmp_path, oracle=oracle)))


def test_a_finding_without_its_compared_statements_is_bad_input(tmp_path):
    with pytest.raises(ReduceError, match="compared statements"):
        read_input(str(_finding(tmp_path, queries=())))


# KW46-EMPTY-JOIN-HAVING's finding (live19 trial 31, 0ec90c9b96b3), its two statements
RADAR_Q = ("SELECT SUM(IFNULL(t1.`c0`, t1.`c0`)) FROM `test`.`t3` AS t1 CROSS JOIN `test`.`t1` "
           "AS t2 JOIN `test`.`s1` AS t3 ON t2.`x` = t3.`v` HAVING (MAX(t1.`c0`) > 128)")
RADAR_RAW = RAW_MARK + RADAR_Q.replace("`test`.`t3`", "`kw_oracle`.`kw_raw4`").replace(
    "`test`.`t1`", "`kw_oracle`.`kw_raw2`").replace("`test`.`s1`", "`kw_oracle`.`kw_raw1`")


def test_radar_reads_which_original_each_raw_copy_stands_for():
    assert raw_names([RADAR_Q, RADAR_RAW]) == {"kw_raw4": ("test", "t3"),
                                               "kw_raw2": ("test", "t1"),
                                               "kw_raw1": ("test", "s1")}
    # a self-join: one copy twice; a name with a backquote in it
    q = "SELECT 1 FROM `test`.`a``b` AS t1 JOIN `test`.`a``b` AS t2 ON t1.`x` = t2.`x`"
    assert raw_names([q, RAW_MARK + q.replace("`test`.`a``b`", "`kw_oracle`.`kw_raw7`")]) == \
        {"kw_raw7": ("test", "a`b")}
    for bad in ([RADAR_Q, RADAR_Q],                                    # no mark
                [RADAR_Q, RADAR_RAW.replace("> 128", "> 127")],          # another query
                [RADAR_Q, RADAR_RAW.replace("CROSS JOIN", "JOIN")],
                [RADAR_Q + " LIMIT 1", RADAR_RAW],                       # its end
                ["SELECT 1 FROM `test`.`a` JOIN `test`.`b`",               # one copy, two
                 RAW_MARK + "SELECT 1 FROM `kw_oracle`.`kw_raw1` JOIN `kw_oracle`.`kw_raw1`"],
                [RADAR_Q]):
        with pytest.raises(ValueError):
            raw_names(bad)


REBUILT = Rebuilt(("CREATE SCHEMA IF NOT EXISTS `kw_oracle`",
                   "CREATE TABLE `kw_oracle`.`kw_raw4` (`c0` date NULL) ENGINE=Aria",
                   "INSERT INTO `kw_oracle`.`kw_raw4` (`c0`) SELECT `c0` FROM `test`.`t3`"),
                  ("DROP SCHEMA IF EXISTS `kw_oracle`",))


def test_radar_check_builds_the_copies_first_and_drops_them_last():
    lines = mtr_check("radar", [RADAR_Q, RADAR_RAW], ";", REBUILT)
    text = "\n".join(lines)
    built = [text.index(sql + ";") for sql in REBUILT.statements]
    assert built == sorted(built) and built[-1] < text.index("--write_file")
    assert _statement_in(lines, 2) == [UNPADDED, RADAR_RAW + ";"]
    assert "--die wrong result (radar): statement 2 gives other rows than statement 1" in text
    assert lines[-1] == "DROP SCHEMA IF EXISTS `kw_oracle`;"
    # nothing rebuilt (the other oracles): the check as it was
    assert mtr_check("tlp-groupby", [Q, P]) == mtr_check("tlp-groupby", [Q, P], ";", Rebuilt())


def test_a_radar_finding_reduces_to_a_case_that_builds_its_copies(tmp_path):
    case = read_input(str(_finding(tmp_path, oracle="radar", queries=(RADAR_Q, RADAR_RAW))))
    assert case.judged_again and case.compared == (RADAR_Q, RADAR_RAW)
    text = case_text(case, case.statements[:2], {}, rebuilt=REBUILT)
    assert text.index("connect (kw_oracle,") < text.index("FLUSH TABLES;") < \
        text.index(REBUILT.statements[1]) < text.index("--die wrong result (radar)") < \
        text.index("DROP SCHEMA IF EXISTS `kw_oracle`;") < text.index("DROP DATABASE test")
    # mysql-test starts its servers without InnoDB unless the case asks for it: a copy
    # rebuilt as InnoDB needs it as much as a statement of the case (0ec90c9b96b3)
    assert "--source include/have_innodb.inc" not in text
    innodb = Rebuilt(("CREATE TABLE `kw_oracle`.`kw_raw1` (`a` int NULL) ENGINE=InnoDB",))
    assert "--source include/have_innodb.inc" in case_text(case, case.statements[:2], {},
                                                           rebuilt=innodb).splitlines()
    # a ';' in what was built (an ENUM's value) makes the case use another delimiter
    odd = Rebuilt(("CREATE TABLE `kw_oracle`.`kw_raw1` (`e` enum('a;b') NULL) ENGINE=MyISAM",))
    assert "--delimiter |||" in case_text(case, case.statements[:2], {}, rebuilt=odd)
