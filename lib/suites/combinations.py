"""A suite's combinations: each test runs once per named set of extra server options.

``suite_config.py`` may declare::

    combinations = {
        'row':       {'options': ['--binlog-format=ROW']},
        'statement': {'options': ['--binlog-format=STATEMENT']},
    }

Each value is a dict with ``options`` (added to every server, after the
suite's and the test's own), ``server_options`` (one list per server, added
after those) and/or ``wsrep_sst_method`` (a Galera suite's state transfer
method, i.e. ``--wsrep-sst-method=...`` on every node).  A test then runs
once per combination, named ``suite.test 'row'`` in rows, JUnit and
``--list``; ``--combination NAME`` picks some.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..errors import SuiteError
from ..servers.options import Option, merge, parse_options, reject_owned

NAME_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.+-]*$")
KEYS = ("options", "server_options", "wsrep_sst_method")


@dataclass(frozen=True)
class Combination:
    """One named combination: options for every server, then per server."""

    name: str
    options: tuple[Option, ...] = ()
    server_options: tuple[tuple[Option, ...], ...] = ()

    def apply(self, servers: list[list[Option]]) -> list[list[Option]]:
        """The servers' option lists with this combination's options merged in last."""
        out = []
        for index, opts in enumerate(servers):
            extra = self.server_options[index] if index < len(self.server_options) else ()
            out.append(merge(list(opts), list(self.options), list(extra)))
        return out


def _options(value: Any, where: str) -> tuple[Option, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise SuiteError(f"{where} must be a list of option strings such as ['--binlog-format=ROW']")
    try:
        opts = parse_options(list(value))
    except SuiteError as exc:
        raise SuiteError(f"{where}: {exc}") from None
    reject_owned(opts, where)
    return tuple(opts)


def parse_combinations(value: Any, server_count: int, where: str) -> tuple[Combination, ...]:
    """Validate a suite's ``combinations`` dict (SuiteError naming the file otherwise)."""
    if value is None or value == {}:
        return ()
    if not isinstance(value, dict):
        raise SuiteError(f"{where}: combinations must be a dict such as "
                         f"{{'row': {{'options': ['--binlog-format=ROW']}}}}")
    result = []
    for name, spec in value.items():
        if not isinstance(name, str) or not NAME_RE.match(name):
            raise SuiteError(f"{where}: combination name {name!r} must be a word "
                             f"(letters, digits, _ . + -)")
        here = f"{where}: combinations[{name!r}]"
        if not isinstance(spec, dict) or not spec or set(spec) - set(KEYS):
            raise SuiteError(f"{here} must be a dict with some of {', '.join(KEYS)}")
        options = _options(spec.get("options", []), f"{here}['options']")
        if "wsrep_sst_method" in spec:
            method = spec["wsrep_sst_method"]
            if not isinstance(method, str) or not NAME_RE.match(method):
                raise SuiteError(f"{here}['wsrep_sst_method'] must be a method name such as 'rsync'")
            options += tuple(parse_options([f"--wsrep-sst-method={method}"]))
        per_server = spec.get("server_options", [])
        if not isinstance(per_server, (list, tuple)) or len(per_server) > server_count:
            raise SuiteError(f"{here}['server_options'] must be a list of at most "
                             f"{server_count} option lists (one per server)")
        servers = tuple(_options(item, f"{here}['server_options'][{i}]")
                        for i, item in enumerate(per_server))
        result.append(Combination(name, options, servers))
    return tuple(result)
