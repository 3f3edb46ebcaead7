"""The one my.cnf model: rule tables (as mtr's My/ConfigFactory.pm) serving native servers
and mysql-test configs -- a rule's value, its condition and its spelling; ConfigFactory's
"only if not already defined" (exact spelling) and kewpie's replace rules for leased
ports; kewpie's tables for a native server, a Galera node and an mtr server (whose
config's options win); and mtr's own rule tables in ConfigFactory's order.

Covers: lib/servers/cnf.py, lib/servers/cnf_rules.py, lib/servers/galera.py (GALERA_RULES,
SST_RULES), lib/mtr/config.py (MYSQLD_RULES, CLIENT_RULES, UPGRADE_RULES), lib/mtr/cnf.py,
lib/mtr/server.py (MtrServer.effective_options)
"""
from __future__ import annotations

import os
import re

import pytest

from lib.mtr.config import MYSQLD_RULES, build_config
from lib.mtr.server import MtrServer
from lib.mtr.vardir import MtrVardir, ServerSlot
from lib.platform.netns import NetHost
from lib.platform.ports import PortLease
from lib.servers.cnf import CnfGroup, Rule, apply_rules, render_cnf, run_rules
from lib.servers.cnf_rules import CLIENT_RULES, SERVER_RULES
from lib.servers.codetree import CodeTree, ServerVersion
from lib.servers.galera import GaleraServer
from lib.servers.options import Option, parse_options
from lib.servers.server import Server, ServerSettings

CONFIG_FACTORY = "/usr/share/mysql/mysql-test/lib/My/ConfigFactory.pm"
MARIADB = ServerVersion("10.11.19", "-MariaDB", "debian-linux-gnu", "x86_64", "Debian 12")
MYSQL = ServerVersion("8.0.36", "", "Linux", "x86_64", "MySQL Community Server - GPL")


def _server(tmp_path, cls=Server, options=(), version=MARIADB, user="mysql", net=None):
    tree = CodeTree(basedir="/usr", tools={"server": "/usr/sbin/mariadbd"}, version=version)
    lease = PortLease(first=47500, size=4, lock_path=str(tmp_path / "l.lock"), fd=-1)
    settings = ServerSettings(user=user, env={}, die_with_parent=True,
                              extra_defaults=parse_options(["--innodb-buffer-pool-size=64M"]))
    return cls("s0", 2, tree, str(tmp_path / "var_s0"), lease, parse_options(list(options)),
               settings, net=net)


# ---------------------------------------------------------------- the engine
def test_a_rule_gives_its_value_or_a_function_of_the_context_when_it_applies():
    rules = (Rule("a", "1"), Rule("b", lambda c: str(c * 2)), Rule("flag"),
             Rule("c", "x", when=lambda c: c > 5), Rule("d", "y", loose=True))
    assert run_rules(rules, 3) == [Option("a", "1"), Option("b", "6"), Option("flag"),
                                   Option("d", "y", loose=True)]
    assert Option("c", "x") in run_rules(rules, 6)


def test_rules_add_only_what_the_group_does_not_spell_so_at_its_end():
    """ConfigFactory: an option of exactly that name stays; another spelling stays too and
    the rule's, last, wins (mysqld applies the last)."""
    group = CnfGroup("mysqld.1", [["server_id", "10999"], ["port", "1"], ["tmpdir", "/t"]])
    apply_rules(group, (Rule("tmpdir", "/rule"), Rule("server-id", "1"),
                        Rule("port", "9300", replace=True), Rule("socket", "/s", replace=True),
                        Rule("plugin-dir", "", when=lambda _: False)), None)
    assert group.options == [["server_id", "10999"], ["port", "9300"], ["tmpdir", "/t"],
                             ["server-id", "1"], ["socket", "/s"]]


def test_a_group_keeps_one_place_per_name_except_for_options_that_repeat():
    group = CnfGroup("mysqld")
    for name, value in (("a_b", "1"), ("a-b", "2"), ("plugin_load_add", "x.so"),
                        ("plugin-load-add", "y.so")):
        group.insert(name, value)
    assert group.options == [["a_b", "2"], ["plugin_load_add", "x.so"],
                             ["plugin-load-add", "y.so"]]
    group.append("#host", "localhost")
    assert group.as_options() == [Option("a-b", "2"), Option("plugin-load-add", "x.so"),
                                  Option("plugin-load-add", "y.so")]


def test_a_native_cnf_renders_quoted_values_in_its_groups():
    text = render_cnf({"mysqld": [Option("init-connect", "SET NAMES 'utf8'"),
                                  Option("skip-name-resolve")], "client": []})
    assert "[mysqld]\ninit-connect=\"SET NAMES 'utf8'\"\nskip-name-resolve\n" in text
    assert text.rstrip().endswith("[client]")


# ---------------------------------------------------------------- native tables
def test_every_server_gets_kewpies_rules_first_in_their_order(tmp_path):
    server = _server(tmp_path)
    names = [o.name for o in run_rules(SERVER_RULES, server)]
    assert names == ["datadir", "port", "bind-address", "socket", "pid-file", "log-error",
                     "tmpdir", "secure-file-priv", "server-id", "skip-name-resolve",
                     "innodb-log-file-size", "innodb-buffer-pool-size", "core-file"]
    assert dict((o.name, o.value) for o in run_rules(SERVER_RULES, server))["server-id"] == "3"
    assert [(o.name, o.value) for o in run_rules(CLIENT_RULES, server)] == [
        ("host", "127.0.0.1"), ("port", "47500"), ("socket", server.paths.socket_file),
        ("user", "root")]


def test_conditional_rules_mysql_root_and_a_namespace(tmp_path):
    mysql = {o.name: o for o in run_rules(SERVER_RULES, _server(tmp_path, version=MYSQL))}
    assert mysql["mysqlx"] == Option("mysqlx", "OFF", loose=True)
    assert mysql["admin-address"] == Option("admin-address", "127.0.0.1", loose=True)
    as_root = {o.name for o in run_rules(SERVER_RULES, _server(tmp_path, user=None))}
    assert ("user" in as_root) == (os.geteuid() == 0)
    host = NetHost(namespace="kw-x-s0", address="10.200.0.2", index=0)
    placed = {o.name: o.value for o in run_rules(SERVER_RULES, _server(tmp_path, net=(host, None)))}
    assert placed["bind-address"] == "127.0.0.1,10.200.0.2"


def test_the_suites_options_win_in_the_rules_place(tmp_path):
    server = _server(tmp_path, options=["--innodb-log-file-size=32M", "--max-connections=9"])
    opts = server.effective_options()
    names = [o.name for o in opts]
    assert names.index("innodb-log-file-size") < names.index("core-file")  # the rule's place
    values = {o.name: o.value for o in opts}
    assert values["innodb-log-file-size"] == "32M" and values["max-connections"] == "9"
    assert values["innodb-buffer-pool-size"] == "64M"   # the run's extra defaults


def test_a_galera_node_adds_its_tables_and_merges_provider_options(tmp_path):
    node = _server(tmp_path, GaleraServer, ["--wsrep-provider-options=gcache.size=64M"])
    opts = node.effective_options()
    names = [o.name for o in opts]
    assert names[:13] == [o.name for o in run_rules(SERVER_RULES, node)]
    assert names.index("wsrep-on") > names.index("core-file")
    provider = [o.value or "" for o in opts if o.name == "wsrep-provider-options"]
    assert len(provider) == 1 and "gcache.size=64M" in provider[0]
    assert "gmcast.listen_addr=tcp://127.0.0.1:47501" in provider[0]
    sst = node._cnf_sections()["sst"]
    assert [o.name for o in sst] == ["tmpdir", "sst-log-archive-dir", "sockopt",
                                     "sst-initial-timeout"]


def test_an_mtr_server_takes_kewpies_rules_only_where_its_config_is_silent(tmp_path):
    server = _server(tmp_path, MtrServer, ["--port=16000", "--socket=/v/tmp/mysqld.1.sock",
                                           "--log-error=/v/log/mysqld.1.err", "--server-id=1"])
    opts = server.effective_options()
    values = {o.name: o.value for o in opts}
    assert (values["port"], values["log-error"], values["server-id"]) == (
        "16000", "/v/log/mysqld.1.err", "1")
    assert [o.name for o in opts].count("port") == 1
    assert values["skip-name-resolve"] is None and "core-file" in values
    assert [o.name for o in opts][-4:] == ["port", "socket", "log-error", "server-id"]
    assert server.port == 16000 and server.paths.socket_file == "/v/tmp/mysqld.1.sock"


# ---------------------------------------------------------------- mtr tables
def _config(tmp_path, template: str):
    cnf = tmp_path / "t.cnf"
    cnf.write_text(template)
    vardir = MtrVardir(str(tmp_path / "var"), str(tmp_path), None)
    slots = [ServerSlot(n, str(tmp_path / f"s{n}"), 9300 + n, str(tmp_path / f"{n}.sock"),
                        str(tmp_path / f"{n}.err"), str(tmp_path / "tmp")) for n in (1, 2)]
    tree = CodeTree(basedir=str(tmp_path), tools={})
    return build_config(str(cnf), str(tmp_path), vardir, slots, tree, {}, frozenset()), vardir


def test_mtr_rules_fill_each_server_group_and_lease_its_port(tmp_path):
    config, vardir = _config(tmp_path, "[mysqld.1]\nport=3306\ntmpdir=/mine\n[mysqld.2]\n"
                                       "[mysql_upgrade]\n")
    first = config.group("mysqld.1")
    assert first is not None and (first.value("port"), first.value("tmpdir")) == ("9301", "/mine")
    second = config.group("mysqld.2")
    assert second is not None
    assert [str(n) for n, _ in second.options] == [r.spelled() for r in MYSQLD_RULES
                                                   if r.name != "plugin-dir"]
    assert second.value("datadir") == os.path.join(vardir.root, "mysqld.2", "data")
    client = config.group("client.2")
    assert client is not None and client.value("port") == "9302"
    upgrade = config.group("mysql_upgrade")
    assert upgrade is not None and upgrade.value("tmpdir") == vardir.tmp


@pytest.mark.skipif(not os.path.isfile(CONFIG_FACTORY), reason="mysql-test is not installed")
def test_the_mysqld_rules_are_config_factorys_in_its_order():
    with open(CONFIG_FACTORY) as fh:
        text = fh.read()
    table = text[text.index("my @mysqld_rules="):]
    table = table[:table.index(");")]
    theirs = re.findall(r"\{\s*'([#\w-]+)'\s*=>", table)
    assert theirs == [r.name for r in MYSQLD_RULES]
