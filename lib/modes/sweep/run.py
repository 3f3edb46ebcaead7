"""``./kewpie.py --mode=sweep``: run a sweep file on kewpie's servers, store, plot, compare."""
from __future__ import annotations

import hashlib
import json
import os
import platform
import time
from typing import Any

from ...errors import EXIT_OK, EXIT_TEST_FAILED, UsageError
from ...platform.logsetup import get_logger
from ...servers.option_safety import check_server_options
from ...servers.options import parse_options
from ...servers.option_catalog import load_catalog
from ...servers.manager import ServerManager
from ...servers.server import Server
from ...servers.requirements import Requirements
from ...sysbench.engines import resolve_engine
from ...platform.safewrite import OutputDir
from ...platform.trustedpath import check_input
from ...sysbench.outputs import table, write_all
from ...sysbench.regression import compare
from ...history.sweeps import import_legacy
from ...sysbench.results import ResultsDB
from ...sysbench.runner import ServerSet, run_matrix
from ...sysbench.sweep import SweepResult, SweepSpec
from ...run.environment import RunEnvironment
from ...run.recording import RunHistory, open_history
from .options import SweepOptions

REPLICA_WAIT = 600.0  # seconds replicas or nodes get to apply a data set


def context_key(spec: SweepSpec, versions: list[str]) -> str:
    """Sweeps with the same key are comparable ('last' baseline)."""
    parts = [spec.workload, spec.tables, spec.table_size, spec.duration, spec.threads,
             spec.variable, spec.values, sorted(spec.server_options), sorted(versions)]
    extra = [spec.matrix, spec.cluster, spec.storage, spec.protocol, spec.total_rows,
             spec.tpcc_scale(), spec.sysbench_options]
    if any(x not in (None, "", "socket", {}, []) for x in extra):  # old sweeps keep their keys
        parts.append(extra)
    return hashlib.sha1(json.dumps(parts, default=str).encode()).hexdigest()[:16]


def cluster_pairs(spec: SweepSpec) -> list[tuple[int, int]]:
    """join_cluster / replication pairs: every other server joins (or replicates) s0."""
    return [(0, i) for i in range(1, spec.cluster_size)]


def consistency_holds(sweep: SweepResult) -> bool:
    """False when a TPC-C-like consistency check failed (each failed condition logged as
    an ERROR line)."""
    failed = [c for c in sweep.checks if c.passed is False]
    for check in failed:
        for line in check.output.splitlines():
            if "FAILED" in line:
                get_logger().error(f"TPC-C-like consistency of {check.data_set} on "
                                   f"{check.version}: {line.strip()}")
    return not failed


def run_sweep_mode(env: RunEnvironment) -> int:
    """Run --sweep-file on servers from env's manager factory (one bot per code
    tree), store it in the results history (lib/run/recording.py: the run, the sweep's
    rows and one result, ``sweep.<name>``), write outputs, compare with --baseline."""
    history = open_history(env, background=False)
    status: int | None = None
    started = time.monotonic()
    try:
        status = _run_sweep_mode(env, history, started)
        return status
    finally:
        history.close(status)


def _run_sweep_mode(env: RunEnvironment, history: RunHistory, started: float) -> int:
    own = env.config.section(SweepOptions)
    log = get_logger()
    spec = SweepSpec.from_file(own.file)
    _check_before_servers(env, spec, own.file)
    out_dir = own.out or os.path.join(
        env.workdir.path, "sweeps", f"{spec.name}-{time.strftime('%Y%m%d-%H%M%S')}")
    out = OutputDir.create(out_dir, "--sweep-out", env.trust, reuse=True)  # never through a link
    out.folder("logs").close()
    servers = _SweepServers(env, spec, own.file)
    sweep = run_matrix(spec, servers.set_for, os.path.join(out_dir, "logs"),
                       _context(env, spec))
    sweep.context["load_after"] = os.getloadavg()
    versions = sorted({r.version for r in sweep.runs})
    sweep.context.update({"versions": versions, "key": context_key(spec, versions),
                          "flavor": env.tree.version.flavor if env.tree and env.tree.version else "",
                          "options": spec.server_options})
    label = own.label or spec.name
    db, sweep_id = _store(env, history, sweep, label)
    with out:
        paths = write_all(sweep, out)
    for line in table(sweep).splitlines():
        log.info(line)
    log.info(f"sweep stored as #{sweep_id} (label {label!r}); files in {out_dir}: "
             f"{', '.join(os.path.basename(p) for p in paths.values())}")
    took = int((time.monotonic() - started) * 1000)
    return _verdict(history, sweep, own, db, sweep_id, took)


def _check_before_servers(env: RunEnvironment, spec: SweepSpec, sweep_file: str) -> None:
    """What can be checked before any server starts: a workload script of the user's
    (sysbench runs it as root) is trusted, every engine is known to every code tree."""
    config = env.config
    if spec.workload.endswith(".lua"):  # a script of the user's: sysbench runs it as root
        check_input(os.path.abspath(spec.workload), f"{sweep_file}: workload", env.trust)
    engines = [e for e in spec.grid().values_of("engine") if e]
    for basedir in spec.basedirs or [config.servers.basedir]:  # before any server starts
        tree = env.tree if basedir == config.servers.basedir and env.tree else env.trees.resolve(basedir)
        for engine in engines:
            resolve_engine(engine, tree)


class _SweepServers:
    """The sweep's servers: one manager (a bot) per code tree, from env's factory."""

    def __init__(self, env: RunEnvironment, spec: SweepSpec, sweep_file: str) -> None:
        self.env, self.spec, self.sweep_file = env, spec, sweep_file
        self.managers: dict[str, tuple[ServerManager, list[Server]]] = {}

    def set_for(self, basedir: str, options: list[str]) -> ServerSet:
        """basedir's running servers with options (a single server restarts in place
        when they change)."""
        env, spec = self.env, self.spec
        config = env.config
        key = basedir or config.servers.basedir
        if key in self.managers:
            manager, servers = self.managers[key]
            if servers[0].user_options != parse_options(options):
                if len(servers) > 1:
                    raise UsageError("sweep: a cluster's server options cannot change "
                                     "during a sweep")
                servers[0].restart(options)
            return ServerSet(basedir, servers, lambda: manager.wait_for_replicas(REPLICA_WAIT))
        tree = (env.tree if key == config.servers.basedir and env.tree
                else env.trees.resolve(key))  # 'old', a path
        parsed = tuple(parse_options(options))
        check_server_options(parsed, load_catalog(tree.server, env.workdir.path),
                             where=f"{self.sweep_file}: server options")
        manager = env.make_manager(f"bot{len(self.managers)}", tree=tree)
        reqs = Requirements.declared(spec.server_type, [parsed] * spec.cluster_size,
                                     cluster_pairs(spec), on_disk=spec.storage == "disk")
        servers = manager.get_servers(reqs)
        self.managers[key] = (manager, servers)
        return ServerSet(basedir, servers, lambda: manager.wait_for_replicas(REPLICA_WAIT))


def _context(env: RunEnvironment, spec: SweepSpec) -> dict[str, Any]:
    """The sweep's context as it starts: the machine, the time, the storage, the load."""
    return {"machine": {"host": platform.node(), "nproc": os.cpu_count(),
                        "kernel": platform.release()},
            "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
            "shm": env.workdir.use_shm and spec.storage != "disk",
            "load_before": os.getloadavg()}


def _store(env: RunEnvironment, history: RunHistory, sweep: SweepResult,
           label: str) -> tuple[ResultsDB | None, int | None]:
    """The sweep saved in the results history under label (the sweeps of an old
    results.sqlite in the workdir copied in first): (its database, its id); (None, None)
    when the history is off or unreachable (a UsageError then if --baseline needs it)."""
    own = env.config.section(SweepOptions)
    engine, run_id = history.store()
    if engine is None and own.baseline:
        raise UsageError(f"--baseline {own.baseline}: the results history, where baselines "
                         f"are, is {'off' if not env.config.history.record else 'unreachable'}")
    if engine is None:
        return None, None
    db = ResultsDB(engine=engine)
    legacy = os.path.join(env.workdir.path, "results.sqlite")  # the sweeps' store before
    if os.path.isfile(legacy) and import_legacy(engine, legacy):
        get_logger().info(f"sweeps of {legacy} copied into the results history")
    return db, db.save(sweep, label, run_id)


def _verdict(history: RunHistory, sweep: SweepResult, own: SweepOptions,
             db: ResultsDB | None, sweep_id: int | None, took: int) -> int:
    """The sweep's result, recorded as ``sweep.<name>``: a failed consistency check
    fails it, else the comparison with --baseline when there is one (a regression
    fails it); the exit status."""
    name = f"sweep.{sweep.spec.name}"
    if not consistency_holds(sweep):
        history.record_result(name, "fail", took)
        return EXIT_TEST_FAILED
    if not own.baseline or db is None:
        history.record_result(name, "pass", took)
        return EXIT_OK
    log = get_logger()
    base_id = db.find(own.baseline, sweep.context["key"], exclude_id=sweep_id)
    if base_id is None:
        raise UsageError(f"no baseline {own.baseline!r} in the results database")
    verdict = compare(sweep, db.load(base_id), own.tolerance)
    log.info(f"comparison with baseline sweep #{base_id} ({own.baseline}):")
    for line in verdict.lines:
        log.info(f"  {line}")
    for line in verdict.regressions:
        log.error(line)
    log.info("no regression" if verdict.ok else f"{len(verdict.regressions)} regression(s)")
    history.record_result(name, "pass" if verdict.ok else "fail", took,
                          failure="\n".join(verdict.regressions))
    return EXIT_OK if verdict.ok else EXIT_TEST_FAILED
