"""The server options every replay starts its servers with, before the reproducer's own.

A corpus's slowest replays mostly wait on a lock, and waits of InnoDB's and the
server's default lengths: ``innodb_lock_wait_timeout`` is 50 s and
``lock_wait_timeout`` (metadata locks) a day -- a prepared XA transaction left by
``XA PREPARE`` under ``pseudo_slave_mode`` keeps its row locks without a
connection, and the reproducer's next statement on one of its rows waits the 50
s out before it fails with error 1205 and the file goes on.  MariaDB's own random
query generator runs its servers with ``--innodb-lock-wait-timeout=5
--lock-wait-timeout=10`` (its configurations' ``--mysqld`` lines) for the same
reason; a replay does too: the same statements fail the same way, sooner.
``innodb-lock-wait-timeout`` is ``loose-`` so a reproducer whose options disable
InnoDB still starts.

Precedence (:func:`lib.servers.options.merge`, later wins): these defaults, then
the reproducer's own options (its ``# mysqld options required for replay`` line),
then ``--mysqld`` (every server's: ``--mysqld=--innodb-lock-wait-timeout=50``
gives back InnoDB's default); a ``SET`` in the reproducer wins over them all, as
on any server.  ``bench/replay_bench.py`` starts its naive ways' servers with the
same options, so both ways run the same statements the same time.
"""
from __future__ import annotations

from typing import Sequence

from ..servers.options import Option, merge, parse_options

SERVER_DEFAULTS = ("--loose-innodb-lock-wait-timeout=5", "--lock-wait-timeout=10")


def default_options() -> list[Option]:
    """The replay's server defaults, parsed."""
    return parse_options(SERVER_DEFAULTS)


def server_options(own: Sequence[Option]) -> list[Option]:
    """A reproducer's server options: the defaults, then its own (an option of the same
    name wins over a default)."""
    return merge(default_options(), list(own))
