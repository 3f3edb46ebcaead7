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
import re
import shutil
import time
from types import MappingProxyType
from typing import Mapping

from ..platform.tools import run_tool
from .cmdline import RandgenOptions
from .connection import ConnectionSpec
from .errors import RandgenEnvironmentError
from .executor import RunLog
from .result import (STATUS_ENVIRONMENT_ERROR, STATUS_FAILURE, STATUS_GRAMMAR_ERROR,
                     STATUS_OK, STATUS_SERVER_LOST, STATUS_TOOL_ERROR, RandgenResult)

# GenTest::Constants of MariaDB/randgen master
EXIT_NAMES: Mapping[int, str] = MappingProxyType({
    0: "STATUS_OK", 1: "internal error", 2: "unknown error / bad usage",
    100: "STATUS_CRITICAL_FAILURE", 101: "STATUS_SERVER_CRASHED", 102: "STATUS_SERVER_KILLED",
    103: "STATUS_REPLICATION_FAILURE", 104: "STATUS_UPGRADE_FAILURE",
    105: "STATUS_RECOVERY_FAILURE", 106: "STATUS_DATABASE_CORRUPTION",
    107: "STATUS_SERVER_DEADLOCKED", 108: "STATUS_BACKUP_FAILURE",
    109: "STATUS_VALGRIND_FAILURE", 110: "STATUS_ENVIRONMENT_FAILURE / STATUS_ALARM",
    255: "STATUS_PERL_FAILURE",
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


def _resolve_one(path: str, base: str, home: str, label: str) -> str:
    """A path for gentest.pl: relative to its checkout when there, else kewpie's own file."""
    if os.path.isabs(path):
        if not os.path.isfile(path):
            raise RandgenEnvironmentError(f"{label} not found: {path}")
        return path
    if os.path.isfile(os.path.join(base, path)):
        return path
    if os.path.isfile(os.path.join(home, path)):
        return os.path.join(home, path)  # kewpie's own grammars (conf/kewpie/...)
    raise RandgenEnvironmentError(f"{label} not found: {path} (looked in the Perl randgen "
                                  f"checkout {base} and in kewpie's {home})")


def resolve_for_perl(opts: RandgenOptions, base: str, home: str) -> RandgenOptions:
    """Options for gentest.pl in checkout base: paths checked, kewpie's grammars from home.

    A missing grammar, redefine or gendata file is a RandgenEnvironmentError
    (exit 110, as the built-in engine), not gentest.pl's exit 2.
    """
    changes: dict[str, object] = {}
    if opts.grammar:
        changes["grammar"] = _resolve_one(opts.grammar, base, home, "grammar")
    if opts.redefine:
        changes["redefine"] = [_resolve_one(p, base, home, "redefine grammar") for p in opts.redefine]
    if opts.gendata:
        changes["gendata"] = _resolve_one(opts.gendata, base, home, "gendata file")
    if opts.args:
        args = []
        for arg in opts.args:
            name, eq, value = arg.partition("=")
            key = name.lstrip("-").lower()
            if eq and key in ("grammar", "gendata", "spec") and value:
                value = _resolve_one(value, base, home, "gendata file" if key != "grammar"
                                     else "grammar")
            elif eq and key == "redefine":
                value = ",".join(_resolve_one(v, base, home, "redefine grammar")
                                 for v in value.split(",") if v)
            args.append(f"{name}={value}" if eq else arg)
        changes["args"] = args
    return opts.with_changes(**changes)


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
    if opts.querytimeout:
        args.append(f"--querytimeout={opts.querytimeout:g}")
    for key in ("validators", "reporters", "transformers"):
        if getattr(opts, key):
            args.append(f"--{key}=" + ",".join(getattr(opts, key)))
    args += [f"--dsn{i}={d}" for i, d in enumerate(opts.compare_dsns, start=2)]
    for note in opts.ignored:  # options only the Perl tool knows, as the test gave them
        args += note.split(" ", 1)
    return args


_STARTING_RE = re.compile(r"Starting (\d+) processes, (\d+) queries each")
_FAILED_RE = re.compile(r"Query: (.*?) failed: (\d+) (.*?)(?:\. Further errors.*)?$")


def count_output(res: RandgenResult, lines: list[str], opts: RandgenOptions) -> None:
    """Queries (sentences) and error samples from gentest.pl's output."""
    for line in lines:
        m = _STARTING_RE.search(line)
        if m:
            res.threads = int(m.group(1))
            res.sentences = int(m.group(1)) * int(m.group(2))  # the planned queries
        f = _FAILED_RE.search(line)
        if f:
            code = int(f.group(2))
            res.error_samples.setdefault(code, f"{f.group(3)} [sql: {f.group(1)[:300]}]")
            res.errors[code] = res.errors.get(code, 0) + 1  # ErrorFilter shows each kind once


def server_questions(conn: ConnectionSpec) -> int | None:
    """The server's global Questions counter (None when it cannot be read)."""
    try:
        c = conn.connect(connect_timeout=5)
    except RandgenEnvironmentError:
        return None
    try:
        with c.cursor() as cur:
            cur.execute("SHOW GLOBAL STATUS LIKE 'Questions'")
            row = cur.fetchone()
            return int(row[1]) if row else None
    except Exception:  # noqa: BLE001 - a count is a nicety; the run's outcome stands
        return None
    finally:
        c.close()


class PerlRandgen:
    """A Perl randgen checkout and the ``perl`` to run it with."""

    def __init__(self, path: str, perl: str | None = None) -> None:
        self.path = os.path.abspath(path)
        self.perl = perl or shutil.which("perl") or "/usr/bin/perl"

    def command(self, opts: RandgenOptions, conn: ConnectionSpec,
                compare: list[ConnectionSpec] | None = None) -> list[str]:
        """The argv that runs the tool for these options against conn (and compare servers)."""
        script = SCRIPTS.get(opts.tool, "gentest.pl")
        if compare:
            return [self.perl, script, *[a for a in options_to_args(opts)
                                         if not a.startswith(("--dsn1", "--dsn2", "--dsn3"))],
                    f"--dsn1={conn.dbi_dsn()}",
                    *[f"--dsn{i}={c.dbi_dsn()}" for i, c in enumerate(compare, start=2)]]
        return [self.perl, script, *options_to_args(opts), f"--dsn={conn.dbi_dsn()}"]

    def run(self, opts: RandgenOptions, conn: ConnectionSpec, log_path: str | None = None,
            timeout: float | None = None,
            compare: list[ConnectionSpec] | None = None) -> RandgenResult:
        """Run the tool, stream its output to the log, map its exit code."""
        log = RunLog(log_path)
        res = RandgenResult(engine="perl", grammar=opts.grammar or "", gendata=opts.gendata or "",
                            seed=opts.seed, threads=opts.threads, log_path=log_path or "",
                            started_at=time.time())
        argv = self.command(opts, conn, compare)
        env = dict(os.environ, RQG_HOME=self.path, PERLIO=":unix")
        log.write(f"Perl randgen: {' '.join(argv)} (in {self.path})")

        def on_line(line: str) -> None:
            """Log each line as it comes; note when statements start."""
            if res.first_statement_at is None and ("Starting" in line or "Query" in line):
                res.first_statement_at = time.time()
            log.write(line)

        before = server_questions(conn)
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
        count_output(res, ran.lines, opts)
        after = server_questions(conn)
        if before is not None and after is not None and after >= before:
            # gentest.pl prints no totals: the server's Questions counter (gendata, metadata
            # and the tool's own queries included) is the statement count
            res.statements = after - before - 1
            res.notes.append("statements: the server's Questions counter over the run "
                             "(gendata and the Perl tool's own queries included)")
        log.write(f"gentest.pl exit {code}: status {res.status}" +
                  (f" ({res.reason})" if res.reason else "") +
                  f"; {res.sentences} queries, {res.statements} statements (server count)")
        log.close()
        res.output = log.text()
        return res
