"""kewpie 2012's ``lib.util.sqlbench_methods``: run sql-bench's ``run-all-tests``.

``execute_sqlbench(test_cmd, test_executor, servers)`` runs the command a
test wrote (``run-all-tests --server=mysql --dir=... --log
--connect-options=port=N``...) in the sql-bench folder and returns
``(retcode, output)``; the output is in ``<logdir>/sqlbench.out``.  A run
whose report says ``Failed`` or ``Got error`` has retcode 1, as in 2012.

sql-bench is part of a MySQL/MariaDB source tree, not of any Debian package:
it is looked for in ``$SQLBENCH_DIR``, ``<kewpie>/sql-bench``, and the code
tree's ``sql-bench``/``share/sql-bench``/``share/mysql/sql-bench``.  Without
one the helpers return ``(1, "<one line saying so>")``.
"""
from __future__ import annotations

import os
import shlex
from typing import Any

from ..platform.tools import run_tool

SUBDIRS = ("sql-bench", "share/sql-bench", "share/mysql/sql-bench", "mysql-test/sql-bench")


def find_sqlbench(test_executor: Any) -> str | None:
    """The sql-bench folder for the run, or None."""
    system = getattr(test_executor, "system_manager", None)
    candidates = [os.environ.get("SQLBENCH_DIR", "")]
    if system is not None:
        candidates.append(os.path.join(getattr(system, "testdir", ""), "sql-bench"))
        tree = getattr(system, "code_tree", None)
        basedir = getattr(tree, "basedir", "") if tree is not None else ""
        candidates += [os.path.join(basedir, sub) for sub in SUBDIRS if basedir]
    for path in candidates:
        if path and os.path.isfile(os.path.join(path, "run-all-tests")):
            return path
    return None


def missing_line() -> str:
    """The one line saying sql-bench is not there."""
    return ("sql-bench not found (crash-me and run-all-tests come with a MySQL/MariaDB source "
            "tree): set SQLBENCH_DIR, or use a --basedir that has sql-bench/")


def run_in_sqlbench(test_cmd: str, test_executor: Any, outfile_name: str) -> tuple[int, str]:
    """Run test_cmd (its first word relative to sql-bench) in the sql-bench folder."""
    home = find_sqlbench(test_executor)
    if home is None:
        return 1, missing_line()
    argv = shlex.split(test_cmd)
    if argv and not os.path.isabs(argv[0]):
        argv[0] = os.path.join(home, os.path.basename(argv[0]))
    argv = ["perl", *argv]
    log_dir = getattr(test_executor, "logdir", None) or home
    outfile = os.path.join(log_dir, outfile_name)
    try:
        result = run_tool(argv, log_path=outfile, cwd=home, tmpdir=log_dir)
    except OSError as exc:
        return 1, f"cannot run {argv[1]}: {exc.strerror or exc}"
    return result.returncode, result.output


def execute_sqlbench(test_cmd: str, test_executor: Any, servers: Any) -> tuple[int, str]:
    """Run sql-bench; (retcode, output), retcode 1 when the report shows a failure."""
    del servers  # the command names the server (--connect-options=port=N)
    retcode, output = run_in_sqlbench(test_cmd, test_executor, "sqlbench.out")
    if retcode == 0 and any(("Failed" in line or "Got error" in line)
                            for line in output.splitlines()):
        retcode = 1
    return retcode, output
