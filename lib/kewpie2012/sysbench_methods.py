"""kewpie 2012's ``lib.util.sysbench_methods``: sysbench 0.4 command lines on sysbench 1.0.

``prepare_sysbench(test_executor, test_cmd)`` and
``execute_sysbench(test_executor, test_cmd)`` append ``prepare`` / ``run`` to
the command a test wrote and return ``(retcode, output)`` (output in
``<logdir>/sysbench.out``); ``process_sysbench_output(output)`` gives the
figures as a dict (``tps``, ``rwreqps``, ``deadlocksps``, ``min_req_lat_ms``,
``avg_req_lat_ms``, ``max_req_lat_ms``, ``95p_req_lat_ms``).

Old tests wrote sysbench 0.4 options; :func:`modern_sysbench_argv` maps
them to sysbench 1.0 (the one installed): ``--test=oltp`` becomes the
``oltp_read_write`` script (``oltp_read_only`` with ``--oltp-read-only=on``),
``--max-time`` ``--time``, ``--max-requests`` ``--events``,
``--num-threads`` ``--threads``, ``--oltp-table-size`` ``--table-size``,
``--oltp-tables-count`` ``--tables``, ``--mysql-table-engine``
``--mysql-storage-engine``; 0.4-only tuning options (``--oltp-test-mode``,
``--oltp-dist-type``, ``--init-rng``...) are dropped.  1.0 command lines
pass through unchanged.

``sysbench_db_analysis(dsn_string, test_data)`` and ``getSysbenchReport(run,
fetch)``, 2012's results-database analysis and per-iteration report, are
:mod:`lib.kewpie2012.sysbench_report`'s, importable from here as in 2012.
"""
from __future__ import annotations

import os
import re
import shlex
from types import MappingProxyType
from typing import Any, Mapping, Sequence

from ..platform.tools import run_tool
from .sysbench_report import getSysbenchReport, sysbench_db_analysis

__all__ = ("modern_sysbench_argv", "prepare_sysbench", "execute_sysbench", "cleanup_sysbench",
           "process_sysbench_output", "sysbench_report", "sysbench_db_analysis",
           "getSysbenchReport")

RENAMED: Mapping[str, str] = MappingProxyType({
    "--max-time": "--time", "--max-requests": "--events", "--num-threads": "--threads",
    "--oltp-table-size": "--table-size", "--oltp-tables-count": "--tables",
    "--mysql-table-engine": "--mysql-storage-engine",
})
DROPPED = ("--oltp-test-mode", "--oltp-dist-type", "--oltp-dist-pct", "--oltp-dist-res",
           "--init-rng", "--oltp-read-only", "--oltp-nontrx-mode", "--oltp-auto-inc",
           "--oltp-connect-delay", "--oltp-user-delay-min", "--oltp-user-delay-max",
           "--oltp-reconnect-mode", "--myisam-max-rows", "--mysql-engine-trx")
LEGACY_TESTS: Mapping[str, str] = MappingProxyType({"oltp": "oltp_read_write"})
PATTERNS: Mapping[str, "re.Pattern[str]"] = MappingProxyType({
    "tps": re.compile(r"transactions:\s+\d+\D*(\d+\.\d+)"),
    "deadlocksps": re.compile(r"deadlocks:\s+\d+\D*(\d+\.\d+)"),
    "rwreqps": re.compile(r"(?:read/write requests|queries):\s+\d+\D*(\d+\.\d+)"),
    "min_req_lat_ms": re.compile(r"^\s*min:\s+(\d*\.?\d+)"),
    "max_req_lat_ms": re.compile(r"^\s*max:\s+(\d*\.?\d+)"),
    "avg_req_lat_ms": re.compile(r"^\s*avg:\s+(\d*\.?\d+)"),
    "95p_req_lat_ms": re.compile(r"95(?:th)? percentile:\s+(\d*\.?\d+)"),
})


def modern_sysbench_argv(test_cmd: str | Sequence[str]) -> list[str]:
    """A sysbench 0.4 command line as sysbench 1.0 takes it (see the module docstring)."""
    argv = shlex.split(test_cmd) if isinstance(test_cmd, str) else list(test_cmd)
    if not argv:
        return argv
    out = [argv[0]]
    test = None
    read_only = False
    for arg in argv[1:]:
        name, eq, value = arg.partition("=")
        if name == "--test":
            test = LEGACY_TESTS.get(value, value)
        elif name == "--oltp-read-only":
            read_only = value.lower() in ("on", "1", "yes", "true")
        elif name in DROPPED:
            continue
        elif name in RENAMED:
            out.append(f"{RENAMED[name]}{eq}{value}")
        else:
            out.append(arg)
    if test == "oltp_read_write" and read_only:
        test = "oltp_read_only"
    if test:
        out.append(test)
    return out


def _run(test_executor: Any, test_cmd: str | Sequence[str], command: str) -> tuple[int, str]:
    """Run sysbench COMMAND (prepare/run/cleanup); (retcode, output)."""
    argv = modern_sysbench_argv(test_cmd)
    argv = [a for a in argv if a not in ("prepare", "run", "cleanup")] + [command]
    log_dir = getattr(test_executor, "logdir", None) or "."
    outfile = os.path.join(log_dir, "sysbench.out")
    try:
        result = run_tool(argv, log_path=outfile, tmpdir=log_dir)
    except OSError as exc:
        return 1, f"cannot run {argv[0]}: {exc.strerror or exc}"
    return result.returncode, result.output


def prepare_sysbench(test_executor: Any, test_cmd: str | Sequence[str]) -> tuple[int, str]:
    """``sysbench ... prepare``; (retcode, output)."""
    return _run(test_executor, test_cmd, "prepare")


def execute_sysbench(test_executor: Any, test_cmd: str | Sequence[str]) -> tuple[int, str]:
    """``sysbench ... run``; (retcode, output)."""
    return _run(test_executor, test_cmd, "run")


def cleanup_sysbench(test_executor: Any, test_cmd: str | Sequence[str]) -> tuple[int, str]:
    """``sysbench ... cleanup``; (retcode, output)."""
    return _run(test_executor, test_cmd, "cleanup")


def process_sysbench_output(test_output: str) -> dict[str, float]:
    """The figures of a sysbench run's report (0.4 or 1.0 layout)."""
    run: dict[str, float] = {}
    for line in test_output.splitlines():
        for key, pattern in PATTERNS.items():
            match = pattern.search(line)
            if match and key not in run:
                run[key] = float(match.group(1))
    return run


def sysbench_report(run: dict[str, float]) -> str:
    """One line of the figures, as kewpie 2012 logged them."""
    return " ".join(f"{key}: {run[key]}" for key in sorted(run))
