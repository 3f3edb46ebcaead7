"""The command line: options, signals, exit statuses. The only layer that exits.

Exit statuses: 0 every test passed (or the mode succeeded); 1 a test failed
or timed out; 2 bad usage or environment (unknown suite, malformed
suite_config.py, missing binary, no free ports...); 130/143 interrupted by
SIGINT/SIGTERM (servers stopped first).
"""
from __future__ import annotations

import argparse
import os
import signal
import sys
from typing import Sequence

from lib.config import ROOT, RunConfig
from lib.errors import EXIT_ENVIRONMENT, Interrupted, KewpieError, SuiteError
from lib.logsetup import configure, get_logger
from lib.ports import DEFAULT_BASE_PORT


def _split(values: list[str] | None) -> list[str]:
    out: list[str] = []
    for value in values or []:
        out.extend(v.strip() for v in value.split(",") if v.strip())
    return out


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser; ``--help`` documents every option."""
    p = argparse.ArgumentParser(
        prog="kewpie.py",
        description="Run Python unittest suites against MySQL-family servers that kewpie "
                    "starts, leases ports for and always cleans up.",
        epilog="Exit status: 0 all passed; 1 a test failed; 2 bad usage or environment; "
               "130/143 interrupted (servers stopped).")
    p.add_argument("tests", nargs="*", metavar="TEST",
                   help="tests to run, as 'test' or 'suite.test' (default: every test of the suites)")
    p.add_argument("--suite", action="append", metavar="SUITE[,SUITE...]",
                   help="suite(s) to run; comma list, repeatable (default: main)")
    p.add_argument("--suitepath", action="append", metavar="DIR",
                   help="extra directories holding suites (searched before percona_tests/)")
    p.add_argument("--basedir", default="/usr",
                   help="code tree to test: an install prefix, tarball or build dir (default: /usr)")
    p.add_argument("--default-server-type", default="mysql", choices=["mysql", "galera"],
                   help="server type for suites that do not name one (default: mysql; with "
                        "galera and no --suite, the suite is cluster_basic)")
    p.add_argument("--wsrep-provider-path", default="/usr/lib/galera/libgalera_smm.so",
                   metavar="PATH", help="Galera provider library (default: %(default)s)")
    p.add_argument("--wsrep-sst-method", default="rsync", choices=["rsync", "mariabackup"],
                   help="how Galera joiners get a full state transfer (default: rsync)")
    p.add_argument("--no-cluster-snapshot", action="store_true",
                   help="always form Galera clusters by SST (no warm start from a snapshot)")
    p.add_argument("--parallel", type=int, default=1, metavar="N",
                   help="run N bots at once, each with its own servers (default: 1)")
    p.add_argument("--junit-xml", default="", metavar="PATH",
                   help="write a JUnit XML report for Jenkins' junit step")
    p.add_argument("--shard", default="", metavar="K/N",
                   help="run only the K-th of N disjoint slices of the selected tests")
    p.add_argument("--timings-file", default="", metavar="PATH",
                   help="test durations to balance --shard slices (every shard must get the "
                        "same file; without one, shards are balanced by count)")
    p.add_argument("--retry", type=int, default=0, metavar="N",
                   help="rerun a failed test up to N times on fresh servers; a test that then "
                        "passes is reported as flaky")
    p.add_argument("--retry-failures-max", type=int, default=10, metavar="N",
                   help="stop retrying once N tests have failed (default: 10)")
    p.add_argument("--max-save-datadir", type=int, default=3, metavar="N",
                   help="keep the datadirs of at most N failed tests in workdir/failed "
                        "(logs are always kept; default: 3)")
    p.add_argument("--xtrabackup-path", default="", metavar="PATH",
                   help="Percona xtrabackup binary (default: mariadb-backup from the code tree, "
                        "else xtrabackup on PATH)")
    p.add_argument("--innobackupex-path", default="", metavar="PATH",
                   help="Percona innobackupex script, for kewpie 2012 backup tests")
    p.add_argument("--randgen-path", default="", metavar="DIR",
                   help="a Perl randgen checkout (gentest.pl) to use instead of kewpie's "
                        "built-in randgen engine")
    p.add_argument("--workdir", default=os.path.join(ROOT, "workdir"),
                   help="where servers' vardirs, logs and state live (default: ./workdir)")
    p.add_argument("--no-shm", action="store_true",
                   help="keep vardirs on disk instead of linking them to /dev/shm")
    p.add_argument("--start-and-exit", action="store_true",
                   help="start the first selected test's servers, print them, exit, leave them running")
    p.add_argument("--mode", default="native", choices=["native", "cleanup", "sweep"],
                   help="native: run tests; cleanup: stop servers left in --workdir; "
                        "sweep: run a sysbench sweep file (docs/sysbench.md)")
    p.add_argument("--sweep-file", default="", metavar="PATH",
                   help="with --mode=sweep: the JSON sweep to run")
    p.add_argument("--label", default="", metavar="NAME",
                   help="with --mode=sweep: store the sweep under this label (default: its name)")
    p.add_argument("--sweep-out", default="", metavar="DIR",
                   help="with --mode=sweep: where the table, CSV, JSON and PNGs go "
                        "(default: workdir/sweeps/<name>-<time>)")
    p.add_argument("--baseline", default="", metavar="LABEL|last",
                   help="with --mode=sweep: compare with a stored sweep (a label, or 'last' "
                        "with the same context); exit 1 on a regression")
    p.add_argument("--tolerance", type=float, default=0.10, metavar="FRACTION",
                   help="allowed throughput drop beyond the repeats' noise (default: 0.10)")
    p.add_argument("--results-db-dsn", default="", metavar="DSN",
                   help="store sweep results in a MySQL-family server "
                        "(mysql://user:pass@host:port/db) instead of workdir/results.sqlite")
    p.add_argument("--force", action="store_true",
                   help="run every test even after a failure (default: stop at the first)")
    p.add_argument("--repeat", type=int, default=1, metavar="N", help="run each test N times")
    p.add_argument("--test-timeout", type=float, default=0.0, metavar="S",
                   help="fail a test that runs longer than S seconds, killing its servers (0: none)")
    p.add_argument("--list", action="store_true",
                   help="print the selected tests, one suite.test per line, and exit")
    p.add_argument("--verbose", action="store_true", help="debug logging and per-method rows")
    p.add_argument("--base-port", type=int, default=DEFAULT_BASE_PORT, metavar="PORT",
                   help=f"where the search for free port blocks starts (default: {DEFAULT_BASE_PORT})")
    p.add_argument("--lock-dir", default="", metavar="DIR",
                   help="shared directory of port lease locks (default: /tmp/kewpie-locks-<uid>)")
    p.add_argument("--server-user", default=None, metavar="USER",
                   help="OS user servers run as (default: mysql when run as root, else yourself)")
    p.add_argument("--server-start-timeout", type=float, default=60.0, metavar="S",
                   help="seconds a server may take to answer SQL after launch (default: 60)")
    return p


def config_from_args(argv: Sequence[str] | None) -> RunConfig:
    """Parse argv into a RunConfig (argparse exits 2 on malformed options)."""
    args = build_parser().parse_args(argv)
    if args.repeat < 1:
        raise KewpieError("--repeat must be at least 1")
    if args.parallel < 1:
        raise KewpieError("--parallel must be at least 1")
    if args.retry < 0 or args.retry_failures_max < 0 or args.max_save_datadir < 0:
        raise KewpieError("--retry, --retry-failures-max and --max-save-datadir must be >= 0")
    if args.mode == "sweep" and not args.sweep_file:
        raise KewpieError("--mode=sweep needs --sweep-file PATH")
    if args.shard:
        from lib.scheduling import parse_shard
        parse_shard(args.shard)
    if not 1024 <= args.base_port <= 64000:
        raise KewpieError("--base-port must be between 1024 and 64000")
    suitepaths = [os.path.abspath(p) for p in _split(args.suitepath)]
    suitepaths.append(os.path.join(ROOT, "percona_tests"))
    suites = _split(args.suite)
    if not suites and not args.tests and args.default_server_type == "galera":
        suites = ["cluster_basic"]
    return RunConfig(
        suites=suites, tests=list(args.tests), suitepaths=suitepaths,
        basedir=args.basedir, default_server_type=args.default_server_type,
        workdir=os.path.abspath(args.workdir), use_shm=not args.no_shm,
        start_and_exit=args.start_and_exit, mode=args.mode, force=args.force,
        repeat=args.repeat, test_timeout=args.test_timeout, list_only=args.list,
        verbose=args.verbose, base_port=args.base_port, lock_dir=args.lock_dir,
        server_user=args.server_user, start_timeout=args.server_start_timeout,
        wsrep_provider_path=args.wsrep_provider_path, wsrep_sst_method=args.wsrep_sst_method,
        cluster_snapshots=not args.no_cluster_snapshot,
        xtrabackup_path=os.path.abspath(args.xtrabackup_path) if args.xtrabackup_path else "",
        innobackupex_path=os.path.abspath(args.innobackupex_path) if args.innobackupex_path else "",
        randgen_path=os.path.abspath(args.randgen_path) if args.randgen_path else "",
        parallel=args.parallel, junit_xml=os.path.abspath(args.junit_xml) if args.junit_xml else "",
        shard=args.shard, timings_file=os.path.abspath(args.timings_file) if args.timings_file else "",
        retry=args.retry, retry_failures_max=args.retry_failures_max,
        max_save_datadir=args.max_save_datadir,
        sweep_file=os.path.abspath(args.sweep_file) if args.sweep_file else "",
        sweep_label=args.label, sweep_out=os.path.abspath(args.sweep_out) if args.sweep_out else "",
        baseline=args.baseline, tolerance=args.tolerance, results_db_dsn=args.results_db_dsn)


def _raise_interrupted(signum: int, _frame: object) -> None:
    raise Interrupted(signum)


def main(argv: Sequence[str] | None = None) -> int:
    """Run kewpie; return the exit status."""
    from lib.harness import Harness

    os.umask(0o022)  # nothing kewpie writes may be world-writable
    log = configure(verbose="--verbose" in (argv if argv is not None else sys.argv[1:]))
    try:
        config = config_from_args(argv)
    except KewpieError as exc:
        log.error(str(exc))
        return EXIT_ENVIRONMENT
    previous = {sig: signal.signal(sig, _raise_interrupted) for sig in (signal.SIGINT, signal.SIGTERM)}
    harness: Harness | None = None
    status = EXIT_ENVIRONMENT
    interrupted = False
    try:
        harness = Harness(config)
        if config.mode == "cleanup":
            return harness.cleanup()
        if config.list_only:
            from lib.suites import select_tests
            specs = select_tests(config.suites, config.tests, config.suitepaths,
                                 config.default_server_type)
            for spec in harness.apply_shard(specs, quiet=True):
                print(spec.full_name)
            return 0
        harness.open_workdir()
        configure(config.verbose, logfile=harness.workdir.log_file)
        harness.discover_tree()
        if config.mode == "sweep":
            from lib.sysbench.mode import run_sweep_mode
            status = run_sweep_mode(harness)
            return status
        specs = harness.select()
        if config.start_and_exit:
            status = harness.start_and_exit(specs)
        else:
            status = harness.run_tests(specs)
        return status
    except Interrupted as exc:
        interrupted = True
        get_logger().error(f"Interrupted by signal {exc.signum}: stopping all servers")
        status = 128 + exc.signum
        return status
    except SuiteError as exc:
        get_logger().error(str(exc))
        return EXIT_ENVIRONMENT
    except KewpieError as exc:
        lines = str(exc).splitlines() or [type(exc).__name__]
        get_logger().error(lines[0])
        for line in lines[1:]:  # e.g. a server's error-log tail
            get_logger().info(line)
        return exc.exit_code
    except Exception as exc:  # noqa: BLE001 - a bug in kewpie: say so, keep the evidence
        get_logger().error(f"kewpie internal error: {type(exc).__name__}: {exc}",
                           exc_info=config.verbose)
        get_logger().debug("traceback", exc_info=True)
        return EXIT_ENVIRONMENT
    finally:
        for sig in previous:  # a second Ctrl-C must not interrupt the cleanup
            signal.signal(sig, signal.SIG_IGN)
        try:
            if harness is not None:
                harness.close(fast=interrupted)
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


def console_main() -> None:
    """Entry point of the ``kewpie`` console script."""
    sys.exit(main())
