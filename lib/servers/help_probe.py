"""``<server> --no-defaults --verbose --help``, run so that it touches nothing outside kewpie's own files.

kewpie asks a server binary for its option names (:mod:`lib.servers.option_catalog`)
and mysql-test's feature variables (:mod:`lib.mtr.bootstrap`) this way.  Even
with ``--help`` mariadbd checks its datadir: left to its compiled-in default
(``/var/lib/mysql``) it creates and deletes ``<host>.lower-test`` there and
opens the distribution's ``aria_log_control`` and ``mysql/plugin.MA[ID]``
read-write.  So the probe gets a throwaway, empty ``--datadir`` (and
``--tmpdir``) made for it with ``mkdtemp`` (private, created exclusively) in
the directory the caller names -- the run's workdir -- or, when the caller has
none (``--list``), in the system's temporary directory (a sticky one, where
nobody else can replace it); it is removed afterwards.  ``--plugin-dir`` is
left as the binary has it: plugins are only read.
"""
from __future__ import annotations

import os

from ..platform.tools import ToolResult, run_tool

PROBE_PREFIX = ".help-probe-"


def help_argv(server: str, scratch: str) -> list[str]:
    """The probe's command line with scratch as its datadir and tmpdir (``--no-defaults``
    must come first)."""
    return [server, "--no-defaults", f"--datadir={scratch}", f"--tmpdir={scratch}",
            "--verbose", "--help"]


def server_help(server: str, scratch_parent: str | None, timeout: float) -> ToolResult:
    """Run the help probe of server in a fresh directory under scratch_parent (the
    system's temporary directory when None or not a directory); OSError when it
    cannot be started."""
    parent = scratch_parent if scratch_parent and os.path.isdir(scratch_parent) else None
    import tempfile  # only when a server's --help is probed (cached after)
    with tempfile.TemporaryDirectory(prefix=PROBE_PREFIX, dir=parent) as scratch:
        return run_tool(help_argv(server, scratch), timeout=timeout, tmpdir=scratch, cwd=scratch)
