"""randgen command lines: ``gentest.pl``/``gendata.pl`` options as kewpie tests wrote them.

:func:`parse_command` reads ``./gentest.pl --gendata=conf/percona/x.zz
--grammar=conf/percona/y.yy --queries=1000 --threads=1`` (or ``./gendata.pl
--spec=...``, or ``gendata-old.pl``) into :class:`RandgenOptions`.  Options
accept ``--name=value`` and ``--name value``; options that only tune the
Perl tool (validators, reporters, XML reports...) are accepted and listed
in ``ignored``; an unknown option is an error.  :func:`resolve_paths` makes
grammar and gendata paths absolute against the randgen folder.
"""
from __future__ import annotations

import os
import shlex
import time
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Mapping, Sequence

from .errors import RandgenEnvironmentError

DEFAULT_THREADS = 10
DEFAULT_QUERIES = 1000
DEFAULT_DURATION = 3600.0

# options gentest.pl knows that tune only the Perl tool: accepted, noted, ignored
IGNORED_OPTIONS = frozenset({
    "report-xml-tt", "report-xml-tt-type", "report-xml-tt-dest", "xml-output", "testname",
    "logfile", "logconf", "report-tt-logdir", "filter", "valgrind", "valgrind-xml", "mask",
    "mask-level", "metadata", "no-metadata", "no-err-filter", "freeze_time", "debug-server",
    "annotate-rules", "annotate_rules", "ps-protocol", "rpl_mode", "basedir", "mysqld",
    "generator", "skip-recursive-rules", "partitions", "config", "restart-timeout",
    "vardir", "mtr-build-thread", "gendata-advanced", "gendata_advanced", "servers",
    "multi-master", "compatibility", "vcols", "engine1", "engine2", "engine3", "views1",
    "views2", "views3",
})
VALUE_OPTIONS = frozenset({
    "grammar", "redefine", "queries", "threads", "duration", "seed", "dsn", "engine", "rows",
    "varchar-length", "spec", "querytimeout", "max-rows", "perl-blocks", "schema",
    "metadata-refresh", "validators", "validator", "reporters", "reporter", "transformers",
    "transformer", "dsn1", "dsn2", "dsn3", "deadlock-timeout", "processes",
})
OPTIONAL_VALUE_OPTIONS = frozenset({"gendata", "views", "sqltrace"})
FLAG_OPTIONS = frozenset({"notnull", "short_column_names", "strict_fields", "debug", "start-dirty",
                          "help"})
TOOLS: Mapping[str, str] = MappingProxyType({
    "gentest.pl": "gentest", "gendata.pl": "gendata", "gendata-old.pl": "gendata-simple",
    "gentest": "gentest", "gendata": "gendata"})


@dataclass
class RandgenOptions:
    """What to run: grammar, gendata, load shape, seed, and gendata's own options."""

    tool: str = "gentest"                 # gentest, gendata, gendata-simple
    grammar: str | None = None
    redefine: list[str] = field(default_factory=list)
    gendata: str | None = None            # a .zz file
    gendata_simple: bool = False          # --gendata without a file
    queries: int = DEFAULT_QUERIES
    threads: int = DEFAULT_THREADS
    duration: float = DEFAULT_DURATION
    seed: int = 1
    engine: str | None = None
    rows: list[int] | None = None
    varchar_length: int = 1
    views: str | None = None
    notnull: bool = False
    short_column_names: bool = False
    strict_fields: bool = False
    sqltrace: bool = False
    debug: bool = False
    start_dirty: bool = False
    querytimeout: float = 0.0
    dsn: str | None = None
    schema: str | None = None
    max_rows: int | None = None           # kewpie: cap gendata rows per table
    perl_blocks: str = "auto"             # kewpie: auto, native or perl
    metadata_refresh: float = 0.5         # kewpie: min seconds between refreshes after DDL
    validators: list[str] = field(default_factory=list)    # ResultsetComparator, Transformer
    transformers: list[str] = field(default_factory=list)  # Distinct, ExecuteAsView...
    reporters: list[str] = field(default_factory=list)     # Deadlock, Backtrace, Shutdown...
    compare_dsns: list[str] = field(default_factory=list)  # --dsn2, --dsn3: servers to compare
    deadlock_timeout: float = 600.0       # Deadlock reporter: seconds a statement may run
    processes: int = 0                    # kewpie: worker processes (0: one per CPU, <= threads)
    ignored: list[str] = field(default_factory=list)
    args: list[str] = field(default_factory=list)

    def with_changes(self, **changes: Any) -> "RandgenOptions":
        """A copy with some fields changed."""
        return replace(self, **changes)


def parse_command(command: str | Sequence[str]) -> RandgenOptions:
    """Options from a gentest.pl / gendata.pl command line (the tool name may be omitted)."""
    argv = shlex.split(command) if isinstance(command, str) else list(command)
    opts = RandgenOptions()
    if argv and argv[0] in ("perl", "/usr/bin/perl"):
        argv = argv[1:]
    if argv and not argv[0].startswith("-"):
        tool = os.path.basename(argv[0])
        if tool not in TOOLS:
            raise RandgenEnvironmentError(f"unknown randgen tool {argv[0]!r} (expected gentest.pl, "
                                          f"gendata.pl or gendata-old.pl)")
        opts.tool = TOOLS[tool]
        argv = argv[1:]
    opts.args = list(argv)
    parse_options(argv, opts)
    if opts.tool == "gendata-simple":
        opts.gendata_simple = True
    return opts


def parse_options(argv: Sequence[str], opts: RandgenOptions) -> RandgenOptions:
    """Apply gentest.pl-style options to opts."""
    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        if not arg.startswith("-"):
            raise RandgenEnvironmentError(f"unexpected argument {arg!r} in the randgen command")
        name, eq, value = arg.lstrip("-").partition("=")
        name = name.lower()  # Getopt::Long ignores case (--Validators)
        key = name.replace("_", "-") if name not in ("short_column_names", "strict_fields",
                                                     "freeze_time", "rpl_mode") else name
        if key in VALUE_OPTIONS:
            if not eq:
                if i >= len(argv):
                    raise RandgenEnvironmentError(f"--{name} needs a value")
                value = argv[i]
                i += 1
            _set_value(opts, key, value)
        elif key in OPTIONAL_VALUE_OPTIONS:
            if not eq and i < len(argv) and not argv[i].startswith("-") and key == "gendata":
                value, eq = argv[i], "="
                i += 1
            _set_optional(opts, key, value if eq else None)
        elif key in FLAG_OPTIONS or name in FLAG_OPTIONS:
            setattr(opts, (name if name in FLAG_OPTIONS else key).replace("-", "_"), True)
        elif key in IGNORED_OPTIONS or name in IGNORED_OPTIONS:
            if not eq and i < len(argv) and not argv[i].startswith("-") and \
                    key not in ("metadata", "no-metadata", "valgrind", "debug-server"):
                value = argv[i]
                i += 1
            opts.ignored.append(arg if eq or not value else f"{arg} {value}")
        else:
            raise RandgenEnvironmentError(f"unknown randgen option {arg!r}")
    return opts


def _int(name: str, value: str) -> int:
    try:
        return int(value)
    except ValueError as exc:
        raise RandgenEnvironmentError(f"--{name} needs a number, not {value!r}") from exc


def _set_value(opts: RandgenOptions, key: str, value: str) -> None:
    if key == "grammar":
        opts.grammar = value
    elif key == "redefine":
        opts.redefine.extend(v for v in value.split(",") if v)
    elif key == "spec":
        opts.gendata = value
        opts.tool = "gendata"
    elif key == "queries":
        opts.queries = _int(key, value.rstrip("Kk")) * (1000 if value[-1:] in "Kk" else 1)
    elif key == "threads":
        opts.threads = max(1, _int(key, value))
    elif key == "duration":
        try:
            opts.duration = float(value)
        except ValueError as exc:
            raise RandgenEnvironmentError(f"--duration needs seconds, not {value!r}") from exc
    elif key == "seed":
        opts.seed = int(time.time()) if value == "time" else _int(key, value)
    elif key == "dsn":
        opts.dsn = value
    elif key == "engine":
        opts.engine = value
    elif key == "rows":
        opts.rows = [_int(key, v) for v in value.split(",") if v]
    elif key == "varchar-length":
        opts.varchar_length = max(1, _int(key, value))
    elif key == "querytimeout":
        opts.querytimeout = float(value)
    elif key == "max-rows":
        opts.max_rows = _int(key, value)
    elif key == "perl-blocks":
        if value not in ("auto", "native", "perl"):
            raise RandgenEnvironmentError("--perl-blocks is auto, native or perl")
        opts.perl_blocks = value
    elif key == "schema":
        opts.schema = value
    elif key == "metadata-refresh":
        opts.metadata_refresh = float(value)
    elif key in ("validators", "validator", "reporters", "reporter", "transformers",
                 "transformer"):
        target = getattr(opts, key if key.endswith("s") else key + "s")
        target.extend(v.strip() for v in value.split(",") if v.strip())
    elif key == "dsn1":
        opts.dsn = opts.dsn or value
    elif key in ("dsn2", "dsn3"):
        opts.compare_dsns.append(value)
    elif key == "processes":
        opts.processes = max(0, _int(key, value))
    elif key == "deadlock-timeout":
        try:
            opts.deadlock_timeout = float(value)
        except ValueError as exc:
            raise RandgenEnvironmentError(f"--deadlock-timeout needs seconds, not {value!r}") from exc


def _set_optional(opts: RandgenOptions, key: str, value: str | None) -> None:
    if key == "gendata":
        if value:
            opts.gendata = value
        else:
            opts.gendata_simple = True
    elif key == "views":
        opts.views = value or ""
    elif key == "sqltrace":
        opts.sqltrace = True


def resolve_path(path: str, base_dir: str) -> str:
    """An absolute path: as given if absolute, else under base_dir (or the current folder)."""
    if os.path.isabs(path):
        return path
    candidate = os.path.join(base_dir, path)
    if os.path.exists(candidate) or not os.path.exists(path):
        return os.path.abspath(candidate)
    return os.path.abspath(path)


def resolve_paths(opts: RandgenOptions, base_dir: str) -> RandgenOptions:
    """A copy with grammar, redefine and gendata paths made absolute against base_dir."""
    return opts.with_changes(
        grammar=resolve_path(opts.grammar, base_dir) if opts.grammar else None,
        redefine=[resolve_path(p, base_dir) for p in opts.redefine],
        gendata=resolve_path(opts.gendata, base_dir) if opts.gendata else None)


def check_files(opts: RandgenOptions, base_dir: str) -> None:
    """RandgenEnvironmentError naming the first missing grammar or gendata file."""
    for label, path in ([("grammar", opts.grammar)] if opts.grammar else []) + \
            [("redefine grammar", p) for p in opts.redefine] + \
            ([("gendata file", opts.gendata)] if opts.gendata else []):
        if path and not os.path.isfile(path):
            raise RandgenEnvironmentError(f"{label} not found: {path} (relative paths are "
                                          f"resolved against the randgen folder {base_dir}; "
                                          f"kewpie does not bundle the stock grammars such as "
                                          f"conf/percona/: pass --randgen-path=<a randgen "
                                          f"checkout>)")


def known_names(names: Sequence[str], aliases: Mapping[str, str]) -> tuple[list[str], list[str]]:
    """(canonical names, unknown ones) of ``--validators``/``--reporters`` values, by an
    alias map (lower-case randgen name -> kewpie's; '' for names that mean none)."""
    known: list[str] = []
    unknown: list[str] = []
    for name in names:
        canon = aliases.get(name.strip().lower())
        if canon is None:
            unknown.append(name)
        elif canon and canon not in known:
            known.append(canon)
    return known, unknown
