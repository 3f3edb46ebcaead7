"""A sweep's matrix: the dimensions a sweep varies besides the thread count, and their
cells (every combination).

A sweep file's ``"matrix"`` is an object of dimensions, each a list of values:

- ``engine``: storage engines (``"InnoDB"``, ``"RocksDB"``, ``"Aria"``...): each
  gets its own data set, created with that engine;
- ``tables``: table counts (multi-table against single-table), each its own
  data set (with the sweep's ``total_rows``, the rows are spread over the tables);
- ``reconnect``: 0 keeps each client's connection for the whole run; N opens a
  new one every N transactions (sysbench/reconnect.lua);
- ``nodes``: how many of the sweep's servers (replicas or Galera nodes) the
  clients are spread over (sysbench's ``--mysql-host``/``--mysql-port`` lists);
- ``variables``: server variables, either ``{"name": [values], ...}`` (every
  combination) or a list of settings ``[{"name": value, ...}, ...]`` (several
  variables at once).

Dimensions with several values name the cells (``engine=RocksDB reconnect=1``);
one with a single value is a constant of the sweep.
"""
from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from ..errors import UsageError

DIMENSIONS = ("engine", "tables", "reconnect", "nodes", "variables")
NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
VARIABLE_RE = re.compile(r"^[a-z][a-z0-9_]*$")
INT_RULES = MappingProxyType({"tables": 1, "reconnect": 0, "nodes": 1})  # dimension -> minimum


@dataclass(frozen=True)
class Cell:
    """One combination of the matrix's dimensions (None: the dimension is not varied)."""

    engine: str | None = None
    tables: int | None = None
    reconnect: int = 0
    nodes: int | None = None
    variables: tuple[tuple[str, Any], ...] = ()

    def label(self, varied: tuple[str, ...]) -> str:
        """The cell's name over the varied dimensions ('' when nothing varies)."""
        parts: list[str] = []
        for dim in varied:
            if dim == "variables":
                parts += [f"{name}={value}" for name, value in self.variables]
            else:
                parts.append(f"{dim}={getattr(self, dim)}")
        return " ".join(parts)

    @property
    def data_key(self) -> tuple[str | None, int | None]:
        """What makes a data set of its own: the engine and the table count."""
        return (self.engine, self.tables)

    @property
    def run_key(self) -> tuple[str | None, int | None, int, int | None]:
        """What a run changes without touching the servers' settings."""
        return (self.engine, self.tables, self.reconnect, self.nodes)


def _int_list(dim: str, values: list[Any]) -> list[int]:
    least = INT_RULES[dim]
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= least for v in values):
        raise UsageError(f"sweep 'matrix' {dim!r} must be a list of integers >= {least}, "
                         f"not {values!r}")
    return list(values)


def _variable_points(raw: Any) -> list[tuple[tuple[str, Any], ...]]:
    """The variables dimension's settings, each a tuple of (name, value)."""
    def check_name(name: Any) -> str:
        """A variable name as given, or UsageError."""
        if not isinstance(name, str) or not VARIABLE_RE.match(name):
            raise UsageError(f"sweep 'matrix' variables: {name!r} is not a server variable name")
        return name

    def check_value(name: str, value: Any) -> Any:
        """A value as given (a string or a number), or UsageError."""
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            raise UsageError(f"sweep 'matrix' variables: {name}={value!r} must be a string "
                             "or a number")
        return value

    if isinstance(raw, dict) and raw:
        names = [check_name(n) for n in raw]
        lists = []
        for name in names:
            values = raw[name]
            if not isinstance(values, list) or not values:
                raise UsageError(f"sweep 'matrix' variables: {name} needs a non-empty list "
                                 "of values")
            lists.append([check_value(name, v) for v in values])
        return [tuple(zip(names, combo)) for combo in itertools.product(*lists)]
    if isinstance(raw, list) and raw and all(isinstance(p, dict) and p for p in raw):
        return [tuple((check_name(n), check_value(n, v)) for n, v in point.items())
                for point in raw]
    raise UsageError("sweep 'matrix' variables must be {\"name\": [values], ...} or a list of "
                     "settings [{\"name\": value, ...}, ...]")


@dataclass(frozen=True)
class Matrix:
    """The parsed matrix: its cells, in run order, and which dimensions vary."""

    cells: tuple[Cell, ...]
    varied: tuple[str, ...]
    given: tuple[str, ...]

    @classmethod
    def parse(cls, raw: Any) -> "Matrix":
        """Check and expand a sweep file's matrix (None or {}: one plain cell)."""
        if raw is None:
            return cls((Cell(),), (), ())
        if not isinstance(raw, dict):
            raise UsageError("sweep 'matrix' must be an object of dimensions, e.g. "
                             "{\"engine\": [\"InnoDB\", \"RocksDB\"], \"reconnect\": [0, 1]}")
        unknown = sorted(set(raw) - set(DIMENSIONS))
        if unknown:
            raise UsageError(f"sweep 'matrix': unknown dimension(s) {', '.join(unknown)}; "
                             f"known: {', '.join(DIMENSIONS)}")
        axes: dict[str, list[Any]] = {}
        for dim in DIMENSIONS:
            if dim not in raw:
                continue
            values = raw[dim]
            if dim == "variables":
                axes[dim] = _variable_points(values)
                continue
            if not isinstance(values, list) or not values:
                raise UsageError(f"sweep 'matrix' {dim!r} must be a non-empty list")
            if dim == "engine":
                if not all(isinstance(v, str) and NAME_RE.match(v) for v in values):
                    raise UsageError(f"sweep 'matrix' engine must be a list of engine names, "
                                     f"not {values!r}")
                axes[dim] = list(values)
            else:
                axes[dim] = _int_list(dim, values)
            if len(set(map(str, axes[dim]))) != len(axes[dim]):
                raise UsageError(f"sweep 'matrix' {dim!r} lists a value twice: {values!r}")
        dims = list(axes)
        cells = []
        for combo in itertools.product(*(axes[d] for d in dims)):
            fields = dict(zip(dims, combo))
            cells.append(Cell(engine=fields.get("engine"), tables=fields.get("tables"),
                              reconnect=fields.get("reconnect", 0), nodes=fields.get("nodes"),
                              variables=fields.get("variables", ())))
        varied = tuple(d for d in dims if len(axes[d]) > 1)
        return cls(tuple(cells), varied, tuple(dims))

    def values_of(self, dim: str) -> list[Any]:
        """The distinct values of one dimension, in order."""
        seen: list[Any] = []
        for cell in self.cells:
            value = getattr(cell, dim)
            if value not in seen:
                seen.append(value)
        return seen

    @property
    def variable_points(self) -> list[tuple[tuple[str, Any], ...]]:
        """The distinct settings of the variables dimension ([()] when not given)."""
        return self.values_of("variables")
