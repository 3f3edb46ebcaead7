"""Typed errors of the wrong-result oracles (each a :class:`lib.errors.KewpieError`)."""
from __future__ import annotations

from ...errors import KewpieError, UsageError


class WrongResultError(KewpieError):
    """Base class of the wrong-result oracles' errors."""


class UnknownOracleError(WrongResultError, UsageError):
    """An oracle name the registry does not know: name one of those it lists."""


class OracleSetupError(WrongResultError):
    """An oracle cannot run as asked (e.g. the differential oracle given one connection)."""


class ServerLostError(WrongResultError):
    """The connection to a server was lost while an oracle ran (the server may have crashed)."""
