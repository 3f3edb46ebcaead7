"""The run-level side of debugging: checks before any server starts (the wrapper's
program, rr's ability to record, --gendata's file), and ``--keep-failed``'s
report of the servers it leaves running."""
from __future__ import annotations

import os

from ..errors import UsageError
from .environment import RunEnvironment
from ..servers.describe import info_block
from ..servers.server import Server
from ..servers.wrappers import make_wrapper, rr_cannot_record
from ..suites.loader import TestSpec


def check_debugging(env: RunEnvironment, specs: list[TestSpec]) -> None:
    """Refuse (UsageError, one line) what cannot work, before any server starts; note
    the suites' valgrind.supp files for the servers' wrapper."""
    config = env.config
    env.valgrind_supp_files = list(dict.fromkeys(
        os.path.join(spec.suite.path, "valgrind.supp") for spec in specs))
    make_wrapper(config.debugging)  # the programs are installed, the template parses
    if config.debugging.rr:
        reason = rr_cannot_record(os.path.join(env.workdir.path, "rr-probe"))
        if reason:
            raise UsageError(f"--rr: this machine cannot record with rr: {reason}")
    if config.tools.gendata and not os.path.isfile(config.tools.gendata):
        raise UsageError(f"--gendata {config.tools.gendata}: no such file")


def report_kept(env: RunEnvironment, servers: list[Server], test: str) -> None:
    """--keep-failed: log the kept servers' blocks as --start-and-exit does, write
    cluster.json and the use/start/stop scripts, and keep them past the run."""
    log = env.log
    log.info(f"--keep-failed: {test} failed; its servers are left running (the run stops here):")
    for server in servers:
        if not server.is_alive():
            continue
        log.info("bot0 server:")
        for line in info_block(server):
            log.info(line)
    env.write_state()
    run = {"workdir": env.workdir.path, "basedir": env.tree.basedir if env.tree else "",
           "pid_of_kewpie": os.getpid(), "kept_failed_test": test}
    described = env.describe(servers, run)
    log.info(f"Servers are described in {described}; each vardir has use, start and stop "
             f"scripts.  Stop them with: kewpie.py --mode=cleanup --workdir={env.workdir.path}")
    env.keep_servers = True
