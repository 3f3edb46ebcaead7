"""--mode=cleanup: stop the servers earlier runs left in --workdir (and their leases)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..spec import ModeSpec

if TYPE_CHECKING:
    from ...run.environment import RunEnvironment


def run(env: RunEnvironment) -> int:
    """--mode=cleanup over env; the exit status."""
    from ...run.cleanup import cleanup
    return cleanup(env)


MODE = ModeSpec("cleanup", "stop servers left in --workdir", run, workdir="none")
