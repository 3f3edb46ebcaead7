"""kewpie 2012's ``server_manager``: a modern ServerManager with the 2012 methods.

``start_server``, ``stop_server``, ``restart_server``, ``start_servers``,
``stop_servers`` and ``reset_servers`` take their 2012 arguments and return
2012's retcodes; ``servers`` are the 2012 server wrappers
(:mod:`lib.util.server_compat`, the same objects as the test module's
``servers``).  Every other name is the modern manager's (:mod:`lib.util.wrapper`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .server_compat import Kewpie2012Server, ServerWrappers
from .wrapper import ModernWrapper, unwrap

if TYPE_CHECKING:
    from ..servers.manager import ServerManager


class Kewpie2012Manager(ModernWrapper):
    """A bot's server manager as kewpie 2012 tests know it."""

    def __init__(self, manager: ServerManager, wrappers: ServerWrappers) -> None:
        super().__init__(manager)
        self._wrappers = wrappers

    @property
    def servers(self) -> list[Kewpie2012Server]:
        """The current set's servers, as 2012 wrappers."""
        return self._wrappers.wrap_all(self._wrapped.servers)

    def stop_server(self, server: Any) -> int:
        """Stop one server; 0 (kewpie 2012's retcode)."""
        unwrap(server).stop()
        return 0

    def start_server(self, server: Any, requester: Any = None, working_environ: Any = None,
                     expect_fail: bool = False) -> int:
        """Start one server and wait until it answers; 0, or 1 for a failed start that
        was expected (kewpie 2012's signature; requester and working_environ unused)."""
        del requester, working_environ
        return self._wrappers.wrap(unwrap(server)).start(expect_fail=expect_fail)

    def restart_server(self, server: Any, options: list[str] | None = None) -> None:
        """Restart one server, optionally with new options."""
        unwrap(server).restart(options)

    def start_servers(self, requester: Any = None, working_environ: Any = None,
                      expect_fail: bool = False) -> int:
        """Start every stopped server of the current set; 0, or 1 if an expected failure
        happened (kewpie 2012's signature)."""
        del requester, working_environ
        return max([s.start(expect_fail=expect_fail) for s in self.servers] or [0])

    def stop_servers(self, requester: Any = None) -> int:
        """Stop every server of the current set (kewpie 2012); 0."""
        del requester
        for server in self._wrapped.servers:
            server.stop()
        return 0

    def reset_servers(self, bot_name: str | None = None) -> None:
        """Ask for fresh servers before the next test (the manager's ``request_reset``)."""
        del bot_name
        self._wrapped.request_reset()
