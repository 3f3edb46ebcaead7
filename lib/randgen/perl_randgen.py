"""Running a user's Perl randgen checkout (``--randgen-path=DIR`` with ``gentest.pl``).

The Perl tool runs from its folder (``perl gentest.pl ... --dsn=...``,
``RQG_HOME`` set, output unbuffered with ``PERLIO=:unix``), its output goes
line by line to the log file, and its exit code is mapped to a status:

=========  ==================  ==================================================
exit       status              gentest.pl's meaning
=========  ==================  ==================================================
0          ok                  (but ``grammar_error`` if the log shows "Internal
                               grammar error" or "Possible endless loop")
101        server_lost         STATUS_SERVER_CRASHED
100,       failure             critical failure, server killed, replication,
102-109                        recovery, corruption, deadlock, backup, valgrind,
                               alarm
110        environment_error   STATUS_ENVIRONMENT_FAILURE
1, 2, 255  tool_error          Perl died, bad options, internal error
=========  ==================  ==================================================
"""
from __future__ import annotations

import os
import shutil
import time
from types import MappingProxyType
from typing import Mapping

from lib.platform.tools import run_tool
from lib.randgen.cmdline import RandgenOptions
from lib.randgen.connection import ConnectionSpec
from lib.randgen.executor import RunLog
from lib.randgen.result import (STATUS_ENVIRONMENT_ERROR, STATUS_FAILURE, STATUS_GRAMMAR_ERROR,
                                STATUS_OK, STATUS_SERVER_LOST, STATUS_TOOL_ERROR, RandgenResult)

EXIT_NAMES: Mapping[int, str] = MappingProxyType({
    0: "STATUS_OK", 1: "internal error", 2: "unknown error / bad usage",
    100: "STATUS_CRITICAL_FAILURE", 101: "STATUS_SERVER_CRASHED", 102: "STATUS_SERVER_KILLED",
    103: "STATUS_REPLICATION_FAILURE", 104: "STATUS_RECOVERY_FAILURE",
    105: "STATUS_DATABASE_CORRUPTION", 106: "STATUS_SERVER_DEADLOCKED",
    107: "STATUS_BACKUP_FAILURE", 108: "STATUS_VALGRIND_FAILURE", 109: "STATUS_ALARM",
    110: "STATUS_ENVIRONMENT_FAILURE", 255: "STATUS_PERL_FAILURE",
})
SILENT_FAILURE_MARKS = ("Internal grammar error", "Possible endless loop")
SCRIPTS: Mapping[str, str] = MappingProxyType({"gentest": "gentest.pl", "gendata": "gendata.pl",
                                               "gendata-simple": "gendata-old.pl"})


def is_perl_randgen(path: str | None) -> bool:
    """True when path is a Perl randgen checkout (it has gentest.pl)."""
    return bool(path) and os.path.isfile(os.path.join(str(path), "gentest.pl"))


def map_exit_code(code: int, output: str) -> tuple[str, str]:
    """(status, reason) for gentest.pl's exit code and output."""
    if code == 0:
        for mark in SILENT_FAILURE_MARKS:
            if mark in output:
                line = next((ln for ln in output.splitlines() if mark in ln), mark)
                return STATUS_GRAMMAR_ERROR, f"exit 0, but the log shows: {line.strip()[:300]}"
        return STATUS_OK, ""
    name = EXIT_NAMES.get(code, "")
    label = f"exit {code}" + (f" ({name})" if name else "")
    if code < 0:
        return STATUS_TOOL_ERROR, f"gentest.pl killed by signal {-code}"
    if code == 101:
        return STATUS_SERVER_LOST, label
    if code == 100 or 102 <= code <= 109:
        return STATUS_FAILURE, label
    if code == 110:
        return STATUS_ENVIRONMENT_ERROR, label
    if code in (1, 2, 255):
        return STATUS_TOOL_ERROR, label
    return STATUS_FAILURE, label


def options_to_args(opts: RandgenOptions) -> list[str]:
    """gentest.pl arguments for options (the original ones when parsed from a command)."""
    if opts.args:
        return [a for a in opts.args if not a.startswith("--dsn")]
    args: list[str] = []
    if opts.grammar:
        args.append(f"--grammar={opts.grammar}")
    args += [f"--redefine={r}" for r in opts.redefine]
    if opts.gendata:
        args.append(f"--gendata={opts.gendata}" if opts.tool == "gentest" else f"--spec={opts.gendata}")
    elif opts.gendata_simple and opts.tool == "gentest":
        args.append("--gendata")
    if opts.tool == "gentest":
        args += [f"--queries={opts.queries}", f"--threads={opts.threads}",
                 f"--duration={int(opts.duration)}"]
    args.append(f"--seed={opts.seed}")
    if opts.engine:
        args.append(f"--engine={opts.engine}")
    if opts.rows:
        args.append("--rows=" + ",".join(str(r) for r in opts.rows))
    if opts.varchar_length != 1:
        args.append(f"--varchar-length={opts.varchar_length}")
    if opts.views is not None:
        args.append(f"--views={opts.views}" if opts.views else "--views")
    for flag in ("notnull", "short_column_names", "strict_fields"):
        if getattr(opts, flag):
            args.append(f"--{flag}")
    if opts.sqltrace:
        args.append("--sqltrace")
    return args


class PerlRandgen:
    """A Perl randgen checkout and the ``perl`` to run it with."""

    def __init__(self, path: str, perl: str | None = None) -> None:
        self.path = os.path.abspath(path)
        self.perl = perl or shutil.which("perl") or "/usr/bin/perl"

    def command(self, opts: RandgenOptions, conn: ConnectionSpec) -> list[str]:
        """The argv that runs the tool for these options against conn."""
        script = SCRIPTS.get(opts.tool, "gentest.pl")
        return [self.perl, script, *options_to_args(opts), f"--dsn={conn.dbi_dsn()}"]

    def run(self, opts: RandgenOptions, conn: ConnectionSpec, log_path: str | None = None,
            timeout: float | None = None) -> RandgenResult:
        """Run the tool, stream its output to the log, map its exit code."""
        log = RunLog(log_path)
        res = RandgenResult(engine="perl", grammar=opts.grammar or "", gendata=opts.gendata or "",
                            seed=opts.seed, threads=opts.threads, log_path=log_path or "",
                            started_at=time.time())
        argv = self.command(opts, conn)
        env = dict(os.environ, RQG_HOME=self.path, PERLIO=":unix")
        log.write(f"Perl randgen: {' '.join(argv)} (in {self.path})")

        def on_line(line: str) -> None:
            """Log each line as it comes; note when statements start."""
            if res.first_statement_at is None and ("Starting" in line or "Query" in line):
                res.first_statement_at = time.time()
            log.write(line)

        try:
            ran = run_tool(argv, cwd=self.path, env=env, timeout=timeout, on_line=on_line)
        except OSError as exc:
            res.status, res.reason = STATUS_ENVIRONMENT_ERROR, f"cannot run {argv[0]}: {exc}"
            res.exit_code = 110
            log.write(res.reason, "ERROR")
            log.close()
            res.output = log.text()
            return res
        code = ran.returncode
        res.duration = ran.seconds
        if ran.timed_out:
            res.status, res.reason = STATUS_TOOL_ERROR, (f"gentest.pl did not finish within "
                                                         f"{timeout:g}s and was stopped")
        else:
            res.status, res.reason = map_exit_code(code, "\n".join(ran.lines))
        res.exit_code = 110 if code == 0 and res.status != STATUS_OK else code
        log.write(f"gentest.pl exit {code}: status {res.status}" +
                  (f" ({res.reason})" if res.reason else ""))
        log.close()
        res.output = log.text()
        return res
