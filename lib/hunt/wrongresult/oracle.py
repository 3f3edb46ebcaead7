"""What every wrong-result oracle shares: the protocol, the run loop, statistics.

An oracle's :meth:`OracleBase.run` takes DB-API connections (one per
server), the tables (:mod:`~lib.hunt.wrongresult.schema`), a seed and a
budget (how many checks: one generated query each, with the statements the
oracle derives from it), and returns the findings as
:class:`~lib.hunt.wrongresult.result.WrongResult`.  The loop:

1. once per run: each table's row count (capped; a table that cannot be read
   is left out; so is a view whose rows are not determined -- RAND(), NOW(),
   a window, a LIMIT, GROUP_CONCAT... in its definition -- or whose reading
   meets a known bug the generator avoids, :func:`views_left_out`) and, on every connection, ``max_statement_time`` set for the
   run and restored at its end (a statement killed by it is a skipped check);
2. per check ``i``: a generator seeded with ``"<oracle>:<seed>:<i>"`` (the
   same check on every machine), the oracle's statements, run;
3. any SQL error skips the check (counted per error code; malformed SQL is
   counted apart as a generator error); a lost connection ends the run
   (``stats.stopped`` says why) and returns the findings so far;
4. a disagreement is run again: only when it repeats with the same results
   is it a finding (a table changed by someone else in between is not) --
   and, for an oracle that rewrites values into others of their own type
   (``rewrites_values``: EET), when its SELECTs, run once more each followed by
   ``SHOW WARNINGS``, do not differ in the conversions they warn of
   (:data:`CONVERSION_WARNINGS`: a value truncated or clipped on its way to
   another type -- ``CASE WHEN p THEN NULL ELSE bigint_unsigned END`` is a
   ``DECIMAL(20,0)``, and ``BIT_XOR`` of it clips 2^63 and more with warning
   1916 where ``BIT_XOR(bigint_unsigned)`` does not); a disagreement one side
   warns of and the other not is skipped (code :data:`WARNED`).  Warning
   1264 (a value out of range for a column) is no such conversion: in a
   SELECT the column is the server's own derived type, and a value that does
   not fit it is a wrong result (``int-precision``);
5. on a connection that is not in autocommit mode every check ends with a
   ROLLBACK, so no snapshot or metadata lock outlives it.

The tables must not change while an oracle runs (run it between trials, or
on tables the load does not write): the checks compare two reads of the
same data.
"""
from __future__ import annotations

import random
import re
import time
from dataclasses import dataclass, field, replace
from typing import Any, Mapping, Protocol, Sequence, runtime_checkable

from .errors import OracleSetupError, ServerLostError
from .execute import STATEMENT_TIMEOUT, Connection, Outcome, error_kind, run_query
from .generator import (BINARY_STRINGS, VIEW_BIT, VIEW_KNOWN_BUGS, VIEW_STRING, VIEW_UNSIGNED,
                        VIEW_WIDE_INTEGER,
                        VIEW_VERSIONED_DML, GeneratorOptions, SqlGenerator)
from .queries import WIDE_DECIMAL
from .result import WrongResult, describe_rows, multiset_difference, render_rows
from .rowsform import LEFT_OUT_MODES
from .schema import TableInfo, Tables, quote_name, shape_names, tables_from
from .shape import query_shape
from .toplevel import split_top_level

COUNT_CAP = 1_000_000      # row counts are read up to this many rows
MAX_SAMPLES = 5            # generator-error messages kept in the statistics
FLUSH_WAIT = 10            # seconds FLUSH TABLES waits for a lock before the run starts
WARNED = -7                # skip code: one side's statements warn of a conversion the other's do not
# Warnings of a value changed on its way to another type: data truncated (1265), a truncated
# incorrect value (1292), an invalid character string (1300), an incorrect value (1366), an
# overflow converting to an integer (1916), an illegal value converting (1918).
CONVERSION_WARNINGS = frozenset({1265, 1292, 1300, 1366, 1916, 1918})
# A view whose definition has one of these returns rows no two reads need agree on: a
# function of the moment, the session or chance, a window (a frame over ties), a LIMIT
# (which rows, without a total order), an aggregate that concatenates in the order met.
NONDETERMINISTIC_VIEW = re.compile(
    r"\b(?:rand|uuid|uuid_short|sys_guid|now|sysdate|curdate|curtime|current_date|current_time|"
    r"current_timestamp|localtime|localtimestamp|utc_date|utc_time|utc_timestamp|"
    r"unix_timestamp|connection_id|last_insert_id|found_rows|row_count|nextval|lastval|"
    r"setval|sleep|benchmark|get_lock|is_free_lock|is_used_lock|release_lock|"
    r"group_concat|json_arrayagg|json_objectagg|master_pos_wait|last_value)\s*\(|"
    r"\bover\s*\(|\blimit\s+\d|\bcurrent_(?:date|time|timestamp|user|role)\b",
    re.IGNORECASE)
# A view whose definition has a number literal of more digits than WIDE_DECIMAL: at the
# type's limit (99999999999999999999999999999999999999999999999999999999999999999.0, 66
# digits) the view's column shows it whole and a temporary table clips it to 64 nines .9,
# so a UNION of partitions or a GROUP BY reads another value (hunt or18-sf5 trial 14)
WIDE_LITERAL_VIEW = re.compile(r"(?<![\w.'])\d{%d,}" % (WIDE_DECIMAL + 1))
_READ_RE = re.compile(r"^\s*(?:/\*.*?\*/\s*)*(?:SET\s+STATEMENT\b.*?\bFOR\s+)?(?:SELECT|WITH|\()",
                      re.IGNORECASE | re.DOTALL)


@runtime_checkable
class WrongResultOracle(Protocol):
    """A wrong-result oracle: its name and ``run`` (see the module docstring)."""

    name: str

    def run(self, conns: Sequence[Any], metadata: Tables, seed: int,
            budget: int) -> list[WrongResult]:
        """Run budget checks from seed over the tables; the findings."""


@dataclass
class OracleStats:
    """What the last run did: checks, statements, skips by error code, findings."""

    checks: int = 0             # generated queries tried (the budget, unless stopped)
    compared: int = 0           # checks whose statements all ran and were compared
    statements: int = 0         # statements sent (confirmations included)
    skipped: dict[int, int] = field(default_factory=dict)  # error code -> checks skipped
    ungenerated: int = 0        # checks the generator could not fill (no table fits)
    generator_errors: int = 0   # checks skipped for malformed SQL (a generator bug)
    generator_samples: list[str] = field(default_factory=list)
    unconfirmed: int = 0        # disagreements that did not repeat
    findings: int = 0
    known: int = 0              # of the findings, those the oracle recognised as a known bug
    variants: dict[str, int] = field(default_factory=dict)  # compared checks per variant
    seconds: float = 0.0
    stopped: str = ""           # why the run ended early ('' when it ran its budget)

    def merge(self, other: "OracleStats") -> None:
        """Add other's counts to these (for a benchmark's totals)."""
        for name in ("checks", "compared", "statements", "ungenerated", "generator_errors",
                     "unconfirmed", "findings", "known"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.seconds += other.seconds
        for code, n in other.skipped.items():
            self.skipped[code] = self.skipped.get(code, 0) + n
        for variant, n in other.variants.items():
            self.variants[variant] = self.variants.get(variant, 0) + n
        self.generator_samples.extend(other.generator_samples[:MAX_SAMPLES - len(self.generator_samples)])
        self.stopped = self.stopped or other.stopped


@dataclass(frozen=True)
class Check:
    """One generated check: its statements and the variant that made them (for statistics)."""

    queries: tuple[str, ...]
    variant: str


@dataclass(frozen=True)
class Verdict:
    """How a check came out: agree, skip (with the error code) or differ (results, detail)."""

    kind: str  # 'agree', 'skip', 'differ'
    code: int = 0
    message: str = ""
    results: tuple[str, ...] = ()
    detail: str = ""
    queries: tuple[str, ...] = ()  # the statements compared, when not the check's own
                                   # (an oracle that builds them while it runs: CODDTest)
    known: str = ""                # a difference the oracle recognised as its known bug
                                   # (:meth:`OracleBase.recognise`): the bug's name


@dataclass(frozen=True)
class Rebuilt:
    """What an oracle built again before a finding's statements were judged after a
    replay (Radar's raw copies, DQE's copy): the statements that built it and those that
    undo it -- the reduced case runs them around its comparison --, and what the judging
    saw that the case's comparison is written from (``seen``: CERT's plans,
    :meth:`OracleBase.seen`)."""

    statements: tuple[str, ...] = ()
    undo: tuple[str, ...] = ()
    seen: tuple[str, ...] = ()


class OracleBase:
    """The run loop; subclasses give ``generate``, ``execute`` and ``judge``.

    ``kind`` is the kind of the findings (``wrong-result``; CERT's are
    ``performance``); ``trace`` makes the generator record every expression it
    writes (``SqlGenerator.trace``), for the oracles that rewrite parts of a
    query; ``rewrites_values`` makes a disagreement whose statements warn of
    different conversions a skip (step 4 of the module docstring).  ``prepare`` and ``finish`` run once per run, around the checks.
    """

    name = ""
    kind = "wrong-result"
    min_connections = 1
    trace = False
    rewrites_values = False  # its statements hold values rewritten into others of a type of
                             # their own: a conversion warned of on one side only skips
    writes = False  # its checks UPDATE and DELETE (DQE): views that meet a known bug of
                    # those statements are left out too (VIEW_KNOWN_BUGS, VIEW_VERSIONED_DML)

    def __init__(self, options: GeneratorOptions | None = None,
                 statement_timeout: float = STATEMENT_TIMEOUT) -> None:
        self.options = options or self.default_options()
        self.statement_timeout = statement_timeout
        self.stats = OracleStats()

    def default_options(self) -> GeneratorOptions:
        """The generator's bounds for this oracle."""
        return GeneratorOptions()

    # --------------------------------------------------------- subclass API
    def prepare(self, conns: Sequence[Connection], tables: list[TableInfo],
                rows: dict[tuple[str, str], int]) -> list[TableInfo]:
        """Once per run, before the checks: the tables the checks may use (by default all).

        An oracle that needs more of the server (index names, copies of the
        tables) reads or builds it here; ServerLostError ends the run."""
        return tables

    def finish(self, conns: Sequence[Connection]) -> None:
        """Once per run, after the checks (also when the run stopped): undo what prepare built."""

    def rebuild(self, conns: Sequence[Connection], queries: Sequence[str]) -> Rebuilt:
        """Before a finding's statements (queries) are judged again after a replay
        (lib/hunt/wrongresult/replay.py): build what they name beyond the replayed tables,
        as prepare built it for the run -- by default nothing; :meth:`finish` undoes it."""
        return Rebuilt()

    def seen(self, check: Check, outcomes: Sequence[Outcome]) -> tuple[str, ...]:
        """What a finding's statements judged again after a replay gave that the reduced
        case's comparison is written from (lib/hunt/wrongresult/replay.py): by default
        nothing (the case runs the statements again); CERT's plans."""
        return ()

    def recognise(self, conns: Sequence[Connection], check: Check,
                  outcomes: list[Outcome], verdict: Verdict) -> Verdict:
        """A confirmed difference (verdict), which the oracle may recognise as a known bug of
        the server: the verdict with ``known`` set to the bug's name -- still a finding,
        counted and shown as known (CERT's KW46-CERT-RANGE-KEYPART) --; by default the
        verdict as it is."""
        return verdict

    def generate(self, gen: SqlGenerator) -> Check | None:
        """The statements of one check (None: nothing fits these tables)."""
        raise NotImplementedError

    def execute(self, conns: Sequence[Connection], check: Check) -> list[Outcome]:
        """Run the check's statements: by default each in turn on the first connection."""
        outcomes = []
        for sql in check.queries:
            self.stats.statements += 1
            outcome = run_query(conns[0], sql)
            outcomes.append(outcome)
            if outcome.failed:
                break
        return outcomes

    def judge(self, check: Check, outcomes: list[Outcome]) -> Verdict:
        """Compare the outcomes of a check whose statements all ran."""
        raise NotImplementedError

    def verdict(self, check: Check, outcomes: list[Outcome]) -> Verdict:
        """Skip on the first error, else :meth:`judge`."""
        for o in outcomes:
            if o.failed:
                return Verdict("skip", o.error, o.message)
        return self.judge(check, outcomes)

    # --------------------------------------------------------- the loop
    def run(self, conns: Sequence[Any], metadata: Tables, seed: int,
            budget: int) -> list[WrongResult]:
        """Run budget checks from seed over the tables; the findings (see the module docstring)."""
        if len(conns) < self.min_connections:
            raise OracleSetupError(f"the {self.name} oracle needs {self.min_connections} "
                                   f"connections (one per server), got {len(conns)}")
        self.stats = OracleStats()
        started = time.monotonic()
        findings: list[WrongResult] = []
        try:
            tables = tables_from(metadata)
            if not tables or budget <= 0:
                return findings
            with Sessions(conns, self.statement_timeout):
                rows = row_counts(conns[0], tables)
                risky = views_left_out(conns[0], tables, self.options.avoid, self.writes)
                tables = [t for t in tables if (t.schema, t.name) in rows
                          and (t.schema, t.name) not in risky]
                names = shape_names(tables)
                try:
                    tables = self.prepare(conns, tables, rows)
                    options = self.options
                    if {"oracle-concat-outer-join", "oracle-replace-null"} & options.avoid \
                            and oracle_mode(conns[0]):
                        options = replace(options, oracle_mode=True)
                    for i in range(budget):
                        gen = SqlGenerator(tables, random.Random(f"{self.name}:{seed}:{i}"), rows,
                                           options, [] if self.trace else None)
                        self.stats.checks += 1
                        finding = self._one(conns, gen, names)
                        if finding is not None:
                            findings.append(finding)
                finally:
                    try:
                        _end_transactions(conns)
                        self.finish(conns)
                    except ServerLostError:
                        pass  # nothing to undo on a server that is gone: the run says why
        except ServerLostError as exc:
            self.stats.stopped = str(exc)
        finally:
            self.stats.findings = len(findings)
            self.stats.seconds = time.monotonic() - started
        return findings

    def _one(self, conns: Sequence[Connection], gen: SqlGenerator,
             names: dict[str, str]) -> WrongResult | None:
        check = self.generate(gen)
        if check is None:
            self.stats.ungenerated += 1
            return None
        try:
            verdict = self.verdict(check, self.execute(conns, check))
            if verdict.kind == "differ":
                outcomes = self.execute(conns, check)
                again = self.verdict(check, outcomes)
                if again.kind != "differ" or again.results != verdict.results:
                    self.stats.unconfirmed += 1
                    return None
                verdict = self.recognise(conns, check, outcomes, verdict)
                if self.rewrites_values:
                    warned = warned_conversions(conns[0], verdict.queries or check.queries)
                    if len(set(warned)) > 1:
                        verdict = Verdict("skip", WARNED, "the statements warn of different "
                                                          f"conversions: {warned}")
        finally:
            _end_transactions(conns)
        if verdict.kind == "skip":
            self._count_skip(verdict, check)
            return None
        self.stats.compared += 1
        self.stats.variants[check.variant] = self.stats.variants.get(check.variant, 0) + 1
        if verdict.kind == "agree":
            return None
        self.stats.known += bool(verdict.known)
        return WrongResult(self.name, query_shape(check.queries[0], names),
                           verdict.queries or check.queries, verdict.results, verdict.detail,
                           self.kind, verdict.known)

    def _count_skip(self, verdict: Verdict, check: Check) -> None:
        self.stats.skipped[verdict.code] = self.stats.skipped.get(verdict.code, 0) + 1
        if error_kind(verdict.code) == "generator":
            self.stats.generator_errors += 1
            if len(self.stats.generator_samples) < MAX_SAMPLES:
                self.stats.generator_samples.append(
                    f"{verdict.code} {verdict.message[:200]} in: {check.queries[0][:400]}")


def same_rows(outcomes: Sequence[Outcome], label: str, first: str, second: str) -> Verdict:
    """The verdict of two statements that must return the same rows (as multisets):
    agree, or differ with the detail ``<label>: rows only <first>: ...; rows only
    <second>: ...`` (EET's Q and rewritten Q, Radar's originals and raw copies)."""
    one = render_rows(outcomes[0].rows or ())
    two = render_rows(outcomes[1].rows or ())
    only_one, only_two = multiset_difference(one, two)
    results = (describe_rows(one), describe_rows(two))
    if not only_one and not only_two:
        return Verdict("agree", results=results)
    return Verdict("differ", results=results,
                   detail=f"{label}: rows only {first}: {describe_rows(only_one)}; "
                          f"rows only {second}: {describe_rows(only_two)}")


def row_counts(conn: Connection, tables: Sequence[TableInfo]) -> dict[tuple[str, str], int]:
    """Each readable table's row count (up to COUNT_CAP); unreadable tables are left out."""
    counts: dict[tuple[str, str], int] = {}
    for t in tables:
        outcome = run_query(conn, f"SELECT COUNT(*) FROM (SELECT 1 FROM {t.sql_name} "
                                  f"LIMIT {COUNT_CAP}) AS n")
        if not outcome.failed and outcome.rows:
            counts[(t.schema, t.name)] = int(outcome.rows[0][0])
    _end_transactions([conn])
    return counts


def _select_columns(definition: str) -> list[tuple[str, str]]:
    """The columns of a view's definition (its first SELECT), each (expression, the same
    with its string literals emptied), where a column is ``expression AS `name```."""
    if re.match(r"\s*with\b", definition, re.IGNORECASE):  # the CTEs, then the SELECT
        parts = split_top_level(definition, "select ")
        definition = "select " + "select ".join(parts[1:]) if len(parts) > 1 else ""
    m = re.match(r"\s*\(?\s*select\s+(?:distinct\s+|all\s+|straight_join\s+|high_priority\s+|"
                 r"sql_\w+\s+)*", definition, re.IGNORECASE)
    if not m:
        return []
    head = split_top_level(definition[m.end():], " from ")[0]
    out = []
    for item in split_top_level(head, ","):
        expr = re.sub(r"\s+AS\s+`(?:[^`]|``)*`\s*$", "", item.strip(), flags=re.IGNORECASE)
        out.append((expr, re.sub(r"'(?:[^'\\]|\\.|'')*'|\"(?:[^\"\\]|\\.)*\"", "''", expr)))
    return out


def constant_function_columns(definition: str) -> list[str]:
    """The columns of a view's definition (its first SELECT) that are a function of
    constants -- ``abs(5) AS `r2``` -- where the server writes every column it reads with
    backquotes."""
    return [expr for expr, bare in _select_columns(definition) if "(" in bare and "`" not in bare]


def constant_value_columns(definition: str) -> list[str]:
    """The columns of a view's definition (its first SELECT) whose value is a constant: no
    column read (``0.000001``, ``'x'``, ``abs(5)``), or a COALESCE or IFNULL whose first
    argument is such a constant other than NULL (``coalesce(-1,`a`.`x`)``)."""
    out = []
    for expr, bare in _select_columns(definition):
        m = re.match(r"(?:coalesce|ifnull)\s*\((.*)\)$", bare, re.IGNORECASE | re.DOTALL)
        first = split_top_level(m.group(1), ",")[0].strip() if m else ""
        if "`" not in bare or first and "`" not in first and first.lower() != "null":
            out.append(expr)
    return out


def warned_conversions(conn: Connection, queries: Sequence[str]) -> list[tuple[int, ...]]:
    """For each read (SELECT) of queries, run once more, the conversion warnings it gives
    (:data:`CONVERSION_WARNINGS`, sorted codes); statements that write are not run."""
    out = []
    for sql in queries:
        if not _READ_RE.match(sql):
            continue
        run_query(conn, sql)
        shown = run_query(conn, "SHOW WARNINGS")
        codes = sorted({int(r[1]) for r in shown.rows or () if len(r) > 1
                        and str(r[1]).isdigit() and int(r[1]) in CONVERSION_WARNINGS})
        out.append(tuple(codes))
    _end_transactions([conn])
    return out


def views_left_out(conn: Connection, tables: Sequence[TableInfo],
                    avoid: frozenset[str], writes: bool = False) -> set[tuple[str, str]]:
    """The views the checks leave out: those whose rows are not determined (the definition
    calls a function of :data:`NONDETERMINISTIC_VIEW`, has a window, a LIMIT, an aggregate
    whose order is not given), a number literal or a DECIMAL column wider than
    WIDE_DECIMAL digits (shown whole, stored clipped), and those whose reading meets a
    known bug the generator avoids (:data:`~lib.hunt.wrongresult.generator.VIEW_KNOWN_BUGS`:
    JSON_ARRAYAGG, an aggregate beside a BIGINT UNSIGNED column, a cast to TIME, DATETIME or
    DATE, a set operation with a character string or a DECIMAL(20+,0) column, a grouping or
    DISTINCT beside a BIT column; with writes -- an oracle whose checks UPDATE and DELETE --
    an outer join of a system-versioned table; and a column that is a function of constants
    or a constant: outer-const-function, view-constant-column), and any view that names one
    left out; all views when the definitions cannot be read."""
    views = [t for t in tables if t.is_view]
    rules = [(NONDETERMINISTIC_VIEW, ""), (WIDE_LITERAL_VIEW, "")] + [
        (re.compile(pattern, re.IGNORECASE), needs)
        for bug, (pattern, needs) in VIEW_KNOWN_BUGS.items()
        if bug in avoid and (writes or needs != VIEW_VERSIONED_DML)]
    if not views:
        return set()
    schemas = sorted({t.schema for t in views})
    outcome = run_query(conn, "SELECT TABLE_SCHEMA, TABLE_NAME, VIEW_DEFINITION FROM "
                              "information_schema.VIEWS WHERE TABLE_SCHEMA IN ("
                              + ", ".join("'" + s.replace("'", "''") + "'" for s in schemas) + ")")
    _end_transactions([conn])
    if outcome.failed:
        return {(t.schema, t.name) for t in views}
    definitions = {(str(r[0]), str(r[1])): str(r[2] or "") for r in outcome.rows or ()}
    versioned: set[str] | None = None   # read when a rule needs it
    risky: set[tuple[str, str]] = set()
    for t in views:
        text = definitions.get((t.schema, t.name), "")
        has = {VIEW_UNSIGNED: any(c.data_type == "bigint" and c.unsigned for c in t.columns),
               VIEW_STRING: any(c.type_class == "str" and c.data_type not in BINARY_STRINGS
                                for c in t.columns),
               VIEW_BIT: any(c.data_type == "bit" for c in t.columns),
               VIEW_WIDE_INTEGER: any(c.precision >= 20 and c.full_type.startswith(
                   (f"decimal({c.precision},0)", f"decimal({c.precision})")) for c in t.columns)}
        for rule, needs in rules:
            if not rule.search(text):
                continue
            if needs == VIEW_VERSIONED_DML:
                if versioned is None:
                    versioned = versioned_tables(conn)
                if not any(name in text for name in versioned):
                    continue
            elif needs and not has[needs]:
                continue
            risky.add((t.schema, t.name))
        if "outer-const-function" in avoid and constant_function_columns(text) \
                or "view-constant-column" in avoid and constant_value_columns(text):
            risky.add((t.schema, t.name))
        if any(c.precision > WIDE_DECIMAL for c in t.columns):
            # a wide DECIMAL column's expression may hold a digit more than the column's
            # type (GREATEST(ROUND(d, 1), ABS(d)) of a DECIMAL(65,0): 66 digits as
            # DECIMAL(65,1)): shown whole, stored clipped (session 11's 5c30bc4cc1c8)
            risky.add((t.schema, t.name))
    return _with_dependents(views, definitions, risky)


def _with_dependents(views: Sequence[TableInfo], definitions: Mapping[tuple[str, str], str],
                     risky: set[tuple[str, str]]) -> set[tuple[str, str]]:
    """risky and every view over a view of risky (over and over)."""
    grew = True
    while grew:
        grew = False
        for t in views:
            key = (t.schema, t.name)
            if key not in risky and any(f"`{n}`" in definitions.get(key, "") for _, n in risky):
                risky.add(key)
                grew = True
    return risky


def oracle_mode(conn: Connection) -> bool:
    """True when the session's sql_mode has ORACLE (CONCAT is then Oracle's, which skips
    NULLs, and REPLACE's empty result is NULL: the known bugs oracle-concat-outer-join and
    oracle-replace-null)."""
    got = run_query(conn, "SELECT @@SESSION.sql_mode")
    _end_transactions([conn])
    mode = str(got.rows[0][0]) if not got.failed and got.rows else ""
    return "ORACLE" in mode.upper().split(",")


def versioned_tables(conn: Connection) -> set[str]:
    """The system-versioned tables of the server, each as a view's definition names it
    (```schema`.`table```); an empty set when they cannot be read."""
    outcome = run_query(conn, "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES "
                              "WHERE TABLE_TYPE = 'SYSTEM VERSIONED'")
    _end_transactions([conn])
    if outcome.failed:
        return set()
    return {f"{quote_name(str(r[0]))}.{quote_name(str(r[1]))}" for r in outcome.rows or ()}


def _autocommit(conn: Connection) -> bool:
    get = getattr(conn, "get_autocommit", None)
    return bool(get()) if callable(get) else False


def _end_transactions(conns: Sequence[Connection]) -> None:
    for conn in conns:
        if not _autocommit(conn):
            rollback = getattr(conn, "rollback", None)
            if callable(rollback):
                try:
                    rollback()
                except Exception as exc:  # the driver's error: a lost connection ends the run
                    raise ServerLostError(f"ROLLBACK failed: {exc}") from exc


def _oracle_sql_mode(conn: Connection) -> str | None:
    """Take :data:`~lib.hunt.wrongresult.rowsform.LEFT_OUT_MODES` out of the session's
    sql_mode (its old sql_mode returned, None when it had none of them):

    - PAD_CHAR_TO_FULL_LENGTH: a CHAR value read from a temporary table -- a UNION's, a
      derived table's -- is padded with spaces and the same value read as a VARCHAR is not,
      so a UNION of partitions shows '1971-01-13         ' where the query shows
      '1971-01-13' (documented; hunt or18-sf5, --sql-mode=TRADITIONAL,PAD_CHAR_TO_FULL_LENGTH);
    - NO_ZERO_DATE, NO_ZERO_IN_DATE: a function of a NOT NULL DATE column holding the zero
      date (COALESCE(d), IF(1, d, d)) is NULL to the client yet NOT NULL to the optimizer
      (``IS NULL`` folded to 0, '' stored by a UNION): the known bug zero-date-not-null
      (KW46-ZERO-DATE-NOT-NULL, case zero_date_not_null; EET, ox19a t36, b2b19dd63db1,
      --sql-mode=TRADITIONAL), which every oracle's rewrite meets; TRADITIONAL, which
      @@sql_mode lists beside the flags it stands for, goes too (it would set them again)."""
    got = run_query(conn, "SELECT @@SESSION.sql_mode")
    mode = str(got.rows[0][0]) if not got.failed and got.rows else ""
    modes = mode.split(",")
    if not set(LEFT_OUT_MODES) & set(modes):
        return None
    kept = ",".join(m for m in modes if m not in LEFT_OUT_MODES)
    run_query(conn, f"SET SESSION sql_mode = '{kept}'")
    return mode


class Sessions:
    """max_statement_time set on every connection for the run, restored at its end; the
    tables are flushed first, so they are opened again under the oracle's own session.

    A cached table keeps the expressions of its generated columns as the session that opened
    it fixed them: a load's ``SET SESSION div_precision_increment = 0`` made ``g AS (c / 4)``
    1.000 in the oracle's reads of one cached table and 1.7500 in another's, and a UNION of
    partitions lost rows (hunt or19-sf5 trial 17; the known bug vcol-session-div)."""

    def __init__(self, conns: Sequence[Connection], timeout: float) -> None:
        self.conns = conns
        self.timeout = timeout
        self.saved: list[Any] = []
        self.modes: list[str | None] = []

    def __enter__(self) -> "Sessions":
        for conn in self.conns:
            # a refusal (no RELOAD privilege, a lock held elsewhere) leaves the cache as it is
            run_query(conn, f"SET STATEMENT lock_wait_timeout = {FLUSH_WAIT} FOR FLUSH TABLES")
            self.modes.append(_oracle_sql_mode(conn))
            got = run_query(conn, "SELECT @@SESSION.max_statement_time")
            old = got.rows[0][0] if not got.failed and got.rows else None
            self.saved.append(old)
            if old is not None:
                run_query(conn, f"SET SESSION max_statement_time = {self.timeout:g}")
        return self

    def __exit__(self, *exc: object) -> None:
        for conn, mode in zip(self.conns, self.modes):
            if mode is not None:
                try:
                    run_query(conn, f"SET SESSION sql_mode = '{mode}'")
                except ServerLostError:
                    pass
        for conn, old in zip(self.conns, self.saved):
            if old is not None:
                try:
                    run_query(conn, f"SET SESSION max_statement_time = {float(old):g}")
                except ServerLostError:
                    pass  # nothing to restore on a connection that is gone
