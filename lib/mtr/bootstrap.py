"""mysql-test-run's bootstrap, done once per code tree and cached as a pristine datadir.

mtr bootstraps with ``mariadbd --bootstrap`` fed the server's system tables
(``mysql_system_tables.sql``, performance and sys schemas, the time zone test
data, help tables), ``DELETE`` of anonymous users, the ``mtr`` schema with
``include/mtr_warnings.sql`` (global suppressions, ``add_suppression``,
``check_warnings``) and ``include/mtr_check.sql`` (``check_testcase``), and a
``test`` schema.  :class:`MtrBootstrapCache` builds the same datadir through
kewpie's bootstrap cache (one template per code tree, mtr tree and bootstrap
options; servers get copies).  :func:`server_features` reads what mtr reads
from ``mariadbd --verbose --help``: the optional plugins and the variables.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import time

from ..errors import ServerError
from ..platform.logsetup import get_logger
from ..platform.logtail import tail_file
from ..platform.tools import run_tool
from ..servers.bootstrap import BootstrapCache
from ..servers.codetree import CodeTree
from ..servers.help_probe import server_help
from ..servers.options import Option

SQL_FILES = ("mysql_system_tables.sql", "maria_add_gis_sp_bootstrap.sql",
             "mysql_performance_tables.sql", "mysql_system_tables_data.sql",
             "mysql_test_data_timezone.sql", "fill_help_tables.sql", "mysql_sys_schema.sql")
SHARE_DIRS = ("share/mariadb", "share/mysql", "sql/share", "share", "scripts")
OPTIONAL_PLUGIN = re.compile(r"^  --([-a-z0-9]+)\[=name\] +Enable or disable \w+ plugin. "
                             r"One of: ON, OFF, FORCE")
REBOOTSTRAP = frozenset({"innodb-page-size", "innodb-checksum-algorithm",
                         "innodb-undo-tablespaces", "innodb-log-group-home-dir",
                         "innodb-data-home-dir", "innodb-data-file-path"})
NOT_OPTIONAL = frozenset({"innodb-metrics", "innodb-buffer-page", "innodb-lock-waits",
                          "innodb-locks", "innodb-trx", "gssapi"})


def find_share_file(basedir: str, name: str) -> str | None:
    """Where the code tree keeps a bootstrap SQL file (None if nowhere)."""
    for sub in SHARE_DIRS:
        path = os.path.join(basedir, sub, name)
        if os.path.isfile(path):
            return path
    return None


def server_features(server: str, scratch_parent: str | None = None
                    ) -> tuple[dict[str, str], frozenset[str]]:
    """(variables as ``--verbose --help`` lists them, optional plugins) of a server binary;
    the probe's throwaway datadir is made under scratch_parent (the workdir; see
    :mod:`lib.servers.help_probe`)."""
    ran = server_help(server, scratch_parent, 60)
    variables: dict[str, str] = {}
    plugins: set[str] = set()
    in_options, in_vars = True, False
    for line in re.sub(r"\n {22}(\S)", r" \1", ran.stdout).splitlines():
        if in_options:
            m = OPTIONAL_PLUGIN.match(line)
            if m and m.group(1) not in NOT_OPTIONAL:
                plugins.add(m.group(1))
            if re.match(r"^-{30,}", line):
                in_options, in_vars = False, True
            continue
        if in_vars:
            if not line.strip():
                break
            name, _, value = line.partition(" ")
            variables[name] = value.strip()
    return variables, frozenset(plugins)


def sql_to_bootstrap(text: str) -> str:
    """mtr's sql_to_bootstrap: delimiter blocks become ';'-ended statements, comments go."""
    out = ["\n"]
    delimiter = ";"
    for line in text.splitlines():
        m = re.match(r"^delimiter (.*)", line)
        if m:
            new = m.group(1)
            if new.endswith(delimiter):
                new = new[: -len(delimiter)]
            delimiter = new
            continue
        if line.endswith(delimiter):
            out.append(line[: -len(delimiter)] + ";\n")
            continue
        if re.match(r"^\s*--", line):
            continue
        out.append(line.replace("'@HOSTNAME@'", "localhost", 1) + " ")
    return "".join(out)


def bootstrap_sql(basedir: str, mtr_root: str) -> str:
    """The whole bootstrap script, as mtr writes ``var/log/bootstrap.sql``."""
    parts = ["use mysql;\n"]
    for name in SQL_FILES:
        path = find_share_file(basedir, name)
        if path is None:
            if name == "mysql_system_tables.sql":
                raise ServerError(f"no {name} under {basedir} (searched {', '.join(SHARE_DIRS)}): "
                                  f"cannot bootstrap for mysql-test")
            continue
        with open(path, errors="replace") as fh:
            parts.append(fh.read())
    parts.append("CREATE DATABASE IF NOT EXISTS test CHARACTER SET latin1 "
                 "COLLATE latin1_swedish_ci;\n")
    parts.append("ALTER TABLE gtid_slave_pos ENGINE=Aria transactional=0;\n")
    parts.append("DELETE FROM mysql.global_priv where user= '';\n")
    parts.append("CREATE DATABASE mtr CHARSET=latin1;\n")
    for name in ("mtr_warnings.sql", "mtr_check.sql"):
        with open(os.path.join(mtr_root, "include", name), errors="replace") as fh:
            parts.append(sql_to_bootstrap(fh.read()))
    return "".join(parts)


class MtrBootstrapCache(BootstrapCache):
    """kewpie's bootstrap cache building mtr's datadir (``mariadbd --bootstrap``)."""

    keep_templates = 14  # the default datadir, five page sizes, checksums, undo tablespaces...

    def __init__(self, cache_dir: str, tree: CodeTree, server_user: str | None, mtr_root: str,
                 optional_plugins: frozenset[str]) -> None:
        super().__init__(cache_dir, tree, server_user)
        self.mtr_root = mtr_root
        self.optional_plugins = optional_plugins
        self.sql = bootstrap_sql(tree.basedir, mtr_root)
        self.sql_digest = hashlib.sha1(self.sql.encode()).hexdigest()

    def template(self, options: list[Option]) -> str:
        """A pristine datadir for options, of which only those mtr re-bootstraps for count
        (mysql-test-run.pl's $rebootstrap_re: page size, checksum, undo tablespaces, data
        file path...); every other test gets the one default datadir, as under mtr."""
        return super().template([o for o in options if o.name in REBOOTSTRAP])

    def key(self, options: list[Option]) -> str:
        """kewpie's key plus the bootstrap script's hash (another mtr tree, another template)."""
        base = super().key(options)
        plugins = ",".join(sorted(self.optional_plugins))
        digest = hashlib.sha1((base + "|mtr|" + plugins + "|" + self.sql_digest).encode()).hexdigest()
        return "mtr-" + digest[:12]

    def _build(self, target: str, options: list[Option]) -> None:
        log = get_logger()
        log.info("Installing mysql-test's system database...")
        start = time.monotonic()
        building, data, tmp = self._building_dirs(target, "mysql")
        logfile = os.path.join(building, "bootstrap.log")
        argv = self.bootstrap_argv(data, tmp, options)
        ran = run_tool(argv, input=self.sql, timeout=300, cwd=building)
        with open(logfile, "w") as fh:
            fh.write(" ".join(argv) + "\n" + ran.stdout + ran.stderr)
        if not ran.ok:
            raise ServerError(f"mysql-test bootstrap with {argv[0]} --bootstrap failed (exit "
                              f"{ran.returncode}); log: {logfile}", tail_file(logfile, 20))
        shutil.rmtree(tmp, ignore_errors=True)
        with open(os.path.join(building, "READY"), "w") as fh:
            fh.write(" ".join(argv) + "\n")
        os.rename(building, target)
        log.debug("mtr bootstrap took %.0f ms", (time.monotonic() - start) * 1000)

    def bootstrap_argv(self, data: str, tmp: str, options: list[Option],
                       user: bool = True) -> list[str]:
        """mtr's bootstrap command line (mysql_install_db in mysql-test-run.pl); tests
        run it as ``$MYSQLD_BOOTSTRAP_CMD`` (user False: no --user)."""
        plugin_dir, share = _plugin_dir(self.tree.basedir), _share_dir(self.tree.basedir)
        argv = [self.tree.server, "--no-defaults", "--disable-getopt-prefix-matching",
                "--bootstrap", f"--basedir={self.tree.basedir}", f"--datadir={data}",
                *([f"--plugin-dir={plugin_dir}"] if plugin_dir else []),
                "--default-storage-engine=myisam",
                *(f"--loose-skip-plugin-{p}" for p in sorted(self.optional_plugins)),
                "--loose-innodb", "--loose-innodb-log-file-size=10M", "--disable-sync-frm",
                f"--tmpdir={tmp}", "--core-file", "--console", "--character-set-server=latin1",
                "--loose-disable-performance-schema", f"--lc-messages-dir={share}/",
                f"--character-sets-dir={os.path.join(share, 'charsets')}"]
        if self.server_user and user:
            argv.append(f"--user={self.server_user}")
        return argv + [o.as_arg() for o in options]


def _plugin_dir(basedir: str) -> str:
    for sub in ("lib/mysql/plugin", "lib64/mysql/plugin", "lib/mariadb/plugin", "lib/plugin"):
        if os.path.isdir(os.path.join(basedir, sub)):
            return os.path.join(basedir, sub)
    return ""


def _share_dir(basedir: str) -> str:
    for sub in ("share/mariadb", "share/mysql", "sql/share", "share"):
        if os.path.isdir(os.path.join(basedir, sub)):
            return os.path.join(basedir, sub)
    return os.path.join(basedir, "share")
