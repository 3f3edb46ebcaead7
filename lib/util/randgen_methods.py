"""kewpie 2012's ``execute_randgen``, and the randgen load behind ``KewpieTestCase.randgen``.

``execute_randgen(test_cmd, test_executor, servers, schema='test')`` keeps
the old contract: ``test_cmd`` is the gentest.pl (or gendata.pl) command
line a test wrote, its relative paths are resolved against the randgen
folder (``test_executor.system_manager.randgen_path``: the project's
``randgen/``, or a Perl randgen checkout given with ``--randgen-path``), the
output goes to ``<logdir>/randgen.out``, and the result is
``(retcode, output)``: retcode 0 when the run passed (gentest.pl's exit
codes otherwise), output None on success unless the run is verbose.
"""
from __future__ import annotations

import os
from typing import Any

from lib.randgen.api import make_options, run_randgen
from lib.randgen.cmdline import parse_command
from lib.randgen.connection import ConnectionSpec
from lib.randgen.errors import RandgenEnvironmentError
from lib.randgen.executor import RANDGEN_HOME
from lib.randgen.result import EXIT_CODES, STATUS_ENVIRONMENT_ERROR, RandgenResult


def server_connection(server: Any, schema: str = "test") -> ConnectionSpec:
    """How to reach a kewpie server as root (its socket, and 127.0.0.1:port for Perl)."""
    return ConnectionSpec(host="127.0.0.1", port=int(server.port), user="root", password="",
                          database=schema, unix_socket=getattr(server, "socket_file", None))


def randgen_home(test_executor: Any) -> str:
    """The randgen folder of the run (--randgen-path, or the project's randgen/)."""
    system = getattr(test_executor, "system_manager", None)
    return getattr(system, "randgen_path", "") or RANDGEN_HOME


def _log_dir(test_executor: Any, server: Any) -> str:
    return getattr(test_executor, "logdir", None) or getattr(server, "vardir", None) or "."


def _alive(server: Any) -> Any:
    check = getattr(server, "is_alive", None)
    return check if callable(check) else None


def execute_randgen(test_cmd: str, test_executor: Any, servers: Any,
                    schema: str = "test") -> tuple[int, str | None]:
    """Run a gentest.pl/gendata.pl command line against servers[0]; ``(retcode, output)``."""
    server = servers[0] if isinstance(servers, (list, tuple)) else servers
    log_path = os.path.join(_log_dir(test_executor, server), "randgen.out")
    try:
        options = parse_command(test_cmd)
    except RandgenEnvironmentError as exc:
        with open(log_path, "w") as fh:
            fh.write(f"{STATUS_ENVIRONMENT_ERROR}: {exc}\n")
        return EXIT_CODES[STATUS_ENVIRONMENT_ERROR], f"{STATUS_ENVIRONMENT_ERROR}: {exc}\n"
    compare = []
    if isinstance(servers, (list, tuple)) and len(servers) > 1 and not options.compare_dsns and \
            any(v.lower().startswith("resultsetcomparator") for v in options.validators):
        compare = [server_connection(s, schema) for s in servers[1:]]  # randgen: --dsn1, --dsn2
    result = run_randgen(options, server_connection(server, schema), randgen_home(test_executor),
                         log_path, _alive(server), server=server, compare=compare)
    try:
        with open(log_path, errors="replace") as fh:
            output: str | None = fh.read()
    except OSError:
        output = result.output
    if result.exit_code == 0 and not getattr(test_executor, "verbose", False):
        output = None
    return result.exit_code, output


def randgen_load(log_dir: str, home: str, server: Any, grammar: str | None = None,
                 gendata: str | bool | None = None, queries: int = 1000, threads: int = 1,
                 duration: float = 3600.0, seed: int = 1, schema: str = "test",
                 **options: Any) -> RandgenResult:
    """Run a grammar and/or gendata against server; the RandgenResult (see lib.randgen.result).

    home is the randgen folder (``''`` for the project's); options are further
    RandgenOptions fields (``redefine``, ``engine``, ``rows``, ``querytimeout``,
    ``sqltrace``, ``max_rows``...).  The log goes to ``<log_dir>/randgen-N.log``.
    """
    n = 1
    while os.path.exists(os.path.join(log_dir, f"randgen-{n}.log")):
        n += 1
    servers = list(server) if isinstance(server, (list, tuple)) else [server]
    server = servers[0]
    others = servers[1:] + list(options.pop("compare", None) or [])
    for key in ("validators", "reporters", "transformers"):
        if isinstance(options.get(key), str):
            options[key] = [v for v in options[key].split(",") if v]
    opts = make_options(grammar, gendata, queries, threads, duration, seed, **options)
    return run_randgen(opts, server_connection(server, schema), home or RANDGEN_HOME,
                       os.path.join(log_dir, f"randgen-{n}.log"), _alive(server), server=server,
                       compare=[server_connection(s, schema) for s in others])
