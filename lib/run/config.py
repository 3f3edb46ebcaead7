"""The one run-config object every part of the harness reads, and the one place its
defaults live (the command line's defaults are read from here; a config file's
settings and the command line's go through lib/cli.py into it).

Light to import (no server, process or database module): ``kewpie.py --help``
reads its defaults from here."""
from __future__ import annotations

import os
from dataclasses import MISSING, dataclass, field, fields
from types import MappingProxyType
from typing import Any

from ..home import data_path, run_root
from ..platform.portbase import DEFAULT_BASE_PORT

ROOT = run_root()  # the checkout, or the current directory when installed

# mariadb-test's protocol modes, passed on as mtr does (flag -> what it does to a statement)
MYSQLTEST_PROTOCOLS = MappingProxyType({
    "--ps-protocol": "as a prepared statement",
    "--sp-protocol": "inside a stored procedure",
    "--view-protocol": "(SELECTs) through a view",
    "--cursor-protocol": "(SELECTs) through a cursor",
    "--non-blocking-api": "through the client's non-blocking API",
})


@dataclass
class RunConfig:
    """Everything a run was asked to do (built from the command line)."""

    suites: list[str] = field(default_factory=list)
    tests: list[str] = field(default_factory=list)
    suitepaths: list[str] = field(default_factory=lambda: [data_path("percona_tests")])
    basedir: str = "/usr"
    default_server_type: str = "mysql"
    workdir: str = os.path.join(ROOT, "workdir")
    use_shm: bool = True
    start_and_exit: bool = False
    mode: str = "native"
    force: bool = False
    repeat: int = 1
    test_timeout: float = 0.0
    list_only: bool = False
    verbose: bool = False
    base_port: int = DEFAULT_BASE_PORT
    lock_dir: str = ""
    server_user: str | None = None
    start_timeout: float = 60.0  # servers' own defaults (ServerSettings'; a unit test
    shutdown_timeout: float = 10.0  # keeps them equal without importing lib.servers here)
    wsrep_provider_path: str = "/usr/lib/galera/libgalera_smm.so"
    wsrep_sst_method: str = "rsync"
    cluster_snapshots: bool = True
    xtrabackup_path: str = ""
    innobackupex_path: str = ""
    randgen_path: str = ""
    parallel: int = 1
    junit_xml: str = ""
    shard: str = ""
    timings_file: str = ""
    retry: int = 0
    retry_failures_max: int = 10
    max_save_datadir: int = 3
    sweep_file: str = ""
    sweep_label: str = ""
    sweep_out: str = ""
    baseline: str = ""
    tolerance: float = 0.10
    results_db_dsn: str = ""
    randgen_seed: int = 1  # --randgen-seed: kewpie 2012's system_manager.randgen_seed, self.randgen's
    opt_matrix: str = ""  # --opt-matrix k=v,...: kewpie 2012's matrix_manager.option_matrix
    root: str = ROOT
    # issue 17: debugging, selection, combinations, kewpie 2012's options
    valgrind: bool = False
    valgrind_options: list[str] = field(default_factory=list)
    rr: bool = False
    gdb: bool = False
    manual_gdb: bool = False
    server_wrapper: str = ""
    libeatmydata: bool = False
    keep_failed: bool = False
    check_warnings: bool | None = None  # None: each test's rule (lib/run/postchecks.py)
    do_test: list[str] = field(default_factory=list)
    skip_test: list[str] = field(default_factory=list)
    enable_disabled: bool = False
    start_from: str = ""
    combinations: list[str] = field(default_factory=list)
    test_debug: bool = False
    gendata: str = ""
    start_dirty: bool = False
    mysqld_options: list[str] = field(default_factory=list)
    extra_basedirs: list[str] = field(default_factory=list)  # --basedir given again
    trees_dir: str = os.path.join(ROOT, "trees")  # scripts/get-tree's trees (one --basedir)
    mtr_root: str = ""          # --mode=mtr: the mysql-test directory ('' = the code tree's)
    record: bool = False        # --mode=mtr: record result files (mtr --record)
    big_test: bool = False      # --mode=mtr: also run big tests (mtr --big-test)
    mysqltest_protocols: tuple[str, ...] = ()  # --mode=mtr: e.g. ("--ps-protocol",), as mtr
    reorder: bool = True        # --mode=mtr: group cases by servers (mtr's default; --no-reorder)
    # --mode=hunt (docs/hunting.md): trials of randgen loads with oracles
    hunt_grammars: tuple[str, ...] = ()   # --grammar (repeatable): the trials take them in turn
    hunt_redefine: tuple[str, ...] = ()   # --redefine: grammar files redefining rules
    hunt_sql_files: tuple[str, ...] = ()  # --sql-file: pquery-style loads (mysql-test, a folder, a file)
    hunt_gendata: str = ""                # --gendata as given (relative: under --randgen-path)
    hunt_trials: int = 0                  # --trials: 0 = no limit (1 when --duration is 0 too)
    hunt_duration: float = 0.0            # --duration: the hunt's time budget (0 = none)
    hunt_trial_duration: float = 60.0     # --trial-duration: one trial's load
    hunt_queries: int = 0                 # --queries: sentences per thread per trial (0 = no limit)
    hunt_threads: int = 4                 # --threads: the load's connections per trial
    hunt_oracles: tuple[str, ...] = ("crash", "hang", "errorlog", "divergence")
    hunt_topology: str = "single"         # --topology: single, replication[:N], galera[:N], compare
    compare_mysqld: tuple[str, ...] = ()  # --compare-mysqld: options of s1 in --topology compare
    known_bugs: tuple[str, ...] = ()      # --known-bugs: known-bugs files
    allow_known: bool = False             # --allow-known: only known findings pass the run
    random_options: str = ""              # --random-options FILE: options drawn per trial
    random_options_max: int = 3           # --random-options-max: at most this many per trial
    hang_timeout: float = 60.0            # --hang-timeout: the Deadlock reporter's threshold
    replica_timeout: float = 120.0        # --replica-timeout: replicas' time to catch up
    wrong_result_budget: int = 500        # --wrong-result-budget: checks per oracle per trial
    # --mode=reduce (docs/hunting.md): a finding reduced to a mysql-test case
    reduce_out: str = ""                  # --reduce-out: the output folder ('' = FINDING/reduce)
    reduce_parallel: int = 0              # --reduce-parallel: candidates at once (0: the cores, <= 4)
    xml_report: str = ""        # --mode=mtr: --xml-report PATH, mtr's JUnit dialect
    # the results history (docs/history.md)
    history: bool = True        # record this run (--no-history: not)
    history_path: str = ""      # --history PATH ('' = WORKDIR/history.sqlite)
    history_dsn: str = ""       # --history-dsn mysql://user:password@host:port/database
    history_labels: tuple[tuple[str, str], ...] = ()  # --label KEY=VALUE


def default(name: str) -> Any:
    """RunConfig's default for field name (KeyError for a field without a plain default)."""
    for f in fields(RunConfig):
        if f.name == name and f.default is not MISSING:
            return f.default
    raise KeyError(f"RunConfig has no plain default for {name!r}")
