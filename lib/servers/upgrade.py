"""Run a code tree's ``mariadb-upgrade`` (``mysql_upgrade``) against a running server.

The tool comes from the server's current code tree (after
``server.restart(basedir='new')`` that is the new one), connects through the
server's own option file (``[client]``: socket, port, user root), and keeps its
temporary files in the server's tmpdir.  Its output is kept in
``<vardir>/log/upgrade.log``.
"""
from __future__ import annotations

import os

from ..errors import ServerError
from ..platform.logsetup import get_logger
from ..platform.logtail import tail_file
from ..platform.tools import run_tool
from .server import Server, launch_env

UPGRADE_LOG = "upgrade.log"


def upgrade_argv(tool: str, cnf_path: str, force: bool) -> list[str]:
    """The command line: the server's option file first (its [client] section)."""
    argv = [tool, f"--defaults-file={cnf_path}", "--verbose"]
    if force:
        argv.append("--force")
    return argv


def run_upgrade(server: "Server", force: bool = False, timeout: float = 300.0) -> str:
    """Upgrade server's system tables with its tree's tool; the tool's output.

    ServerError (with the output's tail) when the tool fails or times out.
    """
    tree = server.tree
    tool = tree.tool("upgrade")
    log_path = os.path.join(server.paths.logdir, UPGRADE_LOG)
    argv = upgrade_argv(tool, server.paths.cnf_path, force)
    get_logger().info(f"{server.name}: {os.path.basename(tool)} of {tree.label} "
                      f"({tree.basedir})")
    try:
        ran = run_tool(argv, timeout=timeout, log_path=log_path,
                       env=launch_env(server), tmpdir=server.paths.tmpdir)
    except OSError as exc:
        raise ServerError(f"{tool} could not run: {exc}") from exc
    if ran.timed_out:
        raise ServerError(f"{tool} did not finish within {timeout:g}s (log: {log_path})",
                          tail_file(log_path, 20))
    if ran.returncode != 0:
        raise ServerError(f"{tool} failed with exit status {ran.returncode} (log: {log_path})",
                          tail_file(log_path, 20))
    return ran.output
