"""Radar (raw database construction): the same query over the same rows without metadata.

Song et al., "Detecting Metadata-Related Logic Bugs in Database Systems via
Raw Database Construction" (VLDB 2024): indexes, keys, constraints, NOT NULL,
defaults, generated columns and partitions steer the optimizer but must never
change a result.  The oracle copies every base table the checks use into
a raw table (:meth:`~lib.hunt.wrongresult.copies.Copies.raw`: the same
columns of the same types, character sets and collations, all nullable, no
keys, no defaults, generated columns as plain ones, no partitions; the
original's engine when it takes them) and runs each generated SELECT (every
variant of :func:`~lib.hunt.wrongresult.queries.select_query`) on the
originals and, with every table name replaced, on the raw copies; the rows
must be the same multiset.  A view is read as it is in both queries (over
the originals): a view's column is no stored value -- one that is a literal
keeps the literal's coercibility (``t1.c2 < v.r3`` with ``r3`` = ``X'FF'``
compares in ``c2``'s collation, with a raw copy's ``VARBINARY`` column as
binary), one that is an expression its own type -- so a table of its rows
would answer another question.

What it cannot see: a bug in how the data were stored (the copy reads them
through the same code), in metadata a raw table keeps (types, collations).
The generator's care applies to both queries alike; the copies are made once
per run and dropped at its end.

A finding is judged again after a reduction's replay (``--mode=reduce``,
lib/hunt/wrongresult/replay.py): its second statement names the raw copies
(``kw_oracle.kw_raw4``), so :meth:`RadarOracle.rebuild` reads which original
each copy stood for from the two statements (:func:`raw_names`) and makes the
copies again under those names from the replayed tables, with the run's own
code; the reduced case builds them with the same statements before its
comparison.
"""
from __future__ import annotations

import re
from typing import Sequence

from .copies import SCHEMA, Copies, Copy
from .execute import Connection, Outcome
from .generator import GeneratorOptions, SqlGenerator
from .oracle import Check, OracleBase, Rebuilt, Verdict, same_rows
from .queries import whole_select
from .schema import TableInfo, quote_name

PREFIX = "kw"                          # the copies are kw_raw1, kw_raw2...
RAW_MARK = "/* radar: raw copies */ "  # the second statement of a check
_COPY_RE = re.compile(re.escape(quote_name(SCHEMA)) + r"\.`(" + PREFIX + r"_raw\d+)`")
_NAME_RE = re.compile(r"`((?:[^`]|``)+)`\.`((?:[^`]|``)+)`")


def raw_names(queries: Sequence[str]) -> dict[str, tuple[str, str]]:
    """Each raw copy's name (``kw_raw4``) -> (schema, table) of the original it stands
    for, read from a finding's two statements: the second is the first with every
    original's quoted name replaced by its copy's.  ValueError when they are not so."""
    if len(queries) != 2 or not queries[1].startswith(RAW_MARK):
        raise ValueError("not a Radar check: the query and the same query over raw copies")
    original, raw = queries[0], queries[1][len(RAW_MARK):]
    names: dict[str, tuple[str, str]] = {}
    pieces = _COPY_RE.split(raw)  # text, copy name, text, copy name, ..., text
    at = 0
    for n, piece in enumerate(pieces):
        if n % 2 == 0:
            if not original.startswith(piece, at):
                raise ValueError(f"the raw query is not the query over copies near {piece[:60]!r}")
            at += len(piece)
            continue
        m = _NAME_RE.match(original, at)
        if m is None:
            raise ValueError(f"no table name where the raw query names {piece}")
        table = (m.group(1).replace("``", "`"), m.group(2).replace("``", "`"))
        if names.setdefault(piece, table) != table:
            raise ValueError(f"{piece} stands for two tables")
        at = m.end()
    if at != len(original):
        raise ValueError("the raw query is not the query over copies (its end)")
    return names


class RadarOracle(OracleBase):
    """The Radar oracle (name ``radar``) on the first connection's server."""

    name = "radar"

    def __init__(self, options: GeneratorOptions | None = None,
                 statement_timeout: float = 10.0) -> None:
        super().__init__(options, statement_timeout)
        self.copies: Copies | None = None
        self.raw: dict[str, Copy] = {}

    def default_options(self) -> GeneratorOptions:
        """Both queries fetch every row: joins stay small."""
        return GeneratorOptions(max_join_rows=5_000)

    def prepare(self, conns: Sequence[Connection], tables: list[TableInfo],
                rows: dict[tuple[str, str], int]) -> list[TableInfo]:
        """A raw copy of every base table; the tables without one are left out (views are
        read as they are)."""
        self.copies = Copies(conns[0], PREFIX)
        self.raw = {}
        kept = []
        for table in tables:
            if table.is_view:
                kept.append(table)
                continue
            copy = self.copies.raw(table)
            if copy is not None:
                self.raw[table.sql_name] = copy
                kept.append(table)
        return kept

    def finish(self, conns: Sequence[Connection]) -> None:
        """Drop the raw copies."""
        if self.copies is not None:
            self.copies.drop()

    def rebuild(self, conns: Sequence[Connection], queries: Sequence[str]) -> Rebuilt:
        """The raw copies a finding's statements name, made again under their names from
        the replayed originals (a copy that cannot be made leaves its statement to fail:
        no disagreement); :meth:`finish` drops them."""
        self.copies = Copies(conns[0], PREFIX)
        for copy, (schema, table) in raw_names(queries).items():
            self.copies.raw(TableInfo(schema, table, ()), name=copy)
        return Rebuilt(tuple(self.copies.statements), self.copies.undo)

    def generate(self, gen: SqlGenerator) -> Check | None:
        """Q over the originals and the same Q over their raw copies."""
        query = whole_select(gen)
        if query is None:
            return None
        sql, variant = query
        raw = sql
        for original, copy in self.raw.items():
            raw = raw.replace(original, copy.table.sql_name)
        if raw == sql:
            return None
        return Check((sql, RAW_MARK + raw), variant)

    def judge(self, check: Check, outcomes: list[Outcome]) -> Verdict:
        """Agree when both return the same rows (as multisets)."""
        return same_rows(outcomes, f"Radar ({check.variant})", "over the originals",
                         "over the raw copies")
