"""--mode=mtr: the server's own mysql-test suites run by kewpie (docs/mtr.md).

``options.py``: its options and section (:class:`~.options.MtrOptions`); ``run.py``:
the plan of cases and the bots' runner; ``lane.py``: a bot's two sets of servers
(mysql-test's own parts are in :mod:`lib.mtr`)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..spec import ModeSpec
from .options import NAME, add_options, misplaced, section

if TYPE_CHECKING:
    from ...run.environment import RunEnvironment


def run(env: RunEnvironment) -> int:
    """--mode=mtr over env; the exit status."""
    from .run import run_mtr
    return run_mtr(env)


def list_cases(env: RunEnvironment) -> int:
    """--mode=mtr --list: the selected cases."""
    from .run import list_mtr
    return list_mtr(env)


def is_test_file(test: str) -> bool:
    """mtr takes a .test file's path as a TEST argument."""
    return test.endswith(".test")


MODE = ModeSpec(NAME, "the server's own mysql-test suites (docs/mtr.md)", run,
                add_options=add_options, section=section, misplaced=misplaced,
                list_tests=list_cases, known_bugs=True, nested_suites=True,
                test_paths=is_test_file)
