"""kewpie 2012's names for server things, kept so its test cases run unchanged.

:class:`Kewpie2012Names` is mixed into :class:`~lib.servers.server.Server`:
``master_port``, ``cnf_file``, ``type``, ``status``, ``mysqldump``... are
read-only views of what the server holds under its own names.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lib.servers.codetree import CodeTree
    from lib.servers.options import Option


class CompatLogger:
    """kewpie 2012's logging object (``test_debug``, ``info``...) over our logger."""

    def __init__(self, logger: Any, show_test_debug: bool = False) -> None:
        self._logger = logger
        self._show_test_debug = show_test_debug  # --test-debug

    def test_debug(self, msg: str) -> None:
        """Debug output from a test: shown (INFO, 'TEST_DEBUG') with --test-debug, else
        only in kewpie.log."""
        if self._show_test_debug:
            self._logger.info(f"TEST_DEBUG {msg}")
        else:
            self._logger.debug(msg)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._logger, name)


class Kewpie2012Names:
    """The 2012 attribute names, over a server's port, cnf_path, tree and options."""

    port: int
    cnf_path: str
    server_type: str
    tree: "CodeTree"
    user_options: list["Option"]
    log: Any

    def is_alive(self) -> bool:
        """Provided by the server."""
        raise NotImplementedError

    @property
    def master_port(self) -> int:
        """The client port (kewpie called it MASTER_PORT)."""
        return self.port

    @property
    def cnf_file(self) -> str:
        """The server's option file (``cnf_path``)."""
        return self.cnf_path

    @property
    def type(self) -> str:
        """The server type (``server_type``)."""
        return self.server_type

    @property
    def basedir(self) -> str:
        """The code tree's basedir."""
        return self.tree.basedir

    @property
    def mysqldump(self) -> str:
        """Path of the dump tool."""
        return self.tree.tool("dump")

    @property
    def mysql_client(self) -> str:
        """Path of the command-line client."""
        return self.tree.tool("client")

    @property
    def server_options(self) -> list[str]:
        """The suite's options for this server, as ``--name=value`` strings."""
        return [o.as_arg() for o in self.user_options]

    @property
    def status(self) -> int:
        """1 when running, 0 otherwise (kewpie's STATUS)."""
        return 1 if self.is_alive() else 0

    @property
    def logging(self) -> CompatLogger:
        """kewpie 2012's logging object."""
        return CompatLogger(self.log)
