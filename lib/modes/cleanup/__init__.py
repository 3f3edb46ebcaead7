"""--mode=cleanup: stop the servers earlier runs left in --workdir (and their leases);
with --drop-cache, also empty the cache in RAM (``options.py``: its section)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..spec import ModeSpec
from .options import NAME, CleanupOptions, add_options, misplaced, section

if TYPE_CHECKING:
    from ...run.environment import RunEnvironment


def run(env: RunEnvironment) -> int:
    """--mode=cleanup over env (--drop-cache first); the exit status."""
    from ...run.cleanup import cleanup, drop_cache
    if env.config.section(CleanupOptions).drop_cache:
        drop_cache(env)
    return cleanup(env)


MODE = ModeSpec(NAME, "stop servers left in --workdir (--drop-cache: and empty the cache)",
                run, add_options=add_options, section=section, misplaced=misplaced,
                workdir="none")
