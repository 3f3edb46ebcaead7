"""One entry point for every randgen run: the built-in engine or a Perl checkout.

:func:`run_randgen` takes options (parsed from a gentest.pl command line, or
built from keywords with :func:`make_options`) and a connection.  When
``randgen_path`` is a Perl randgen checkout (it holds ``gentest.pl``), the
Perl tool runs (:mod:`lib.randgen.perl_randgen`); otherwise the built-in
engine runs, with relative grammar and gendata paths resolved against
``randgen_path`` (default: the project's ``randgen/`` folder).
"""
from __future__ import annotations

import os
import time
from typing import Any, Callable

from ..platform.logsetup import get_logger
from .cmdline import RandgenOptions, check_files, resolve_paths
from .connection import ConnectionSpec
from .errors import RandgenEnvironmentError
from .executor import RANDGEN_HOME, RandgenRun, RunLog
from .result import EXIT_CODES, STATUS_ENVIRONMENT_ERROR, RandgenResult


def make_options(grammar: str | None = None, gendata: str | bool | None = None,
                 queries: int = 1000, threads: int = 1, duration: float = 3600.0, seed: int = 1,
                 redefine: list[str] | None = None, **extra: Any) -> RandgenOptions:
    """RandgenOptions from keywords; gendata=True means the simple data set."""
    opts = RandgenOptions(tool="gentest" if grammar else "gendata", grammar=grammar,
                          redefine=list(redefine or []), queries=queries, threads=threads,
                          duration=duration, seed=seed)
    if gendata is True:
        opts.gendata_simple = True
        if not grammar:
            opts.tool = "gendata-simple"
    elif gendata:
        opts.gendata = str(gendata)
    for key, value in extra.items():
        if not hasattr(opts, key):
            raise RandgenEnvironmentError(f"unknown randgen option {key!r}")
        setattr(opts, key, value)
    return opts


def run_randgen(options: RandgenOptions, conn: ConnectionSpec, randgen_path: str | None = None,
                log_path: str | None = None, alive: Callable[[], bool] | None = None,
                echo: bool = False, server: Any = None,
                compare: list[ConnectionSpec] | None = None) -> RandgenResult:
    """Run a grammar (and/or gendata) against a server; never raises for run problems.

    server is the kewpie server behind conn, when there is one (the Shutdown,
    Recovery, Backtrace and ErrorLog reporters use it); compare are the
    servers ResultsetComparator compares with.
    """
    base = randgen_path or RANDGEN_HOME
    if options.schema:
        conn = conn.with_database(options.schema)
        compare = [c.with_database(options.schema) for c in compare or []]
    if os.path.isfile(os.path.join(base, "gentest.pl")):  # a Perl randgen checkout
        from .perl_randgen import PerlRandgen, resolve_for_perl
        try:
            perl_opts = resolve_for_perl(options, base, RANDGEN_HOME)
            result = PerlRandgen(base).run(perl_opts, conn, log_path, compare=compare)
        except RandgenEnvironmentError as exc:
            result = environment_failure(str(exc), options, log_path)
    else:
        try:
            opts = resolve_paths(options, base)
            check_files(opts, base)
            result = RandgenRun(opts, conn, log_path, alive, base, echo, server, compare).run()
        except RandgenEnvironmentError as exc:
            result = environment_failure(str(exc), options, log_path)
    get_logger().debug("randgen: " + result.summary().replace("\n", "; "))
    return result


def environment_failure(reason: str, options: RandgenOptions, log_path: str | None) -> RandgenResult:
    """A result for a run that could not start."""
    log = RunLog(log_path)
    log.write(f"{STATUS_ENVIRONMENT_ERROR}: {reason}", "ERROR")
    log.close()
    return RandgenResult(status=STATUS_ENVIRONMENT_ERROR, reason=reason,
                         exit_code=EXIT_CODES[STATUS_ENVIRONMENT_ERROR],
                         grammar=options.grammar or "", gendata=options.gendata or "",
                         seed=options.seed, started_at=time.time(), log_path=log_path or "",
                         output=log.text())
