"""kewpie: a Python unittest-based test harness for MySQL-family databases.

One package, two names.  Installed (``pip install kewpie``), it is ``kewpie``;
in a checkout, where ``kewpie.py`` sits beside it, it is the folder ``lib/``
(``import lib``), as kewpie 2012's suites expect.  Modules inside import each
other relatively, so they work under either name, and :mod:`lib.aliases`
makes the other name an alias of the same modules (never a second copy).

The package itself is kewpie's public API: what suites and pytest users import,
``from kewpie import KewpieTestCase, Bank, Schedule, Step`` (``from lib import ...``
in a checkout), listed in :data:`EXPORTS` and described in docs/writing-tests.md
and docs/pytest.md.  Everything else in the package is internal and may move;
kewpie 2012's API (:mod:`lib.kewpie2012`, by its 2012 name ``lib.util``) is the
other thing a suite may import (tests/unit/test_house_rules.py holds both to it).
A name is imported when it is first used, so ``import kewpie`` stays light.
"""
from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING, Any

from .aliases import settle_name

# The public API: (name, module under the package, attribute of that module).
EXPORTS: tuple[tuple[str, str, str], ...] = (
    # a test and what it is given
    ("KewpieTestCase", "suites.testcase", "KewpieTestCase"),
    ("ClusterTestCase", "suites.testcase", "ClusterTestCase"),
    ("TestContext", "suites.context", "TestContext"),
    ("KewpieServers", "pytest_plugin.helper", "KewpieServers"),
    ("Server", "servers.server", "Server"),
    ("GaleraServer", "servers.galera", "GaleraServer"),
    ("get_logger", "platform.logsetup", "get_logger"),
    # errors a test expects
    ("KewpieError", "errors", "KewpieError"),
    ("QueryError", "errors", "QueryError"),
    ("ServerError", "errors", "ServerError"),
    ("ServerStartError", "errors", "ServerStartError"),
    ("ServerDiedError", "errors", "ServerDiedError"),
    ("ReplicationError", "errors", "ReplicationError"),
    # servers compared, replication, code trees, upgrades
    ("dump_schemas", "checks.dbcompare", "dump_schemas"),
    ("table_checksums", "checks.dbcompare", "table_checksums"),
    ("compare_checksums", "checks.dbcompare", "compare_checksums"),
    ("compare_dumps", "checks.dbcompare", "compare_dumps"),
    ("replica_status", "servers.replication", "replica_status"),
    ("wait_for_replica", "servers.replication", "wait_for_replica"),
    ("resolve_tree", "servers.trees", "resolve_tree"),
    ("run_upgrade", "servers.upgrade", "run_upgrade"),
    # data and loads
    ("create_tables", "data.sqldata", "create_tables"),
    ("change_rows", "data.sqldata", "change_rows"),
    ("WriteLoad", "data.writeload", "WriteLoad"),
    ("SHIPPED", "randgen.shipped", "SHIPPED"),
    ("ZERO_SUM_TOTAL", "randgen.shipped", "ZERO_SUM_TOTAL"),
    ("ZERO_SUM_TOTAL_SQL", "randgen.shipped", "ZERO_SUM_TOTAL_SQL"),
    # backups
    ("replicate_from_backup", "backup", "replicate_from_backup"),
    ("BackupError", "backup", "BackupError"),
    ("BackupToolError", "backup", "BackupToolError"),
    ("BackupInfoError", "backup", "BackupInfoError"),
    ("RestoreError", "backup", "RestoreError"),
    # recorded workloads, faults and checkers (docs/consistency.md)
    ("Append", "consistency", "Append"),
    ("Bank", "consistency", "Bank"),
    ("ListAppend", "consistency", "ListAppend"),
    ("ReadYourWrites", "consistency", "ReadYourWrites"),
    ("Schedule", "consistency", "Schedule"),
    ("Step", "consistency", "Step"),
    ("Kill", "consistency", "Kill"),
    ("Pause", "consistency", "Pause"),
    ("Restart", "consistency", "Restart"),
    ("Rejoin", "consistency", "Rejoin"),
    ("Isolate", "consistency", "Isolate"),
    ("Lag", "consistency", "Lag"),
    ("Tamper", "consistency", "Tamper"),
    ("Partition", "consistency", "Partition"),
    ("Latency", "consistency", "Latency"),
    ("Loss", "consistency", "Loss"),
    ("Flaky", "consistency", "Flaky"),
    ("Upgrade", "consistency.upgrade", "Upgrade"),
    ("check_minority_refused", "consistency.netfaults", "check_minority_refused"),
    # sysbench sweeps (docs/sysbench.md)
    ("SweepSpec", "sysbench.sweep", "SweepSpec"),
    ("run_sweep", "sysbench.runner", "run_sweep"),
    ("sweep_table", "sysbench.outputs", "table"),
    ("write_sweep_files", "sysbench.outputs", "write_all"),
)
__all__ = tuple(name for name, _, _ in EXPORTS)

if TYPE_CHECKING:  # the same names for type checkers (tests/unit/test_public_api.py)
    from .checks.dbcompare import (compare_checksums as compare_checksums,
                                   compare_dumps as compare_dumps, dump_schemas as dump_schemas,
                                   table_checksums as table_checksums)
    from .backup import (BackupError as BackupError, BackupInfoError as BackupInfoError,
                         BackupToolError as BackupToolError, RestoreError as RestoreError,
                         replicate_from_backup as replicate_from_backup)
    from .consistency import (Append as Append, Bank as Bank, Flaky as Flaky, Isolate as Isolate,
                              Kill as Kill, Lag as Lag, Latency as Latency,
                              ListAppend as ListAppend, Loss as Loss, Partition as Partition,
                              Pause as Pause, ReadYourWrites as ReadYourWrites, Rejoin as Rejoin,
                              Restart as Restart, Schedule as Schedule, Step as Step,
                              Tamper as Tamper)
    from .consistency.netfaults import check_minority_refused as check_minority_refused
    from .consistency.upgrade import Upgrade as Upgrade
    from .data.sqldata import change_rows as change_rows, create_tables as create_tables
    from .data.writeload import WriteLoad as WriteLoad
    from .errors import (KewpieError as KewpieError, QueryError as QueryError,
                         ReplicationError as ReplicationError, ServerDiedError as ServerDiedError,
                         ServerError as ServerError, ServerStartError as ServerStartError)
    from .platform.logsetup import get_logger as get_logger
    from .pytest_plugin.helper import KewpieServers as KewpieServers
    from .randgen.shipped import (SHIPPED as SHIPPED, ZERO_SUM_TOTAL as ZERO_SUM_TOTAL,
                                  ZERO_SUM_TOTAL_SQL as ZERO_SUM_TOTAL_SQL)
    from .servers.galera import GaleraServer as GaleraServer
    from .servers.replication import (replica_status as replica_status,
                                      wait_for_replica as wait_for_replica)
    from .servers.server import Server as Server
    from .servers.trees import resolve_tree as resolve_tree
    from .servers.upgrade import run_upgrade as run_upgrade
    from .suites.context import TestContext as TestContext
    from .suites.testcase import (ClusterTestCase as ClusterTestCase,
                                  KewpieTestCase as KewpieTestCase)
    from .sysbench.outputs import table as sweep_table, write_all as write_sweep_files
    from .sysbench.runner import run_sweep as run_sweep
    from .sysbench.sweep import SweepSpec as SweepSpec

if (_canonical := settle_name(__name__, __path__[0])) is not None:
    sys.modules[__name__] = _canonical  # a checkout imported as "kewpie": it is "lib"


def __getattr__(name: str) -> Any:
    """A public name, imported from its module when first asked for."""
    for public, module, attribute in EXPORTS:
        if public == name:
            return getattr(importlib.import_module(f".{module}", __name__), attribute)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    """The module's names and the public API's."""
    return sorted(set(globals()) | set(__all__))
