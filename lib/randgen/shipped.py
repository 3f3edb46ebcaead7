"""The grammars kewpie ships under ``randgen/conf/kewpie/``, and what each one expects.

Each entry gives the grammar and gendata paths (relative to the randgen
folder) and the MySQL error codes its statements may return; the suites
``randgen_basic``, ``replication_randgen`` and ``cluster_randgen`` and the
benchmarks use them.
"""
from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping


@dataclass(frozen=True)
class ShippedGrammar:
    """A grammar of the project, its gendata, and its expected statement errors."""

    name: str
    grammar: str
    gendata: str
    expected_errors: frozenset[int]
    description: str


def _entry(name: str, errors: set[int], description: str) -> ShippedGrammar:
    return ShippedGrammar(name, f"conf/kewpie/{name}.yy", f"conf/kewpie/{name}.zz",
                          frozenset(errors), description)


SHIPPED: Mapping[str, ShippedGrammar] = MappingProxyType({
    # 1467 is InnoDB's answer when waiting for a table's AUTO-INC lock ends in a deadlock
    # or lock wait timeout (INSERT IGNORE ... VALUES (0, ...) under concurrent inserts):
    # the same class as 1213/1205, seen in about 1 of 3 runs on warm (reused) servers.
    "transactions": _entry("transactions", {1213, 1205, 1305, 1062, 1467},
                           "transactions with DML, savepoints, COMMIT/ROLLBACK on four tables"),
    "zero_sum": _entry("zero_sum", {1213, 1205, 1305},
                       "zero-sum transfers between accounts: the total stays 40000"),
    "ddl_dml": _entry("ddl_dml", {1020, 1050, 1051, 1054, 1060, 1061, 1062, 1091, 1136, 1146,
                                  1205, 1213, 1288, 1356, 1412, 1467, 1471},
                      "DDL (create/alter/rename/drop tables and views) mixed with DML"),
    # the same load without ==FACTOR:N== weights: the Perl randgen reads it the same way
    "transactions_plain": ShippedGrammar(
        "transactions_plain", "conf/kewpie/transactions_plain.yy", "conf/kewpie/transactions.zz",
        frozenset({1213, 1205, 1305, 1062, 1467}),
        "transactions without ==FACTOR== weights (like for like with the Perl randgen)"),
})
ZERO_SUM_TOTAL = 40000
ZERO_SUM_TOTAL_SQL = ("SELECT (SELECT SUM(balance) FROM accounts_a) + "
                      "(SELECT SUM(balance) FROM accounts_b)")
