"""Wrong-result oracles over generated SELECTs: NoREC, TLP, differential, DQP, EET, CODDTest,
Pinolo, DQE, Radar, TLP's variants; CERT's performance findings.

A tool package (it works over DB-API connections and randgen's table
metadata; it never imports ``lib/run/``).  The interface the hunt mode uses:

- :class:`WrongResult` (``result``): a finding: oracle, shape, queries,
  results, detail;
- :class:`WrongResultOracle` (``oracle``): the protocol, ``name`` and
  ``run(conns, metadata, seed, budget) -> list[WrongResult]``; each oracle
  also keeps ``stats`` (:class:`OracleStats`) of its last run;
- :func:`wrong_result_oracles` (``registry``): oracles by name (``norec``,
  ``tlp``, ``differential``, ``dqp``, ``eet``, ``coddtest``, ``pinolo``,
  ``dqe``, ``radar``, ``tlp-aggregate``, ``tlp-distinct``, ``tlp-groupby``,
  ``tlp-having``, ``cert``), :class:`UnknownOracleError` for another name.

Modules: ``schema`` (tables and type classes), ``generator`` (FROM clauses,
values, predicates; what it writes, recorded), ``shape`` (a query's shape),
``execute`` (a statement's outcome, error kinds), ``result`` (findings,
rendering, multiset compare), ``oracle`` (the run loop), ``queries`` (whole
SELECTs of every variant), ``rewrite`` (replacing one recorded expression),
``toplevel`` (SQL text cut outside quotes and parentheses),
``copies`` (copies of tables in the oracles' own schema), the oracles
``norec``, ``tlp``, ``differential``, ``dqp`` (``dqpknown``: the known wrong results it
leaves its plans out of, and for which queries), ``eet``, ``coddtest``,
``pinolo``, ``dqe``, ``radar``, ``tlpvariants`` (tlp-aggregate,
tlp-distinct, tlp-groupby, tlp-having) and ``cert`` (performance findings;
``certknown``: the known estimate inconsistency it recognises in the optimizer trace),
``registry``, ``gendata`` (a ``.zz`` file's tables in a schema, for
benchmarks and tests), ``replay`` (a finding's statements judged again by its oracle
after a replay, Radar's raw copies and DQE's copy built again: the reduce predicate, and
its mysqltest form), ``rowsform`` (the other oracles' compared statements, and a
differential finding's query, run unchanged by the mysql client, their sorted rows
compared with each other's or with the correct server's: mysqltest lines), ``checkforms`` (DQE's
and CERT's comparisons as mysqltest lines), ``withinform`` (Pinolo's: one statement's
sorted rows within another's, as mysqltest lines),
``errors``.  See docs/hunting.md, "Wrong-result
oracles" and "The plan and rewrite oracles".
"""
from __future__ import annotations

from .differential import DifferentialOracle
from .errors import OracleSetupError, ServerLostError, UnknownOracleError, WrongResultError
from .norec import NoRECOracle
from .oracle import OracleStats, WrongResultOracle
from .registry import ORACLES, wrong_result_oracles
from .result import WrongResult
from .shape import query_shape
from .tlp import TLPOracle

__all__ = ("WrongResult", "WrongResultOracle", "wrong_result_oracles", "OracleStats",
           "NoRECOracle", "TLPOracle", "DifferentialOracle", "ORACLES", "query_shape",
           "WrongResultError", "UnknownOracleError", "OracleSetupError", "ServerLostError")
