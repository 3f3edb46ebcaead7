"""kewpie 2012's ``execute_randgen``, ``get_randgen_process`` and ``randgenManager``.

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
import shlex
from typing import TYPE_CHECKING, Any, Sequence

from ..home import module_command
from ..platform.process import STDOUT, Popen, spawn, with_tags

if TYPE_CHECKING:
    from ..randgen.cmdline import RandgenOptions

# lib.randgen is imported by the functions that run it, not with this module: every
# test's 2012 globals build a randgenManager, and the engine costs ~20 ms to import.


def randgen_home(test_executor: Any) -> str:
    """The randgen folder of the run (--randgen-path, or the project's randgen/)."""
    from ..randgen.executor import RANDGEN_HOME
    system = getattr(test_executor, "system_manager", None)
    return getattr(system, "randgen_path", "") or RANDGEN_HOME


def _log_dir(test_executor: Any, server: Any) -> str:
    return getattr(test_executor, "logdir", None) or getattr(server, "vardir", None) or "."


def command_options(test_cmd: str, home: str) -> "RandgenOptions":
    """The options of a 2012 randgen command line.  ``gentest.pl --gendata=X`` without
    ``--grammar`` (the 2012 backup suites' test beds) loads the data and stops on the
    built-in engine, as the Perl tool's gendata step did; a Perl checkout gets the
    command as written."""
    from ..randgen.cmdline import parse_command
    from ..randgen.perl_randgen import is_perl_randgen
    options = parse_command(test_cmd)
    if (options.tool == "gentest" and not options.grammar and not is_perl_randgen(home)
            and (options.gendata or options.gendata_simple)):
        options.tool = "gendata"
    return options


def execute_randgen(test_cmd: str, test_executor: Any, servers: Any,
                    schema: str = "test") -> tuple[int, str | None]:
    """Run a gentest.pl/gendata.pl command line against servers[0]; ``(retcode, output)``."""
    from ..randgen.api import alive_check, run_randgen, server_connection
    from ..randgen.errors import RandgenEnvironmentError
    from ..randgen.result import EXIT_CODES, STATUS_ENVIRONMENT_ERROR
    server = servers[0] if isinstance(servers, (list, tuple)) else servers
    log_path = os.path.join(_log_dir(test_executor, server), "randgen.out")
    try:
        options = command_options(test_cmd, randgen_home(test_executor))
    except RandgenEnvironmentError as exc:
        with open(log_path, "w") as fh:
            fh.write(f"{STATUS_ENVIRONMENT_ERROR}: {exc}\n")
        return EXIT_CODES[STATUS_ENVIRONMENT_ERROR], f"{STATUS_ENVIRONMENT_ERROR}: {exc}\n"
    compare = []
    if isinstance(servers, (list, tuple)) and len(servers) > 1 and not options.compare_dsns and \
            any(v.lower().startswith("resultsetcomparator") for v in options.validators):
        compare = [server_connection(s, schema) for s in servers[1:]]  # randgen: --dsn1, --dsn2
    result = run_randgen(options, server_connection(server, schema), randgen_home(test_executor),
                         log_path, alive_check(server), server=server, compare=compare)
    try:
        with open(log_path, errors="replace") as fh:
            output: str | None = fh.read()
    except OSError:
        output = result.output
    if result.exit_code == 0 and not getattr(test_executor, "verbose", False):
        output = None
    return result.exit_code, output


def randgen_dsn(server: Any, schema: str = "test") -> str:
    """kewpie 2012's ``--dsn=dbi:mysql:host=127.0.0.1:port=N:user=root:password=:database=S``."""
    return (f"--dsn=dbi:mysql:host=127.0.0.1:port={int(server.port)}:user=root:"
            f"password=:database={schema}")


def randgen_argv(cmd_sequence: Sequence[str], home: str, dsn: str) -> list[str]:
    """The command get_randgen_process runs: the Perl tool as written (in a Perl
    checkout), else ``python -m lib.randgen`` with the same options (built-in engine)."""
    from ..randgen.cmdline import TOOLS
    from ..randgen.errors import RandgenEnvironmentError
    from ..randgen.perl_randgen import is_perl_randgen
    argv = list(cmd_sequence)
    if is_perl_randgen(home):
        return argv + [dsn]
    extra: list[str] = []
    if argv and not argv[0].startswith("-"):
        tool = os.path.basename(argv[0])
        if tool not in TOOLS:
            raise RandgenEnvironmentError(f"unknown randgen tool {argv[0]!r} (expected "
                                          f"gentest.pl, gendata.pl or gendata-old.pl)")
        if TOOLS[tool] == "gendata-simple":
            extra.append("--gendata")
        argv = argv[1:]
    return [*module_command("randgen")[0], "--randgen-path", home, *extra, *argv, dsn]


def get_randgen_process(cmd_sequence: Sequence[str] | str, test_executor: Any, server: Any,
                        schema: str = "test", randgen_outfile: str | None = None,
                        shell_flag: bool = False) -> Popen[Any]:
    """Start a randgen run against server and return its process without waiting
    (kewpie 2012): the caller polls, signals or waits.  Output goes to
    randgen_outfile (default ``<logdir>/randgen.out``); the run's seed, grammar and
    options are the command's.  shell_flag is accepted for the 2012 signature (the
    command is never run through a shell)."""
    del shell_flag
    home = randgen_home(test_executor)
    sequence = shlex.split(cmd_sequence) if isinstance(cmd_sequence, str) else list(cmd_sequence)
    argv = randgen_argv(sequence, home, randgen_dsn(server, schema))
    outfile = randgen_outfile or os.path.join(_log_dir(test_executor, server), "randgen.out")
    # tagged as the server is, so that the end of the run finds a leftover load
    env = with_tags(getattr(test_executor, "working_environment", None) or None,
                    getattr(getattr(server, "settings", None), "env", None))
    env.update(module_command("randgen")[1])
    with open(outfile, "w") as out:
        return spawn(argv, env=env, cwd=home, stdout=out, stderr=STDOUT)


class randgenManager:  # noqa: N801 - the 2012 name
    """kewpie 2012's ``test_executor.randgen_manager``: the randgen folder and seed of
    the run, with helpers that run a command line against a server."""

    def __init__(self, test_executor: Any) -> None:
        self.test_executor = test_executor
        system = test_executor.system_manager
        self.randgen_path = system.randgen_path
        self.seed = system.randgen_seed

    def execute_randgen(self, test_cmd: str, server: Any,
                        schema: str = "test") -> tuple[int, str | None]:
        """See :func:`execute_randgen`."""
        return execute_randgen(test_cmd, self.test_executor, [server], schema)

    def create_test_bed(self, server: Any, spec_file: str = "conf/percona/percona.zz",
                        schema: str = "test") -> tuple[int, str | None]:
        """Load a gendata specification into server (``./gendata.pl --spec=FILE``)."""
        return self.execute_randgen(f"./gendata.pl --spec={spec_file} --seed={self.seed}",
                                    server, schema)

    def get_randgen_process(self, cmd_sequence: Sequence[str] | str, server: Any,
                            schema: str = "test") -> Popen[Any]:
        """See :func:`get_randgen_process`."""
        return get_randgen_process(cmd_sequence, self.test_executor, server, schema)
