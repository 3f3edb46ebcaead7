"""Storage engines a sweep can compare, and whether a code tree has them.

Checked before any server starts: an engine must be one MariaDB builds in
(InnoDB, Aria, MyISAM, MEMORY) or a plugin whose library is in the tree's
plugin directory (RocksDB is ``ha_rocksdb.so``, Debian's
``mariadb-plugin-rocksdb``).  A plugin engine is loaded with
``--plugin-load-add`` on the sweep's servers.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from types import MappingProxyType

from ..errors import UsageError
from ..servers.codetree import CodeTree


@dataclass(frozen=True)
class Engine:
    """A storage engine as sysbench's ``--mysql_storage_engine`` names it."""

    name: str                 # the server's spelling (SHOW ENGINES)
    plugin: str = ""          # library of a plugin engine (no .so), '' when built in
    package: str = ""         # the Debian package with the plugin
    transactional: bool = True

    @property
    def sql_name(self) -> str:
        """The name for ENGINE= and --mysql_storage_engine."""
        return self.name


ENGINES = MappingProxyType({
    "innodb": Engine("InnoDB"),
    "aria": Engine("Aria", transactional=False),
    "myisam": Engine("MyISAM", transactional=False),
    "memory": Engine("MEMORY", transactional=False),
    "rocksdb": Engine("RocksDB", "ha_rocksdb", "mariadb-plugin-rocksdb"),
    "myrocks": Engine("RocksDB", "ha_rocksdb", "mariadb-plugin-rocksdb"),
})
GONE = MappingProxyType({
    "tokudb": "TokuDB was removed from MariaDB in 10.6",
    "xtradb": "XtraDB is InnoDB in MariaDB 10.2 and later: use InnoDB",
})


def resolve_engine(name: str, tree: CodeTree | None) -> Engine:
    """The engine named (any case); UsageError when it is unknown or the tree lacks it."""
    key = name.lower()
    if key in GONE:
        raise UsageError(f"sweep engine {name}: {GONE[key]}")
    engine = ENGINES.get(key)
    if engine is None:
        raise UsageError(f"sweep engine {name}: not an engine kewpie knows "
                         f"(known: {', '.join(sorted({e.name for e in ENGINES.values()}))})")
    if engine.plugin and tree is not None:
        plugin_dir = tree.plugin_dir()
        library = os.path.join(plugin_dir, engine.plugin + ".so") if plugin_dir else ""
        if not library or not os.path.isfile(library):
            where = plugin_dir or f"{tree.basedir} (no plugin directory)"
            raise UsageError(f"sweep engine {name}: the server at {tree.basedir} lacks it "
                             f"({engine.plugin}.so is not in {where}; Debian package "
                             f"{engine.package}, which scripts/setup.sh installs)")
    return engine


def plugin_options(engines: list[Engine]) -> list[str]:
    """--plugin-load-add options for the plugin engines among engines."""
    plugins = sorted({e.plugin for e in engines if e.plugin})
    return [f"--plugin-load-add={p}" for p in plugins]
