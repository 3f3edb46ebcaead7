"""The server options kewpie 2012 gave every server, for test modules written in its style.

kewpie 2012 started every server with a binary log (``--log-bin``,
``--binlog-format=ROW``), ``--character-set-server=latin1``,
``--log-bin-trust-function-creators=1`` and ``--local-infile``; its tests
rely on them (backup ``--slave-info`` tests read ``xtrabackup_binlog_info``,
``SHOW CREATE TABLE`` results say ``latin1``).  A module is in 2012 style
when one of its test classes derives from
:class:`~lib.util.mysqlBaseTestCase.mysqlBaseTestCase`, which declares these
options as its ``kewpie_server_defaults``: the loader
(:func:`lib.suites.loader.inherited_server_defaults`) gives them to the
module's servers first, so the module's own options still win.
"""
from __future__ import annotations

KEWPIE2012_OPTIONS: tuple[tuple[str, str | None], ...] = (
    ("log-bin", "mysql-bin"), ("binlog-format", "ROW"), ("character-set-server", "latin1"),
    ("log-bin-trust-function-creators", "1"), ("local-infile", "1"),
)
