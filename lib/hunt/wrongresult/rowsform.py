"""Compared statements' rows as mysqltest lines: each statement run as the oracle ran it,
its rows compared as text on the client side, with nothing wrapped around it.

A reduced case's check of an oracle's wrong result (lib/hunt/wrongresult/replay.py's
:func:`~lib.hunt.wrongresult.replay.mtr_check`) used to digest each statement's rows in SQL
(a CTE over the statement, ``MD5(GROUP_CONCAT(...))``).  The CTE's materialisation changed
what it digested: a YEAR 0000 grouped through ``IF(...)`` read 2000 in both compared
statements (the difference was gone: eleven real findings recorded "not reproduced by the
printed commands"), ``AVG``'s precision changed, and a statement with ``SQL_BUFFER_RESULT``
was refused inside it (error 1234).  Here each statement runs unchanged:

- its text goes to a file under ``$MYSQL_TMP_DIR`` (``--write_file``: mysqltest expands no
  variable in it, so a ``$`` of the statement stays), after one line that takes
  ``PAD_CHAR_TO_FULL_LENGTH`` out of the session's ``sql_mode`` (as the oracle's
  :class:`~lib.hunt.wrongresult.oracle.Sessions` does);
- the mysql client runs the file on a connection of its own (``$MYSQL``, which both
  mysql-test-run.pl and ``kewpie --mode=mtr`` set to the client and the run's config),
  speaking utf8mb4 as the oracle's connections do, ``--binary-mode`` (the text as it is:
  no client command parsed in it), ``--batch --skip-column-names``: one line a row, its
  values tab-separated, NUL, tab, newline and backslash escaped (``\\0``, ``\\t``,
  ``\\n``, ``\\\\``), NULL printed ``NULL``;
- the lines are sorted (``LC_ALL=C sort``: bytes, whatever the locale): the rows as a
  multiset, as the oracle compares them (a value's newline is escaped, so a line is a row);
- each compared statement's sorted lines are compared with the first's by
  ``--diff_files`` under ``--error 0,1,2`` (1 and 2: the contents or lengths differ), and
  ``$errno`` set means they differ: both statements' sorted rows are shown (mysqltest
  prints the end of its log when it dies) and ``--die wrong result (<oracle>): statement N
  gives other rows than statement 1`` (the line lib/mtr/travel.py's confirmation
  recognises).

A statement that fails makes the client, and so the ``--exec`` and the case, fail with the
server's error -- not the wrong result's line: a failure is no disagreement, as when the
oracle judges again.  Values compare as the server sends them in text, as the old digests
did: NULL and the string ``'NULL'`` look alike (as in the oracle's rendering), and a value
the oracle reads as the same in another form (a float's last digits, a zero fraction of a
second) differs here: the case may fail where the oracle agrees, never pass where it
disagrees.  No server-side file is read or written (``secure_file_priv`` plays no part):
the files are the client's, in the run's temporary folder.
"""
from __future__ import annotations

from typing import Sequence

TMP = "$MYSQL_TMP_DIR"
PREFIX = "kw_compared_"          # the check's files in $MYSQL_TMP_DIR
END_OF_STATEMENT = "KW_END_OF_SQL"   # mysqltest takes up to 16 characters
CLIENT = "$MYSQL --default-character-set=utf8mb4 --binary-mode --batch --skip-column-names"
# the oracle's sessions read CHAR values unpadded (lib/hunt/wrongresult/oracle.py Sessions)
UNPADDED = ("SET SESSION sql_mode = TRIM(BOTH ',' FROM REPLACE(CONCAT(',', @@SESSION.sql_mode, "
            "','), ',PAD_CHAR_TO_FULL_LENGTH,', ','));")
DIFFER_ERRORS = "0,1,2"          # diff_files: 1 the contents differ, 2 the lengths do


def file_of(index: int, kind: str) -> str:
    """The path of statement index's file of this kind (sql, out, rows), mysqltest's form."""
    return f"{TMP}/{PREFIX}{index}.{kind}"


def run_lines(index: int, sql: str) -> list[str]:
    """The lines that run statement index (1-based) by the client and sort its rows into
    :func:`file_of` (index, ``rows``)."""
    text = sql.strip().rstrip(";").strip()
    return [f"--write_file {file_of(index, 'sql')} {END_OF_STATEMENT}", UNPADDED,
            text + ";", END_OF_STATEMENT,
            f"--exec {CLIENT} test < {file_of(index, 'sql')} > {file_of(index, 'out')}",
            f"--exec LC_ALL=C sort {file_of(index, 'out')} -o {file_of(index, 'rows')}"]


def compare_lines(oracle: str, texts: Sequence[str], picks: Sequence[int]) -> list[str]:
    """mysqltest lines that run every statement of texts (0-based picks compared with the
    first) and die while one gives other rows than the first (see the module docstring)."""
    lines = ["# each statement run unchanged by the mysql client, its rows sorted as text "
             "(lib/hunt/wrongresult/rowsform.py)",
             f"--remove_files_wildcard {TMP} {PREFIX}*"]
    for index in [0, *picks]:
        lines += run_lines(index + 1, texts[index])
    for index in picks:
        lines += [f"--error {DIFFER_ERRORS}",
                  f"--diff_files {file_of(1, 'rows')} {file_of(index + 1, 'rows')}",
                  "if ($errno)", "{", "  --enable_result_log",
                  "  --echo # the rows of statement 1, sorted",
                  f"  --cat_file {file_of(1, 'rows')}",
                  f"  --echo # the rows of statement {index + 1}, sorted",
                  f"  --cat_file {file_of(index + 1, 'rows')}",
                  f"  --die wrong result ({oracle}): statement {index + 1} gives other rows "
                  f"than statement 1", "}"]
    return lines + [f"--remove_files_wildcard {TMP} {PREFIX}*"]
