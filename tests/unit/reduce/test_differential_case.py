"""Pure logic of a differential wrong result's reduced case: the correct server's rows as
the case's pipeline leaves a statement's rows (the mysql client's batch lines, listed as
``LC_ALL=C sed -n 'l 0'`` lists them, then sorted as bytes), written into the case, and the
query run unchanged by the client and compared with them -- no digest, no CTE.

Covers: lib/reduce/mtrcase.py, lib/hunt/wrongresult/rowsform.py
"""
from lib.hunt.signature import Signature
from lib.hunt.wrongresult.rowsform import (DIFFERENTIAL, END_OF_ROWS, END_OF_STATEMENT,
                                           UNPADDED, client_line, expected_lines, file_of,
                                           listed, listed_rows)
from lib.reduce.case import ReduceInput, Statement
from lib.reduce.mtrcase import WrongResultCheck, case_text

QUERY = "SELECT a / 3 FROM t"


def _case(statements):
    return ReduceInput("/f", "wrong-result", "differential",
                       Signature("wrong-result", ("differential", "shape")),
                       "differential | shape", "compare", ((), ("--div-precision-increment=8",)),
                       tuple(statements))


def test_a_row_as_the_client_prints_it():
    # tab-separated, NUL, tab, newline and backslash escaped, NULL printed NULL
    assert client_line([b"1", None, b"a\tb\nc\\d\x00e", b""]) == \
        b"1\tNULL\ta\\tb\\nc\\\\d\\0e\t"
    # a carriage return and bytes of utf8mb4 characters go as they are
    assert client_line(["ä\r".encode()]) == b"\xc3\xa4\r"


def test_a_line_as_sed_lists_it():
    # what GNU sed 4.9 printed for these bytes (LC_ALL=C sed -n 'l 0')
    assert listed(bytes(range(0, 16))) == \
        "\\000\\001\\002\\003\\004\\005\\006\\a\\b\\t\\n\\v\\f\\r\\016\\017$"
    assert listed(b" ~\x7f\x80\xff") == " ~\\177\\200\\377$"
    assert listed(b"a\\b$c") == "a\\\\b$c$"
    assert listed(b"x" * 200) == "x" * 200 + "$"   # never folded
    assert listed(b"") == "$"


def test_rows_listed_then_sorted_as_bytes():
    # listed first: the backslash of an escape (0x5c) sorts between B and a, as sort's
    # LC_ALL=C does with the listed file (the order comm needs: withinform.py)
    rows = [(b"b", None), (b"B", b"1"), (b"\xc3\xa4", b"2"), (b"a", b"\t")]
    assert listed_rows(rows) == ["B\\t1$", "\\303\\244\\t2$", "a\\t\\\\t$", "b\\tNULL$"]
    assert listed_rows([]) == []


def test_the_check_writes_the_correct_rows_and_compares_the_querys_with_them():
    lines = expected_lines(QUERY + ";", ["0.3333\\t1$", "1.0000\\t2$"])
    start = lines.index(f"--write_file {file_of(0, 'rows')} {END_OF_ROWS}")
    assert lines[start + 1:start + 4] == ["0.3333\\t1$", "1.0000\\t2$", END_OF_ROWS]
    # the query as it is, in the server's own session (no sql_mode line), run by the client
    sql = lines.index(f"--write_file {file_of(1, 'sql')} {END_OF_STATEMENT}")
    assert lines[sql + 1:sql + 3] == [QUERY + ";", END_OF_STATEMENT] and UNPADDED not in lines
    assert lines[sql + 3:sql + 6] == [
        f"--exec $MYSQL --default-character-set=utf8mb4 --binary-mode --batch "
        f"--skip-column-names test < {file_of(1, 'sql')} > {file_of(1, 'out')}",
        f"--exec LC_ALL=C sed -n 'l 0' {file_of(1, 'out')} > {file_of(1, 'rows')}",
        f"--exec LC_ALL=C sort {file_of(1, 'rows')} -o {file_of(1, 'rows')}"]
    at = lines.index(f"--diff_files {file_of(0, 'rows')} {file_of(1, 'rows')}")
    assert lines[at - 1] == "--error 0,1,2" and lines[at + 1:at + 9] == [
        "if ($errno)", "{", "  --enable_result_log",
        "  --echo # the correct server's rows, sorted", f"  --cat_file {file_of(0, 'rows')}",
        "  --echo # the query's rows, sorted", f"  --cat_file {file_of(1, 'rows')}",
        f"  --die {DIFFERENTIAL}"]
    assert DIFFERENTIAL.startswith("wrong result (differential): ")
    assert lines.count("--remove_files_wildcard $MYSQL_TMP_DIR kw_compared_*") == 2
    # no rows: an empty file
    empty = expected_lines(QUERY, [])
    start = empty.index(f"--write_file {file_of(0, 'rows')} {END_OF_ROWS}")
    assert empty[start + 1] == END_OF_ROWS


def test_the_rows_end_where_no_row_holds_the_terminator():
    rows = [f"{END_OF_ROWS}$", f"x{END_OF_ROWS}1$", f"{END_OF_ROWS}2$"]
    lines = expected_lines(QUERY, rows)
    start = next(i for i, line in enumerate(lines)
                 if line.startswith(f"--write_file {file_of(0, 'rows')} "))
    end = lines[start].split()[-1]
    assert end == f"{END_OF_ROWS}3" and lines[start + 1:start + 5] == [*rows, end]
    assert len(end) <= 16     # mysqltest's longest delimiter


def test_a_differential_case_runs_its_statements_then_the_check_without_a_digest():
    stmts = [Statement(1, 1, "CREATE TABLE t (a INT); "), Statement(2, 1, "INSERT INTO t VALUES (1)"),
             Statement(3, 1, QUERY)]
    check = WrongResultCheck(QUERY, ("0.33333333$",))
    text = case_text(_case(stmts), stmts, {}, check)
    lines = text.splitlines()
    assert "--delimiter |||" in lines   # a statement with a ';' inside
    assert not any("WITH kw_q" in line or "MD5(" in line or "$kw_ok" in line for line in lines)
    # the statements, then the correct rows and the query's comparison, then the cleanup
    assert lines.index(QUERY + "|||") < lines.index("0.33333333$") < \
        lines.index(f"  --die {DIFFERENTIAL}") < lines.index("# clean up for mysql-test's check-testcase")
    # the query in the client's file ends with ';', never the case's delimiter
    assert lines[lines.index(f"--write_file {file_of(1, 'sql')} {END_OF_STATEMENT}") + 1] == \
        QUERY + ";"
    # no check: a crash's case has none of it
    assert "kw_compared_" not in case_text(_case(stmts), stmts, {})
