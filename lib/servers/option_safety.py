"""Refuse server options that would listen beyond loopback or write outside the vardir.

Suites (``server_requirements``), per-test restarts (``Server.restart(options=...)``)
and any other entry point that hands mysqld options to kewpie call
:func:`check_server_options` before a server starts.  Names are resolved as
the server itself resolves them (:mod:`lib.servers.option_names` over the option list
the binary reports, :mod:`lib.servers.option_catalog`), so ``--bind=0.0.0.0``,
``--loose-bind_address=0.0.0.0`` and ``--skip-loose-...`` are judged as the
options they become.  A refusal is one :class:`UnsafeOptionError` line naming
the option as written and what it resolves to (exit status 2).
"""
from __future__ import annotations

import os
import re
from types import MappingProxyType
from typing import TYPE_CHECKING, Iterable

from ..errors import UnsafeOptionError
from .option_names import Resolution, resolve
from .option_values import (address_problem, cluster_address_parts, data_file_names,
                    dbug_output_files, looks_like_path, path_problem, port_problem,
                    provider_items)
from .options import HARNESS_OWNED, Option, parse_options
from ..platform.process import TAG_WORKDIR
from .option_catalog import OptionCatalog, load_catalog

if TYPE_CHECKING:
    from .server import Server
    from .requirements import Requirements

# Options whose value is a path the server reads or writes (MariaDB 10.11's
# `mariadbd --verbose --help`, plus MySQL/Percona and plugin equivalents).
PATH_OPTIONS = frozenset({
    "aria-log-dir-path", "character-sets-dir", "chroot", "des-key-file", "ft-stopword-file",
    "general-log-file", "init-file", "innodb-buffer-pool-filename", "innodb-data-home-dir",
    "innodb-log-group-home-dir", "innodb-tmpdir", "innodb-undo-directory", "language",
    "lc-messages-dir", "log-basename", "log-bin", "log-bin-index", "log-ddl-recovery",
    "log-isam", "log-slow-query-file", "log-tc", "master-info-file", "plugin-dir", "relay-log",
    "relay-log-index", "relay-log-info-file", "slave-load-tmpdir", "slow-query-log-file",
    "ssl-ca", "ssl-capath", "ssl-cert", "ssl-crl", "ssl-crlpath", "ssl-key",
    "wsrep-data-home-dir", "wsrep-notify-cmd", "wsrep-status-file",
    "server-audit-file-path", "sql-error-log-filename", "file-key-management-filename",
    "keyring-file-data", "audit-log-file", "innodb-directories", "log-bin-basename",
    "relay-log-basename", "replica-load-tmpdir",
})
# Of those, inputs the server only reads (certificates, message files, plugins,
# an init script): any path is fine, as nothing is written there.
READ_ONLY_PATHS = frozenset({
    "character-sets-dir", "des-key-file", "ft-stopword-file", "init-file", "language",
    "lc-messages-dir", "plugin-dir", "ssl-ca", "ssl-capath", "ssl-cert", "ssl-crl",
    "ssl-crlpath", "ssl-key", "file-key-management-filename",
})
# Values that are ';'-separated "file:size[:...]" lists.
DATA_FILE_LISTS = frozenset({"innodb-data-file-path", "innodb-temp-data-file-path"})
# DBUG control strings may name trace files.
DBUG_OPTIONS = frozenset({"debug", "debug-dbug"})
# Extra TCP listeners: only 0 (off) is allowed.
PORT_OPTIONS = frozenset({"extra-port"})
# Addresses: loopback only; the bool says whether a port may be given.
ADDRESS_OPTIONS = MappingProxyType({"wsrep-node-address": False,
                                    "wsrep-node-incoming-address": True})
PROVIDER_OPTIONS = "wsrep-provider-options"
CLUSTER_ADDRESS = "wsrep-cluster-address"
PLUGIN_LOADERS = frozenset({"plugin-load", "plugin-load-add"})
# Plugins that open their own TCP listeners.
LISTENER_PLUGINS = frozenset({"handlersocket"})
# Galera provider keys kewpie sets from the lease: a suite's value is an unleased listener.
PROVIDER_LISTENERS = frozenset({"gmcast.listen_addr", "ist.recv_addr", "base_port",
                                "gmcast.mcast_addr"})
PROVIDER_ADDRESSES = frozenset({"base_host", "ist.recv_bind", "gmcast.peer_addr"})
PROVIDER_PATHS = frozenset({"base_dir", "gcache.dir", "gcache.name"})
PROVIDER_READ_ONLY = frozenset({"socket.ssl_cert", "socket.ssl_key", "socket.ssl_ca",
                                "socket.ssl_password_file"})
PATHISH = re.compile(r"(file|path|dir|directory|home|basename|filename|cmd|log-bin|relay-log)")
LISTENERISH = re.compile(r"(^|[-_.])(port|address|addr|bind|listen)($|[-_.])")


def shown(opt: Option) -> str:
    """The option as it was written (for error lines)."""
    return opt.text or opt.as_arg()


def resolved_text(res: Resolution, name: str, opt: Option) -> str:
    """``--<prefixes>-<name>=<value>``: what the server makes of the option."""
    prefixes = "".join(f"{p}-" for p in res.prefixes)
    value = "" if opt.value is None else f"={opt.value}"
    return f"--{prefixes}{name}{value}"


def stem(res: Resolution) -> str:
    """The written name without its special prefixes (the name of an unknown option)."""
    text = res.written
    for prefix in res.prefixes:
        text = text[len(prefix) + 1:]
    return text


def provider_problem(items: Iterable[tuple[str, str]], vardir: str | None,
                     datadir: str | None) -> str | None:
    """Why Galera provider options would listen beyond the lease or write outside, or None."""
    for key, value in items:
        where = f"provider option {key}={value}"
        if key in PROVIDER_LISTENERS:
            bad = address_problem(value, port_allowed=False) if key != "base_port" else None
            return (f"{where}: " + (bad or "kewpie sets the Galera listeners to 127.0.0.1 and "
                                    "its leased ports; a suite's value listens on a port kewpie "
                                    "never leased"))
        if key in PROVIDER_ADDRESSES or (LISTENERISH.search(key) and not value.isdigit()):
            bad = address_problem(value, port_allowed=False) if value else None
            if bad:
                return f"{where}: {bad}"
        elif LISTENERISH.search(key) and value.isdigit():
            bad = port_problem(value)
            if bad:
                return f"{where}: {bad}"
        if key not in PROVIDER_READ_ONLY and (key in PROVIDER_PATHS or looks_like_path(value)):
            bad = path_problem(value, vardir, datadir)
            if bad:
                return f"{where}: {bad}"
    return None


def _listener_problem(name: str, value: str | None) -> str | None:
    if name in PORT_OPTIONS:
        return port_problem(value)
    if name in ADDRESS_OPTIONS:
        if value is None or value.strip().upper() == "AUTO" or not value.strip():
            return "an automatic address may be one other hosts can reach"
        for item in value.split(","):
            bad = address_problem(item, port_allowed=ADDRESS_OPTIONS[name])
            if bad:
                return bad
    return None


def _path_problem(name: str, value: str | None, known: bool, vardir: str | None,
                  datadir: str | None) -> str | None:
    if name in DATA_FILE_LISTS and value:
        paths = data_file_names(value)
    elif name in DBUG_OPTIONS and value:
        paths = dbug_output_files(value)
    elif name in READ_ONLY_PATHS:
        paths = []
    elif name in PATH_OPTIONS:
        paths = [value] if value is not None else []
    elif (not known or PATHISH.search(name)) and looks_like_path(value):
        paths = [value or ""]
    else:
        paths = []
    for path in paths:
        bad = path_problem(path, vardir, datadir)
        if bad:
            return bad
    return None


def judge(opt: Option, res: Resolution, vardir: str | None = None,
          datadir: str | None = None) -> str | None:
    """Why one parsed option is unsafe for this server, or None."""
    known = res.name is not None
    name = res.name or stem(res)
    value = res.effective_value(opt.value)
    if name in HARNESS_OWNED:
        bad = (address_problem(opt.value, port_allowed=False)
               if name.endswith("address") and opt.value else None)
        return ((f"{bad}; " if bad else "") + f"kewpie sets --{name} itself for every server "
                f"(it keeps servers in their vardir, on 127.0.0.1 and leased ports); remove it")
    if name == PROVIDER_OPTIONS:
        if res.abbreviated or res.value_prefixes or stem(res) != name:
            return (f"write it in full as --{name}=... so kewpie can merge its loopback "
                    f"listener settings into it")
        return provider_problem(provider_items(opt.value or ""), vardir, datadir)
    if name == CLUSTER_ADDRESS and opt.value:
        hosts, params = cluster_address_parts(opt.value)
        for host in hosts:
            bad = address_problem(host, port_allowed=True)
            if bad:
                return f"{host} points off this machine: {bad}"
        return provider_problem(params, vardir, datadir)
    if name in PLUGIN_LOADERS and opt.value:
        for item in opt.value.split(";"):
            named = item.split("=", 1)[-1].strip()
            if "/" in named:
                return (f"plugin library {named} is a path: plugins load from the server's "
                        f"plugin directory only")
            library = os.path.basename(named)
            if library.removesuffix(".so") in LISTENER_PLUGINS:
                return f"plugin {library} opens its own TCP listeners"
        return None
    bad = _listener_problem(name, value)
    if bad is None and not known and LISTENERISH.search(name) and value:
        bad = (port_problem(value) if value.strip().isdigit()
               else address_problem(value, port_allowed=False))
    return bad or _path_problem(name, value, known, vardir, datadir)


def check_server_options(options: Iterable[Option], catalog: OptionCatalog,
                         vardir: str | None = None, datadir: str | None = None,
                         where: str = "") -> None:
    """UnsafeOptionError (one line) for the first option that listens beyond loopback,
    on an unleased port, or writes outside the vardir; or that the server would
    refuse as an ambiguous abbreviation."""
    prefix = f"{where}: " if where else ""
    for opt in options:
        res = resolve(("loose-" if opt.loose else "") + opt.name, catalog.names)
        if res.ambiguous:
            listed = ", ".join(res.candidates[:6]) + (", ..." if len(res.candidates) > 6 else "")
            raise UnsafeOptionError(
                f"{prefix}server option {shown(opt)!r} is ambiguous: {catalog.server} would "
                f"refuse it (it abbreviates {listed}); write the option name in full")
        reason = judge(opt, res, vardir, datadir)
        if reason:
            raise UnsafeOptionError(f"{prefix}server option {shown(opt)!r} resolves to "
                                    f"{resolved_text(res, res.name or stem(res), opt)}: {reason}")


def check_requirements(declared: Iterable[tuple[str, "Requirements"]], server_binary: str,
                       cache_dir: str | None) -> None:
    """Check every declared server's options before any server starts.

    ``declared`` pairs each Requirements with the file that declared it (for
    the error line); identical option sets are checked once.
    """
    catalog = load_catalog(server_binary, cache_dir)
    seen: set[tuple[tuple[Option, ...], ...]] = set()
    for source, reqs in declared:
        if reqs.servers in seen:
            continue
        seen.add(reqs.servers)
        for index, options in enumerate(reqs.servers):
            check_server_options(options, catalog, where=f"{source}: server_requirements[{index}]")


def check_restart_options(server: "Server", options: list[str] | None) -> None:
    """Check the options a test passes to ``Server.restart`` against that server's vardir."""
    if options is None:
        return
    catalog = load_catalog(server.tree.server, server.settings.env.get(TAG_WORKDIR))
    check_server_options(parse_options(options), catalog, vardir=server.paths.vardir,
                         datadir=server.paths.datadir, where=f"{server.name} restart")
