"""Pure logic of Pinolo's findings judged again (its reduce path): the judging of a replay
(Pinolo's own judge over the three statements run again, the variant it judged left for
the case), the mysqltest lines of its comparison (each statement run unchanged by the
client, ``comm -23`` of the sorted rows -- a multiset containment -- or the counts in
numeric order, in the judge's order), a Pinolo finding read and written as a case; and
the containment the case computes (coreutils' sort and comm, as the case runs them) set
against the oracle's on random multisets: never looser, never stricter.

Covers: lib/hunt/wrongresult/withinform.py, lib/hunt/wrongresult/pinolo.py, lib/hunt/wrongresult/replay.py, lib/reduce/case.py, lib/reduce/mtrcase.py
"""
import os
import random
import subprocess

import pytest

from lib.hunt.wrongresult.execute import Outcome
from lib.hunt.wrongresult.oracle import Check, Rebuilt
from lib.hunt.wrongresult.pinolo import PinoloOracle
from lib.hunt.wrongresult.replay import judge_again, mtr_check
from lib.hunt.wrongresult.rowsform import END_OF_STATEMENT, UNPADDED, file_of
from lib.hunt.wrongresult.withinform import EMPTY, pinolo_lines
from lib.reduce.case import read_input
from lib.reduce.mtrcase import case_text
from tests.unit.hunt.wrongresult.fakeconn import AnswerConnection
from tests.unit.hunt.wrongresult.findingfolder import oracle_finding

BODY = "FROM `test`.`t1` AS t1 WHERE (t1.`a` < 3)"
Q = f"SELECT t1.`a`, t1.`b` {BODY}"
LOOSER = f"/* pinolo: looser */ SELECT t1.`a`, t1.`b` {BODY.replace('< 3', '<= 3')}"
TIGHTER = f"/* pinolo: tighter */ SELECT t1.`a`, t1.`b` {BODY.replace('(t1.`a` < 3)', '((t1.`a` < 3) AND (t1.`b` > 0))')}"
COUNTS = [q.replace("t1.`a`, t1.`b`", "COUNT(*)", 1) for q in (Q, LOOSER, TIGHTER)]


class _Server(AnswerConnection):
    """A server whose answers to the three statements are given (anything else: no rows)."""

    columns = ("a", "b")

    def __init__(self, answers):
        self.answers = answers
        self.sent = []

    def answer(self, sql):
        self.sent.append(sql)
        return list(self.answers.get(sql, []))


def test_a_pinolo_finding_is_judged_again_by_pinolos_judge():
    right = {Q: [(1, "x"), (2, None)], LOOSER: [(1, "x"), (2, None), (3, "z")],
             TIGHTER: [(1, "x")]}
    server = _Server(right)
    judged = judge_again(server, "pinolo", [Q, LOOSER, TIGHTER], "Pinolo (rows): rows of Q ...")
    assert not judged.differs and judged.rebuilt == Rebuilt()
    assert [s for s in server.sent if s in right] == [Q, LOOSER, TIGHTER]   # each run again
    # Q's row missing from the looser query's (any rows: not the recorded ones), the
    # variant the judging used left for the case
    lost = dict(right, **{LOOSER: [(2, None), (3, "z")]})
    judged = judge_again(_Server(lost), "pinolo", [Q, LOOSER, TIGHTER], "Pinolo (rows): ...")
    assert judged.differs and judged.rebuilt.seen == ("rows",)
    # a duplicate counts: a row twice in the tighter query, once in Q
    twice = dict(right, **{TIGHTER: [(1, "x"), (1, "x")]})
    assert judge_again(_Server(twice), "pinolo", [Q, LOOSER, TIGHTER],
                       "Pinolo (distinct): ...").rebuilt.seen == ("distinct",)
    # counts compared as numbers
    counts = {COUNTS[0]: [(5,)], COUNTS[1]: [(7,)], COUNTS[2]: [(5,)]}
    assert not judge_again(_Server(counts), "pinolo", COUNTS, "Pinolo (count): ...").differs
    fewer = dict(counts, **{COUNTS[1]: [(4,)]})
    judged = judge_again(_Server(fewer), "pinolo", COUNTS, "Pinolo (count): the looser ...")
    assert judged.differs and judged.rebuilt.seen == ("count",)


def test_the_oracle_names_its_checks_variant_for_the_case():
    oracle = PinoloOracle()
    for variant in ("rows", "distinct", "count"):
        assert oracle.seen(Check((Q, LOOSER, TIGHTER), variant), []) == (variant,)


def _statement_in(lines, index):
    start = lines.index(f"--write_file {file_of(index, 'sql')} {END_OF_STATEMENT}")
    return lines[start + 1:lines.index(END_OF_STATEMENT, start)]


def _die(lines, line):
    """The lines of the if block that ends with the die line."""
    at = lines.index(line)
    return lines[at - 8:at + 2]


def test_pinolos_mysqltest_check_of_rows_is_a_multiset_containment_per_pair():
    lines = mtr_check("pinolo", [Q, LOOSER, TIGHTER], ";", Rebuilt(seen=("rows",)))
    # each statement as the oracle sent it, run by the client (rowsform.py's way)
    for index, sql in enumerate((Q, LOOSER, TIGHTER), 1):
        assert _statement_in(lines, index) == [UNPADDED, sql + ";"]
        assert (f"--exec LC_ALL=C sort {file_of(index, 'rows')} -o {file_of(index, 'rows')}"
                in lines)
    assert lines.index(f"--write_file {EMPTY} {END_OF_STATEMENT}") + 1 == \
        lines.index(END_OF_STATEMENT, lines.index(f"--write_file {EMPTY} {END_OF_STATEMENT}"))
    # Q within Q+ first, then Q- within Q (the judge's order), each dying its own way
    assert _die(lines, "  --die wrong result (pinolo): statement 1's rows are not within "
                       "statement 2's") == [
        f"--exec LC_ALL=C comm -23 {file_of(1, 'rows')} {file_of(2, 'rows')} > "
        f"{file_of(1, 'not_in_2')}",
        "--error 0,1,2", f"--diff_files {EMPTY} {file_of(1, 'not_in_2')}",
        "if ($errno)", "{", "  --enable_result_log",
        "  --echo # the rows of statement 1 that statement 2 does not hold (as many times), "
        "sorted", f"  --cat_file {file_of(1, 'not_in_2')}",
        "  --die wrong result (pinolo): statement 1's rows are not within statement 2's", "}"]
    second = "  --die wrong result (pinolo): statement 3's rows are not within statement 1's"
    assert lines.index(second) > lines.index(_die(lines, second)[0]) > \
        lines.index("  --die wrong result (pinolo): statement 1's rows are not within "
                    "statement 2's")
    assert _die(lines, second)[0].startswith(f"--exec LC_ALL=C comm -23 {file_of(3, 'rows')} "
                                             f"{file_of(1, 'rows')} > ")
    # no SQL of mysqltest's own (no delimiter); the files gone before and after
    assert mtr_check("pinolo", [Q, LOOSER, TIGHTER], "|||", Rebuilt(seen=("rows",))) == lines
    assert lines.count("--remove_files_wildcard $MYSQL_TMP_DIR kw_compared_*") == 2
    assert lines[-1] == "--remove_files_wildcard $MYSQL_TMP_DIR kw_compared_*"
    # the judge reads any variant but count as rows (an older finding's detail names none)
    assert pinolo_lines([Q, LOOSER, TIGHTER], Rebuilt(seen=("",)))[3:] == lines[3:]
    assert pinolo_lines([Q, LOOSER, TIGHTER], Rebuilt(seen=("distinct",)))[3:] == lines[3:]


def test_pinolos_mysqltest_check_of_counts_compares_numbers():
    lines = pinolo_lines(COUNTS, Rebuilt(seen=("count",)))
    assert "comm" not in "\n".join(lines) and EMPTY not in "\n".join(lines)
    both = file_of(1, "and_2")
    at = lines.index(f"--exec cat {file_of(1, 'rows')} {file_of(2, 'rows')} > {both}")
    assert lines[at:at + 11] == [
        f"--exec cat {file_of(1, 'rows')} {file_of(2, 'rows')} > {both}",
        f"--exec LC_ALL=C sort -n {both} -o {file_of(1, 'and_2_sorted')}",
        "--error 0,1,2", f"--diff_files {both} {file_of(1, 'and_2_sorted')}",
        "if ($errno)", "{", "  --enable_result_log",
        "  --echo # the counts of statement 1 and statement 2", f"  --cat_file {both}",
        "  --die wrong result (pinolo): statement 1 counts more rows than statement 2", "}"]
    assert lines.index(f"--exec cat {file_of(3, 'rows')} {file_of(1, 'rows')} > "
                       f"{file_of(3, 'and_1')}") > at
    assert "  --die wrong result (pinolo): statement 3 counts more rows than statement 1" in lines


def test_no_pinolo_check_without_the_judged_variant_or_three_statements():
    assert pinolo_lines([Q, LOOSER, TIGHTER], Rebuilt()) == []
    assert pinolo_lines([Q, LOOSER], Rebuilt(seen=("rows",))) == []


def _finding(tmp_path):
    return oracle_finding(tmp_path, "pinolo", (Q, LOOSER, TIGHTER),
                          "Pinolo (rows): rows of Q missing from the looser query: (2, NULL)",
                          sig="p1n0")


def test_a_pinolo_finding_reads_and_writes_its_case(tmp_path):
    case = read_input(str(_finding(tmp_path)))
    assert case.judged_again and case.compared == (Q, LOOSER, TIGHTER)
    assert [s.sql for s in case.statements[2:]] == [Q, LOOSER, TIGHTER]
    text = case_text(case, case.statements[:2], {}, rebuilt=Rebuilt(seen=("rows",)))
    assert text.index("connect (kw_oracle,") < text.index("FLUSH TABLES;") < \
        text.index("SET NAMES utf8mb4;") < text.index(f"--write_file {file_of(1, 'sql')}") < \
        text.index("--die wrong result (pinolo): statement 1's") < \
        text.index("--die wrong result (pinolo): statement 3's") < \
        text.index("disconnect kw_oracle;") < text.index("DROP DATABASE test")


VALUES = ("1", "2", "", "NULL", "a", "A", "a ", "é", "-0", "\\", "a\\tb")


def _lines(rows):
    return "".join("\t".join(row) + "\n" for row in rows)


def _case_says_within(small, big, folder):
    """Does the case's containment (its sed listing, sort and comm, as it runs them:
    rowsform.run_lines) find small's rows within big's?"""
    paths = []
    for n, rows in enumerate((small, big)):
        raw, listed = os.path.join(folder, f"{n}.out"), os.path.join(folder, f"{n}.rows")
        with open(raw, "w", encoding="utf-8") as fh:
            fh.write(_lines(rows))
        with open(listed, "wb") as fh:
            subprocess.run(["sed", "-n", "l 0", raw], check=True, env={"LC_ALL": "C"},
                           stdout=fh)
        subprocess.run(["sort", listed, "-o", listed], check=True, env={"LC_ALL": "C"})
        paths.append(listed)
    missing = subprocess.run(["comm", "-23", *paths], check=True, capture_output=True,
                             env={"LC_ALL": "C"}).stdout
    return missing == b""


def test_the_cases_containment_is_the_oracles_on_random_multisets(tmp_path):
    """Rows as the client prints them (values as text, NULL as NULL) against the oracle's
    judge of the same rows (Q within Q+; the tighter query agrees): the same answer, with
    duplicates, empty strings, case and trailing-space twins."""
    rng = random.Random(46)
    oracle = PinoloOracle()
    for n in range(60):
        width = rng.randint(1, 2)
        pool = [tuple(rng.choice(VALUES) for _ in range(width)) for _ in range(4)]
        q = [rng.choice(pool) for _ in range(rng.randint(0, 5))]
        looser = [rng.choice(pool) for _ in range(rng.randint(0, 6))]
        if n % 3 == 0:
            looser = q + looser       # a superset now and then
        outcomes = [Outcome(rows=tuple(tuple(None if v == "NULL" else v for v in row)
                                        for row in rows)) for rows in (q, looser, [])]
        verdict = oracle.judge(Check((Q, LOOSER, TIGHTER), "rows"), outcomes)
        assert _case_says_within(q, looser, str(tmp_path)) == (verdict.kind == "agree"), \
            (q, looser, verdict)
