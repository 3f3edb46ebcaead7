"""Before anything starts: who servers run as, whether they can reach their directories,
what the code tree needs for Galera, and the header kewpie logs at the top of a run."""
from __future__ import annotations

import logging
import os
import pwd
import shutil
import stat

from ..errors import CodeTreeError, UsageError
from ..platform.workdir import Workdir
from ..config import RunConfig
from ..servers.codetree import CodeTree


def resolve_server_user(requested: str | None) -> str | None:
    """Servers run as 'mysql' when kewpie runs as root, else as the invoking user.

    None means "as kewpie itself" (also when requested names the invoking user);
    UsageError for an unknown user, or for root without a 'mysql' user.
    """
    if requested:
        try:
            pwd.getpwnam(requested)
        except KeyError:
            raise UsageError(f"--server-user {requested}: no such user") from None
        return None if requested == pwd.getpwuid(os.geteuid()).pw_name else requested
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam("mysql")
        return "mysql"
    except KeyError:
        raise UsageError("kewpie runs as root but there is no 'mysql' user to run servers as; "
                         "create it or pass --server-user") from None


def check_reachable(path: str, user: str) -> None:
    """UsageError unless every directory above path lets user pass through."""
    entry = pwd.getpwnam(user)
    current = os.path.dirname(os.path.abspath(path))
    while True:
        st = os.stat(current)
        if st.st_uid == entry.pw_uid:
            ok = bool(st.st_mode & stat.S_IXUSR)
        elif st.st_gid == entry.pw_gid:
            ok = bool(st.st_mode & stat.S_IXGRP)
        else:
            ok = bool(st.st_mode & stat.S_IXOTH)
        if not ok:
            raise UsageError(f"servers run as '{user}', who cannot enter {current} "
                             f"(mode {stat.S_IMODE(st.st_mode):04o}); choose a --workdir "
                             f"{user} can reach, or drop --no-shm")
        parent = os.path.dirname(current)
        if parent == current:
            return
        current = parent


def check_galera(config: RunConfig, tree: CodeTree, log: logging.Logger) -> None:
    """CodeTreeError unless the Galera provider and the chosen SST method's tool exist;
    logs the provider and method when they do."""
    provider = config.servers.wsrep_provider_path
    if not os.path.isfile(provider):
        raise CodeTreeError(f"--wsrep-provider-path {provider}: no such file (the Galera "
                            f"provider, libgalera_smm.so; Debian package galera-4)")
    if config.servers.wsrep_sst_method == "rsync" and not shutil.which("rsync"):
        raise CodeTreeError("--wsrep-sst-method=rsync needs rsync on PATH")
    if config.servers.wsrep_sst_method == "mariabackup" and "mariabackup" not in tree.tools:
        raise CodeTreeError("--wsrep-sst-method=mariabackup needs mariadb-backup in the code tree")
    log.info(f"wsrep_provider: {provider}")
    log.info(f"wsrep_sst_method: {config.servers.wsrep_sst_method}")


def shm_line(config: RunConfig, workdir: Workdir) -> str:
    """Where the vardirs live this run, and who decided: --no-shm or a full /dev/shm."""
    if workdir.use_shm:
        return f"Linking workdir {workdir.path} to {workdir.shm_path}"
    if config.servers.use_shm:
        return "/dev/shm is short of space: will not link workdir to shm this run"
    return "Using --no-shm, will not link workdir to shm"


def log_header(log: logging.Logger, config: RunConfig, workdir: Workdir, tree: CodeTree,
               server_user: str | None) -> None:
    """kewpie's header: shm use, the code tree's version, the server user, the mode."""
    version = tree.version
    assert version is not None
    log.info(shm_line(config, workdir))
    log.info(f"Using {version.flavor} source tree:")
    log.info(f"basedir: {tree.basedir}")
    log.info(f"clientbindir: {tree.clientbindir}")
    log.info(f"testdir: {config.root}")
    log.info(f"server_version: {version.version}{version.suffix}")
    log.info(f"server_compile_os: {version.compile_os}")
    log.info(f"server_platform: {version.platform}")
    log.info(f"server_comment: ({version.comment})")
    log.info(f"server_flavor: {version.flavor}")
    log.info(f"server_user: {server_user or pwd.getpwuid(os.geteuid()).pw_name}")
    log.info(f"Using testing mode: {config.mode}")
