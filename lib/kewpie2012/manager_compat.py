"""kewpie 2012's ``server_manager``: a modern ServerManager with the 2012 methods.

``start_server``, ``stop_server``, ``restart_server``, ``start_servers``,
``stop_servers``, ``reset_servers`` and ``load_datadir(source, server,
servers)`` take their 2012 arguments and return 2012's retcodes; ``servers`` are the 2012 server wrappers
(:mod:`lib.kewpie2012.server_compat`, the same objects as the test module's
``servers``).  Every other name is the modern manager's (:mod:`lib.kewpie2012.wrapper`).
"""
from __future__ import annotations

import os
import shutil
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
        wrappers.manager = self  # each server's server_manager

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
        """Restart one server, with new options, else with its live ``server_options``."""
        if options is None:
            self._wrappers.wrap(unwrap(server)).apply_server_options()
        unwrap(server).restart(options)

    def load_datadir(self, source_dir: str, server: Any,
                     current_servers: list[Any] | None = None) -> int:
        """kewpie 2012's: give server (a server, or its index in current_servers, default
        the current set) a copy of source_dir as its datadir.  source_dir is relative to
        the server's ``std_data`` (kewpie's ``std_data/``) or absolute.  A running server
        is stopped first and started again after; the set is reset after the test, as
        2012 did (a datadir that is not the pristine one).  Returns 0."""
        if isinstance(server, int):
            server = (self.servers if current_servers is None else current_servers)[server]
        wrapper = self._wrappers.wrap(unwrap(server))
        source = os.path.join(wrapper.std_data, source_dir)
        if not os.path.isdir(source):
            raise FileNotFoundError(f"load_datadir: no folder {source} (a path relative to "
                                    f"{wrapper.std_data}, or absolute)")
        running = wrapper.is_alive()
        if running:
            wrapper.stop()
        shutil.rmtree(wrapper.paths.datadir, ignore_errors=True)
        shutil.copytree(source, wrapper.paths.datadir, symlinks=True)
        from .innobackupex import give_to_parent_owner  # lib.backup: only when used
        give_to_parent_owner(wrapper.paths.datadir)  # the server's user owns its vardir
        self._wrapped.request_reset()
        if running:
            wrapper.start()
        return 0

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
