"""The command line: options, signals, exit statuses. The only layer that exits.

Exit statuses: 0 every test passed (or the mode succeeded); 1 a test failed
or timed out; 2 bad usage or environment (unknown suite, malformed
suite_config.py, missing binary, no free ports, an empty selection, a failure
inside kewpie or its cleanup...); 129/130/143 interrupted by SIGHUP/SIGINT/
SIGTERM (servers stopped first).
"""
from __future__ import annotations

import argparse
import math
import os
import re
import sys
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Mapping, NoReturn, Sequence

from .config import Debugging, History, Reporting, RunConfig, Selection, Servers, Tools
from .run.configfile import (Resolved, Setting, find_config_files, format_settings,
                             option_specs, read_config_file, resolve, with_mode_defaults)
from .errors import EXIT_ENVIRONMENT, EXIT_OK, Interrupted, KewpieError, SuiteError, UsageError
from .modes.onoff import OnOff, split
from .modes.table import MODES, mode_named
from .platform.pathoptions import PathOption, PathRole, PathShape, check_paths
from .platform.safewrite import check_output
from .platform.secrets import HISTORY_DSN_ENV, SECRET_ENVIRONMENT
from .platform.trustedpath import Trust, check_input

if TYPE_CHECKING:  # imported by _run: the run's modules are not for --help
    import logging

    from .run.environment import RunEnvironment


# Options only the command line takes (a config file cannot set them), by dest.
COMMAND_LINE_ONLY = frozenset({"config_file", "no_config", "profile", "list_options", "trust"})
# Every option that takes a path, by what it is to kewpie (lib/platform/pathoptions.py):
# the checks of settings_from_args run over this table (fields: the configuration's, as
# ``section.field`` or ``<mode>.field``: RunConfig.paths_at), and
# tests/unit/test_path_options.py fails when a path option of build_parser is missing.
PATH_TABLE: Mapping[str, PathOption] = MappingProxyType({
    "suitepath": PathOption(PathRole.input, PathShape.tree, ("selection.suitepaths",),
                            "its kewpie.toml is read only once the folder and the file "
                            "passed (resolve_args)"),
    "config": PathOption(PathRole.input, note="checked before it is read (resolve_args)"),
    "basedir": PathOption(PathRole.input, PathShape.path,
                          ("servers.basedir", "servers.extra_basedirs"),
                          "its programs, plugins and messages where the tree is found "
                          "(lib/servers/codetree.py), as trees/'s"),
    "randgen-path": PathOption(PathRole.input, PathShape.tree, ("tools.randgen_path",)),
    "mtr-root": PathOption(PathRole.input, PathShape.tree, ("mtr.root",)),
    "grammar": PathOption(PathRole.input, PathShape.path, ("hunt.grammars",),
                          "a relative one where it is found (lib/modes/hunt/run.py)"),
    "redefine": PathOption(PathRole.input, PathShape.path, ("hunt.redefine",)),
    "sql-file": PathOption(PathRole.input, PathShape.tree, ("hunt.sql_files",),
                           "a folder of .test files or an SQL file, run as SQL; the named "
                           "sources (mysql-test: the code tree's, surface) are no paths"),
    "gendata": PathOption(PathRole.input, PathShape.path, ("tools.gendata", "hunt.gendata")),
    "known-bugs": PathOption(PathRole.input, PathShape.path, ("reporting.known_bugs",)),
    "random-options": PathOption(PathRole.input, PathShape.path, ("hunt.random_options",)),
    "sweep-file": PathOption(PathRole.input, PathShape.path, ("sweep.file",)),
    "wsrep-provider-path": PathOption(PathRole.input, PathShape.path,
                                      ("servers.wsrep_provider_path",)),
    "xtrabackup-path": PathOption(PathRole.input, PathShape.path, ("tools.xtrabackup_path",)),
    "innobackupex-path": PathOption(PathRole.input, PathShape.path,
                                    ("tools.innobackupex_path",)),
    "TEST": PathOption(PathRole.input, PathShape.tree, ("reduce.findings", "replay.corpus"),
                       "--mode=reduce: the finding folder; --mode=replay: the corpus's "
                       "files and folders, run as SQL (other modes: test names)",
                       what="the TEST path"),
    "workdir": PathOption(PathRole.own, note="lib/platform/workdir.py"),
    "lock-dir": PathOption(PathRole.own, note="lib/platform/ports.py"),
    "junit-xml": PathOption(PathRole.output, PathShape.file, ("reporting.junit_xml",)),
    "xml-report": PathOption(PathRole.output, PathShape.file, ("mtr.xml_report",)),
    "sweep-out": PathOption(PathRole.output, PathShape.folder, ("sweep.out",)),
    "reduce-out": PathOption(PathRole.output, PathShape.folder, ("reduce.out",)),
    "replay-out": PathOption(PathRole.output, PathShape.folder, ("replay.out",)),
    "history": PathOption(PathRole.output, PathShape.file, ("history.path",)),
    "timings-file": PathOption(PathRole.data, note="durations, read as JSON"),
    "trust": PathOption(PathRole.data, note="names what is trusted; reads nothing"),
})
# Options whose relative values in a config file are taken from the file's folder.
PATH_OPTIONS = frozenset(PATH_TABLE) - {"config", "trust", "TEST"}


def terminal_columns() -> int:
    """The terminal's width as shutil.get_terminal_size finds it (``COLUMNS``, then
    stdout's terminal, else 80), without importing shutil and the compression modules it
    loads: a few ms of every ``--help``."""
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    stdout = sys.__stdout__
    if columns <= 0 and stdout is not None:
        try:
            columns = os.get_terminal_size(stdout.fileno()).columns
        except (ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


class HelpFormatter(argparse.HelpFormatter):
    """argparse's help formatter, told the width (:func:`terminal_columns`) instead of
    asking shutil for it."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        super().__init__(prog, indent_increment, max_help_position,
                         terminal_columns() - 2 if width is None else width)


class KewpieParser(argparse.ArgumentParser):
    """argparse's parser, whose error for a misspelt option names the closest one (as a
    misspelt key of kewpie.toml does)."""

    def error(self, message: str) -> NoReturn:
        """argparse's usage error, with ``did you mean --X?`` for unknown options."""
        super().error(message + did_you_mean(message, list(self._option_string_actions)))


def did_you_mean(message: str, options: Sequence[str]) -> str:
    """`` (did you mean --parallel?)`` for the unknown options an argparse error names
    ('' when none is close to a known one)."""
    if "unrecognized arguments: " not in message:
        return ""
    import difflib   # only for a misspelt option: not on every command's path
    longs = [o for o in options if o.startswith("--")]
    close = []
    for token in message.split("unrecognized arguments: ", 1)[1].split():
        if token.startswith("--"):
            close += difflib.get_close_matches(token.split("=", 1)[0], longs, n=1)
    return f" (did you mean {', '.join(close)}?)" if close else ""


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser; ``--help`` documents every option, grouped by job: the
    sections every run has, then each mode's own group (lib/modes/table.py).  Defaults are
    the configuration's (lib/config/), so they are written down once."""
    p = KewpieParser(
        prog="kewpie.py", usage="%(prog)s [options] [TEST ...]", formatter_class=HelpFormatter,
        description="Run Python unittest suites against MySQL-family servers that kewpie "
                    "starts, leases ports for and always cleans up.",
        epilog="Every on/off setting has a --no- form. Settings may also come from "
               "kewpie.toml in the checkout or a --suitepath directory, with named "
               "profiles; the command line overrides them (docs/configuration.md). "
               "Exit status: 0 all passed; 1 a test failed; 2 bad usage or environment "
               "(or a failure inside kewpie, servers stopped); 129/130/143 interrupted by "
               "SIGHUP/SIGINT/SIGTERM (servers stopped).")
    _selection_options(p)
    _run_options(p)
    _server_options(p)
    _regression_options(p)
    _history_options(p)
    _debugging_options(p)
    for mode in MODES:  # each mode's own group (lib/modes/<mode>/options.py)
        mode.add_options(p)
    _tool_options(p)
    _kewpie2012_options(p)
    _config_options(p)
    return p


def _selection_options(p: argparse.ArgumentParser) -> None:
    """Which tests run (docs/debugging.md for the filters)."""
    g = p.add_argument_group("selection: which tests run")
    g.add_argument("tests", nargs="*", metavar="TEST",
                   help="tests to run, as 'test' or 'suite.test' (default: every test of the suites)")
    g.add_argument("--suite", action="append", metavar="SUITE[,SUITE...]",
                   help="suite(s) to run; comma list, repeatable (default: main; "
                        "--mode=mtr: mtr's default list)")
    g.add_argument("--suitepath", action="append", metavar="DIR",
                   help="extra directories holding suites (searched before percona_tests/)")
    g.add_argument("--do-test", action="append", default=[], metavar="REGEX",
                   help="run only tests whose 'suite.test' matches REGEX (a plain prefix also "
                        "works); repeatable")
    g.add_argument("--skip-test", action="append", default=[], metavar="REGEX",
                   help="leave out tests whose 'suite.test' matches REGEX; repeatable")
    g.add_argument("--start-from", default=Selection.start_from, metavar="TEST",
                   help="skip the selected tests before TEST ('suite.test' or 'test')")
    g.add_argument("--enable-disabled", action=OnOff,
                   help="also run tests listed in a suite's disabled.txt (--mode=mtr: disabled.def)")
    g.add_argument("--combination", action="append", default=[], metavar="NAME",
                   help="run only these combinations of suites that declare combinations; "
                        "repeatable")
    g.add_argument("--list", action=OnOff,
                   help="print the selected tests, one suite.test per line, and exit")


def _run_options(p: argparse.ArgumentParser) -> None:
    """The mode, how tests run, where the run writes and what it prints."""
    g = p.add_argument_group("the run: mode, repeats, timeouts, workdir, output")
    g.add_argument("--mode", default=RunConfig.mode,
                   choices=[mode.name for mode in MODES],
                   help="; ".join(f"{mode.name}: {mode.summary}" for mode in MODES))
    g.add_argument("--force", action=OnOff,
                   help="run every test even after a failure (default: stop at the first)")
    g.add_argument("--repeat", type=int, default=Selection.repeat, metavar="N",
                   help="run each test N times")
    g.add_argument("--test-timeout", type=float, default=Reporting.test_timeout, metavar="S",
                   help="fail a test that runs longer than S seconds, killing its servers (0: none)")
    g.add_argument("--start-and-exit", action=OnOff,
                   help="start the first selected test's servers, print them, exit, leave them running")
    g.add_argument("--workdir", default=RunConfig.workdir,
                   help="where servers' vardirs, logs and state live (default: ./workdir)")
    g.add_argument("--shm", action=OnOff, default=Servers.use_shm,
                   help="link vardirs to /dev/shm (the default); --no-shm keeps them on disk")
    g.add_argument("--cache-max-mb", type=int, default=Servers.cache_max_mb, metavar="MB",
                   help="the cap of kewpie's cache of datadir templates and cluster snapshots "
                        "(in /dev/shm, shared by your workdirs): least recently used entries "
                        "are evicted beyond it (0: no cap; default: %(default)s)")
    g.add_argument("--verbose", action=OnOff, help="debug logging and per-method rows")
    g.add_argument("--base-port", type=int, default=Servers.base_port, metavar="PORT",
                   help="where the search for free port blocks starts (default: %(default)s)")
    g.add_argument("--lock-dir", default=Servers.lock_dir, metavar="DIR",
                   help="shared directory of port lease locks (default: /tmp/kewpie-locks-<uid>)")


def _server_options(p: argparse.ArgumentParser) -> None:
    """The code tree, how servers run, and Galera (docs/servers.md, docs/galera.md)."""
    g = p.add_argument_group("servers and Galera (docs/servers.md, docs/galera.md)")
    g.add_argument("--basedir", action="append", metavar="DIR",
                   help="code tree to test: an install prefix, tarball, build dir or unpacked "
                        "packages (default: %s); repeat it for more trees (the first is the "
                        "one under test; suites pick 'old'/'new' by version)" % Servers.basedir)
    g.add_argument("--default-server-type", default=Servers.default_server_type,
                   choices=["mysql", "galera"],
                   help="server type for suites that do not name one (default: mysql; with "
                        "galera and no --suite, the suite is cluster_basic)")
    g.add_argument("--server-user", default=Servers.server_user, metavar="USER",
                   help="OS user servers run as (default: mysql when run as root, else yourself)")
    g.add_argument("--server-start-timeout", type=float, default=Servers.start_timeout,
                   metavar="S", help="seconds a server may take to answer SQL after launch "
                                     "(default: %(default)g)")
    g.add_argument("--mysqld", action="append", default=[], metavar="OPTION",
                   help="extra option for every server, after the suite's (repeatable; --mode=mtr "
                        "too, as mtr's --mysqld), e.g. --mysqld=--innodb-flush-log-at-trx-commit=2")
    g.add_argument("--wsrep-provider-path", default=Servers.wsrep_provider_path,
                   metavar="PATH", help="Galera provider library (default: %(default)s)")
    g.add_argument("--wsrep-sst-method", default=Servers.wsrep_sst_method,
                   choices=["rsync", "mariabackup"],
                   help="how Galera joiners get a full state transfer (default: %(default)s)")
    g.add_argument("--cluster-snapshot", action=OnOff, default=Servers.cluster_snapshots,
                   help="warm-start Galera clusters from a snapshot of a formed one (the "
                        "default); --no-cluster-snapshot always forms them by SST")


def _regression_options(p: argparse.ArgumentParser) -> None:
    """Parallel bots, shards, JUnit, retries, evidence (docs/jenkins.md)."""
    g = p.add_argument_group("regression jobs (docs/jenkins.md)")
    g.add_argument("--parallel", type=int, default=Reporting.parallel, metavar="N",
                   help="run N bots at once, each with its own servers (default: %(default)s)")
    g.add_argument("--junit-xml", default=Reporting.junit_xml, metavar="PATH",
                   help="write a JUnit XML report for Jenkins' junit step")
    g.add_argument("--shard", default=Selection.shard, metavar="K/N",
                   help="run only the K-th of N disjoint slices of the selected tests")
    g.add_argument("--timings-file", default=Selection.timings_file, metavar="PATH",
                   help="test durations to balance --shard slices (every shard must get the "
                        "same file; without one, shards are balanced by count)")
    g.add_argument("--retry", type=int, default=Reporting.retry, metavar="N",
                   help="rerun a failed test up to N times on fresh servers; a test that then "
                        "passes is reported as flaky")
    g.add_argument("--retry-failures-max", type=int, default=Reporting.retry_failures_max,
                   metavar="N", help="stop retrying once N tests have failed (default: %(default)s)")
    g.add_argument("--max-save-datadir", type=int, default=Reporting.max_save_datadir,
                   metavar="N", help="keep the datadirs of at most N failed tests in "
                                     "workdir/failed (logs are always kept; default: %(default)s)")
    g.add_argument("--known-bugs", action="append", default=[], metavar="FILE",
                   help="a known-bugs file (repeatable; a suite's known_bugs.txt is read "
                        "first): hunt findings and tests whose servers crashed are matched "
                        "against it (docs/hunting.md)")
    g.add_argument("--allow-known", action=OnOff, help="exit 0 when every finding (hunt) or "
                   "failure (native, mtr: servers that crashed) is a known open bug")


def _history_options(p: argparse.ArgumentParser) -> None:
    """The results history every run writes to (docs/history.md)."""
    g = p.add_argument_group("results history (docs/history.md; kewpie.py history --help)")
    g.add_argument("--history", default=History.path, metavar="PATH|off",
                   help="the SQLite store of runs and results (default: WORKDIR/history.sqlite); "
                        "'off' records nothing")
    g.add_argument("--history-dsn", default=History.dsn, metavar="DSN",
                   help="store them in a MariaDB/MySQL server instead, shared by many agents: "
                        "mysql://user@host:port/database; a DSN with a password is refused "
                        "here (ps shows it to every user): give it in KEWPIE_HISTORY_DSN or "
                        "as history-dsn in a config file only you can read")
    g.add_argument("--results-db-dsn", default="", metavar="DSN",
                   help="the sweeps' former store: now the results history's (as "
                        "--history-dsn, without a password too; docs/history.md)")
    g.add_argument("--label", action="append", default=[], metavar="KEY=VALUE|NAME",
                   help="KEY=VALUE: a label of this run in the history (repeatable; branch=, "
                        "revision=, job=, build=, build_url=, platform= replace what Jenkins' "
                        "variables say); NAME: the sweep's label (--mode=sweep; default: its "
                        "name)")
    g.add_argument("--evidence-url", default=History.evidence_url, metavar="URL",
                   help="record a failure's evidence (and a hunt's finding folders) as URL/"
                        "<its path under the workdir>, where the CI publishes the workdir's "
                        "files (its artifacts), instead of a path on this machine")


def _debugging_options(p: argparse.ArgumentParser) -> None:
    """Debuggers and wrappers, failed servers, warnings (docs/debugging.md)."""
    g = p.add_argument_group("debugging (docs/debugging.md)")
    g.add_argument("--valgrind", action=OnOff,
                   help="run every server under valgrind memcheck (kewpie's suppressions, the "
                        "code tree's mysql-test/valgrind.supp and suites' valgrind.supp); "
                        "servers are stopped cleanly after each test and a server whose "
                        "valgrind log reports errors or definite leaks fails the test; "
                        "timeouts x10")
    g.add_argument("--valgrind-option", action="append", default=[], metavar="OPT",
                   help="extra valgrind option (repeatable), e.g. --valgrind-option=--track-origins=yes")
    g.add_argument("--rr", action=OnOff,
                   help="record every server with rr (traces kept in a failed test's "
                        "evidence: rr replay DIR); says in one line when this machine cannot "
                        "record (no perf counters); timeouts x5")
    g.add_argument("--gdb", action=OnOff,
                   help="run every server under gdb in batch mode: on a crash or abort the "
                        "backtrace of every thread is in the server's stdout.log (evidence); "
                        "timeouts x2")
    g.add_argument("--manual-gdb", action=OnOff,
                   help="start each server under gdbserver (over a unix socket in its vardir, "
                        "never the network), print the exact gdb command to run in another "
                        "terminal, and wait (up to an hour) for you to attach and continue")
    g.add_argument("--server-wrapper", default=Debugging.server_wrapper, metavar="'CMD {args}'",
                   help="run every server through CMD; {args} is the server's command line "
                        "(appended when absent), {vardir} and {name} are the server's, e.g. "
                        "'strace -f -o {vardir}/log/strace.txt {args}'; timeouts x3")
    g.add_argument("--libeatmydata", action=OnOff,
                   help="run servers through Debian's eatmydata (fsync becomes a no-op: fast, "
                        "not crash-safe)")
    g.add_argument("--keep-failed", action=OnOff,
                   help="stop at the first failed test and leave its servers running after "
                        "the run (printed as with --start-and-exit); --mode=cleanup stops them")
    g.add_argument("--check-warnings", action=OnOff, default=Debugging.check_warnings,
                   help="fail every test whose servers logged new [ERROR] or [Warning] "
                        "lines, minus suppressions, kewpie 2012-style modules too. Default: "
                        "they fail the other tests, and a 2012-style module (mysqlBaseTestCase) "
                        "gets them reported after its row unless its suite_config.py sets "
                        "check_warnings = True; --no-check-warnings neither checks nor reports")


def _tool_options(p: argparse.ArgumentParser) -> None:
    """Backup and randgen programs (docs/backup.md, docs/randgen.md)."""
    g = p.add_argument_group("tools (docs/backup.md, docs/randgen.md)")
    g.add_argument("--xtrabackup-path", default=Tools.xtrabackup_path, metavar="PATH",
                   help="Percona xtrabackup binary (default: mariadb-backup from the code tree, "
                        "else xtrabackup on PATH)")
    g.add_argument("--randgen-path", default=Tools.randgen_path, metavar="DIR",
                   help="a Perl randgen checkout (gentest.pl) to use instead of kewpie's "
                        "built-in randgen engine")


def _kewpie2012_options(p: argparse.ArgumentParser) -> None:
    """Options of kewpie 2012 suites (docs/writing-tests.md#porting-a-2012-suite)."""
    g = p.add_argument_group("kewpie 2012: for 2012-style suites "
                             "(docs/writing-tests.md#porting-a-2012-suite)")
    g.add_argument("--randgen-seed", default=str(Tools.randgen_seed), metavar="N|time",
                   help="seed of randgen loads (system_manager.randgen_seed and "
                        "KewpieTestCase.randgen); 'time' picks one from the clock "
                        "(default: %(default)s)")
    g.add_argument("--opt-matrix", default=Tools.opt_matrix, metavar="K=V[,K=V...]",
                   help="options for tests that read test_executor.matrix_manager.option_matrix")
    g.add_argument("--innobackupex-path", default=Tools.innobackupex_path, metavar="PATH",
                   help="Percona innobackupex script, for backup tests")
    g.add_argument("--test-debug", action=OnOff,
                   help="show the tests' own debug messages (test_executor.debug)")
    g.add_argument("--gendata", default=Tools.gendata, metavar="FILE.zz",
                   help="load this randgen gendata file into the servers (schema test) "
                        "before each test")
    g.add_argument("--start-dirty", action=OnOff,
                   help="kewpie 2012's option, kept for its command lines: earlier runs' "
                        "evidence is always kept now (workdir/failed/<run>/, the newest 5 runs)")


def _config_options(p: argparse.ArgumentParser) -> None:
    """Config files and profiles (docs/configuration.md)."""
    g = p.add_argument_group("config files and profiles (docs/configuration.md)")
    g.add_argument("--config", dest="config_file", default="", metavar="FILE",
                   help="read settings from FILE instead of kewpie.toml in the checkout and "
                        "the --suitepath directories")
    g.add_argument("--no-config", action="store_true",
                   help="read no config file")
    g.add_argument("--profile", "--sys-config", default="", metavar="NAME",
                   help="apply the config files' [profiles.NAME] over their [defaults] "
                        "(--sys-config is kewpie 2012's name), e.g. xtrabackup, "
                        "percona-xtradb-cluster")
    g.add_argument("--list-options", action="store_true",
                   help="print every setting, its value and where it came from (default, "
                        "config file and key, command line), and exit")
    g.add_argument("--trust", action="append", default=[], metavar="PATH",
                   help="accept PATH (a folder or file, and all under it) as code and "
                        "configuration although another user owns it or others may write "
                        "it (repeatable; as safe-directories in your own "
                        "~/.config/kewpie/config.toml; never from a kewpie.toml)")


def _randgen_seed(text: str) -> int:
    """--randgen-seed: a number, or 'time' (the clock, the same for every bot)."""
    if text == "time":
        import time
        return int(time.time())
    try:
        return int(text)
    except ValueError:
        raise KewpieError(f"--randgen-seed must be a number or 'time', not {text!r}") from None


def resolve_args(argv: Sequence[str] | None) -> Resolved:
    """Every setting of a run: the defaults, then the config files' [defaults] and the
    picked profile, then the command line (argparse exits 2 on malformed options;
    UsageError for a bad config file)."""
    parser = build_parser()
    full = vars(parser.parse_args(argv))  # --help, and usage errors, before any file is read
    for action in parser._actions:  # noqa: SLF001 - parse again for what was given
        action.default = argparse.SUPPRESS
    given = vars(parser.parse_args(argv))
    defaults = {dest: value for dest, value in full.items() if dest not in given}
    _no_password_given(given)
    if full["config_file"] and full["no_config"]:
        raise UsageError("choose one of --config FILE and --no-config")
    if full["profile"] and full["no_config"]:
        raise UsageError(f"--profile {full['profile']} needs a config file; --no-config "
                          f"reads none")
    suitepaths = [os.path.abspath(p) for p in split(given.get("suitepath"))]
    trust = trust_of(full["trust"])
    for folder in suitepaths:  # before its kewpie.toml is read (the whole tree: below)
        check_input(folder, "--suitepath", trust)
    paths = find_config_files(full["config_file"], suitepaths, RunConfig().root,
                              read_none=full["no_config"])
    for path in paths:  # each file itself too: a suite path's may be another user's
        check_input(path, "--config" if full["config_file"] else "config file", trust)
    specs = option_specs(parser, not_in_files=COMMAND_LINE_ONLY, paths=PATH_OPTIONS,
                         comma_lists=("suitepath",))
    files = [read_config_file(path, specs) for path in paths]
    return resolve(defaults, given, files, full["profile"] or None, _environment(given))


# The options whose value may hold the results history's password (never on the command
# line); the environment variable that gives it instead (lib/platform/secrets.py).
DSN_OPTIONS = MappingProxyType({"history_dsn": "--history-dsn",
                                "results_db_dsn": "--results-db-dsn"})


def _no_password_given(given: Mapping[str, Any]) -> None:
    """UsageError for a DSN with a password on the command line: ``ps`` shows a command
    line to every user of the machine (docs/history.md)."""
    from .history.dsn import has_password, password_on_command_line
    for dest, option in DSN_OPTIONS.items():
        value = given.get(dest)
        if isinstance(value, str) and has_password(value):
            raise UsageError(password_on_command_line(option, value))


def _environment(given: Mapping[str, Any]) -> dict[str, Setting]:
    """The settings the environment gives: ``KEWPIE_HISTORY_DSN`` is the store's DSN
    unless the command line names a store (--history, --history-dsn, --results-db-dsn)."""
    dsn = os.environ.get(HISTORY_DSN_ENV, "")
    if not dsn or given.keys() & {"history", *DSN_OPTIONS}:
        return {}
    return {"history_dsn": Setting(dsn, f"environment {HISTORY_DSN_ENV}")}


def trust_of(given: Sequence[str]) -> Trust:
    """What the user trusts on purpose: ``--trust`` (given) and ``safe-directories`` in
    their own config (lib/platform/usertrust.py); never a kewpie.toml's say."""
    from .platform.usertrust import safe_directories
    return Trust.of([*(os.path.abspath(p) for p in given), *safe_directories()])


def path_values(config: RunConfig) -> dict[str, list[str]]:
    """Each PATH_TABLE option's paths in config (a grammar's ``G.yy:D.zz`` as two)."""
    out: dict[str, list[str]] = {}
    for option, spec in PATH_TABLE.items():
        values = [path for name in spec.fields for path in config.paths_at(name)]
        if option == "grammar":
            values = [p for v in values for p in (v.rsplit(":", 1) if v.endswith(".zz")
                                                  else [v])]
        elif option == "sql-file":  # mysql-test and surface are sources, not paths
            values = [v for v in values if os.path.isabs(v)]
        out[option] = values
    return out


def settings_from_args(argv: Sequence[str] | None) -> tuple[RunConfig, Resolved]:
    """The RunConfig of argv with the config files, and the settings it was made from;
    an error about a value a config file set names the file and key.  Every path option
    passes its check (PATH_TABLE) before a file it names is read."""
    resolved = resolve_args(argv)
    try:
        config = _config(resolved.namespace())
        trust = Trust.of(config.trusted)
        check_paths(PATH_TABLE, path_values(config), trust)
        if config.mode == "reduce" and not config.paths_at("reduce.out"):
            for finding in config.paths_at("reduce.findings"):  # the default output
                check_output(os.path.join(finding, "reduce"), "the finding's reduce folder",
                             trust)
        known_bugs = list(config.reporting.known_bugs)
        if known_bugs and config.mode != "hunt":  # a hunt reads them as it starts
            from .hunt.knownbugs import KnownBugs  # read now: a bad file is one error line
            KnownBugs.load(known_bugs)
        return config, resolved
    except KewpieError as exc:
        raise _blamed(exc, resolved) from None


def config_from_args(argv: Sequence[str] | None) -> RunConfig:
    """Parse argv (and the config files) into a RunConfig (argparse exits 2 on malformed
    options; KewpieError for a bad value or config file)."""
    return settings_from_args(argv)[0]


def _blamed(exc: KewpieError, resolved: Resolved) -> KewpieError:
    """exc, naming the config file and key of each option it mentions that a file set."""
    import re
    sources = []
    for key in dict.fromkeys(re.findall(r"--([a-z][a-z0-9-]*)", str(exc))):
        names = (key, key[3:]) if key.startswith("no-") else (key,)  # --no-shm: shm
        for dest in (name.replace("-", "_") for name in names):
            setting = resolved.settings.get(dest)
            if setting is not None:
                if setting.from_file and setting.source not in sources:
                    sources.append(setting.source)
                break
    return UsageError(f"{exc} (set in {'; '.join(sources)})") if sources else exc


def _labels(values: list[str]) -> tuple[tuple[str, str], ...]:
    """--label values: the run's KEY=VALUE labels (a NAME is the sweep's, one at most)."""
    names = [v for v in values if "=" not in v]
    if len(names) > 1:
        raise UsageError(f"--label: one sweep label (NAME), not {', '.join(names)}; labels of "
                         f"the run are KEY=VALUE")
    pairs = [v for v in values if "=" in v]
    if not pairs:  # the history's records module (platform, datetime...) only for labels
        return ()
    from .history.records import parse_label
    return tuple(parse_label(v) for v in pairs)


def _absolute(path: str) -> str:
    """A path option's value made absolute ('' stays: not given)."""
    return os.path.abspath(path) if path else ""


def _selection(args: argparse.Namespace) -> Selection:
    """Which tests run; KewpieError for a suite, test or filter that cannot be."""
    if args.repeat < 1:
        raise KewpieError("--repeat must be at least 1")
    if args.shard:
        from .run.scheduling import parse_shard
        parse_shard(args.shard)
    mode = mode_named(args.mode)
    suitepaths = [os.path.abspath(p) for p in split(args.suitepath)]
    suitepaths.extend(Selection().suitepaths)  # kewpie's own suites, searched last
    suites = split(args.suite)
    from .platform.suite_names import check_suite_name
    for name in suites:  # names, not paths (a path only as a directory given by --suitepath)
        check_suite_name(name, suitepaths, nested=mode.nested_suites)
    for name in args.tests:  # 'suite.test': the suite part too (mtr takes a .test file's name)
        if "/" in name and not mode.test_paths(name):
            check_suite_name(name.split(",")[0].rsplit(".", 1)[0], suitepaths,
                             nested=mode.nested_suites, what=f"test {name!r}: its suite")
    if not suites and not args.tests and args.default_server_type == "galera":
        suites = ["cluster_basic"]
    selection = Selection(
        suites=suites, tests=list(args.tests), suitepaths=suitepaths, do_test=list(args.do_test),
        skip_test=list(args.skip_test), enable_disabled=args.enable_disabled,
        start_from=args.start_from, combinations=split(args.combination), list_only=args.list,
        shard=args.shard, timings_file=_absolute(args.timings_file), repeat=args.repeat)
    from .run.filters import check_patterns
    check_patterns(selection)
    return selection


def _servers(args: argparse.Namespace) -> Servers:
    """The code trees and how servers run; KewpieError for a value that cannot work."""
    if not math.isfinite(args.server_start_timeout) or args.server_start_timeout <= 0:
        raise KewpieError(f"--server-start-timeout must be a positive number of seconds, "
                          f"not {args.server_start_timeout:g}")
    if not 1024 <= args.base_port <= 64000:
        raise KewpieError("--base-port must be between 1024 and 64000")
    if args.cache_max_mb < 0:
        raise KewpieError("--cache-max-mb must be 0 (no cap) or a number of megabytes")
    basedirs = list(args.basedir or [Servers.basedir])  # the first is the tree under test
    return Servers(basedir=basedirs[0], extra_basedirs=basedirs[1:],
                   default_server_type=args.default_server_type, server_user=args.server_user,
                   start_timeout=args.server_start_timeout, mysqld_options=list(args.mysqld),
                   wsrep_provider_path=args.wsrep_provider_path,
                   wsrep_sst_method=args.wsrep_sst_method, cluster_snapshots=args.cluster_snapshot,
                   use_shm=args.shm, cache_max_mb=args.cache_max_mb, base_port=args.base_port,
                   lock_dir=args.lock_dir)


def _reporting(args: argparse.Namespace) -> Reporting:
    """Bots, retries, timeouts, known bugs, reports; KewpieError for what cannot work."""
    if args.parallel < 1:
        raise KewpieError("--parallel must be at least 1")
    if args.retry < 0 or args.retry_failures_max < 0 or args.max_save_datadir < 0:
        raise KewpieError("--retry, --retry-failures-max and --max-save-datadir must be >= 0")
    if not math.isfinite(args.test_timeout) or args.test_timeout < 0:
        raise KewpieError(f"--test-timeout must be 0 (no limit) or a positive number of "
                          f"seconds, not {args.test_timeout:g}")
    judged = [m.name for m in MODES if m.known_bugs]
    if (args.known_bugs or args.allow_known) and args.mode not in judged:
        raise KewpieError(f"--known-bugs and --allow-known: only with "
                          f"{', '.join(f'--mode={n}' for n in judged[:-1])} or "
                          f"--mode={judged[-1]}; this run is --mode={args.mode}")
    known_bugs = tuple(os.path.abspath(k) for k in args.known_bugs)  # read once trusted
    return Reporting(force=args.force, test_timeout=args.test_timeout, parallel=args.parallel,
                     retry=args.retry, retry_failures_max=args.retry_failures_max,
                     junit_xml=_absolute(args.junit_xml), max_save_datadir=args.max_save_datadir,
                     known_bugs=known_bugs, allow_known=args.allow_known, verbose=args.verbose)


def _debugging(args: argparse.Namespace) -> Debugging:
    """The debugging options; KewpieError for combinations that cannot work."""
    wrappers = [n for n, on in (("--valgrind", args.valgrind), ("--rr", args.rr),
                                ("--gdb", args.gdb), ("--manual-gdb", args.manual_gdb),
                                ("--server-wrapper", bool(args.server_wrapper))) if on]
    if len(wrappers) > 1:
        raise KewpieError(f"choose one of {', '.join(wrappers)}: a server runs under one "
                          f"debugger or wrapper (--libeatmydata combines with any)")
    if args.keep_failed and args.parallel > 1:
        raise KewpieError("--keep-failed needs --parallel 1 (one failed set is kept)")
    if args.manual_gdb and args.parallel > 1:
        raise KewpieError("--manual-gdb needs --parallel 1 (you attach to one server at a time)")
    return Debugging(valgrind=args.valgrind, valgrind_options=list(args.valgrind_option),
                     rr=args.rr, gdb=args.gdb, manual_gdb=args.manual_gdb,
                     server_wrapper=args.server_wrapper, libeatmydata=args.libeatmydata,
                     keep_failed=args.keep_failed, check_warnings=args.check_warnings,
                     test_debug=args.test_debug)


def _tools(args: argparse.Namespace) -> Tools:
    """The tools' paths and kewpie 2012's options; KewpieError for a bad one."""
    randgen_seed = _randgen_seed(args.randgen_seed)
    from .kewpie2012.matrix_manager import parse_opt_matrix
    parse_opt_matrix(args.opt_matrix)  # a malformed matrix stops the run here (exit 2)
    return Tools(xtrabackup_path=_absolute(args.xtrabackup_path),
                 innobackupex_path=_absolute(args.innobackupex_path),
                 randgen_path=_absolute(args.randgen_path), randgen_seed=randgen_seed,
                 opt_matrix=args.opt_matrix, gendata=_absolute(args.gendata),
                 start_dirty=args.start_dirty)


def _history(args: argparse.Namespace) -> History:
    """The results history's settings; KewpieError for a bad DSN or label."""
    labels = _labels(args.label)
    dsn = args.history_dsn or args.results_db_dsn
    if dsn:
        from .history.dsn import check_dsn
        check_dsn(dsn, "--history-dsn" if args.history_dsn else "--results-db-dsn")
    return History(record=args.history != "off",
                   path=os.path.abspath(args.history) if args.history not in ("", "off") else "",
                   dsn=dsn, labels=labels, evidence_url=_evidence_url(args.evidence_url))


def _evidence_url(url: str) -> str:
    """--evidence-url's base; KewpieError for one that is no http(s) or file URL."""
    if url and not re.match(r"^(https?|file)://\S+$", url):
        raise KewpieError(f"--evidence-url {url!r}: expected an http://, https:// or file:// "
                          f"URL (the CI's artifacts of the workdir)")
    return url.rstrip("/")


def _config(args: argparse.Namespace) -> RunConfig:
    """The settings' RunConfig: its sections, then every mode's (each checks its values;
    the chosen mode's is kept), then the options given to a mode that does not take
    them; KewpieError for a value or combination that cannot work."""
    reporting = _reporting(args)
    sections = {mode.name: mode.section(args) for mode in MODES}
    for mode in MODES:
        problem = mode.misplaced(args)
        if problem:
            raise KewpieError(problem)
    return RunConfig(mode=args.mode, workdir=os.path.abspath(args.workdir),
                     start_and_exit=args.start_and_exit, trusted=trust_of(args.trust).paths,
                     selection=_selection(args),
                     servers=_servers(args), reporting=reporting, debugging=_debugging(args),
                     tools=_tools(args), history=_history(args),
                     mode_section=sections[args.mode])


def option_rows(parser: argparse.ArgumentParser) -> list[tuple[str, list[tuple[str, str]]]]:
    """``--help``'s groups as (title, [(option, dest)...]) for ``--list-options``."""
    groups = []
    for group in parser._action_groups:  # noqa: SLF001 - argparse's groups, in --help order
        rows = [(a.option_strings[0] if a.option_strings else str(a.metavar or a.dest), a.dest)
                for a in group._group_actions  # noqa: SLF001
                if not isinstance(a, argparse._HelpAction)]  # noqa: SLF001
        if rows:
            groups.append((group.title or "", rows))
    return groups


def _os_error_line(exc: OSError) -> str:
    """One line for an OSError the harness met on the file system or network."""
    where = f" {exc.filename}" if exc.filename else ""
    hint = ""
    if isinstance(exc, PermissionError):
        hint = "; choose a --workdir (or --lock-dir) you may write, or run as the user who owns it"
    return f"cannot use{where}: {exc.strerror or exc}{hint}"


def main(argv: Sequence[str] | None = None) -> int:
    """Run kewpie; return the exit status.

    Every harness-level failure, cleanup included, is one ERROR line and exit
    2; servers are stopped whatever happened.
    """
    os.umask(0o022)  # nothing kewpie writes may be world-writable
    os.environ.setdefault("KEWPIE_PYTHON", sys.executable)  # for scripts/innobackupex
    args = list(argv if argv is not None else sys.argv[1:])
    if args[:1] == ["history"]:
        return history_main(args[1:])
    try:
        config, resolved = settings_from_args(argv)
    except KewpieError as exc:
        _log(verbose="--verbose" in args).error(str(exc))
        return EXIT_ENVIRONMENT
    log = _log(verbose=config.reporting.verbose)
    _forget_secret_environment()
    if resolved.settings["list_options"].value:
        shown = with_mode_defaults(resolved, config.mode, mode_named(config.mode).defaults)
        print(format_settings(shown, option_rows(build_parser())))
        return EXIT_OK
    if resolved.files and not config.selection.list_only:  # where settings came from (--list-options)
        log.info(f"Settings from {', '.join(resolved.files)}"
                 + (f", profile {resolved.profile}" if resolved.profile else ""))
    return _run(config)


def _log(verbose: bool) -> logging.Logger:
    """kewpie's log, set up once the command line is read (``--help`` and argparse's
    usage errors need no logging: its import is left to the commands that log)."""
    from .platform.logsetup import configure
    return configure(verbose=verbose)


def _run(config: RunConfig) -> int:
    """The run of config's mode under the stop signals' relay; its exit status.  Every
    failure is one ERROR line (:func:`_failure_status`), and the run's servers are
    stopped whatever happened (:func:`_close`)."""
    import signal  # the run's modules and the stop signals' relay: not for --help

    from .modes.dispatch import run_mode
    from .platform.interrupts import STOP_SIGNALS, InterruptRelay
    from .platform.logsetup import get_logger
    from .run.environment import RunEnvironment

    relay = InterruptRelay()  # never lost in a finalizer, never raised inside logging
    relay.install()
    previous = {sig: signal.signal(sig, relay.handler) for sig in STOP_SIGNALS}
    env: RunEnvironment | None = None
    status = EXIT_ENVIRONMENT
    interrupted = False
    try:
        env = RunEnvironment(config)
        status = run_mode(env)
    except Interrupted as exc:
        interrupted = True
        get_logger().error(f"Interrupted by signal {exc.signum}: stopping all servers")
        status = 128 + exc.signum
    except Exception as exc:  # noqa: BLE001 - each kind said in one line
        status = _failure_status(exc, config.reporting.verbose)
    finally:
        for sig in previous:  # a second Ctrl-C must not interrupt the cleanup
            signal.signal(sig, signal.SIG_IGN)
        try:
            if not _close(env, interrupted) and not interrupted:
                status = EXIT_ENVIRONMENT
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            relay.uninstall()
    return status


def _failure_status(exc: Exception, verbose: bool) -> int:
    """Say what failed in one ERROR line (a server's error-log tail after it, as INFO
    lines); the exit status."""
    from .platform.logsetup import get_logger
    log = get_logger()
    if isinstance(exc, SuiteError):
        log.error(str(exc))
        return EXIT_ENVIRONMENT
    if isinstance(exc, KewpieError):
        lines = str(exc).splitlines() or [type(exc).__name__]
        log.error(lines[0])
        for line in lines[1:]:  # e.g. a server's error-log tail
            log.info(line)
        return exc.exit_code
    if isinstance(exc, OSError):
        log.error(_os_error_line(exc))
        log.debug("traceback", exc_info=True)
        return EXIT_ENVIRONMENT
    # a bug in kewpie: say so, keep the evidence
    log.error(f"kewpie internal error: {type(exc).__name__}: {exc}", exc_info=verbose)
    log.debug("traceback", exc_info=True)
    return EXIT_ENVIRONMENT


def _close(env: RunEnvironment | None, interrupted: bool) -> bool:
    """Stop the run's servers (fast when interrupted); False when the cleanup failed
    (said in one ERROR line)."""
    from .platform.logsetup import get_logger
    try:
        if env is not None:
            env.close(fast=interrupted)
    except Exception as exc:  # noqa: BLE001 - cleanup failed, but servers were stopped
        get_logger().error(f"cleanup failed: {type(exc).__name__}: {exc} "
                           f"(servers were stopped; run --mode=cleanup if in doubt)")
        get_logger().debug("traceback", exc_info=True)
        return False
    return True


def _forget_secret_environment() -> None:
    """Once the settings are read, drop the secrets' variables (KEWPIE_HISTORY_DSN) from
    our environment: nothing kewpie runs -- a server as another user, a test's own
    program -- inherits them (lib/platform/process.py drops them for its children too)."""
    for name in SECRET_ENVIRONMENT:
        os.environ.pop(name, None)


def history_main(argv: Sequence[str]) -> int:
    """``kewpie history ...`` (lib/history/commands.py) over the settings' workdir, store
    and port leasing (config files included); one ERROR line and exit 2 on failure."""
    from .platform.logsetup import configure
    log = configure()
    from .history.commands import Defaults, build_parser as history_parser, config_argv, run_command
    args = history_parser().parse_args(list(argv))  # --help, usage errors: argparse exits 2
    try:
        config = config_from_args(config_argv(args))
        _forget_secret_environment()
        defaults = Defaults(workdir=config.workdir, history_path=config.history.path,
                            history_dsn=config.history.dsn, lock_dir=config.servers.lock_dir,
                            base_port=config.servers.base_port)
        defaults.trusted = config.trusted  # safe-directories: where history html may write
        return run_command(args, defaults)
    except KewpieError as exc:
        log.error(str(exc).splitlines()[0])
        return EXIT_ENVIRONMENT
    except BrokenPipeError:  # | head
        return EXIT_OK
    except OSError as exc:
        log.error(_os_error_line(exc))
        return EXIT_ENVIRONMENT


def console_main() -> None:
    """Entry point of the ``kewpie`` console script."""
    sys.exit(main())
