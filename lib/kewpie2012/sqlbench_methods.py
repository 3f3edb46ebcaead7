"""kewpie 2012's ``lib.util.sqlbench_methods``: run sql-bench's ``run-all-tests``.

``execute_sqlbench(test_cmd, test_executor, servers)`` runs the command line a
test wrote through a shell, as 2012 did, in the sql-bench folder and with
``test_executor.working_environment`` (``$SQLBENCH_DIR``, ``$MASTER_MYPORT``,
``$MYSQL_TEST_WORKDIR``... :func:`lib.kewpie2012.context.working_environment`), so
``"$SQLBENCH_DIR/run-all-tests --server=mysql --dir=$MYSQL_TEST_WORKDIR --log
--connect-options=port=$MASTER_MYPORT --user=root"`` works as written.  It
returns 2012's ``(test_status, retcode, output)``: test_status is ``'pass'``
when the command exited 0 and no line of its report says ``Failed``, else
``'fail'``; retcode is the command's; the output is also in
``<logdir>/sqlbench.out``.

sql-bench is part of a MySQL/MariaDB source tree, not of any Debian package:
it is looked for in ``$SQLBENCH_DIR`` (of ``test_executor.working_environment``,
then of kewpie's environment), ``<kewpie>/sql-bench`` (2012's place),
and the code tree's ``sql-bench``/``share/sql-bench``/``share/mysql/sql-bench``.
Without one the helpers return ``('fail', 1, "<one line saying so>")``.
"""
from __future__ import annotations

import os
from typing import Any

from ..platform.process import with_tags
from ..platform.tools import run_tool

SUBDIRS = ("sql-bench", "share/sql-bench", "share/mysql/sql-bench", "mysql-test/sql-bench")
MARKERS = ("run-all-tests", "crash-me")
CMD_TIMEOUT = 6 * 3600.0  # a full sql-bench run takes hours


def find_sqlbench(test_executor: Any) -> str | None:
    """The sql-bench folder for the run, or None."""
    system = getattr(test_executor, "system_manager", None)
    working: dict[str, str] = getattr(test_executor, "working_environment", None) or {}
    candidates: list[str] = [working.get("SQLBENCH_DIR", ""),
                             os.environ.get("SQLBENCH_DIR", "")]
    if system is not None:
        candidates.append(os.path.join(getattr(system, "testdir", ""), "sql-bench"))
        tree = getattr(system, "code_tree", None)
        basedir = getattr(tree, "basedir", "") if tree is not None else ""
        candidates += [os.path.join(basedir, sub) for sub in SUBDIRS if basedir]
    for path in candidates:
        if path and any(os.path.isfile(os.path.join(path, m)) for m in MARKERS):
            return os.path.abspath(path)
    return None


def missing_line() -> str:
    """The one line saying sql-bench is not there."""
    return ("sql-bench not found (crash-me and run-all-tests come with a MySQL/MariaDB source "
            "tree): set SQLBENCH_DIR, or use a --basedir that has sql-bench/")


def run_in_sqlbench(test_cmd: str, test_executor: Any, servers: Any, home: str,
                    outfile_name: str) -> tuple[int, str]:
    """Run the shell command line test_cmd in the sql-bench folder home with the
    executor's working environment (``SQLBENCH_DIR`` is home); (retcode, output)."""
    env = dict(getattr(test_executor, "working_environment", None) or os.environ)
    env["SQLBENCH_DIR"] = home
    tags = next((getattr(getattr(s, "settings", None), "env", None) for s in servers or ()),
                None)
    log_dir = getattr(test_executor, "logdir", None) or home
    outfile = os.path.join(log_dir, outfile_name)
    logging = getattr(test_executor, "logging", None)
    if logging is not None:
        logging.info(f"Executing {outfile_name[:-4]}:  {test_cmd}")
    try:
        result = run_tool(["/bin/sh", "-c", test_cmd], log_path=outfile, cwd=home,
                          env=with_tags(env, tags), tmpdir=log_dir, timeout=CMD_TIMEOUT)
    except OSError as exc:
        return 1, f"cannot run {test_cmd}: {exc.strerror or exc}"
    return result.returncode, result.output


def execute_sqlbench(test_cmd: str, test_executor: Any, servers: Any) -> tuple[str, int, str]:
    """Run sql-bench; ``(test_status, retcode, output)`` (see the module docstring)."""
    home = find_sqlbench(test_executor)
    if home is None:
        return "fail", 1, missing_line()
    retcode, output = run_in_sqlbench(test_cmd, test_executor, servers, home, "sqlbench.out")
    failed = [line for line in output.splitlines() if "Failed" in line]
    logging = getattr(test_executor, "logging", None)
    if logging is not None:
        for line in failed:
            logging.info(line.strip())
    return ("pass" if retcode == 0 and not failed else "fail"), retcode, output
