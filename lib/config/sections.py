"""The sections every run's configuration has, and the one place their defaults live
(the command line's defaults are read from here; a config file's settings and the
command line's go through lib/cli.py into them)."""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from ..home import data_path, run_root
from ..platform.portbase import DEFAULT_BASE_PORT

ROOT = run_root()  # the checkout, or the current directory when installed
MAX_FIELDS = 15    # a section's fields at most (issue 44; tests/unit/modes/test_modes_and_config.py)


@dataclass
class Selection:
    """Which tests run: suites, tests, filters, shards, repeats (--list too)."""

    suites: list[str] = field(default_factory=list)
    tests: list[str] = field(default_factory=list)
    suitepaths: list[str] = field(default_factory=lambda: [data_path("percona_tests")])
    do_test: list[str] = field(default_factory=list)
    skip_test: list[str] = field(default_factory=list)
    enable_disabled: bool = False
    start_from: str = ""
    combinations: list[str] = field(default_factory=list)
    list_only: bool = False     # --list
    shard: str = ""             # --shard K/N
    timings_file: str = ""      # --timings-file: durations balancing the shards
    repeat: int = 1


@dataclass
class Servers:
    """The code trees and how the run's servers run (Galera's provider and transfers)."""

    basedir: str = "/usr"
    extra_basedirs: list[str] = field(default_factory=list)  # --basedir given again
    trees_dir: str = os.path.join(ROOT, "trees")  # scripts/get-tree's trees (one --basedir)
    default_server_type: str = "mysql"
    server_user: str | None = None
    start_timeout: float = 60.0  # servers' own defaults (ServerSettings'; a unit test
    shutdown_timeout: float = 10.0  # keeps them equal without importing lib.servers here)
    mysqld_options: list[str] = field(default_factory=list)  # --mysqld: every server's
    wsrep_provider_path: str = "/usr/lib/galera/libgalera_smm.so"
    wsrep_sst_method: str = "rsync"
    cluster_snapshots: bool = True
    use_shm: bool = True
    base_port: int = DEFAULT_BASE_PORT
    lock_dir: str = ""


@dataclass
class Reporting:
    """How the run goes and what it reports: bots, retries, timeouts, known bugs,
    JUnit, kept evidence."""

    force: bool = False
    test_timeout: float = 0.0
    parallel: int = 1
    retry: int = 0
    retry_failures_max: int = 10
    junit_xml: str = ""
    max_save_datadir: int = 3
    known_bugs: tuple[str, ...] = ()  # --known-bugs: known-bugs files
    allow_known: bool = False         # --allow-known: only known failures pass the run
    verbose: bool = False


@dataclass
class Debugging:
    """Debuggers and wrappers, failed servers kept, the error-log warnings check."""

    valgrind: bool = False
    valgrind_options: list[str] = field(default_factory=list)
    rr: bool = False
    gdb: bool = False
    manual_gdb: bool = False
    server_wrapper: str = ""
    libeatmydata: bool = False
    keep_failed: bool = False
    check_warnings: bool | None = None  # None: each test's rule (lib/run/postchecks.py)
    test_debug: bool = False


@dataclass
class Tools:
    """Backup and randgen programs, and kewpie 2012's options of the tests."""

    xtrabackup_path: str = ""
    innobackupex_path: str = ""
    randgen_path: str = ""
    randgen_seed: int = 1  # --randgen-seed: kewpie 2012's system_manager.randgen_seed
    opt_matrix: str = ""   # --opt-matrix k=v,...: kewpie 2012's matrix_manager.option_matrix
    gendata: str = ""      # --gendata: loaded into the servers before each test
    start_dirty: bool = False


@dataclass
class History:
    """The results history the run writes to (docs/history.md)."""

    record: bool = True   # --history off (--no-history): record nothing
    path: str = ""        # --history PATH ('' = WORKDIR/history.sqlite)
    dsn: str = ""         # --history-dsn mysql://user:password@host:port/database
    labels: tuple[tuple[str, str], ...] = ()  # --label KEY=VALUE
