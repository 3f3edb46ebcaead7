"""The replay's server defaults: shorter lock waits than InnoDB's 50 s and the server's day
(as MariaDB's random query generator runs its servers), ``loose-`` where a reproducer may
disable the engine, a reproducer's own option of the same name winning over them and
``--mysqld`` over both, in the server's my.cnf.

Covers: lib/replay/defaults.py, lib/replay/execute.py (ReplayBot._start's options)
"""
from __future__ import annotations

from lib.replay.defaults import default_options, server_options
from lib.servers.codetree import CodeTree, ServerVersion
from lib.platform.ports import PortLease
from lib.servers.options import Option, parse_options
from lib.servers.server import Server, ServerSettings

MARIADB = ServerVersion("10.11.19", "-MariaDB", "debian-linux-gnu", "x86_64", "Debian 12")


def _values(options: list[Option]) -> dict[str, tuple[str | None, bool]]:
    return {o.name: (o.value, o.loose) for o in options}


def _server(tmp_path, own, mysqld=()):
    """A server as a replay makes one: the defaults and the reproducer's options as its
    own, --mysqld as the run's final options."""
    tree = CodeTree(basedir="/usr", tools={"server": "/usr/sbin/mariadbd"}, version=MARIADB)
    lease = PortLease(first=47500, size=4, lock_path=str(tmp_path / "l.lock"), fd=-1)
    settings = ServerSettings(user="mysql", env={}, die_with_parent=True,
                              final_options=parse_options(list(mysqld)))
    return Server("s0", 0, tree, str(tmp_path / "var_s0"), lease,
                  server_options(parse_options(list(own))), settings)


def test_the_defaults_are_short_lock_waits_innodb_ones_loose():
    assert _values(default_options()) == {"innodb-lock-wait-timeout": ("5", True),
                                          "lock-wait-timeout": ("10", False)}
    # a reproducer without options still gets them
    assert _values(server_options(())) == _values(default_options())


def test_a_reproducers_own_option_wins_and_the_rest_are_kept():
    own = parse_options(["--innodb_lock_wait_timeout=50", "--log-bin", "--sql-mode="])
    merged = _values(server_options(own))
    assert merged["innodb-lock-wait-timeout"] == ("50", False)
    assert merged["lock-wait-timeout"] == ("10", False)
    assert merged["log-bin"] == (None, False) and merged["sql-mode"] == ("", False)
    # a disabled InnoDB: the default is loose, so the server still starts
    assert _values(server_options(parse_options(["--disable-innodb"])))[
        "innodb-lock-wait-timeout"] == ("5", True)


def test_the_servers_cnf_has_them_and_mysqld_wins(tmp_path):
    effective = _values(_server(tmp_path, ["--lock-wait-timeout=3"]).effective_options())
    assert effective["innodb-lock-wait-timeout"] == ("5", True)
    assert effective["lock-wait-timeout"] == ("3", False)        # the reproducer's
    again = _values(_server(tmp_path, ["--lock-wait-timeout=3"],
                            ["--innodb-lock-wait-timeout=50", "--lock-wait-timeout=86400"])
                    .effective_options())
    assert again["innodb-lock-wait-timeout"] == ("50", False)    # --mysqld's, last
    assert again["lock-wait-timeout"] == ("86400", False)

