"""An oracle's finding judged again after a replay: the reduce predicate of the oracles.

A wrong-result finding of an oracle that runs over the load's tables (TLP, NoREC, DQP,
EET, CODDTest, the TLP variants) or over copies of them it can build again (Radar,
DQE), and a performance finding of CERT (:func:`finding_kind`: never called a wrong
result), holds the statements it compared (``details.queries``) and the oracle's comparison of
their rows (``detail``: ``EET (aggregate): rows only in Q: ...``).  After a candidate's
statements are replayed, :func:`judge_again` runs those statements again on a new
connection, as the oracle's run did (tables flushed, ``PAD_CHAR_TO_FULL_LENGTH`` left
out, ``max_statement_time`` set: :class:`~lib.hunt.wrongresult.oracle.Sessions`; what
they name beyond the load's tables built again first:
:meth:`~lib.hunt.wrongresult.oracle.OracleBase.rebuild`, Radar's raw copies and DQE's
copy under the names the statements give them) and asks the oracle's own ``judge``
(DQE and CERT run them their own way too: the UPDATE and DELETE undone, each EXPLAIN's
note read): the candidate still fails when the oracle still disagrees -- with any rows
or estimates, not the recorded ones (the reduction removes rows).  :func:`mtr_check` writes the comparison as mysqltest
lines, so the reduced case fails while the bug is there: the statements that rebuilt
the oracle's tables, then the rows of each compared query digested in SQL
(:func:`~lib.reduce.mtrcase.digest_query`'s form) and compared with the first query's,
then the rebuilt tables dropped; NoREC's two counts compared as numbers.  A digest
compares the values as the server shows them, so a case may still fail on a value's
form the oracle reads as the same (a zero fraction of a second): it never passes while
the oracle disagrees.  DQE's and CERT's comparisons are of rows touched and of
estimates: lib/hunt/wrongresult/checkforms.py writes them, from what the judging saw
(``Rebuilt.seen``: DQE's copy, CERT's plans).

Not replayable (:func:`not_replayable` says why): Pinolo (mysqltest has no form of its
comparison yet: one query's rows within another's), the differential oracle (reduced on
its compare topology by lib/reduce itself).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Mapping, Sequence

from .checkforms import cert_lines, dqe_lines
from .execute import Outcome
from .oracle import Check, OracleBase, Rebuilt, Sessions
from .registry import wrong_result_oracles
from .toplevel import split_top_level

# oracle -> the statements compared with the first (by index; -1: the last)
COMPARED: Mapping[str, tuple[int, ...]] = MappingProxyType({
    "tlp": (1,), "norec": (1,), "eet": (1,), "coddtest": (-1,), "dqp": (),  # dqp: every one
    "tlp-aggregate": (1,), "tlp-distinct": (1,), "tlp-groupby": (1,), "tlp-having": (1,),
    "radar": (1,),
})
# oracle -> its comparison's mysqltest form, of checkforms.py (not digests of rows)
OWN_FORMS: Mapping[str, Callable[[Sequence[str], Rebuilt, str], list[str]]] = \
    MappingProxyType({"dqe": dqe_lines, "cert": cert_lines})
REPLAYABLE = frozenset(COMPARED) | frozenset(OWN_FORMS)
_BLOCKED: Mapping[str, str] = MappingProxyType({
    "pinolo": "its comparison (one query's rows within another's) has no mysqltest form yet",
})
_KINDS: Mapping[str, str] = MappingProxyType({"cert": "performance"})
_VARIANT_RE = re.compile(r"^[\w-]+ \(([\w-]+)\):")
REPLAY_TIMEOUT = 20.0   # seconds: max_statement_time of the statements judged again


def not_replayable(oracle: str) -> str:
    """Why an oracle's findings cannot be judged again after a replay ('' when they can)."""
    if oracle in REPLAYABLE:
        return ""
    return _BLOCKED.get(oracle, "it is no oracle of lib/hunt/wrongresult")


def finding_kind(oracle: str) -> str:
    """The kind of an oracle's findings: ``performance`` for CERT's (a row estimate),
    ``wrong-result`` for the others'."""
    return _KINDS.get(oracle, "wrong-result")


def variant_of(detail: str) -> str:
    """The check's variant from a finding's detail (``EET (aggregate): ...``), '' if none."""
    m = _VARIANT_RE.match(detail)
    return m.group(1) if m else ""


@dataclass(frozen=True)
class JudgedAgain:
    """A finding's statements judged again: does the oracle still disagree, and what it
    built again to run them (:class:`~lib.hunt.wrongresult.oracle.Rebuilt`)."""

    differs: bool
    rebuilt: Rebuilt = field(default_factory=Rebuilt)


def judge_again(conn: Any, oracle: str, queries: Sequence[str], detail: str = "") -> JudgedAgain:
    """Run the finding's statements on conn (a DB-API connection to the replayed server),
    after what the oracle builds for them, and judge them with the oracle's own
    comparison (see the module docstring).  A statement that fails (the candidate lost
    a table it reads, a copy could not be made) is no disagreement."""
    if oracle not in REPLAYABLE:
        raise ValueError(f"the {oracle} oracle's findings cannot be judged again: "
                         f"{not_replayable(oracle)}")
    (judge,) = wrong_result_oracles([oracle])
    assert isinstance(judge, OracleBase)
    check = Check(tuple(queries), variant_of(detail))
    with Sessions([conn], REPLAY_TIMEOUT):
        try:
            rebuilt = judge.rebuild([conn], check.queries)
            outcomes: list[Outcome] = (judge.execute([conn], check) if oracle in OWN_FORMS
                                       else OracleBase.execute(judge, [conn], check))
            verdict = judge.verdict(check, outcomes)
            seen = judge.seen(check, outcomes) if verdict.kind == "differ" else ()
        finally:
            judge.finish([conn])
    return JudgedAgain(verdict.kind == "differ",
                       Rebuilt(rebuilt.statements, rebuilt.undo, seen))


def select_items(sql: str) -> int:
    """How many columns a generated SELECT returns: its items before the top-level FROM
    (0 when the text is not read: a leading WITH, no FROM)."""
    text = re.sub(r"^\s*(?:/\*.*?\*/\s*)*", "", sql, flags=re.S)
    m = re.match(r"SELECT\s+(?:DISTINCT\s+|ALL\s+|STRAIGHT_JOIN\s+|SQL_\w+\s+)*", text,
                 re.IGNORECASE)
    if not m:
        return 0
    head = split_top_level(text[m.end():], " FROM ", case_blind=True)
    if len(head) < 2:
        return 0
    return len(split_top_level(head[0], ",", case_blind=True))


_SET_STATEMENT_RE = re.compile(r"^\s*(?:/\*.*?\*/\s*)*(SET\s+STATEMENT\s.*?\sFOR\s+)"
                               r"(?=(?:/\*.*?\*/\s*)*(?:SELECT|WITH|\())", re.I | re.S)


def split_setting(sql: str) -> tuple[str, str]:
    """(a leading ``SET STATEMENT ... FOR `` or '', the statement after it)."""
    m = _SET_STATEMENT_RE.match(sql)
    return (m.group(1), sql[m.end():]) if m else ("", sql)


def mtr_check(oracle: str, queries: Sequence[str], digest_query: Callable[[str, int], str],
              delimiter: str = ";", rebuilt: Rebuilt = Rebuilt()) -> list[str]:
    """mysqltest lines that die while the oracle's comparison of queries still disagrees
    ([] when it has no such form: the oracle is not replayable, or the columns of the
    first query are not read); digest_query(sql, columns) is SQL giving one digest of a
    query's rows (lib/reduce's).  What the oracle rebuilt for them is built first and
    undone last (rebuilt); DQE's and CERT's comparisons are checkforms.py's.  Each
    statement's digest is read into a variable (under its
    own ``SET STATEMENT``, which stands before the digest), then compared."""
    if oracle in OWN_FORMS:
        return OWN_FORMS[oracle](queries, rebuilt, delimiter)
    if oracle not in REPLAYABLE or len(queries) < 2:
        return []
    texts = [q.strip().rstrip(";") for q in queries]
    lines = ["", f"# the wrong result ({oracle}): the statements compared must agree"]
    if rebuilt.statements:
        lines += [f"# what the {oracle} oracle built for them, as the reduction built it"]
        lines += [sql + delimiter for sql in rebuilt.statements]
    if oracle == "norec":
        lines += [f"let $kw_n1= `{texts[0]}`{delimiter}",
                  f"let $kw_same= `SELECT IFNULL($kw_n1, 0) = IFNULL(({texts[1]}), 0)`"
                  f"{delimiter}",
                  "if (!$kw_same)", "{", f"  --die wrong result ({oracle}): the counts differ",
                  "}"]
        return lines + [sql + delimiter for sql in rebuilt.undo]
    columns = select_items(split_setting(texts[0])[1])
    if columns <= 0:
        return []
    picks = [i % len(texts) for i in COMPARED[oracle]] or list(range(1, len(texts)))
    for index in [0] + picks:
        head, body = split_setting(texts[index])
        lines.append(f"let $kw_d{index + 1}= `{head}{digest_query(body, columns)}`{delimiter}")
    for index in picks:
        lines += [f"let $kw_same= `SELECT '$kw_d1' = '$kw_d{index + 1}'`{delimiter}",
                  "if (!$kw_same)", "{",
                  f"  --die wrong result ({oracle}): statement {index + 1} gives other rows "
                  f"than statement 1", "}"]
    return lines + [sql + delimiter for sql in rebuilt.undo]
