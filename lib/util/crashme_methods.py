"""kewpie 2012's ``lib.util.crashme_methods``: run sql-bench's ``crash-me``.

``execute_crashme(test_cmd, test_executor, servers)`` runs the crash-me
command a test wrote (``./crash-me --force --server=mysql
--connect-options=port=N ...``) in the sql-bench folder (found as in
:mod:`lib.util.sqlbench_methods`) and returns ``(retcode, output)``, the
output in ``<logdir>/crashme.out``; a report with ``failed`` or ``Got error``
lines has retcode 1.  Without sql-bench: ``(1, "<one line saying so>")``.
"""
from __future__ import annotations

from typing import Any

from .sqlbench_methods import run_in_sqlbench


def execute_crashme(test_cmd: str, test_executor: Any, servers: Any) -> tuple[int, str]:
    """Run crash-me; (retcode, output)."""
    del servers
    retcode, output = run_in_sqlbench(test_cmd, test_executor, "crashme.out")
    if retcode == 0 and any(("Got error" in line or " failed" in line.lower())
                            for line in output.splitlines()):
        retcode = 1
    return retcode, output
