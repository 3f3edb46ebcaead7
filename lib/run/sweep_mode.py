"""``./kewpie.py --mode=sweep``: run a sweep file on kewpie's servers, store, plot, compare."""
from __future__ import annotations

import hashlib
import json
import os
import platform
import time

from ..errors import EXIT_OK, EXIT_TEST_FAILED, UsageError
from ..platform.logsetup import get_logger
from ..servers.option_safety import check_server_options
from ..servers.options import parse_options
from ..servers.option_catalog import load_catalog
from ..servers.manager import ServerManager
from ..servers.server import Server
from ..servers.requirements import Requirements
from ..sysbench.interleave import run_interleaved
from ..sysbench.outputs import table, write_all
from ..sysbench.regression import compare
from ..sysbench.results import ResultsDB
from ..sysbench.sweep import SweepSpec, run_sweep
from .environment import RunEnvironment


def context_key(spec: SweepSpec, versions: list[str]) -> str:
    """Sweeps with the same key are comparable ('last' baseline)."""
    parts = [spec.workload, spec.tables, spec.table_size, spec.duration, spec.threads,
             spec.variable, spec.values, sorted(spec.server_options), sorted(versions)]
    return hashlib.sha1(json.dumps(parts, default=str).encode()).hexdigest()[:16]


def run_sweep_mode(env: RunEnvironment) -> int:
    """Run config.sweep_file on servers from env's manager factory (one bot per code
    tree), store it, write outputs, compare with config.baseline."""
    config = env.config
    log = get_logger()
    spec = SweepSpec.from_file(config.sweep_file)
    managers: dict[str, tuple[ServerManager, Server]] = {}

    def server_for(basedir: str, options: list[str]) -> Server:
        """A running server of basedir with options (restarted in place when they change)."""
        key = basedir or config.basedir
        if key in managers:
            manager, server = managers[key]
            if server.user_options != parse_options(options):
                server.restart(options)
            return server
        tree = env.tree if key == config.basedir and env.tree else env.trees.resolve(key)  # 'old', a path
        parsed = tuple(parse_options(options))
        check_server_options(parsed, load_catalog(tree.server, env.workdir.path),
                             where=f"{config.sweep_file}: server options")
        manager = env.make_manager(f"bot{len(managers)}", tree=tree)
        server = manager.get_servers(Requirements.declared("mysql", [parsed]))[0]
        managers[key] = (manager, server)
        return server

    out_dir = config.sweep_out or os.path.join(
        env.workdir.path, "sweeps", f"{spec.name}-{time.strftime('%Y%m%d-%H%M%S')}")
    context = {"machine": {"host": platform.node(), "nproc": os.cpu_count(),
                           "kernel": platform.release()},
               "time": time.strftime("%Y-%m-%dT%H:%M:%S"), "shm": env.workdir.use_shm}
    runner = run_interleaved if len(spec.basedirs) > 1 and spec.variable is None else run_sweep
    sweep = runner(spec, server_for, os.path.join(out_dir, "logs"), context)
    versions = sorted({r.version for r in sweep.runs})
    sweep.context.update({"versions": versions, "key": context_key(spec, versions),
                          "flavor": env.tree.version.flavor if env.tree and env.tree.version else "",
                          "options": spec.server_options})
    db = ResultsDB(sqlite_path=os.path.join(env.workdir.path, "results.sqlite"),
                   dsn=config.results_db_dsn or None)
    label = config.sweep_label or spec.name
    sweep_id = db.save(sweep, label)
    paths = write_all(sweep, out_dir)
    for line in table(sweep).splitlines():
        log.info(line)
    log.info(f"sweep stored as #{sweep_id} (label {label!r}); files in {out_dir}: "
             f"{', '.join(os.path.basename(p) for p in paths.values())}")
    if not config.baseline:
        return EXIT_OK
    base_id = db.find(config.baseline, sweep.context["key"], exclude_id=sweep_id)
    if base_id is None:
        raise UsageError(f"no baseline {config.baseline!r} in the results database")
    verdict = compare(sweep, db.load(base_id), config.tolerance)
    log.info(f"comparison with baseline sweep #{base_id} ({config.baseline}):")
    for line in verdict.lines:
        log.info(f"  {line}")
    for line in verdict.regressions:
        log.error(line)
    log.info("no regression" if verdict.ok else f"{len(verdict.regressions)} regression(s)")
    return EXIT_OK if verdict.ok else EXIT_TEST_FAILED
