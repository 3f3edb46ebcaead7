"""One test's mtr config and environment, filled in for a bot's servers.

:func:`base_environment` is mysql-test-run's ``environment_setup`` (the
variables tests and include files read: ``MYSQL_TEST_DIR``,
``MYSQLTEST_VARDIR``, ``MYSQL``, ``MYSQL_DUMP``, ``MYSQL_BINLOG``,
``MYSQLADMIN``, ``MYSQLD``, ``XTRABACKUP``, one ``<PLUGIN>_SO`` per plugin...).
:func:`build_config` is My::ConfigFactory: the test's template, the optional
plugins disabled in ``[mysqld]``, each ``[mysqld.N]`` given its paths (mtr's
names, which are links to kewpie's vardirs), port, socket, server id and logs
by ConfigFactory's rule tables, written as kewpie's one my.cnf model
(:mod:`lib.servers.cnf`) writes them, ``[client]`` and ``[client.N]`` groups,
and ``@group.option`` references resolved.  :func:`server_option_args` adds what
mtr puts on mysqld's command line (``--log-output=file``, the test's ``.opt``
options, ``--core-file``).
"""
from __future__ import annotations

import glob
import os
import re
import shutil
from dataclasses import dataclass

from .cnf import MtrConfig
from .vardir import MtrVardir, ServerSlot
from ..platform.tools import run_tool
from ..servers.cnf import CnfGroup, Rule, apply_rules
from ..servers.codetree import CodeTree

PLUGIN_DIRS = ("lib/mysql/plugin", "lib64/mysql/plugin", "lib/mariadb/plugin",
               "lib64/mariadb/plugin", "lib/plugin")
DEBUG_SYNC_TIMEOUT = 300
ENV_REF = re.compile(r"\$\{(\w+)\}|\$(\w+)")


def find_binary(tree: CodeTree, *names: str) -> str:
    """The first of names in the code tree's bin dirs, else on PATH ('' if none)."""
    for name in names:
        for sub in ("bin", "client", "sbin", "extra", "scripts"):
            path = os.path.join(tree.basedir, sub, name)
            if os.path.isfile(path) and os.access(path, os.X_OK):
                return path
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    return ""


def plugin_dir(tree: CodeTree) -> str:
    """Where the server's plugins are ('' when none)."""
    for sub in PLUGIN_DIRS:
        path = os.path.join(tree.basedir, sub)
        if glob.glob(os.path.join(path, "*.so")):
            return path
    return ""


def client_plugin_dir(tree: CodeTree) -> str:
    """Where the client library's plugins are (Debian keeps them apart from the server's)."""
    found = sorted(glob.glob(os.path.join(tree.basedir, "lib", "*", "libmariadb3", "plugin")))
    return found[0] if found else plugin_dir(tree)


def share_dir(tree: CodeTree) -> str:
    """The messages directory (mtr's lc-messages-dir)."""
    for sub in ("share/mariadb", "share/mysql", "sql/share", "share"):
        path = os.path.join(tree.basedir, sub)
        if os.path.isdir(path):
            return path
    return os.path.join(tree.basedir, "share")


def client_tls(mariadb_config: str | None) -> tuple[str, str] | None:
    """(library, version) of the client's TLS from ``mariadb_config --tlsinfo``
    (``OpenSSL 3.0.20``), None without the tool (Debian: libmariadb-dev)."""
    if not mariadb_config:
        return None
    try:
        ran = run_tool([mariadb_config, "--tlsinfo"], timeout=10)
    except OSError:
        return None
    if ran.timed_out:
        return None
    out = ran.stdout.strip()
    library, _, version = out.partition(" ")
    return (library, version) if library else None


CLIENTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("MYSQL_CHECK", ("mariadb-check", "mysqlcheck")), ("MYSQL_SLAP", ("mariadb-slap", "mysqlslap")),
    ("MYSQL_IMPORT", ("mariadb-import", "mysqlimport")),
    ("MYSQL_SHOW", ("mariadb-show", "mysqlshow")), ("MYSQL", ("mariadb", "mysql")),
    ("MYSQL_UPGRADE", ("mariadb-upgrade", "mysql_upgrade")),
    ("MYSQLADMIN", ("mariadb-admin", "mysqladmin")),
)
"""Client programs exported with ``--defaults-file`` (the test's my.cnf)."""

TOOLS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("MYSQL_PLUGIN", ("mariadb-plugin", "mysql_plugin")),
    ("MYSQL_MY_PRINT_DEFAULTS", ("my_print_defaults",)),
    ("MYISAMLOG", ("myisamlog",)), ("MYISAMCHK", ("myisamchk",)),
    ("MYISAMPACK", ("myisampack",)), ("MYISAM_FTDUMP", ("myisam_ftdump",)),
    ("MARIA_CHK", ("aria_chk",)), ("MARIA_PACK", ("aria_pack",)), ("MY_PERROR", ("perror",)),
    ("MYSQL_TZINFO_TO_SQL", ("mariadb-tzinfo-to-sql", "mysql_tzinfo_to_sql")),
    ("REPLACE", ("replace",)), ("INNOCHECKSUM", ("innochecksum",)),
    ("MYSQL_INSTALL_DB_EXE", ("mariadb-install-db", "mysql_install_db")),
    ("MARIADB_UPGRADE_EXE", ("mariadb-upgrade",)),
)
"""Programs exported by their path alone."""


def base_environment(tree: CodeTree, mtr_root: str, vardir: MtrVardir) -> dict[str, str]:
    """The variables mysql-test-run exports for every test (without per-test ones)."""
    cnf = vardir.cnf
    charsets = os.path.join(share_dir(tree), "charsets")
    env: dict[str, str] = {
        "MYSQL_TEST_DIR": mtr_root, "MYSQLTEST_VARDIR": vardir.root,
        "MYSQLTEST_REAL_VARDIR": os.path.realpath(vardir.root), "MYSQL_TMP_DIR": vardir.tmp,
        "MYSQL_BINDIR": tree.basedir, "MYSQL_SHAREDIR": share_dir(tree),
        "MYSQL_CHARSETSDIR": charsets, "SECURE_LOAD_PATH": os.path.join(mtr_root, "std_data"),
        "LC_ALL": "C", "LC_CTYPE": "C", "LC_COLLATE": "C", "UMASK": "0660", "UMASK_DIR": "0770",
        "GNUTLS_SYSTEM_PRIORITY_FILE": "/dev/null", "USE_RUNNING_SERVER": "0",
        "MYSQLD": tree.server, "MYSQLD_CMD": f"{tree.server} --defaults-group-suffix=.1 "
                                              f"--defaults-file={cnf}",
        "DEFAULT_MASTER_PORT": "3306", "HAVE_BROKEN_DNS": "",
    }
    env.update(_client_env(tree, vardir))
    env.update(_tool_env(tree, charsets))
    env.update(_plugin_env(tree))
    for name in ("galera", "galera-4", "galera-3"):
        lib = f"/usr/lib/{name}/libgalera_smm.so"
        if os.path.isfile(lib):
            env.setdefault("WSREP_PROVIDER", lib)
    transfer = next((tool for tool in ("socat", "nc") if shutil.which(tool)), "")
    if transfer:  # as suite/wsrep/common.pm: include/have_mariabackup.inc needs one
        env["MTR_GALERA_TFMT"] = transfer
    return env


def _client_env(tree: CodeTree, vardir: MtrVardir) -> dict[str, str]:
    """The client programs' variables (:data:`CLIENTS`, the dump, binlog and client test
    tools), each reading the test's my.cnf."""
    cnf = vardir.cnf
    env = {var: f"{exe} --defaults-file={cnf}" for var, names in CLIENTS
           if (exe := find_binary(tree, *names))}
    mysql = find_binary(tree, "mariadb", "mysql")
    if mysql:
        env["MYSQL_SLAVE"] = f"{mysql} --defaults-file={cnf} --defaults-group-suffix=.2"
        env["EXE_MYSQL"] = mysql
    dump = find_binary(tree, "mariadb-dump", "mysqldump")
    if dump:
        env["MYSQL_DUMP"] = f"{dump} --defaults-file={cnf} --defaults-group-suffix=.1"
        env["MYSQL_DUMP_SLAVE"] = f"{dump} --defaults-file={cnf} --defaults-group-suffix=.2"
    binlog = find_binary(tree, "mariadb-binlog", "mysqlbinlog")
    if binlog:
        env["MYSQL_BINLOG"] = f"{binlog} --defaults-file={cnf} --local-load={vardir.tmp}"
    client_test = find_binary(tree, "mariadb-client-test", "mysql_client_test")
    if client_test:
        env["MYSQL_CLIENT_TEST"] = (f"{client_test} --defaults-file={cnf} --testcase "
                                    f"--vardir={vardir.root}")
    return env


def _tool_env(tree: CodeTree, charsets: str) -> dict[str, str]:
    """The tools' variables (:data:`TOOLS`, mariadb-conv, mariabackup, the client's TLS,
    mbstream)."""
    env = {var: exe for var, names in TOOLS if (exe := find_binary(tree, *names))}
    conv = find_binary(tree, "mariadb-conv")
    if conv:
        env["MARIADB_CONV"] = f"{conv} --character-sets-dir={charsets}"
    backup = find_binary(tree, "mariabackup", "mariadb-backup")  # mtr's name first
    if backup:
        env["XTRABACKUP"] = backup
        env["INNOBACKUPEX"] = f"{backup} --innobackupex"
    tls = client_tls(find_binary(tree, "mariadb_config"))
    if tls:  # as mtr: mariadb_config --tlsinfo (include/require_openssl_client.inc reads it)
        env["CLIENT_TLS_LIBRARY"], env["CLIENT_TLS_LIBRARY_VERSION"] = tls
    stream = find_binary(tree, "mbstream")
    if stream:
        env["XBSTREAM"] = stream
    return env


def _plugin_env(tree: CodeTree) -> dict[str, str]:
    """``PLUGIN_DIR`` and one ``<PLUGIN>_SO`` per plugin library."""
    plugins = plugin_dir(tree)
    if not plugins:
        return {}
    env = {"PLUGIN_DIR": plugins}
    for path in sorted(glob.glob(os.path.join(plugins, "*.so"))):
        name = os.path.basename(path)
        env[name.rsplit(".", 1)[0].upper() + "_SO"] = name
    return env


@dataclass(frozen=True)
class SlotContext:
    """What the rules of one ``[mysqld.N]`` group read: its name, its slot, the bot's mtr
    vardir and the code tree's directories."""

    group: str
    slot: ServerSlot
    vardir: MtrVardir
    tree: CodeTree
    plugins: str
    charsets: str


MYSQLD_RULES: tuple[Rule[SlotContext], ...] = (
    Rule("basedir", lambda c: c.tree.basedir),
    Rule("tmpdir", lambda c: os.path.join(c.vardir.tmp, c.group)),
    Rule("character-sets-dir", lambda c: c.charsets),
    Rule("lc-messages-dir", lambda c: share_dir(c.tree) + "/"),
    Rule("datadir", lambda c: os.path.join(c.vardir.root, c.group, "data")),
    Rule("pid-file", lambda c: os.path.join(c.vardir.run, f"{c.group}.pid")),
    Rule("#host", "localhost"),
    Rule("port", lambda c: str(c.slot.port), replace=True),   # kewpie leases the ports
    Rule("socket", lambda c: c.slot.socket, replace=True),
    Rule("log-error", lambda c: os.path.join(c.vardir.log, f"{c.group}.err")),
    Rule("general-log", "1"),
    Rule("plugin-dir", lambda c: c.plugins, when=lambda c: bool(c.plugins)),
    Rule("general-log-file", lambda c: os.path.join(c.vardir.root, c.group, "mysqld.log")),
    Rule("slow-query-log", "1"),
    Rule("slow-query-log-file",
         lambda c: os.path.join(c.vardir.root, c.group, "mysqld-slow.log")),
    Rule("#user", "root"),
    Rule("#password", ""),
    Rule("server-id", lambda c: str(c.slot.number)),
    # a test's own bind-address stays: the mode narrows wildcards to the loopback and
    # lib/mtr/option_check.py refuses anything else
    Rule("bind-address", "127.0.0.1"),
)
"""ConfigFactory's ``@mysqld_rules`` for each ``[mysqld.N]``, in its order: an option the
template spells exactly so stays (another spelling stays too, and this one, last, wins:
``server_id=10999``, galera_3nodes.galera_gtid_consistency); port and socket are always
kewpie's leased ones."""

CLIENT_RULES: tuple[Rule[CodeTree], ...] = (
    Rule("character-sets-dir", lambda tree: os.path.join(share_dir(tree), "charsets")),
    Rule("plugin-dir", client_plugin_dir, when=lambda tree: bool(client_plugin_dir(tree))),
)
"""ConfigFactory's ``@client_rules`` for ``[client]``."""

UPGRADE_RULES: tuple[Rule[MtrVardir], ...] = (
    Rule("tmpdir", lambda vardir: vardir.tmp),
)
"""ConfigFactory's ``@mysql_upgrade_rules``, for a template's ``[mysql_upgrade]``."""


def build_config(template: str, mtr_root: str, vardir: MtrVardir, slots: list[ServerSlot],
                 tree: CodeTree, env: dict[str, str],
                 optional_plugins: frozenset[str]) -> MtrConfig:
    """The test's config for this bot's servers: the template, then My::ConfigFactory's
    pre rules, its rule tables (:data:`MYSQLD_RULES`, :data:`CLIENT_RULES`,
    :data:`UPGRADE_RULES`, applied by :func:`lib.servers.cnf.apply_rules`) and its post
    rules (the client groups, the references resolved), then kewpie's loopback rule for
    Galera's listeners."""
    config = MtrConfig.read(template, search_dirs=(mtr_root,))
    env_group = config.group("ENV")
    assert env_group is not None
    env_group.insert_missing(env)
    config.port_pool = [p for slot in slots for p in slot.spare_ports]  # mtr's @OPT.port
    mysqld = config.group("mysqld", create=True)
    assert mysqld is not None
    for plugin in sorted(optional_plugins):
        mysqld.insert(f"loose-skip-plugin-{plugin}", None)
    plugins = plugin_dir(tree)
    charsets = os.path.join(share_dir(tree), "charsets")
    servers = config.servers()
    for group, slot in zip(servers, slots):
        apply_rules(group, MYSQLD_RULES,
                    SlotContext(group.name, slot, vardir, tree, plugins, charsets))
    client = config.group("client", create=True)
    assert client is not None
    apply_rules(client, CLIENT_RULES, tree)
    upgrade = config.group("mysql_upgrade")
    if upgrade is not None:
        apply_rules(upgrade, UPGRADE_RULES, vardir)
    if servers:
        _client_group(config, "client", servers[0].name)
        for group in servers:
            _client_group(config, "client" + group.name[len("mysqld"):], group.name)
    config.resolve()
    for group in servers:
        _galera_on_loopback(group)
    return config


PROVIDER_WILDCARD = re.compile(r"((?:^|;)\s*(?:gmcast\.listen_addr|ist\.recv_addr|ist\.recv_bind)"
                              r"\s*=\s*(?:\w+://)?)(\[::\]|0\.0\.0\.0)")


def _galera_on_loopback(group: CnfGroup) -> None:
    """A Galera node's group communication listens on 127.0.0.1 only (kewpie's rule): a
    wildcard listener address (``tcp://[::]``, ``0.0.0.0``) is narrowed to the loopback
    of its family, as a wildcard ``bind-address`` is."""
    options = group.value("wsrep_provider_options")
    if not options:
        return
    narrowed = PROVIDER_WILDCARD.sub(
        lambda m: m.group(1) + ("[::1]" if m.group(2).startswith("[") else "127.0.0.1"), options)
    if narrowed != options:
        group.insert("wsrep_provider_options", narrowed)
        options = narrowed
    m = re.search(r"base_port=(\d+)", options)
    if m and "gmcast.listen_addr" not in options:
        group.insert("wsrep_provider_options",
                     f"{options.rstrip(';')};gmcast.listen_addr=tcp://127.0.0.1:{m.group(1)}")


def _client_group(config: MtrConfig, name: str, server: str) -> None:
    source = config.group(server)
    target = config.group(name, create=True)
    assert source is not None and target is not None
    for to, frm in (("port", "port"), ("socket", "socket"), ("host", "#host"),
                    ("user", "#user"), ("password", "#password")):
        target.insert(to, source.value(frm))


def expand_env(text: str, env: dict[str, str]) -> str:
    """``$VAR`` and ``${VAR}`` from env (unknown ones become ''), as mtr expands .opt files."""
    return ENV_REF.sub(lambda m: env.get(m.group(1) or m.group(2), ""), text)


def server_option_args(config: MtrConfig, group: str, extra: list[str],
                       env: dict[str, str]) -> list[str]:
    """Every option server group starts with: its config groups, then mtr's command
    line (``--log-output=file``, the test's options, ``--core-file``, debug sync)."""
    return config.server_options(group) + command_line_args(config, group, extra, env)


def command_line_args(config: MtrConfig, group: str, extra: list[str],
                      env: dict[str, str]) -> list[str]:
    """What mtr puts on server group's command line after ``--defaults-file``."""
    opts = [expand_env(o, env) for o in extra if not o.startswith("--defaults-file")]
    has_log_bin = any(re.match(r"^--(loose-)?log-bin", o) for o in opts)
    section = config.group(group)
    line: list[str] = ["--log-output=file"]
    for opt in opts:
        if opt == "--skip-core-file":
            continue
        if not has_log_bin and opt.startswith("--binlog-format"):
            continue
        if opt == "--loose-skip-log-bin" and section is not None and section.has("log-slave-updates"):
            continue
        line.append(opt)
    if "--skip-core-file" not in opts:
        line.append("--core-file")
    line.append(f"--loose-debug-sync-timeout={DEBUG_SYNC_TIMEOUT}")
    return line
