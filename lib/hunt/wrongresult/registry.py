"""Oracles by name: :func:`wrong_result_oracles`."""
from __future__ import annotations

from types import MappingProxyType
from typing import Callable, Mapping, Sequence

from .cert import CERTOracle
from .coddtest import CODDTestOracle
from .differential import DifferentialOracle
from .dqe import DQEOracle
from .dqp import DQPOracle
from .eet import EETOracle
from .errors import UnknownOracleError
from .norec import NoRECOracle
from .pinolo import PinoloOracle
from .radar import RadarOracle
from .oracle import OracleBase, WrongResultOracle
from .tlp import TLPOracle
from .tlpvariants import (TLPAggregateOracle, TLPDistinctOracle, TLPGroupByOracle,
                          TLPHavingOracle)

ORACLES: Mapping[str, Callable[[], OracleBase]] = MappingProxyType({
    "norec": NoRECOracle, "tlp": TLPOracle, "differential": DifferentialOracle,
    "dqp": DQPOracle, "eet": EETOracle, "coddtest": CODDTestOracle,
    "pinolo": PinoloOracle, "dqe": DQEOracle, "radar": RadarOracle,
    "tlp-aggregate": TLPAggregateOracle, "tlp-distinct": TLPDistinctOracle,
    "tlp-groupby": TLPGroupByOracle, "tlp-having": TLPHavingOracle,
    "cert": CERTOracle,  # a finding of kind performance, never a wrong result
})


def wrong_result_oracles(names: Sequence[str]) -> list[WrongResultOracle]:
    """New oracles for these names (case-insensitive, duplicates once, in order).

    Each is an :class:`~lib.hunt.wrongresult.oracle.OracleBase` too, with the
    ``stats`` of its last run.  Raises UnknownOracleError (a UsageError: exit status 2) for a name that is
    not one of :data:`ORACLES`.
    """
    oracles: list[WrongResultOracle] = []
    seen: set[str] = set()
    for raw in names:
        name = raw.strip().lower()
        if name not in ORACLES:
            raise UnknownOracleError(f"unknown wrong-result oracle {raw!r}: use "
                                     f"{', '.join(ORACLES)}")
        if name not in seen:
            seen.add(name)
            oracles.append(ORACLES[name]())
    return oracles
