"""--start-and-exit: start the first selected test's servers, describe them, leave them
running (the environment keeps them at close)."""
from __future__ import annotations

import os

from ...errors import EXIT_OK
from ...run.environment import RunEnvironment
from ...servers.describe import info_block
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
    log.info("User specified --start-and-exit.  kewpie.py exiting and leaving servers "
             "running...")
    env.keep_servers = True
    return EXIT_OK
