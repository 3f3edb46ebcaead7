"""kewpie 2012's base test class, for old tests ported with Python 3 fixes.

``from lib.util.mysqlBaseTestCase import mysqlBaseTestCase`` works as it did:
``setUp`` gives ``self.servers`` (:mod:`lib.kewpie2012.context` sets this module's ``servers``
global, as well as the test module's), and the helpers are methods.  Its tests'
servers start with kewpie 2012's defaults (:mod:`lib.kewpie2012.server_defaults`), and the
error-log warnings check reports their servers' new [ERROR]/[Warning] lines without
failing them (``kewpie_check_warnings``), as 2012 judged only the unittest result.
"""
from __future__ import annotations

import time
import unittest
from typing import Any, Sequence

from ..platform.process import Popen
from . import mysql_methods
from .server_defaults import KEWPIE2012_OPTIONS

servers: list[Any] | None = None  # set by the harness before each test module runs


class mysqlBaseTestCase(unittest.TestCase):  # noqa: N801 - the 2012 name
    """Base class of kewpie 2012 tests."""

    kewpie_server_defaults = KEWPIE2012_OPTIONS  # read by the suite loader
    # read by the suite loader: new error-log lines are reported, not failed (2012
    # judged only the unittest result), unless the suite sets check_warnings = True
    kewpie_check_warnings = False

    def setUp(self) -> None:
        """Expose the harness's servers as self.servers."""
        import sys
        module = sys.modules.get(type(self).__module__)
        self.servers = getattr(module, "servers", None) or servers or []

    def tearDown(self) -> None:
        """Empty the test schema on every server (as kewpie 2012 did)."""
        for server in self.servers:
            if server.is_alive():
                self.execute_queries(["DROP SCHEMA IF EXISTS test", "CREATE SCHEMA IF NOT EXISTS test"],
                                     server, schema="mysql")

    def execute_cmd(self, cmd: str, stdout_path: str, exec_path: str | None = None,
                    get_output: bool = False) -> tuple[int, str | None]:
        """See :func:`lib.kewpie2012.mysql_methods.execute_cmd` (tagged as the test's servers)."""
        tags = next((getattr(getattr(s, "settings", None), "env", None)
                     for s in getattr(self, "servers", None) or ()), None)
        return mysql_methods.execute_cmd(cmd, stdout_path, exec_path, get_output, tags_from=tags)

    def execute_query(self, query: str, server: Any, password: str | None = None,
                      schema: str = "test") -> tuple[int, Any]:
        """See :func:`lib.kewpie2012.mysql_methods.execute_query`."""
        return mysql_methods.execute_query(query, server, schema=schema, password=password)

    def execute_queries(self, query_list: list[str], server: Any, schema: str = "test") -> tuple[int, Any]:
        """See :func:`lib.kewpie2012.mysql_methods.execute_queries`."""
        return mysql_methods.execute_queries(query_list, server, schema)

    def get_tables(self, server: Any, schema: str) -> list[str]:
        """See :func:`lib.kewpie2012.mysql_methods.get_tables`."""
        return mysql_methods.get_tables(server, schema)

    def check_slaves_by_query(self, master_server: Any, other_servers: list[Any], query: str,
                              expected_result: Any = None) -> dict[str, list[str]] | None:
        """See :func:`lib.kewpie2012.mysql_methods.check_slaves_by_query`."""
        return mysql_methods.check_slaves_by_query(master_server, other_servers, query, expected_result)

    def check_slaves_by_checksum(self, master_server: Any, other_servers: list[Any],
                                 schemas: list[str] | None = None,
                                 tables: list[str] | None = None) -> dict[str, list[str]] | None:
        """See :func:`lib.kewpie2012.mysql_methods.check_slaves_by_checksum`."""
        return mysql_methods.check_slaves_by_checksum(master_server, other_servers, schemas, tables)

    def take_mysqldump(self, server: Any, databases: list[str] | None = None,
                       tables: list[str] | None = None, dump_path: str | None = None,
                       cmd_root: str | None = None) -> tuple[int, str | None]:
        """See :func:`lib.kewpie2012.mysql_methods.take_mysqldump`."""
        return mysql_methods.take_mysqldump(server, databases, tables, dump_path, cmd_root)

    def diff_dumpfiles(self, orig_file_path: str, new_file_path: str) -> tuple[bool, str]:
        """See :func:`lib.kewpie2012.mysql_methods.diff_dumpfiles`."""
        return mysql_methods.diff_dumpfiles(orig_file_path, new_file_path)

    def filter_data(self, input_data: list[str], filter_text: str) -> list[str]:
        """See :func:`lib.kewpie2012.mysql_methods.filter_data`."""
        return mysql_methods.filter_data(input_data, filter_text)

    def execute_randgen(self, test_cmd: str, test_executor: Any, servers: Any,
                        schema: str = "test") -> tuple[int, str | None]:
        """See :func:`lib.kewpie2012.randgen_methods.execute_randgen`."""
        from . import randgen_methods
        return randgen_methods.execute_randgen(test_cmd, test_executor, servers, schema)

    def innobackupex_backup(self, innobackupex_path: str | None, xtrabackup_path: str | None,
                            output_path: str, server: Any, backup_path: str,
                            extra_opts: str | None = None) -> tuple[int, str]:
        """See :func:`lib.kewpie2012.backup_methods.innobackupex_backup`."""
        from . import backup_methods
        return backup_methods.innobackupex_backup(innobackupex_path, xtrabackup_path, output_path,
                                                  server, backup_path, extra_opts)

    def innobackupex_prepare(self, innobackupex_path: str | None, xtrabackup_path: str | None,
                             output_path: str, backup_path: str, use_mem: str = "500M",
                             extra_opts: str | None = None) -> tuple[int, str]:
        """See :func:`lib.kewpie2012.backup_methods.innobackupex_prepare`."""
        from . import backup_methods
        return backup_methods.innobackupex_prepare(innobackupex_path, xtrabackup_path, output_path,
                                                   backup_path, use_mem, extra_opts)

    def innobackupex_restore(self, innobackupex_path: str | None, xtrabackup_path: str | None,
                             output_path: str, backup_path: str, cnf_file: str,
                             use_mem: str = "500M", extra_opts: str | None = None) -> tuple[int, str]:
        """See :func:`lib.kewpie2012.backup_methods.innobackupex_restore`."""
        from . import backup_methods
        return backup_methods.innobackupex_restore(innobackupex_path, xtrabackup_path, output_path,
                                                   backup_path, cnf_file, use_mem, extra_opts)

    def get_randgen_process(self, cmd_sequence: Sequence[str] | str, test_executor: Any,
                            server: Any, schema: str = "test", randgen_outfile: str | None = None,
                            shell_flag: bool = False) -> Popen[Any]:
        """See :func:`lib.kewpie2012.randgen_methods.get_randgen_process`."""
        from . import randgen_methods
        return randgen_methods.get_randgen_process(cmd_sequence, test_executor, server, schema,
                                                   randgen_outfile, shell_flag)

    def find_backup_path(self, output: str) -> str | None:
        """The directory named on innobackupex's "Backup created in directory" line."""
        backup_path = None
        flag = "Backup created in directory"
        for line in output.split("\n"):
            if flag in line:
                backup_path = line.split(flag)[1].strip().replace("'", "")
        return backup_path

    def wait_slaves_ready(self, master_server: Any, slave_servers: list[Any],
                          cycles: int = 30) -> None:
        """Poll (every 0.5 s, cycles times) until every slave's replication threads run;
        an Exception when some never do (as in 2012)."""
        waiting = list(slave_servers)
        while waiting and cycles:
            waiting = [s for s in waiting if not s.slave_ready()]
            cycles -= 1
            if waiting:
                time.sleep(0.5)
        if waiting:
            raise Exception("Max cycles reached when waiting for slave servers to start")
