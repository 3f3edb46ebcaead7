"""kewpie 2012's ``lib.util.crashme_methods``: run sql-bench's ``crash-me``.

``execute_crashme(test_cmd, test_executor, servers)`` writes 2012's crash-me
configuration (``crashme.cfg`` in the workdir: no ``+`` for concatenation,
1 MB text and string limits), appends ``--config-file=<it>`` to the command
line the test wrote (``"$SQLBENCH_DIR/crash-me --server=mysqld --host=127.0.0.1
--force --dir=$MYSQL_TEST_WORKDIR --connect-options=port=$MASTER_MYPORT
--user=root"``) and runs it through a shell in the sql-bench folder with the
executor's working environment (:mod:`lib.kewpie2012.sqlbench_methods`).  It
returns 2012's ``(test_status, retcode, output)``: ``'pass'`` when crash-me
exited 0 and the limits file it wrote (named in its output) has no
``=error`` entry; ``'fail'`` otherwise, with the error entries added to the
output.  The output is also in ``<logdir>/crashme.out``.  Without sql-bench:
``('fail', 1, "<one line saying so>")``.
"""
from __future__ import annotations

import os
from typing import Any

from .sqlbench_methods import find_sqlbench, missing_line, run_in_sqlbench

CONFIG_NAME = "crashme.cfg"
CONFIG_LINES = ("func_extra_concat_as_+=no", "max_text_size=1048576",
                "where_string_size=1048576", "select_string_size=1048576")


def prepare_config(test_executor: Any) -> str:
    """Write crash-me's configuration in the workdir (fresh each time); its path."""
    system = getattr(test_executor, "system_manager", None)
    workdir = getattr(system, "workdir", None) or getattr(test_executor, "logdir", None) or "."
    path = os.path.join(workdir, CONFIG_NAME)
    with open(path, "w") as fh:
        fh.write("\n".join(CONFIG_LINES) + "\n")
    return path


def limits_file(output: str, home: str) -> str | None:
    """The limits file crash-me names in its output (``...: <file>`` on one of its first
    lines, relative to the sql-bench folder), or None."""
    for line in output.splitlines()[:10]:
        if ":" not in line:
            continue
        candidate = line.split(":", 1)[1].strip()
        if candidate.endswith(".cfg"):
            path = candidate if os.path.isabs(candidate) else os.path.join(home, candidate)
            if os.path.isfile(path):
                return path
    return None


def error_entries(path: str) -> list[str]:
    """The ``=error`` entries of a limits file, with the comment lines that follow them."""
    entries: list[str] = []
    in_error = False
    with open(path, errors="replace") as fh:
        for line in fh:
            if in_error and not line.strip().startswith("#"):
                in_error = False
            if "=error" in line:
                in_error = True
            if in_error:
                entries.append(line.rstrip("\n"))
    return entries


def execute_crashme(test_cmd: str, test_executor: Any, servers: Any) -> tuple[str, int, str]:
    """Run crash-me; ``(test_status, retcode, output)`` (see the module docstring)."""
    home = find_sqlbench(test_executor)
    if home is None:
        return "fail", 1, missing_line()
    config = prepare_config(test_executor)
    command = f"{test_cmd} --config-file={config}"
    retcode, output = run_in_sqlbench(command, test_executor, servers, home, "crashme.out")
    if retcode != 0:
        return "fail", retcode, output
    found = limits_file(output, home)
    errors = error_entries(found) if found else []
    if errors:
        return "fail", retcode, output + "\n" + "\n".join(errors)
    return "pass", retcode, output
