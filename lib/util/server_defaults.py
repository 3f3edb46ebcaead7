"""The server options kewpie 2012 gave every server, for test modules written in its style.

kewpie 2012 started every server with a binary log (``--log-bin``,
``--binlog-format=ROW``), ``--character-set-server=latin1``,
``--log-bin-trust-function-creators=1`` and ``--local-infile``; its tests
rely on them (backup ``--slave-info`` tests read ``xtrabackup_binlog_info``,
``SHOW CREATE TABLE`` results say ``latin1``).  A module is in 2012 style
when one of its test classes derives from
:class:`~lib.util.mysqlBaseTestCase.mysqlBaseTestCase`; its servers get these
options first, so the module's own options still win.
"""
from __future__ import annotations

import inspect
from types import ModuleType

from ..servers.options import Option
from .mysqlBaseTestCase import mysqlBaseTestCase

KEWPIE2012_OPTIONS: tuple[tuple[str, str | None], ...] = (
    ("log-bin", "mysql-bin"), ("binlog-format", "ROW"), ("character-set-server", "latin1"),
    ("log-bin-trust-function-creators", "1"), ("local-infile", "1"),
)


def is_kewpie2012_module(module: ModuleType) -> bool:
    """True when a test class of module derives from mysqlBaseTestCase."""
    return any(inspect.isclass(obj) and issubclass(obj, mysqlBaseTestCase)
               and obj is not mysqlBaseTestCase for obj in vars(module).values())


def kewpie2012_options(module: ModuleType) -> list[Option]:
    """The 2012 server defaults for a 2012-style module, else []."""
    if not is_kewpie2012_module(module):
        return []
    return [Option(name, value) for name, value in KEWPIE2012_OPTIONS]
