"""--start-and-exit: start the first selected test's servers, describe them, leave them
running (the environment keeps them at close)."""
from __future__ import annotations

import os
import sys
from typing import Sequence

from ...errors import EXIT_OK
from ...run.environment import RunEnvironment
from ...servers.describe import info_block
from ...servers.server import Server
from ...suites.loader import TestSpec, suite_requirements


def start_and_exit(env: RunEnvironment, specs: list[TestSpec]) -> int:
    """Start the servers of specs[0] (of the first suite when specs is empty), log their
    info blocks and the description file, and mark them kept; returns EXIT_OK."""
    config, log = env.config, env.log
    if specs:
        reqs = specs[0].requirements
    else:
        suite = (config.selection.suites or ["main"])[0]
        reqs = suite_requirements(suite, config.selection.suitepaths, config.servers.default_server_type)
    log.info("Creating 1 bot(s)")
    manager = env.make_manager("bot0")
    manager.more_tests(False)  # nobody runs a test on them after us
    servers = manager.get_servers(reqs)
    for server in servers:
        log.info("bot0 server:")
        for line in info_block(server):
            log.info(line)
    for arbitrator in manager.arbitrators:
        log.info("bot0 arbitrator:")
        for line in arbitrator.info_block():
            log.info(line)
    env.write_state()
    run = {"workdir": env.workdir.path, "basedir": env.tree.basedir if env.tree else "",
           "pid_of_kewpie": os.getpid()}
    described = env.describe(servers, run, [a.describe() for a in manager.arbitrators])
    log.info(f"Servers are described in {described}; each vardir has use, start "
             f"and stop scripts")
    for line in started_lines(servers, [a.name for a in manager.arbitrators if a.is_alive()],
                              reqs.pairs, env.workdir.path):
        log.info(line)
    env.keep_servers = True
    return EXIT_OK


def started_lines(servers: Sequence[Server], arbitrators: Sequence[str],
                  pairs: Sequence[tuple[int, int]], workdir: str) -> list[str]:
    """What --start-and-exit leaves running, how to reach each server and how to stop
    them all: the run's closing lines (no test ran, so no STATUS of tests)."""
    kinds = sorted({s.server_type for s in servers})
    shape = ", ".join(f"{servers[b].name} replicates from {servers[a].name}" for a, b in pairs
                      if a < len(servers) and b < len(servers))
    if "galera" in kinds:
        shape = f"a Galera cluster of {len(servers)}" + (
            f" and {', '.join(arbitrators)}" if arbitrators else "")
    lines = [f"Started {len(servers)} server(s) ({', '.join(kinds)}"
             f"{'; ' + shape if shape else ''}), left running:"]
    for server in servers:
        lines.append(f"  {server.name}: pid {server.pid}, port {server.port}, socket "
                     f"{server.paths.socket_file}; connect: {server.paths.vardir}/use "
                     f"(or mariadb -h127.0.0.1 -P{server.port} -uroot)")
    lines.append(f"Stop them all: {kewpie_command()} --workdir={workdir} --mode=cleanup "
                 f"(or each vardir's stop script)")
    lines.append(f"STATUS: STARTED, {len(servers)} server(s) running; kewpie.py exits leaving "
                 f"them")
    return lines


def kewpie_command() -> str:
    """kewpie's command as this process was invoked (``./kewpie.py``, ``kewpie``)."""
    argv0 = sys.argv[0] if sys.argv and sys.argv[0] else "kewpie"
    if os.path.basename(argv0) == "kewpie.py":
        rel = os.path.relpath(argv0)
        return rel if rel.startswith((".", "/")) else f"./{rel}"
    return os.path.basename(argv0)
