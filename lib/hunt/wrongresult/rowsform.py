"""Compared statements' rows as mysqltest lines: each statement run as the oracle ran it,
its rows compared as text on the client side, with nothing wrapped around it -- an
oracle's statements with each other's (:func:`compare_lines`), a differential finding's
query with the rows the correct server gave (:func:`expected_lines`).

A reduced case's check of a wrong result used to digest each statement's rows in SQL (a
CTE over the statement, ``MD5(GROUP_CONCAT(...))``).  The CTE's materialisation changed
what it digested: a YEAR 0000 grouped through ``IF(...)`` read 2000 in both compared
statements (the difference was gone: eleven real findings recorded "not reproduced by the
printed commands"), ``AVG``'s precision changed, and a statement with ``SQL_BUFFER_RESULT``
was refused inside it (error 1234).  Here each statement runs unchanged:

- its text goes to a file under ``$MYSQL_TMP_DIR`` (``--write_file``: mysqltest expands no
  variable in it, so a ``$`` of the statement stays), an oracle's after one line that takes
  ``PAD_CHAR_TO_FULL_LENGTH``, ``NO_ZERO_DATE``, ``NO_ZERO_IN_DATE`` and ``TRADITIONAL`` out
  of the session's ``sql_mode`` (as the oracle's
  :class:`~lib.hunt.wrongresult.oracle.Sessions` does; a differential query runs in the
  server's own session defaults, as the reduction's replay ran it);
- the mysql client runs the file on a connection of its own (``$MYSQL``, which both
  mysql-test-run.pl and ``kewpie --mode=mtr`` set to the client and the run's config),
  speaking utf8mb4 as the oracle's and the replay's connections do, ``--binary-mode`` (the
  text as it is: no client command parsed in it), ``--batch --skip-column-names``: one line
  a row, its values tab-separated, NUL, tab, newline and backslash escaped (``\\0``,
  ``\\t``, ``\\n``, ``\\\\``), NULL printed ``NULL`` (:func:`client_line`);
- the lines are listed by ``LC_ALL=C sed -n 'l 0'`` (:func:`listed`: every byte that is
  not printable ASCII as an escape, a ``\\`` doubled, ``$`` at each line's end, no
  folding): the rows as plain text, which a case can hold whatever bytes they have (a
  carriage return, bytes that are no UTF-8) and a failing case shows as they are; then
  sorted (``LC_ALL=C sort``: bytes, whatever the locale): the rows as a multiset, as the
  oracle compares them (a value's newline is escaped, so a line is a row), in the order
  ``comm`` needs (Pinolo's containment, withinform.py);
- each compared statement's rows are compared with the first's (a differential query's
  with the correct server's, written into the case by ``--write_file``) by
  ``--diff_files`` under ``--error 0,1,2`` (1 and 2: the contents or lengths differ), and
  ``$errno`` set means they differ: both sets of sorted rows are shown (mysqltest prints
  the end of its log when it dies) and ``--die wrong result (<oracle>): statement N gives
  other rows than statement 1`` (a differential query's: ``wrong result (differential):
  the query gives other rows than the correct server gave``; lib/mtr/travel.py's
  confirmation recognises both).

A statement that fails makes the client, and so the ``--exec`` and the case, fail with the
server's error -- not the wrong result's line: a failure is no disagreement, as when the
oracle judges again.  Values compare as the server sends them in text: NULL and the string
``'NULL'`` look alike (as in the oracle's rendering), and a value the oracle reads as the
same in another form (a float's last digits, a zero fraction of a second) differs here: the
case may fail where the oracle agrees, never pass where it disagrees.  No server-side file
is read or written (``secure_file_priv`` plays no part): the files are the client's, in the
run's temporary folder.  The client's connection is a new one: a differential query that
needs what the statements before it left in their session (a temporary table, a session
variable, an open transaction) gives the correct rows there, and its case passes -- the
reduction warns when the query's rows on a connection of its own do not differ
(lib/modes/reduce/run.py).
"""
from __future__ import annotations

from types import MappingProxyType
from typing import Mapping, Sequence

TMP = "$MYSQL_TMP_DIR"
PREFIX = "kw_compared_"          # the check's files in $MYSQL_TMP_DIR
END_OF_STATEMENT = "KW_END_OF_SQL"   # mysqltest takes up to 16 characters
END_OF_ROWS = "KW_END_OF_ROWS"
CLIENT = "$MYSQL --default-character-set=utf8mb4 --binary-mode --batch --skip-column-names"
# the sql_mode flags the oracle's sessions leave out (lib/hunt/wrongresult/oracle.py Sessions):
# CHAR values are read unpadded, and no zero date is NULL (the known bug zero-date-not-null;
# TRADITIONAL, listed beside the flags it stands for, would set NO_ZERO_DATE again)
LEFT_OUT_MODES = ("PAD_CHAR_TO_FULL_LENGTH", "NO_ZERO_DATE", "NO_ZERO_IN_DATE", "TRADITIONAL")


def _left_out(mode_sql: str, modes: Sequence[str]) -> str:
    """SQL of mode_sql (a comma-framed sql_mode) with each of modes taken out."""
    for mode in modes:
        mode_sql = f"REPLACE({mode_sql}, ',{mode},', ',')"
    return mode_sql


# the oracle's session as a statement of a case: UNPADDED (its first name; more flags since)
UNPADDED = ("SET SESSION sql_mode = TRIM(BOTH ',' FROM "
            + _left_out("CONCAT(',', @@SESSION.sql_mode, ',')", LEFT_OUT_MODES) + ");")
DIFFER_ERRORS = "0,1,2"          # diff_files: 1 the contents differ, 2 the lengths do
LISTED = "LC_ALL=C sed -n 'l 0'"  # every line listed unambiguously, never folded
DIFFERENTIAL = "wrong result (differential): the query gives other rows than the correct " \
               "server gave"
# the client's escapes in a value (client/mysql.cc safe_put_field: MY_PRINT_ESC_0 | CTRL)
_CLIENT_ESCAPES: Mapping[int, bytes] = MappingProxyType(
    {0: b"\\0", 9: b"\\t", 10: b"\\n", 92: b"\\\\"})
# sed's named escapes of its l command; other bytes outside printable ASCII are octal
_SED_ESCAPES: Mapping[int, str] = MappingProxyType(
    {7: "\\a", 8: "\\b", 9: "\\t", 10: "\\n", 11: "\\v", 12: "\\f", 13: "\\r", 92: "\\\\"})


def file_of(index: int, kind: str) -> str:
    """The path of statement index's file of this kind (sql, out, rows), mysqltest's form;
    index 0: the correct server's rows of a differential query."""
    return f"{TMP}/{PREFIX}{index}.{kind}"


def client_line(values: Sequence[bytes | None]) -> bytes:
    """One row as ``mysql --batch --skip-column-names`` prints it (without its newline):
    its values as the server sent them in text, tab-separated, NUL, tab, newline and
    backslash escaped, NULL printed ``NULL`` (utf8mb4's multi-byte characters hold none
    of those bytes)."""
    return b"\t".join(b"NULL" if v is None else
                      b"".join(_CLIENT_ESCAPES.get(c, bytes((c,))) for c in v)
                      for v in values)


def listed(line: bytes) -> str:
    """A line as ``LC_ALL=C sed -n 'l 0'`` lists it: printable ASCII as it is (a backslash
    doubled), the control characters sed names (``\\a \\b \\t \\n \\v \\f \\r``), every
    other byte as three octal digits, ``$`` at the end."""
    return "".join(_SED_ESCAPES.get(c) or (chr(c) if 32 <= c < 127 else f"\\{c:03o}")
                   for c in line) + "$"


def listed_rows(rows: Sequence[Sequence[bytes | None]]) -> list[str]:
    """Rows (each value the server's text, None for NULL) as the case's pipeline leaves
    them (:func:`run_lines`): the client's lines listed, then sorted (the listing is
    ASCII: its code points sort as ``LC_ALL=C sort`` sorts its bytes)."""
    return sorted(listed(client_line(r)) for r in rows)


def run_lines(index: int, sql: str, session: Sequence[str] = (UNPADDED,)) -> list[str]:
    """The lines that run statement index (1-based) by the client, after the session
    statements given (an oracle's: :data:`UNPADDED`), and leave its rows listed and
    sorted in :func:`file_of` (index, ``rows``): listed first, so the file is in the order
    ``comm`` needs (withinform.py), the listing changing no row's equality."""
    text = sql.strip().rstrip(";").strip()
    return [f"--write_file {file_of(index, 'sql')} {END_OF_STATEMENT}", *session,
            text + ";", END_OF_STATEMENT,
            f"--exec {CLIENT} test < {file_of(index, 'sql')} > {file_of(index, 'out')}",
            f"--exec {LISTED} {file_of(index, 'out')} > {file_of(index, 'rows')}",
            f"--exec LC_ALL=C sort {file_of(index, 'rows')} -o {file_of(index, 'rows')}"]


def _differ_lines(first: int, other: int, shown: tuple[str, str], die: str) -> list[str]:
    """Statement other's rows compared with first's (files of :func:`file_of`): on a
    difference both shown (shown: what each is) and the case dies with die."""
    return [f"--error {DIFFER_ERRORS}",
            f"--diff_files {file_of(first, 'rows')} {file_of(other, 'rows')}",
            "if ($errno)", "{", "  --enable_result_log",
            f"  --echo # {shown[0]}, sorted",
            f"  --cat_file {file_of(first, 'rows')}",
            f"  --echo # {shown[1]}, sorted",
            f"  --cat_file {file_of(other, 'rows')}",
            f"  --die {die}", "}"]


def compare_lines(oracle: str, texts: Sequence[str], picks: Sequence[int]) -> list[str]:
    """mysqltest lines that run every statement of texts (0-based picks compared with the
    first) and die while one gives other rows than the first (see the module docstring)."""
    lines = ["# each statement run unchanged by the mysql client, its rows sorted as text "
             "(lib/hunt/wrongresult/rowsform.py)",
             f"--remove_files_wildcard {TMP} {PREFIX}*"]
    for index in [0, *picks]:
        lines += run_lines(index + 1, texts[index])
    for index in picks:
        lines += _differ_lines(1, index + 1, ("the rows of statement 1",
                                              f"the rows of statement {index + 1}"),
                               f"wrong result ({oracle}): statement {index + 1} gives other "
                               f"rows than statement 1")
    return lines + [f"--remove_files_wildcard {TMP} {PREFIX}*"]


def _end_of(rows: Sequence[str]) -> str:
    """A terminator for --write_file that no line of rows holds (mysqltest ends the
    content at its first occurrence anywhere)."""
    text = "\n".join(rows)
    end, n = END_OF_ROWS, 0
    while end in text:
        n += 1
        end = f"{END_OF_ROWS[:16 - len(str(n))]}{n}"
    return end


def expected_lines(sql: str, rows: Sequence[str]) -> list[str]:
    """mysqltest lines that run a differential finding's query and die while its rows are
    not rows (the correct server's, :func:`listed_rows`): those written to a file as the
    case's pipeline leaves a statement's rows, the query run by :func:`run_lines` in the
    server's own session defaults, the two compared (see the module docstring)."""
    end = _end_of(rows)
    return (["# the correct server's rows, as the mysql client prints them, listed and "
             "sorted (lib/hunt/wrongresult/rowsform.py)",
             f"--remove_files_wildcard {TMP} {PREFIX}*",
             f"--write_file {file_of(0, 'rows')} {end}", *rows, end,
             "# the query run unchanged by the mysql client, its rows listed and sorted"]
            + run_lines(1, sql, ())
            + _differ_lines(0, 1, ("the correct server's rows", "the query's rows"),
                            DIFFERENTIAL)
            + [f"--remove_files_wildcard {TMP} {PREFIX}*"])
