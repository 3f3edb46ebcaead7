"""``python -m lib.randgen``: run a grammar against any server, or print sentences.

Usage::

    python -m lib.randgen --dsn=dbi:mysql:host=127.0.0.1:port=9300:user=root:database=test \\
        --gendata=conf/kewpie/transactions.zz --grammar=conf/kewpie/transactions.yy \\
        --queries=1000 --threads=4
    python -m lib.randgen --socket=/path/my.sock --grammar=conf/kewpie/transactions.yy
    python -m lib.randgen --generate=10 --grammar=conf/kewpie/transactions.yy \\
        --gendata=conf/kewpie/transactions.zz       # no server: metadata from the gendata

Every gentest.pl option is accepted (see :mod:`lib.randgen.cmdline`), plus
``--host/--port/--socket/--user/--password/--database`` instead of a DSN,
``--log PATH`` (the run's log), ``--json PATH`` (the result as JSON, ``-``
for stdout), ``--randgen-path DIR`` (the randgen folder, or a Perl checkout
to run instead), ``--generate N`` and ``--verbose``.  The exit status is
the run's exit code (0 ok, 101 server lost, 110 grammar or environment
error; see :mod:`lib.randgen.result`).
"""
from __future__ import annotations

import sys
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Sequence, TextIO

from ..platform.logsetup import configure
from .cmdline import RandgenOptions, check_files, parse_options, resolve_paths
from .errors import RandgenError
from .result import EXIT_ENVIRONMENT

if TYPE_CHECKING:
    from .connection import ConnectionSpec

OWN_VALUE_OPTIONS = ("host", "port", "socket", "user", "password", "database", "log", "json",
                     "randgen-path", "generate")


def split_args(argv: Sequence[str]) -> tuple[dict[str, str], list[str], bool]:
    """(our options, gentest options, verbose)."""
    own: dict[str, str] = {}
    rest: list[str] = []
    verbose = False
    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        name, eq, value = arg.lstrip("-").partition("=")
        if arg in ("-v", "--verbose"):
            verbose = True
        elif arg.startswith("--") and name in OWN_VALUE_OPTIONS:
            if not eq:
                if i >= len(argv):
                    raise RandgenError(f"--{name} needs a value")
                value = argv[i]
                i += 1
            own[name] = value
        else:
            rest.append(arg)
    return own, rest, verbose


def main(argv: Sequence[str] | None = None, stdout: TextIO | None = None) -> int:
    """Run the command line; return the exit status."""
    out = stdout or sys.stdout
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        out.write(__doc__ or "")
        return 0 if args else 2
    try:
        own, rest, verbose = split_args(args)
        log = configure(verbose=verbose, stream=sys.stderr)
        opts = parse_options(rest, RandgenOptions())
        if opts.tool == "gentest" and not opts.grammar and (opts.gendata or opts.gendata_simple):
            opts.tool = "gendata"
        if "generate" in own:
            return _generate(opts, own, out)
        from .api import run_randgen
        conn = _connection(opts, own)
        result = run_randgen(opts, conn, own.get("randgen-path") or None, own.get("log"),
                             echo=verbose)
    except RandgenError as exc:
        configure(stream=sys.stderr).error(str(exc))
        return exc.exit_code if exc.exit_code != 2 else EXIT_ENVIRONMENT
    for line in result.summary().splitlines():
        (log.info if result.ok else log.error)(line)
    if "json" in own:
        text = result.to_json_text()
        if own["json"] == "-":
            out.write(text + "\n")
        else:
            with open(own["json"], "w") as fh:
                fh.write(text + "\n")
    return result.exit_code


def _connection(opts: RandgenOptions, own: dict[str, str]) -> "ConnectionSpec":
    from .connection import ConnectionSpec, parse_dsn
    if opts.dsn:
        conn = parse_dsn(opts.dsn)
    else:
        conn = ConnectionSpec()
    changes: dict[str, Any] = {}
    for key, field in (("host", "host"), ("user", "user"), ("password", "password"),
                       ("database", "database"), ("socket", "unix_socket")):
        if key in own:
            changes[field] = own[key]
    if "port" in own:
        changes["port"] = int(own["port"])
    if not opts.dsn and "socket" not in own and "port" not in own:
        raise RandgenError("say where the server is: --dsn=..., --socket=PATH or --port=N")
    return replace(conn, **changes)


def _generate(opts: RandgenOptions, own: dict[str, str], out: TextIO) -> int:
    """Print sentences without a server; metadata comes from the gendata specification."""
    from .executor import RANDGEN_HOME
    from .offline import offline_generators
    base = own.get("randgen-path") or RANDGEN_HOME
    opts = resolve_paths(opts, base)
    check_files(opts, base)
    gens = offline_generators(opts, base, threads=1)
    try:
        for _ in range(int(own["generate"])):
            sentence = gens[0].next_sentence()
            out.write((sentence if sentence is not None else f"-- dropped: {gens[0].warnings[-1]}")
                      + "\n")
    finally:
        for g in gens:
            g.close()
    return 0
