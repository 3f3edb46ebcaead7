"""kewpie 2012's ``sysbenchTestCase``: a mysqlBaseTestCase that runs sysbench loads.

``execute_sysbench(test_cmd, test_executor, server, concurrency)`` prepares
the tables, runs the load with ``--num-threads=concurrency`` against the
server (``--mysql-host``/``--mysql-port`` are added when the command does
not name them), logs the figures and asserts both steps exited 0; it returns
the figures (see :mod:`lib.kewpie2012.sysbench_methods`).
"""
from __future__ import annotations

from typing import Any, Sequence

from . import sysbench_methods
from .mysqlBaseTestCase import mysqlBaseTestCase


class sysbenchTestCase(mysqlBaseTestCase):  # noqa: N801 - the 2012 name
    """Base class of kewpie 2012 sysbench tests."""

    def sysbench_command(self, test_cmd: str | Sequence[str], server: Any,
                         concurrency: int) -> list[str]:
        """test_cmd with the thread count and, unless given, the server's address."""
        argv = sysbench_methods.modern_sysbench_argv(test_cmd)
        names = {a.split("=", 1)[0] for a in argv}
        extra = [f"--threads={concurrency}"]
        if "--mysql-port" not in names and "--mysql-socket" not in names:
            extra += ["--mysql-host=127.0.0.1", f"--mysql-port={server.port}"]
        if "--mysql-user" not in names:
            extra.append("--mysql-user=root")
        if "--db-driver" not in names:
            extra.append("--db-driver=mysql")
        argv = [a for a in argv if not a.startswith(("--threads=", "--num-threads="))]
        return argv[:1] + extra + argv[1:]

    def execute_sysbench(self, test_cmd: str | Sequence[str], test_executor: Any, server: Any,
                         concurrency: int = 1) -> dict[str, float]:
        """Prepare, run and clean up one sysbench load; its figures."""
        argv = self.sysbench_command(test_cmd, server, concurrency)
        sysbench_methods.cleanup_sysbench(test_executor, argv)  # leftovers of an earlier run
        retcode, output = sysbench_methods.prepare_sysbench(test_executor, argv)
        self.assertEqual(retcode, 0, msg=output)
        retcode, output = sysbench_methods.execute_sysbench(test_executor, argv)
        self.assertEqual(retcode, 0, msg=output)
        run = sysbench_methods.process_sysbench_output(output)
        logging = getattr(test_executor, "logging", None)
        if logging is not None:
            logging.info(f"Concurrency: {concurrency} {sysbench_methods.sysbench_report(run)}")
        sysbench_methods.cleanup_sysbench(test_executor, argv)
        return run
