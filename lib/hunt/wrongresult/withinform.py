"""Pinolo's comparison as mysqltest lines: one statement's rows within another's.

Pinolo (lib/hunt/wrongresult/pinolo.py) compares a query ``Q`` (statement 1) with a looser
form of it (``Q+``, statement 2) and a tighter one (``Q-``, statement 3): ``rows(Q)`` must be
within ``rows(Q+)`` and ``rows(Q-)`` within ``rows(Q)``.  :func:`pinolo_lines` writes that
check for a reduced case, in the order the oracle judges it (``Q`` within ``Q+`` first):

- each statement runs unchanged by the mysql client into a file under ``$MYSQL_TMP_DIR``
  and its lines are listed and sorted (``LC_ALL=C sed -n 'l 0'``, ``LC_ALL=C sort``): :func:`lib.hunt.wrongresult.rowsform.run_lines`,
  the same way the other oracles' statements run (one line a row, NULL printed ``NULL``);
- rows (variants ``rows`` and ``distinct``): ``LC_ALL=C comm -23`` of the smaller statement's
  sorted lines and the larger's gives the lines of the first the second does not hold as many
  times -- a multiset difference, as the oracle's (a row twice in ``Q`` must be twice in
  ``Q+``; a ``DISTINCT``'s rows are each once, so it is the oracle's set containment) --, and
  ``--diff_files`` of that against an empty file, under ``--error 0,1,2``, sets ``$errno``
  while it is not empty: the missing rows are shown and the case dies with
  ``wrong result (pinolo): statement N's rows are not within statement M's``;
- counts (variant ``count``: ``SELECT COUNT(*)``, one number each): the smaller statement's
  count and the larger's go to one file in that order, and ``--diff_files`` of it against its
  numeric sort (``LC_ALL=C sort -n``) tells they are out of order: the smaller counted more;
  both counts are shown and the case dies with ``wrong result (pinolo): statement N counts
  more rows than statement M``.

The variant is the one the reduction's judging used (the finding's, ``Pinolo (rows): ...``),
as :meth:`~lib.hunt.wrongresult.pinolo.PinoloOracle.seen` left it in ``Rebuilt.seen``: the
rows of a count are numbers, not rows to find in another statement's.  A statement that
fails makes the client, and so the case, fail with the server's error (a failure is no
disagreement, as when the oracle judges again).

Not looser than the oracle: the oracle reads the same text (its values are the text
protocol's, rendered by a function of that text: lib/hunt/wrongresult/result.py), so a row
whose text the larger statement holds is one it renders alike -- the case never passes
while the oracle disagrees.  It may be stricter in one place: a ``DISTINCT`` keeps one of
two values the server calls equal, and the oracle renders two of them alike that print
otherwise (a float's ``-0`` and ``0``), so another plan's choice between them fails the case
where the oracle agrees.  NULL and the string ``'NULL'`` print alike, as the oracle renders
them.
"""
from __future__ import annotations

from typing import Sequence

from .oracle import Rebuilt
from .rowsform import DIFFER_ERRORS, END_OF_STATEMENT, PREFIX, TMP, file_of, run_lines

# (the smaller statement, the larger one), 1-based, in the order Pinolo's judge reads them:
# Q within Q+ (the looser query), Q- (the tighter query) within Q
PAIRS = ((1, 2), (3, 1))
EMPTY = f"{TMP}/{PREFIX}empty"   # an empty file: what a containment leaves over


def pinolo_lines(queries: Sequence[str], rebuilt: Rebuilt, delimiter: str = ";") -> list[str]:
    """The mysqltest lines of Pinolo's comparison of queries (Q, Q+, Q-: see the module
    docstring), for the variant the reduction's judging saw (``rebuilt.seen``: ``count``
    compares counts, any other rows, as the judge does); [] when it saw none or there are
    not three statements.  The lines hold no SQL mysqltest sends itself, so no delimiter
    (the parameter is the other forms')."""
    if len(rebuilt.seen) != 1 or len(queries) != 3:
        return []
    variant = "count" if rebuilt.seen[0] == "count" else "rows"   # as the judge reads it
    lines = ["", "# the wrong result (pinolo): statement 1's rows must be within statement 2's "
                 "(a looser query's), statement 3's (a tighter query's) within statement 1's"
                 + (" (counts compared as numbers)" if variant == "count" else " (as multisets)"),
             "# each statement run unchanged by the mysql client, its rows sorted as text "
             "(lib/hunt/wrongresult/rowsform.py, lib/hunt/wrongresult/withinform.py)",
             f"--remove_files_wildcard {TMP} {PREFIX}*"]
    for index, sql in enumerate(queries, 1):
        lines += run_lines(index, sql)
    if variant == "count":
        for small, big in PAIRS:
            lines += count_lines(small, big)
    else:
        lines += [f"--write_file {EMPTY} {END_OF_STATEMENT}", END_OF_STATEMENT]
        for small, big in PAIRS:
            lines += within_lines(small, big)
    return lines + [f"--remove_files_wildcard {TMP} {PREFIX}*"]


def within_lines(small: int, big: int) -> list[str]:
    """Lines that die while statement small's sorted rows are not within statement big's
    as a multiset (both already in their :func:`~lib.hunt.wrongresult.rowsform.file_of`
    ``rows`` files; the empty file written)."""
    missing = file_of(small, f"not_in_{big}")
    return [f"--exec LC_ALL=C comm -23 {file_of(small, 'rows')} {file_of(big, 'rows')} > "
            f"{missing}",
            f"--error {DIFFER_ERRORS}",
            f"--diff_files {EMPTY} {missing}",
            "if ($errno)", "{", "  --enable_result_log",
            f"  --echo # the rows of statement {small} that statement {big} does not hold "
            f"(as many times), sorted",
            f"  --cat_file {missing}",
            f"  --die wrong result (pinolo): statement {small}'s rows are not within "
            f"statement {big}'s", "}"]


def count_lines(small: int, big: int) -> list[str]:
    """Lines that die while statement small's count is above statement big's (each the one
    line of its ``rows`` file)."""
    both, ordered = file_of(small, f"and_{big}"), file_of(small, f"and_{big}_sorted")
    return [f"--exec cat {file_of(small, 'rows')} {file_of(big, 'rows')} > {both}",
            f"--exec LC_ALL=C sort -n {both} -o {ordered}",
            f"--error {DIFFER_ERRORS}",
            f"--diff_files {both} {ordered}",
            "if ($errno)", "{", "  --enable_result_log",
            f"  --echo # the counts of statement {small} and statement {big}",
            f"  --cat_file {both}",
            f"  --die wrong result (pinolo): statement {small} counts more rows than "
            f"statement {big}", "}"]
