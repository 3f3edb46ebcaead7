"""--mode=cleanup: stop every server an earlier run recorded in (or tagged with) the
workdir, and remove its bots' directories.

Cleanup applies a run's checks before it writes, stops or deletes anything:
the workdir must be trusted (owned by us or root, writable by nobody else,
reached through nothing others control) and hold kewpie's own marker; a
folder kewpie did not make is refused (one ERROR line, exit 2) with nothing
written into it.  Then only what kewpie recorded making goes (see
:meth:`lib.platform.workdir.Workdir.wipe_bots`), and only processes that
carry kewpie's tag for this workdir are stopped.
"""
from __future__ import annotations

import os

from ..errors import EXIT_OK, UsageError
from ..platform.workdir import MARKER
from .environment import RunEnvironment
from ..servers import ramcache
from ..servers.state import stop_recorded


def drop_cache(env: RunEnvironment) -> None:
    """--drop-cache: empty the cache of templates and snapshots (lib/servers/ramcache.py);
    what a run holds now stays, and is said."""
    root = env.workdir.cache_root
    removed, kept = ramcache.drop_all(root)
    freed = sum(e.size for e in removed) / ramcache.MB
    held = f"; {len(kept)} in use by a run kept" if kept else ""
    env.log.info(f"Dropped the cache {root}: {len(removed)} entries, {freed:.0f} MB freed{held}")


def cleanup(env: RunEnvironment) -> int:
    """Check the workdir (a missing one is nothing to do), lock it, stop what its state
    files and process tags name, remove its bots; returns EXIT_OK (failures raise)."""
    workdir, log = env.workdir, env.log
    if not os.path.lexists(workdir.path) or not workdir.check_trusted():
        log.info(f"No workdir at {workdir.path}; nothing to clean up")
        return EXIT_OK
    if not workdir.has_marker():
        raise UsageError(f"refusing to clean up {workdir.path}: kewpie did not make it (it has "
                         f"no {MARKER} of kewpie's); nothing was changed there. Give the "
                         f"--workdir of a kewpie run")
    env.lock()
    stopped = stop_recorded(env.state_files(), workdir.path)
    log.info("Stopping all running servers...")
    env.sweep_network()
    workdir.wipe_bots()
    log.info(f"Stopped {stopped} server process(es) of {workdir.path}")
    return EXIT_OK
