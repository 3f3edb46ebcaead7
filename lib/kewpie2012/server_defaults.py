"""The server options kewpie 2012 gave every server, for test modules written in its style.

kewpie 2012 started every server with a binary log (``--log-bin``,
``--binlog-format=ROW``), ``--character-set-server=latin1``,
``--log-bin-trust-function-creators=1`` and ``--local-infile``; its tests
rely on them (backup ``--slave-info`` tests read ``xtrabackup_binlog_info``,
``SHOW CREATE TABLE`` results say ``latin1``).
:class:`~lib.kewpie2012.mysqlBaseTestCase.mysqlBaseTestCase` declares them as its
``kewpie_server_defaults``, so a module whose test classes derive from it gets
them first (:func:`lib.suites.loader.class_server_defaults`) and the module's
own options still win.
"""
from __future__ import annotations

KEWPIE2012_OPTIONS: tuple[str, ...] = (
    "--log-bin=mysql-bin", "--binlog-format=ROW", "--character-set-server=latin1",
    "--log-bin-trust-function-creators=1", "--local-infile=1",
)
