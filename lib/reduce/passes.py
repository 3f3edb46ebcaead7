"""The reduction's passes, in the order they run (docs/hunting.md, "Reducing a finding").

Each pass takes the current statements and a ``fails`` test and returns fewer
(or simpler) statements that still fail; the pure helpers below are what the
passes cut with (unit-tested alone).

1. ``truncate``: statements sent after the failing one are dropped (a crash's
   in-flight statement, a wrong result's differing query) -- no test needed;
   ``related``: the failing statements and the statements that mention one of
   their names (tables, functions, columns), when that still fails: one
   candidate that cuts a long random trace at once;
2. ``one-connection``: every statement on one connection, in send order (as
   reducer.sh's single-threaded replay); kept when it still fails.  Tried first:
   the trace *serialized* (:func:`serialize`: on the failing statement's
   connection, without the other connections' session settings, without
   transaction control and lock statements, without sleeps, prepared statements
   renamed per connection), then all statements as they are on one connection;
3. ``connections``: ddmin over the connections (a connection's statements go
   or stay together);
   ``verbs``: ddmin over the statements' kinds (every SELECT, every UPDATE...);
4. ``shapes``: ddmin over statement shapes (every statement of one
   fingerprint goes or stays together): a long random load is mostly a few
   shapes repeated;
5. ``statements``: ddmin over single statements (1-minimal: dropping any one
   statement left makes the failure go);
   the ddmin passes (3 to 5) keep the failing statements in every candidate
   (:func:`with_pinned`): a candidate without the crashing statement cannot
   crash, and need not be replayed;
6. ``rows``: ddmin over the rows of each multi-row INSERT;
   ``merge``: INSERTs into one table joined into one multi-row INSERT, when that
   still fails (fewer statements for the report): across statements that do not
   name the table, else consecutive ones only;
7. ``clauses``: each statement's ``WHERE``, ``ORDER BY``, ``LIMIT`` and
   ``GROUP BY`` clause dropped when the failure stays;
8. ``literals``: each string literal tried as ``''``, each number as ``0`` or
   ``1``;
9. ``options`` (on the servers, in :mod:`.reducer`): ddmin over the server
   options.
"""
from __future__ import annotations

import re
from dataclasses import replace
from typing import Callable, Sequence

from ..hunt.signature import fingerprint
from ..hunt.wrongresult.toplevel import closing_parenthesis
from .case import Statement
from .ddmin import ddmin, ddmin_groups, first_failing, mapped

Fails = Callable[[Sequence[Statement]], bool]


def truncate(statements: Sequence[Statement], failing: Sequence[Statement]) -> list[Statement]:
    """The statements up to the last failing one (all of them when none is known)."""
    if not failing:
        return list(statements)
    last = max(s.seq for s in failing)
    return [s for s in statements if s.seq <= last]


# words of SQL that name nothing: left out of a statement's names
_SQL_WORDS = frozenset("""
select from where and or not null is in exists if insert into values value update set delete
create drop alter table function returns integer int bigint varchar char text soname
aggregate real decimal string count sum min max avg limit order by group having as on join
left right inner outer cross distinct all primary key unique index auto_increment default
asc desc union like between case when then else end true false replace ignore with
database schema view procedure trigger begin commit rollback start transaction lock
unlock tables read write straight_join using natural engine innodb myisam memory aria
""".split())
_NAME_RE = re.compile(r"`([^`]+)`|\b([A-Za-z_][\w$]*)\b")


def names(sql: str) -> set[str]:
    """The names a statement mentions (tables, columns, functions...): its words that are
    not SQL's own, lower case; strings and comments left out."""
    text = re.sub(r"'(?:[^'\\]|\\.|'')*'|/\*.*?\*/", " ", sql, flags=re.S)
    found = set()
    for m in _NAME_RE.finditer(text):
        word = (m.group(1) or m.group(2)).lower()
        if word not in _SQL_WORDS:
            found.add(word)
    return found


_BUILTINS = frozenset("""
concat concat_ws rand ifnull coalesce substr substring length abs round floor ceil now md5
sha1 cast convert upper lower trim greatest least date time year month day sleep char_length
group_concat json_extract nullif hex unhex
""".split())
_OBJECT_RE = re.compile(r"\b(?:from|into|update|table|join|function|view|procedure|exists)\s+"
                        r"(?:if\s+(?:not\s+)?exists\s+)?`?(\w+)`?|`?(\w+)`?\s*\(", re.I)


def objects(sql: str) -> set[str]:
    """The tables and functions a statement names (after FROM, INTO, UPDATE, TABLE,
    JOIN..., or called), lower case; SQL's own words and built-in functions left out."""
    text = re.sub(r"'(?:[^'\\]|\\.|'')*'|/\*.*?\*/", " ", sql, flags=re.S)
    found = set()
    for m in _OBJECT_RE.finditer(text):
        word = (m.group(1) or m.group(2)).lower()
        if word not in _SQL_WORDS and word not in _BUILTINS:
            found.add(word)
    return found


def related(statements: Sequence[Statement], failing: Sequence[Statement]) -> list[Statement]:
    """The failing statements and every statement that names one of their tables or
    functions (the statements they most likely need): one candidate that cuts a long
    trace at once."""
    wanted = set().union(*(objects(s.sql) for s in failing)) if failing else set()
    seqs = {s.seq for s in failing}
    return [s for s in statements if s.seq in seqs or objects(s.sql) & wanted]


def one_connection(statements: Sequence[Statement]) -> list[Statement]:
    """Every statement on the first statement's connection, in send order."""
    if not statements:
        return []
    conn = statements[0].conn
    return [replace(s, conn=conn) for s in statements]


_TRANSACTION_RE = re.compile(
    r"\s*(?:BEGIN\b|START\s+TRANSACTION\b|COMMIT\b|ROLLBACK\b|SAVEPOINT\b|RELEASE\s+SAVEPOINT\b"
    r"|XA\b|LOCK\s+TABLES?\b|UNLOCK\s+TABLES?\b|FLUSH\s+TABLES?\b[^;]*\bWITH\s+READ\s+LOCK\b"
    r"|SET\s+(?:SESSION\s+|LOCAL\s+|@@SESSION\.|@@LOCAL\.|@@)?(?:TRANSACTION\b|tx_isolation\b"
    r"|transaction_isolation\b|tx_read_only\b|transaction_read_only\b|autocommit\b|completion_type\b))",
    re.I)
_SESSION_SET_RE = re.compile(r"\s*SET\s+(?!GLOBAL\b|@@GLOBAL\.|STATEMENT\b|PASSWORD\b|ROLE\b"
                             r"|DEFAULT\s+ROLE\b|@(?!@))", re.I)
_SLEEP_RE = re.compile(r"\bSLEEP\s*\(", re.I)
_PREPARED_RE = re.compile(r"^(\s*(?:PREPARE|(?:DEALLOCATE|DROP)\s+PREPARE|EXECUTE)\s+)"
                          r"(?!IMMEDIATE\b)(`[^`]+`|\w+)", re.I)


def transaction_control(sql: str) -> bool:
    """Does the statement begin or end a transaction, or take or free a lock held past
    it (BEGIN, COMMIT, ROLLBACK, SAVEPOINT, XA, LOCK/UNLOCK TABLES, FLUSH TABLES WITH
    READ LOCK, SET autocommit / TRANSACTION / the isolation level)?"""
    return bool(_TRANSACTION_RE.match(sql))


def session_setting(sql: str) -> bool:
    """Is the statement a SET of session state (a session variable, NAMES, CHARACTER
    SET) -- not a SET GLOBAL, SET STATEMENT ... FOR, SET PASSWORD/ROLE or a user
    variable?"""
    return bool(_SESSION_SET_RE.match(sql))


def renamed_prepared(sql: str, conn: int) -> str:
    """A PREPARE / EXECUTE / DEALLOCATE PREPARE of connection conn with its statement
    name made that connection's own (``name_c<conn>``), so that connections that used
    one name keep apart on one connection; any other statement as it is."""
    def rename(m: re.Match[str]) -> str:
        """The name with the connection's suffix (inside its backquotes)."""
        name = m.group(2)
        if name.startswith("`"):
            return f"{m.group(1)}`{name[1:-1]}_c{conn}`"
        return f"{m.group(1)}{name}_c{conn}"
    return _PREPARED_RE.sub(rename, sql, count=1)


def serialize(statements: Sequence[Statement], failing: Sequence[Statement]
              ) -> list[Statement]:
    """The statements on one connection -- the (last) failing statement's, else the
    first statement's -- in send order, as a serial replay needs them: without
    transaction control and locks (every statement commits at once, none waits on
    another), without the other connections' session settings (the failing
    connection's session is the one the failure saw), without sleeps; the other
    connections' prepared statements renamed (:func:`renamed_prepared`).  The
    failing statements are always kept."""
    if not statements:
        return []
    target = failing[-1].conn if failing else statements[0].conn
    keep = {s.seq for s in failing}
    out = []
    for s in statements:
        if s.seq not in keep:
            if transaction_control(s.sql) or _SLEEP_RE.search(s.sql):
                continue
            if s.conn != target and session_setting(s.sql):
                continue
        sql = s.sql if s.conn == target else renamed_prepared(s.sql, s.conn)
        out.append(replace(s, conn=target, sql=sql))
    return out


def with_pinned(statements: Sequence[Statement], pinned: set[int],
                run: Callable[[Sequence[Statement], Fails], list[Statement]],
                fails: Fails) -> list[Statement]:
    """A reduction ``run(items, test)`` over the statements that are not pinned (seqs),
    every candidate tested with the pinned statements put back in their places: the
    failing statements stay in every candidate (none is replayed without them)."""
    kept = [s for s in statements if s.seq in pinned]
    others = [s for s in statements if s.seq not in pinned]
    if not kept or not others:
        return run(statements, fails) if not kept else list(statements)
    order = {s.seq: n for n, s in enumerate(statements)}

    def joined(candidate: Sequence[Statement]) -> list[Statement]:
        """The candidate with the pinned statements, in the statements' order."""
        return sorted([*candidate, *kept], key=lambda s: order.get(s.seq, -1))

    return joined(run(others, mapped(fails, joined)))


def by_connections(statements: Sequence[Statement], fails: Fails) -> list[Statement]:
    """ddmin over the connections."""
    return ddmin_groups(statements, lambda s: s.conn, fails)


def verb(sql: str) -> str:
    """A statement's first keyword (SELECT, INSERT...), upper case."""
    m = re.match(r"\s*(?:/\*.*?\*/\s*)*(\w+)", sql, re.S)
    return m.group(1).upper() if m else ""


def by_verbs(statements: Sequence[Statement], fails: Fails) -> list[Statement]:
    """ddmin over the statements' kinds (every SELECT, every UPDATE...): the coarsest cut."""
    return ddmin_groups(statements, lambda s: verb(s.sql), fails)


def merged_inserts(statements: Sequence[Statement], across: bool = False) -> list[Statement]:
    """Single-statement INSERTs of one connection with the same head (table and columns)
    and no tail joined into one multi-row INSERT: consecutive ones, or (across) also one
    whose statements between do not name its table (a CREATE FUNCTION between the rows
    of a table's two INSERTs: the later rows move up into the earlier INSERT)."""
    out: list[Statement] = []
    for stmt in statements:
        split = insert_rows(stmt.sql)
        if split is not None and not split[2].strip():
            target = _merge_target(out, stmt, split[0], across)
            if target is not None:
                before = insert_rows(out[target].sql)
                assert before is not None
                out[target] = replace(out[target],
                                      sql=join_insert(before[0], before[1] + split[1], ""))
                continue
        out.append(stmt)
    return out


def _merge_target(out: Sequence[Statement], stmt: Statement, head: str,
                  across: bool) -> int | None:
    """The index in out of the INSERT stmt's rows join: the last statement when it is an
    INSERT of the same head and connection without a tail; with across, the latest such
    INSERT with nothing after it that names its table."""
    table = _insert_table(head)
    for index in range(len(out) - 1, -1, -1):
        before = insert_rows(out[index].sql)
        if before is not None and not before[2].strip() and before[0] == head \
                and out[index].conn == stmt.conn:
            return index
        if not across or table is None or \
                re.search(rf"(?<![\w$]){re.escape(table)}(?![\w$])", out[index].sql, re.I):
            return None
    return None


def _insert_table(head: str) -> str | None:
    """The table an INSERT/REPLACE head writes (its last name part, unquoted), or None."""
    m = re.match(r"\s*(?:INSERT|REPLACE)\s+(?:(?:LOW_PRIORITY|DELAYED|HIGH_PRIORITY|IGNORE)"
                 r"\s+)*(?:INTO\s+)?([`\w$.]+)", head, re.I)
    if not m:
        return None
    return m.group(1).split(".")[-1].strip("`") or None


def by_merging(statements: Sequence[Statement], fails: Fails) -> list[Statement]:
    """The INSERTs merged (:func:`merged_inserts`) when that still fails: across the
    statements that do not name their table first, consecutive ones only when that fails."""
    near = merged_inserts(statements)
    wide = merged_inserts(statements, across=True)
    if len(wide) < len(near) and fails(wide):
        return wide
    return near if len(near) < len(statements) and fails(near) else list(statements)


def by_shapes(statements: Sequence[Statement], fails: Fails) -> list[Statement]:
    """ddmin over the statements' shapes (fingerprints)."""
    return ddmin_groups(statements, lambda s: fingerprint(s.sql), fails)


def by_statements(statements: Sequence[Statement], fails: Fails,
                  on_smaller: Callable[[Sequence[Statement]], None] | None = None
                  ) -> list[Statement]:
    """ddmin over single statements."""
    return ddmin(statements, fails, on_smaller)


_VALUES_RE = re.compile(r"\bVALUES\s*", re.I)


def _tuples(text: str) -> tuple[list[str], str] | None:
    """The parenthesised tuples at the start of text (split at top level, quotes
    respected) and what follows them; None when text does not start with one."""
    rows: list[str] = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i].isspace():
            i += 1
        if i >= n or text[i] != "(":
            return None if not rows else (rows, text[i:])
        close = closing_parenthesis(text[i + 1:])
        if close < 0:
            return None
        j = i + 1 + close
        rows.append(text[i:j + 1])
        i = j + 1
        while i < n and text[i].isspace():
            i += 1
        if i < n and text[i] == ",":
            i += 1
            continue
        return rows, text[i:]


def insert_rows(sql: str) -> tuple[str, list[str], str] | None:
    """A multi-row INSERT/REPLACE split: (head up to VALUES, the row tuples, the tail);
    None for anything else."""
    if not re.match(r"\s*(INSERT|REPLACE)\b", sql, re.I):
        return None
    m = _VALUES_RE.search(sql)
    if not m:
        return None
    parsed = _tuples(sql[m.end():])
    if parsed is None:
        return None
    rows, tail = parsed
    return sql[:m.end()], rows, tail


def join_insert(head: str, rows: Sequence[str], tail: str) -> str:
    """The INSERT back together with the rows given."""
    return head + ", ".join(rows) + (" " + tail if tail.strip() else "")


def by_rows(statements: Sequence[Statement], fails: Fails) -> list[Statement]:
    """ddmin over each multi-row INSERT's rows."""
    current = list(statements)
    for index in range(len(current)):
        split = insert_rows(current[index].sql)
        if split is None or len(split[1]) < 2:
            continue
        head, rows, tail = split

        def with_rows(kept: Sequence[str], at: int = index, h: str = head,
                      t: str = tail) -> list[Statement]:
            """The statements with this INSERT's rows cut to kept."""
            return current[:at] + [replace(current[at], sql=join_insert(h, kept, t))] + \
                current[at + 1:]

        kept = ddmin(rows, mapped(fails, with_rows))
        current = with_rows(kept)
    return current


_CLAUSE_RE = re.compile(r"\s+(WHERE|ORDER\s+BY|GROUP\s+BY|LIMIT)\b", re.I)


def clause_cuts(sql: str) -> list[str]:
    """The statement with one trailing clause cut off (WHERE ..., ORDER BY ..., GROUP
    BY ..., LIMIT ...), outermost last clause first; only for statements without
    parentheses after the clause (no subquery is cut in half)."""
    out = []
    for m in reversed(list(_CLAUSE_RE.finditer(sql))):
        rest = sql[m.end():]
        if "(" in rest or ")" in rest or "'" in rest:
            continue
        out.append(sql[:m.start()])
    return out


_LITERAL_RE = re.compile(r"'(?:[^'\\]|\\.|'')+'|(?<![\w.])\d{2,}(?:\.\d+)?(?![\w.])")


def literal_cuts(sql: str) -> list[str]:
    """The statement with one literal made simpler: a string as '', a number as 1."""
    out = []
    for m in _LITERAL_RE.finditer(sql):
        simple = "''" if m.group().startswith("'") else "1"
        out.append(sql[:m.start()] + simple + sql[m.end():])
    return out


def by_edits(statements: Sequence[Statement], fails: Fails,
             cuts: Callable[[str], list[str]]) -> list[Statement]:
    """Each statement replaced by the first of its cuts that still fails (repeated while
    one does)."""
    current = list(statements)
    for index in range(len(current)):
        changed = True
        while changed:
            candidates = [current[:index] + [replace(current[index], sql=sql)] +
                          current[index + 1:] for sql in cuts(current[index].sql)]
            hit = first_failing(fails, candidates)
            changed = hit is not None
            if hit is not None:
                current = candidates[hit]
    return current
