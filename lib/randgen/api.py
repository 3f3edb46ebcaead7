"""One entry point for every randgen run: the built-in engine or a Perl checkout.

:func:`run_randgen` takes options (parsed from a gentest.pl command line, or
built from keywords with :func:`make_options`) and a connection;
:func:`randgen_load` runs one against a kewpie server (``KewpieTestCase.randgen``,
``--gendata``).  When
``randgen_path`` is a Perl randgen checkout (it holds ``gentest.pl``), the
Perl tool runs (:mod:`lib.randgen.perl_randgen`); otherwise the built-in
engine runs, with relative grammar and gendata paths resolved against
``randgen_path`` (default: the project's ``randgen/`` folder).
"""
from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any, Callable

from ..platform.logsetup import get_logger
from .cmdline import RandgenOptions, check_files, resolve_paths
from .connection import ConnectionSpec
from .errors import RandgenEnvironmentError
from .executor import RANDGEN_HOME, RandgenRun, RunLog
from .result import EXIT_CODES, STATUS_ENVIRONMENT_ERROR, RandgenResult

if TYPE_CHECKING:
    from ..servers.server import Server


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
                echo: bool = False, server: Server | None = None,
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


def server_connection(server: Server, schema: str = "test") -> ConnectionSpec:
    """How to reach a kewpie server as root (its socket, and 127.0.0.1:port for Perl)."""
    return ConnectionSpec(host="127.0.0.1", port=int(server.port), user="root", password="",
                          database=schema, unix_socket=getattr(server, "socket_file", None))


def alive_check(server: Server) -> Callable[[], bool] | None:
    """The server's ``is_alive`` (the engine tells a lost server from a failed query)."""
    check = getattr(server, "is_alive", None)
    return check if callable(check) else None


def randgen_load(log_dir: str, home: str, server: Server | list[Server] | tuple[Server, ...],
                 grammar: str | None = None, gendata: str | bool | None = None,
                 queries: int = 1000, threads: int = 1, duration: float = 3600.0, seed: int = 1,
                 schema: str = "test", **options: Any) -> RandgenResult:
    """Run a grammar and/or gendata against server; the RandgenResult (see lib.randgen.result).

    home is the randgen folder (``''`` for the project's); server may be a list (the
    first runs the load, ResultsetComparator compares the others, as ``compare=``
    does); options are further RandgenOptions fields (``redefine``, ``engine``,
    ``rows``, ``querytimeout``, ``sqltrace``, ``max_rows``...).  The log goes to
    ``<log_dir>/randgen-N.log``.
    """
    n = 1
    while os.path.exists(os.path.join(log_dir, f"randgen-{n}.log")):
        n += 1
    servers = list(server) if isinstance(server, (list, tuple)) else [server]
    first = servers[0]
    others = servers[1:] + list(options.pop("compare", None) or [])
    for key in ("validators", "reporters", "transformers"):
        if isinstance(options.get(key), str):
            options[key] = [v for v in options[key].split(",") if v]
    opts = make_options(grammar, gendata, queries, threads, duration, seed, **options)
    return run_randgen(opts, server_connection(first, schema), home or RANDGEN_HOME,
                       os.path.join(log_dir, f"randgen-{n}.log"), alive_check(first),
                       server=first, compare=[server_connection(s, schema) for s in others])
