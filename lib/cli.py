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
import signal
import sys
from typing import Any, Sequence

from .run.config import MYSQLTEST_PROTOCOLS, RunConfig, default
from .run.configfile import (Resolved, find_config_files, format_settings, option_specs,
                             read_config_file, resolve)
from .errors import EXIT_ENVIRONMENT, EXIT_OK, Interrupted, KewpieError, SuiteError, UsageError
from .platform.interrupts import STOP_SIGNALS, InterruptRelay
from .platform.logsetup import configure, get_logger


# Options only the command line takes (a config file cannot set them), by dest.
COMMAND_LINE_ONLY = frozenset({"config_file", "no_config", "profile", "list_options"})
# Options whose relative values in a config file are taken from the file's folder.
PATH_OPTIONS = frozenset({
    "workdir", "suitepath", "basedir", "lock-dir", "wsrep-provider-path", "junit-xml",
    "timings-file", "xtrabackup-path", "innobackupex-path", "randgen-path", "sweep-file",
    "sweep-out", "mtr-root", "gendata", "grammar", "redefine", "known-bugs", "random-options",
    "history", "xml-report"})


class _OnOff(argparse.BooleanOptionalAction):
    """``--X`` / ``--no-X``: every on/off option can be undone on the command line
    (a config file may have turned it on), with its help text as written."""

    def __init__(self, option_strings: Sequence[str], dest: str, default: bool = False,
                 help: str | None = None) -> None:  # noqa: A002 - argparse's name
        super().__init__(option_strings, dest, default=default, help=help)
        self.help = help  # no automatic "(default: False)"


def _split(values: list[str] | None) -> list[str]:
    out: list[str] = []
    for value in values or []:
        out.extend(v.strip() for v in value.split(",") if v.strip())
    return out


def _protocol_dest(flag: str) -> str:
    return flag[2:].replace("-", "_")


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser; ``--help`` documents every option, grouped by job.  Defaults
    are RunConfig's (:func:`lib.run.config.default`), so they are written down once."""
    p = argparse.ArgumentParser(
        prog="kewpie.py", usage="%(prog)s [options] [TEST ...]",
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
    _mtr_options(p)
    _sweep_options(p)
    _hunt_options(p)
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
    g.add_argument("--start-from", default=default("start_from"), metavar="TEST",
                   help="skip the selected tests before TEST ('suite.test' or 'test')")
    g.add_argument("--enable-disabled", action=_OnOff,
                   help="also run tests listed in a suite's disabled.txt (--mode=mtr: disabled.def)")
    g.add_argument("--combination", action="append", default=[], metavar="NAME",
                   help="run only these combinations of suites that declare combinations; "
                        "repeatable")
    g.add_argument("--list", action=_OnOff,
                   help="print the selected tests, one suite.test per line, and exit")


def _run_options(p: argparse.ArgumentParser) -> None:
    """The mode, how tests run, where the run writes and what it prints."""
    g = p.add_argument_group("the run: mode, repeats, timeouts, workdir, output")
    g.add_argument("--mode", default=default("mode"),
                   choices=["native", "cleanup", "sweep", "mtr", "hunt", "reduce"],
                   help="native: run tests; cleanup: stop servers left in --workdir; "
                        "sweep: run a sysbench sweep file (docs/sysbench.md); mtr: the "
                        "server's own mysql-test suites (docs/mtr.md); hunt: random loads "
                        "in trials with oracles (docs/hunting.md); reduce: a hunt finding "
                        "(the TEST argument: its folder) to a minimal mysql-test case "
                        "(docs/hunting.md)")
    g.add_argument("--force", action=_OnOff,
                   help="run every test even after a failure (default: stop at the first)")
    g.add_argument("--repeat", type=int, default=default("repeat"), metavar="N",
                   help="run each test N times")
    g.add_argument("--test-timeout", type=float, default=default("test_timeout"), metavar="S",
                   help="fail a test that runs longer than S seconds, killing its servers (0: none)")
    g.add_argument("--start-and-exit", action=_OnOff,
                   help="start the first selected test's servers, print them, exit, leave them running")
    g.add_argument("--workdir", default=default("workdir"),
                   help="where servers' vardirs, logs and state live (default: ./workdir)")
    g.add_argument("--shm", action=_OnOff, default=default("use_shm"),
                   help="link vardirs to /dev/shm (the default); --no-shm keeps them on disk")
    g.add_argument("--verbose", action=_OnOff, help="debug logging and per-method rows")
    g.add_argument("--base-port", type=int, default=default("base_port"), metavar="PORT",
                   help="where the search for free port blocks starts (default: %(default)s)")
    g.add_argument("--lock-dir", default=default("lock_dir"), metavar="DIR",
                   help="shared directory of port lease locks (default: /tmp/kewpie-locks-<uid>)")


def _server_options(p: argparse.ArgumentParser) -> None:
    """The code tree, how servers run, and Galera (docs/servers.md, docs/galera.md)."""
    g = p.add_argument_group("servers and Galera (docs/servers.md, docs/galera.md)")
    g.add_argument("--basedir", action="append", metavar="DIR",
                   help="code tree to test: an install prefix, tarball, build dir or unpacked "
                        "packages (default: %s); repeat it for more trees (the first is the "
                        "one under test; suites pick 'old'/'new' by version)" % default("basedir"))
    g.add_argument("--default-server-type", default=default("default_server_type"),
                   choices=["mysql", "galera"],
                   help="server type for suites that do not name one (default: mysql; with "
                        "galera and no --suite, the suite is cluster_basic)")
    g.add_argument("--server-user", default=default("server_user"), metavar="USER",
                   help="OS user servers run as (default: mysql when run as root, else yourself)")
    g.add_argument("--server-start-timeout", type=float, default=default("start_timeout"),
                   metavar="S", help="seconds a server may take to answer SQL after launch "
                                     "(default: %(default)g)")
    g.add_argument("--mysqld", action="append", default=[], metavar="OPTION",
                   help="extra option for every server, after the suite's (repeatable; --mode=mtr "
                        "too, as mtr's --mysqld), e.g. --mysqld=--innodb-flush-log-at-trx-commit=2")
    g.add_argument("--wsrep-provider-path", default=default("wsrep_provider_path"),
                   metavar="PATH", help="Galera provider library (default: %(default)s)")
    g.add_argument("--wsrep-sst-method", default=default("wsrep_sst_method"),
                   choices=["rsync", "mariabackup"],
                   help="how Galera joiners get a full state transfer (default: %(default)s)")
    g.add_argument("--cluster-snapshot", action=_OnOff, default=default("cluster_snapshots"),
                   help="warm-start Galera clusters from a snapshot of a formed one (the "
                        "default); --no-cluster-snapshot always forms them by SST")


def _regression_options(p: argparse.ArgumentParser) -> None:
    """Parallel bots, shards, JUnit, retries, evidence (docs/jenkins.md)."""
    g = p.add_argument_group("regression jobs (docs/jenkins.md)")
    g.add_argument("--parallel", type=int, default=default("parallel"), metavar="N",
                   help="run N bots at once, each with its own servers (default: %(default)s)")
    g.add_argument("--junit-xml", default=default("junit_xml"), metavar="PATH",
                   help="write a JUnit XML report for Jenkins' junit step")
    g.add_argument("--shard", default=default("shard"), metavar="K/N",
                   help="run only the K-th of N disjoint slices of the selected tests")
    g.add_argument("--timings-file", default=default("timings_file"), metavar="PATH",
                   help="test durations to balance --shard slices (every shard must get the "
                        "same file; without one, shards are balanced by count)")
    g.add_argument("--retry", type=int, default=default("retry"), metavar="N",
                   help="rerun a failed test up to N times on fresh servers; a test that then "
                        "passes is reported as flaky")
    g.add_argument("--retry-failures-max", type=int, default=default("retry_failures_max"),
                   metavar="N", help="stop retrying once N tests have failed (default: %(default)s)")
    g.add_argument("--max-save-datadir", type=int, default=default("max_save_datadir"),
                   metavar="N", help="keep the datadirs of at most N failed tests in "
                                     "workdir/failed (logs are always kept; default: %(default)s)")


def _history_options(p: argparse.ArgumentParser) -> None:
    """The results history every run writes to (docs/history.md)."""
    g = p.add_argument_group("results history (docs/history.md; kewpie.py history --help)")
    g.add_argument("--history", default=default("history_path"), metavar="PATH|off",
                   help="the SQLite store of runs and results (default: WORKDIR/history.sqlite); "
                        "'off' records nothing")
    g.add_argument("--history-dsn", default=default("history_dsn"), metavar="DSN",
                   help="store them in a MariaDB/MySQL server instead, shared by many agents: "
                        "mysql://user:password@host:port/database")
    g.add_argument("--label", action="append", default=[], metavar="KEY=VALUE|NAME",
                   help="KEY=VALUE: a label of this run in the history (repeatable; branch=, "
                        "revision=, job=, build=, build_url=, platform= replace what Jenkins' "
                        "variables say); NAME: the sweep's label (--mode=sweep; default: its "
                        "name)")


def _debugging_options(p: argparse.ArgumentParser) -> None:
    """Debuggers and wrappers, failed servers, warnings (docs/debugging.md)."""
    g = p.add_argument_group("debugging (docs/debugging.md)")
    g.add_argument("--valgrind", action=_OnOff,
                   help="run every server under valgrind memcheck (kewpie's suppressions, the "
                        "code tree's mysql-test/valgrind.supp and suites' valgrind.supp); "
                        "servers are stopped cleanly after each test and a server whose "
                        "valgrind log reports errors or definite leaks fails the test; "
                        "timeouts x10")
    g.add_argument("--valgrind-option", action="append", default=[], metavar="OPT",
                   help="extra valgrind option (repeatable), e.g. --valgrind-option=--track-origins=yes")
    g.add_argument("--rr", action=_OnOff,
                   help="record every server with rr (traces kept in a failed test's "
                        "evidence: rr replay DIR); says in one line when this machine cannot "
                        "record (no perf counters); timeouts x5")
    g.add_argument("--gdb", action=_OnOff,
                   help="run every server under gdb in batch mode: on a crash or abort the "
                        "backtrace of every thread is in the server's stdout.log (evidence); "
                        "timeouts x2")
    g.add_argument("--manual-gdb", action=_OnOff,
                   help="start each server under gdbserver (over a unix socket in its vardir, "
                        "never the network), print the exact gdb command to run in another "
                        "terminal, and wait (up to an hour) for you to attach and continue")
    g.add_argument("--server-wrapper", default=default("server_wrapper"), metavar="'CMD {args}'",
                   help="run every server through CMD; {args} is the server's command line "
                        "(appended when absent), {vardir} and {name} are the server's, e.g. "
                        "'strace -f -o {vardir}/log/strace.txt {args}'; timeouts x3")
    g.add_argument("--libeatmydata", action=_OnOff,
                   help="run servers through Debian's eatmydata (fsync becomes a no-op: fast, "
                        "not crash-safe)")
    g.add_argument("--keep-failed", action=_OnOff,
                   help="stop at the first failed test and leave its servers running after "
                        "the run (printed as with --start-and-exit); --mode=cleanup stops them")
    g.add_argument("--check-warnings", action=_OnOff, default=default("check_warnings"),
                   help="fail every test whose servers logged new [ERROR] or [Warning] "
                        "lines, minus suppressions, kewpie 2012-style modules too. Default: "
                        "they fail the other tests, and a 2012-style module (mysqlBaseTestCase) "
                        "gets them reported after its row unless its suite_config.py sets "
                        "check_warnings = True; --no-check-warnings neither checks nor reports")


def _mtr_options(p: argparse.ArgumentParser) -> None:
    """--mode=mtr: the server's own mysql-test suites (docs/mtr.md)."""
    g = p.add_argument_group("mtr mode: with --mode=mtr, the server's mysql-test suites "
                             "(docs/mtr.md)")
    g.add_argument("--mtr-root", default=default("mtr_root"), metavar="DIR",
                   help="the mysql-test directory (default: the code tree's, "
                        "e.g. /usr/share/mysql/mysql-test)")
    g.add_argument("--record", action=_OnOff,
                   help="write the result files of passing tests (mtr --record)")
    g.add_argument("--big-test", action=_OnOff,
                   help="also run tests marked big (mtr --big-test)")
    g.add_argument("--xml-report", default=default("xml_report"), metavar="PATH",
                   help="also write the report in mysql-test-run's --xml-report JUnit dialect "
                        "(for MariaDB's mtr-log-collector and cross-reference)")
    g.add_argument("--reorder", action=_OnOff, default=default("reorder"),
                   help="group the cases that need the same servers (the default, as mtr); "
                        "--no-reorder runs them in the order given (mtr --no-reorder)")
    for flag, what in MYSQLTEST_PROTOCOLS.items():
        g.add_argument(flag, action=_OnOff, dest=_protocol_dest(flag),
                       help=f"mariadb-test runs every statement {what} (mtr {flag})")


def _sweep_options(p: argparse.ArgumentParser) -> None:
    """--mode=sweep: sysbench sweeps and their regression check (docs/sysbench.md)."""
    g = p.add_argument_group("sweeps: with --mode=sweep (docs/sysbench.md)")
    g.add_argument("--sweep-file", default=default("sweep_file"), metavar="PATH",
                   help="the JSON sweep to run")
    g.add_argument("--sweep-out", default=default("sweep_out"), metavar="DIR",
                   help="where the table, CSV, JSON and PNGs go "
                        "(default: workdir/sweeps/<name>-<time>)")
    g.add_argument("--baseline", default=default("baseline"), metavar="LABEL|last",
                   help="compare with a stored sweep (a label, or 'last' with the same "
                        "context); exit 1 on a regression")
    g.add_argument("--tolerance", type=float, default=default("tolerance"), metavar="FRACTION",
                   help="allowed throughput drop beyond the repeats' noise (default: %(default)s)")
    g.add_argument("--results-db-dsn", default=default("results_db_dsn"), metavar="DSN",
                   help="the sweeps' former store: now the results history's (as "
                        "--history-dsn; docs/history.md)")


def _hunt_options(p: argparse.ArgumentParser) -> None:
    """--mode=hunt: trials, budgets, oracles, known bugs (docs/hunting.md)."""
    g = p.add_argument_group("hunting: with --mode=hunt, random loads in trials with oracles "
                             "(docs/hunting.md; the servers: --suite or --topology; seeds: "
                             "--randgen-seed; data: --gendata)")
    g.add_argument("--grammar", action="append", default=[], metavar="FILE.yy[:DATA.zz]",
                   help="a randgen grammar (relative: under --randgen-path), with its gendata "
                        "after a ':'; repeatable, the trials take them in turn; without its "
                        "own: --gendata, else the .zz of the same name beside it, else the "
                        "simple data set")
    g.add_argument("--sql-file", action="append", default=[], metavar="SOURCE",
                   help="a pquery-style load: statements replayed on --threads connections "
                        "in random order; SOURCE is mysql-test (the code tree's mysql-test "
                        "corpus, mined and cached in the workdir), surface (kewpie's "
                        "generated schema and statements over MariaDB's SQL surface), a "
                        "folder of .test/.inc files or an SQL file; repeatable, taken in "
                        "turn with the grammars")
    g.add_argument("--redefine", action="append", default=[], metavar="FILE.yy",
                   help="a grammar file that redefines rules of every --grammar; repeatable")
    g.add_argument("--trials", type=int, default=default("hunt_trials"), metavar="N",
                   help="run N trials (0: until --duration; one when both are 0); with "
                        "--mode=reduce: tries per candidate (a sporadic bug)")
    g.add_argument("--reduce-out", default=default("reduce_out"), metavar="DIR",
                   help="--mode=reduce: the output folder (default: the finding's reduce/)")
    g.add_argument("--reduce-parallel", type=int, default=default("reduce_parallel"),
                   metavar="N", help="--mode=reduce: check N candidates (or tries of a "
                   "sporadic one) at once, each on a bot of its own servers (1: one at a "
                   "time; default 0: as many as the machine has cores, at most 4)")
    g.add_argument("--duration", type=float, default=default("hunt_duration"), metavar="S",
                   help="the hunt's time budget in seconds (0: until --trials)")
    g.add_argument("--trial-duration", type=float, default=default("hunt_trial_duration"),
                   metavar="S", help="seconds of load per trial (default: %(default)g)")
    g.add_argument("--queries", type=int, default=default("hunt_queries"), metavar="N",
                   help="sentences per thread per trial, as gentest.pl's --queries (0: no "
                        "limit, the trial's duration decides)")
    g.add_argument("--threads", type=int, default=default("hunt_threads"), metavar="N",
                   help="connections of each trial's load (default: %(default)s)")
    g.add_argument("--oracles", action="append", default=[], metavar="LIST",
                   help="which oracles judge each trial: crash (always on), hang, errorlog, "
                        "divergence, norec, tlp, differential, or all (default: "
                        "crash,hang,errorlog,divergence)")
    g.add_argument("--topology", default=default("hunt_topology"), metavar="KIND",
                   help="the servers of a trial without --suite: single, replication[:N], "
                        "galera[:N] or compare (default: %(default)s)")
    g.add_argument("--compare-mysqld", action="append", default=[], metavar="OPTION",
                   help="--topology compare: an option for s1 only (repeatable); a second "
                        "--basedir runs s1 on that code tree")
    g.add_argument("--known-bugs", action="append", default=[], metavar="FILE",
                   help="a known-bugs file (repeatable; a suite's known_bugs.txt is read "
                        "first): hunt findings and tests whose servers crashed are matched "
                        "against it (docs/hunting.md)")
    g.add_argument("--allow-known", action=_OnOff,
                   help="exit 0 when every finding (hunt) or failure (native: servers that "
                        "crashed) is a known open bug")
    g.add_argument("--random-options", default=default("random_options"), metavar="FILE",
                   help="server options, one a line: each trial's servers start with 1 to "
                        "--random-options-max of them, drawn from its seed")
    g.add_argument("--random-options-max", type=int, default=default("random_options_max"),
                   metavar="N", help="at most N random options per trial (default: %(default)s)")
    g.add_argument("--hang-timeout", type=float, default=default("hang_timeout"), metavar="S",
                   help="the hang oracle: the load's statements stuck this long are a hang "
                        "(randgen's Deadlock reporter rule; default: %(default)g)")
    g.add_argument("--replica-timeout", type=float, default=default("replica_timeout"),
                   metavar="S", help="the divergence oracle: seconds replicas (nodes) get to "
                                     "apply a trial's writes (default: %(default)g)")
    g.add_argument("--wrong-result-budget", type=int, default=default("wrong_result_budget"),
                   metavar="N", help="checks of each wrong-result oracle per trial "
                                     "(default: %(default)s)")


def _tool_options(p: argparse.ArgumentParser) -> None:
    """Backup and randgen programs (docs/backup.md, docs/randgen.md)."""
    g = p.add_argument_group("tools (docs/backup.md, docs/randgen.md)")
    g.add_argument("--xtrabackup-path", default=default("xtrabackup_path"), metavar="PATH",
                   help="Percona xtrabackup binary (default: mariadb-backup from the code tree, "
                        "else xtrabackup on PATH)")
    g.add_argument("--randgen-path", default=default("randgen_path"), metavar="DIR",
                   help="a Perl randgen checkout (gentest.pl) to use instead of kewpie's "
                        "built-in randgen engine")


def _kewpie2012_options(p: argparse.ArgumentParser) -> None:
    """Options of kewpie 2012 suites (docs/writing-tests.md#porting-a-2012-suite)."""
    g = p.add_argument_group("kewpie 2012: for 2012-style suites "
                             "(docs/writing-tests.md#porting-a-2012-suite)")
    g.add_argument("--randgen-seed", default=str(default("randgen_seed")), metavar="N|time",
                   help="seed of randgen loads (system_manager.randgen_seed and "
                        "KewpieTestCase.randgen); 'time' picks one from the clock "
                        "(default: %(default)s)")
    g.add_argument("--opt-matrix", default=default("opt_matrix"), metavar="K=V[,K=V...]",
                   help="options for tests that read test_executor.matrix_manager.option_matrix")
    g.add_argument("--innobackupex-path", default=default("innobackupex_path"), metavar="PATH",
                   help="Percona innobackupex script, for backup tests")
    g.add_argument("--test-debug", action=_OnOff,
                   help="show the tests' own debug messages (test_executor.debug)")
    g.add_argument("--gendata", default=default("gendata"), metavar="FILE.zz",
                   help="load this randgen gendata file into the servers (schema test) "
                        "before each test")
    g.add_argument("--start-dirty", action=_OnOff,
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
    if full["config_file"] and full["no_config"]:
        raise UsageError("choose one of --config FILE and --no-config")
    if full["profile"] and full["no_config"]:
        raise UsageError(f"--profile {full['profile']} needs a config file; --no-config "
                          f"reads none")
    paths = find_config_files(full["config_file"], [os.path.abspath(p) for p in
                                                    _split(given.get("suitepath"))],
                              RunConfig().root, read_none=full["no_config"])
    specs = option_specs(parser, not_in_files=COMMAND_LINE_ONLY, paths=PATH_OPTIONS,
                         comma_lists=("suitepath",))
    files = [read_config_file(path, specs) for path in paths]
    return resolve(defaults, given, files, full["profile"] or None)


def settings_from_args(argv: Sequence[str] | None) -> tuple[RunConfig, Resolved]:
    """The RunConfig of argv with the config files, and the settings it was made from;
    an error about a value a config file set names the file and key."""
    resolved = resolve_args(argv)
    try:
        return _config(resolved.namespace()), resolved
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


def _debugging_config(args: argparse.Namespace, config: RunConfig) -> RunConfig:
    """Copy the debugging options into config; UsageError for combinations that
    cannot work."""
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
    config.valgrind, config.valgrind_options = args.valgrind, list(args.valgrind_option)
    config.rr, config.gdb, config.manual_gdb = args.rr, args.gdb, args.manual_gdb
    config.server_wrapper, config.libeatmydata = args.server_wrapper, args.libeatmydata
    config.keep_failed, config.check_warnings = args.keep_failed, args.check_warnings
    config.do_test, config.skip_test = list(args.do_test), list(args.skip_test)
    config.enable_disabled, config.start_from = args.enable_disabled, args.start_from
    config.combinations = _split(args.combination)
    config.test_debug, config.start_dirty = args.test_debug, args.start_dirty
    config.gendata = os.path.abspath(args.gendata) if args.gendata else ""
    config.mysqld_options = list(args.mysqld)
    from .run.filters import check_patterns
    check_patterns(config)
    return config


def _hunt_path(given: str) -> str:
    """A --grammar value with its paths made absolute when they exist from here (the
    others are looked up under --randgen-path); ``G.yy:D.zz`` keeps its two parts."""
    grammar, sep, data = given.rpartition(":") if given.endswith(".zz") else (given, "", "")
    parts = [grammar, data] if sep else [given]
    return ":".join(os.path.abspath(p) if os.path.exists(p) else p for p in parts)


def _hunt_config(args: argparse.Namespace) -> dict[str, Any]:
    """The --mode=hunt settings of RunConfig; KewpieError for a value that cannot work."""
    hunt_only = [flag for flag, given in (("--grammar", args.grammar), ("--redefine", args.redefine),
                                          ("--sql-file", args.sql_file),
                                          ("--trials", args.trials if args.mode != "reduce" else 0),
                                          ("--duration", args.duration),
                                          ("--random-options", args.random_options),
                                          ("--compare-mysqld", args.compare_mysqld),
                                          ("--oracles", args.oracles)) if given]
    if hunt_only and args.mode != "hunt":
        raise KewpieError(f"{', '.join(hunt_only)}: only with --mode=hunt; this run is "
                          f"--mode={args.mode}")
    if (args.known_bugs or args.allow_known) and args.mode not in ("hunt", "native"):
        raise KewpieError(f"--known-bugs and --allow-known: only with --mode=hunt or "
                          f"--mode=native; this run is --mode={args.mode}")
    if args.known_bugs and args.mode == "native":  # a hunt reads them as it starts
        from .hunt.knownbugs import KnownBugs  # read now: a bad file is one error line
        KnownBugs.load([os.path.abspath(k) for k in args.known_bugs])
    if args.mode == "hunt" and not args.grammar and not args.sql_file:
        raise KewpieError("--mode=hunt needs --grammar FILE.yy (a randgen grammar; relative "
                          "paths are under --randgen-path) or --sql-file SOURCE (a "
                          "pquery-style load)")
    for name, value in (("--trials", args.trials), ("--queries", args.queries),
                        ("--random-options-max", args.random_options_max),
                        ("--wrong-result-budget", args.wrong_result_budget)):
        if value < 0:
            raise KewpieError(f"{name} must be 0 or more, not {value}")
    if args.threads < 1:
        raise KewpieError("--threads must be at least 1")
    if args.reduce_parallel < 0:
        raise KewpieError(f"--reduce-parallel must be 0 (as many as the cores) or more, "
                          f"not {args.reduce_parallel}")
    for name, seconds, least in (("--duration", args.duration, 0.0),
                                 ("--trial-duration", args.trial_duration, 1.0),
                                 ("--hang-timeout", args.hang_timeout, 1.0),
                                 ("--replica-timeout", args.replica_timeout, 1.0)):
        if not math.isfinite(seconds) or seconds < least:
            raise KewpieError(f"{name} must be a number of seconds of at least {least:g}, "
                              f"not {seconds:g}")
    return dict(hunt_grammars=tuple(_hunt_path(g) for g in args.grammar),
                hunt_redefine=tuple(os.path.abspath(r) if os.path.exists(r) else r
                                    for r in args.redefine),
                hunt_sql_files=tuple(s if s in ("mysql-test", "surface") and not os.path.exists(s)
                                     else os.path.abspath(s) for s in args.sql_file),
                hunt_gendata=(os.path.abspath(args.gendata) if os.path.exists(args.gendata)
                              else args.gendata) if args.gendata else "",
                hunt_trials=args.trials, hunt_duration=args.duration,
                hunt_trial_duration=args.trial_duration, hunt_queries=args.queries,
                hunt_threads=args.threads,
                hunt_oracles=tuple(_split(args.oracles)) or default("hunt_oracles"),
                hunt_topology=args.topology, compare_mysqld=tuple(args.compare_mysqld),
                known_bugs=tuple(os.path.abspath(k) for k in args.known_bugs),
                allow_known=args.allow_known,
                random_options=os.path.abspath(args.random_options) if args.random_options else "",
                random_options_max=args.random_options_max, hang_timeout=args.hang_timeout,
                replica_timeout=args.replica_timeout,
                wrong_result_budget=args.wrong_result_budget,
                reduce_out=os.path.abspath(args.reduce_out) if args.reduce_out else "",
                reduce_parallel=args.reduce_parallel)
def _labels(values: list[str]) -> tuple[tuple[tuple[str, str], ...], str]:
    """--label values: the run's KEY=VALUE labels, and the sweep's NAME (one at most)."""
    names = [v for v in values if "=" not in v]
    if len(names) > 1:
        raise UsageError(f"--label: one sweep label (NAME), not {', '.join(names)}; labels of "
                         f"the run are KEY=VALUE")
    pairs = [v for v in values if "=" in v]
    if not pairs:  # the history's records module (platform, datetime...) only for labels
        return (), (names[0] if names else "")
    from .history.records import parse_label
    return tuple(parse_label(v) for v in pairs), (names[0] if names else "")


def _config(args: argparse.Namespace) -> RunConfig:
    """The settings' RunConfig; KewpieError for a value or combination that cannot work."""
    if args.repeat < 1:
        raise KewpieError("--repeat must be at least 1")
    if args.parallel < 1:
        raise KewpieError("--parallel must be at least 1")
    if args.retry < 0 or args.retry_failures_max < 0 or args.max_save_datadir < 0:
        raise KewpieError("--retry, --retry-failures-max and --max-save-datadir must be >= 0")
    if not math.isfinite(args.test_timeout) or args.test_timeout < 0:
        raise KewpieError(f"--test-timeout must be 0 (no limit) or a positive number of "
                          f"seconds, not {args.test_timeout:g}")
    if not math.isfinite(args.server_start_timeout) or args.server_start_timeout <= 0:
        raise KewpieError(f"--server-start-timeout must be a positive number of seconds, "
                          f"not {args.server_start_timeout:g}")
    if not math.isfinite(args.tolerance) or not 0 <= args.tolerance < 1:
        raise KewpieError(f"--tolerance must be a fraction in [0, 1), not {args.tolerance:g}")
    if args.mode == "sweep" and not args.sweep_file:
        raise KewpieError("--mode=sweep needs --sweep-file PATH")
    hunt = _hunt_config(args)
    protocols = tuple(f for f in MYSQLTEST_PROTOCOLS if getattr(args, _protocol_dest(f)))
    mtr_only = [*protocols, *(["--record"] if args.record else []),
                *(["--xml-report"] if args.xml_report else []),
                *(["--big-test"] if args.big_test else []),
                *([] if args.reorder else ["--no-reorder"])]
    if mtr_only and args.mode != "mtr":
        raise KewpieError(f"{', '.join(mtr_only)}: only with --mode=mtr "
                          f"(mysql-test cases); this run is --mode={args.mode}")
    if args.shard:
        from .run.scheduling import parse_shard
        parse_shard(args.shard)
    if not 1024 <= args.base_port <= 64000:
        raise KewpieError("--base-port must be between 1024 and 64000")
    randgen_seed = _randgen_seed(args.randgen_seed)
    from .util.matrix_manager import parse_opt_matrix
    parse_opt_matrix(args.opt_matrix)  # a malformed matrix stops the run here (exit 2)
    suitepaths = [os.path.abspath(p) for p in _split(args.suitepath)]
    suitepaths.extend(RunConfig().suitepaths)  # kewpie's own suites, searched last
    suites = _split(args.suite)
    from .platform.suite_names import check_suite_name
    for name in suites:  # names, not paths (a path only as a directory given by --suitepath)
        check_suite_name(name, suitepaths, nested=args.mode == "mtr")
    for name in args.tests:  # 'suite.test': the suite part too (mtr takes a .test file's name)
        if "/" in name and args.mode != "reduce" and not (args.mode == "mtr"
                                                          and name.endswith(".test")):
            check_suite_name(name.split(",")[0].rsplit(".", 1)[0], suitepaths,
                             nested=args.mode == "mtr", what=f"test {name!r}: its suite")
    if not suites and not args.tests and args.default_server_type == "galera":
        suites = ["cluster_basic"]
    basedirs = list(args.basedir or [default("basedir")])  # the first is the tree under test
    labels, sweep_label = _labels(args.label)
    if args.history_dsn or args.results_db_dsn:
        from .history.dsn import check_dsn
        check_dsn(args.history_dsn or args.results_db_dsn,
                  "--history-dsn" if args.history_dsn else "--results-db-dsn")
    return _debugging_config(args, RunConfig(
        suites=suites, suitepaths=suitepaths,
        tests=[os.path.abspath(t) for t in args.tests] if args.mode == "reduce" else list(args.tests),
        basedir=basedirs[0], extra_basedirs=basedirs[1:], default_server_type=args.default_server_type,
        workdir=os.path.abspath(args.workdir), use_shm=args.shm,
        start_and_exit=args.start_and_exit, mode=args.mode, force=args.force,
        repeat=args.repeat, test_timeout=args.test_timeout, list_only=args.list,
        verbose=args.verbose, base_port=args.base_port, lock_dir=args.lock_dir,
        server_user=args.server_user, start_timeout=args.server_start_timeout,
        wsrep_provider_path=args.wsrep_provider_path, wsrep_sst_method=args.wsrep_sst_method,
        cluster_snapshots=args.cluster_snapshot,
        xtrabackup_path=os.path.abspath(args.xtrabackup_path) if args.xtrabackup_path else "",
        innobackupex_path=os.path.abspath(args.innobackupex_path) if args.innobackupex_path else "",
        randgen_path=os.path.abspath(args.randgen_path) if args.randgen_path else "",
        parallel=args.parallel, junit_xml=os.path.abspath(args.junit_xml) if args.junit_xml else "",
        shard=args.shard, timings_file=os.path.abspath(args.timings_file) if args.timings_file else "",
        retry=args.retry, retry_failures_max=args.retry_failures_max,
        max_save_datadir=args.max_save_datadir,
        sweep_file=os.path.abspath(args.sweep_file) if args.sweep_file else "",
        sweep_label=sweep_label, sweep_out=os.path.abspath(args.sweep_out) if args.sweep_out else "",
        baseline=args.baseline, tolerance=args.tolerance, results_db_dsn=args.results_db_dsn,
        randgen_seed=randgen_seed, opt_matrix=args.opt_matrix,
        mtr_root=os.path.abspath(args.mtr_root) if args.mtr_root else "", record=args.record,
        big_test=args.big_test, mysqltest_protocols=protocols, reorder=args.reorder,
        xml_report=os.path.abspath(args.xml_report) if args.xml_report else "",
        history=args.history != "off",
        history_path=os.path.abspath(args.history) if args.history not in ("", "off") else "",
        history_dsn=args.history_dsn or args.results_db_dsn, history_labels=labels, **hunt))


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
    log = configure(verbose="--verbose" in args)
    try:
        config, resolved = settings_from_args(argv)
    except KewpieError as exc:
        log.error(str(exc))
        return EXIT_ENVIRONMENT
    if resolved.settings["list_options"].value:
        print(format_settings(resolved, option_rows(build_parser())))
        return EXIT_OK
    if resolved.files and not config.list_only:  # where settings came from (--list-options)
        log.info(f"Settings from {', '.join(resolved.files)}"
                 + (f", profile {resolved.profile}" if resolved.profile else ""))
    from .run.environment import RunEnvironment  # the run's modules: not for --help
    from .run.modes import run_mode

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
    except SuiteError as exc:
        get_logger().error(str(exc))
        status = EXIT_ENVIRONMENT
    except KewpieError as exc:
        lines = str(exc).splitlines() or [type(exc).__name__]
        get_logger().error(lines[0])
        for line in lines[1:]:  # e.g. a server's error-log tail
            get_logger().info(line)
        status = exc.exit_code
    except OSError as exc:
        get_logger().error(_os_error_line(exc))
        get_logger().debug("traceback", exc_info=True)
        status = EXIT_ENVIRONMENT
    except Exception as exc:  # noqa: BLE001 - a bug in kewpie: say so, keep the evidence
        get_logger().error(f"kewpie internal error: {type(exc).__name__}: {exc}",
                           exc_info=config.verbose)
        get_logger().debug("traceback", exc_info=True)
        status = EXIT_ENVIRONMENT
    finally:
        for sig in previous:  # a second Ctrl-C must not interrupt the cleanup
            signal.signal(sig, signal.SIG_IGN)
        try:
            if env is not None:
                env.close(fast=interrupted)
        except Exception as exc:  # noqa: BLE001 - cleanup failed, but servers were stopped
            get_logger().error(f"cleanup failed: {type(exc).__name__}: {exc} "
                               f"(servers were stopped; run --mode=cleanup if in doubt)")
            get_logger().debug("traceback", exc_info=True)
            if not interrupted:
                status = EXIT_ENVIRONMENT
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            relay.uninstall()
    return status


def history_main(argv: Sequence[str]) -> int:
    """``kewpie history ...`` (lib/history/commands.py) over the settings' workdir, store
    and port leasing (config files included); one ERROR line and exit 2 on failure."""
    log = configure()
    from .history.commands import Defaults, build_parser as history_parser, config_argv, run_command
    args = history_parser().parse_args(list(argv))  # --help, usage errors: argparse exits 2
    try:
        config = config_from_args(config_argv(args))
        defaults = Defaults(workdir=config.workdir, history_path=config.history_path,
                            history_dsn=config.history_dsn, lock_dir=config.lock_dir,
                            base_port=config.base_port)
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
