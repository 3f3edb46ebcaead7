"""The option-safety rules of suites, applied to a mysql-test case's servers.

A case's servers take options from its ``.opt`` files, its ``.cnf`` (or the
suite's), ``suite.opt``, combinations and ``--mysqld``.  They reach this check
as mysqld will read them: mtr's placeholders already resolved
(``$MYSQLTEST_VARDIR``, ``$MYSQL_TMP_DIR``, ``$MYSQL_TEST_DIR`` and every other
variable of the case's environment in ``.opt`` files; ``@mysqld.1.port``,
``@OPT.port``, ``@ENV.X`` in the config) and names resolved as the server
resolves them (:mod:`lib.servers.option_names`: ``--loose-``, ``--skip-``,
abbreviations; the short options ``-P``, ``-h``, ``-t``...).  The rules are
those of :mod:`lib.servers.option_safety`, with what mtr's own config sets
(the datadir, ports, sockets, logs of every server) judged by value rather
than refused:

- a path the server **writes** (``datadir``, ``tmpdir``, ``socket``,
  ``pid-file``, ``log-error``, ``general-log-file``, ``slow-query-log-file``,
  ``log-bin``, relay logs, InnoDB and Aria directories, DBUG trace files...)
  stays inside the case's ``MYSQLTEST_VARDIR`` (relative paths start in the
  server's datadir; ``socket`` may also be the one kewpie chose for it);
- a path it only **reads** (``init-file``, ``ssl-*``, ``character-sets-dir``,
  key files...) may be anywhere, as for suites; a path in the value of an option
  the catalog does not know (a plugin's ``--loose-...``) must be in the vardir or
  in a read-only input (the mysql-test tree, the suite, the server's share and
  plugin directories); ``secure-file-priv`` (where SQL may read and write
  files) too;
- a **listener** is on the loopback (``bind-address``, Galera addresses) and on
  ports leased for this case: ``port``, ``extra-port``, Galera's ports --
  another server's of the same case (``@mysqld.2.port``) included;
- **plugins** load from the plugin directory (``plugin-load`` names no path,
  ``plugin-dir`` is the server's or in the vardir, ``wsrep-provider`` is the
  Galera library kewpie found), and none opens its own listener.

A wildcard ``bind-address`` has been narrowed to the loopback before
(:func:`lib.mtr.options.loopback_only`).  A case that breaks a rule is not run:
:func:`case_problem` says why, and the mode skips it with that reason.
"""
from __future__ import annotations

import os
import posixpath
import re
from dataclasses import dataclass
from types import MappingProxyType
from typing import Iterable, Sequence

from ..servers.option_catalog import OptionCatalog
from ..servers.option_names import NEGATING, Resolution, resolve
from ..servers.option_safety import (DATA_FILE_LISTS, DBUG_OPTIONS, LISTENER_PLUGINS,
                                     LISTENERISH, PATH_OPTIONS, PATHISH, PLUGIN_LOADERS,
                                     PROVIDER_ADDRESSES, PROVIDER_LISTENERS, PROVIDER_PATHS,
                                     PROVIDER_READ_ONLY, READ_ONLY_PATHS, resolved_text, shown,
                                     stem)
from ..servers.option_values import (address_problem, cluster_address_parts,
                                     data_file_names, dbug_output_files, looks_like_path,
                                     provider_items, split_address)
from ..servers.options import Option

# mysqld's short options that take a path or a port (``-P3306``, ``-h/dir``).
SHORT_OPTIONS = MappingProxyType({"P": "port", "h": "datadir", "t": "tmpdir", "b": "basedir",
                                  "r": "chroot", "#": "debug", "L": "lc-messages-dir"})
# Paths the server writes, besides suites' PATH_OPTIONS that are not read-only.
WRITTEN = (PATH_OPTIONS - READ_ONLY_PATHS - {"wsrep-notify-cmd"}) | {
    "datadir", "tmpdir", "socket", "pid-file", "log-error", "mysqlx-socket"}
# A read-only input the server runs: only from the vardir or the inputs.
EXECUTED_INPUTS = frozenset({"wsrep-notify-cmd"})
# Listener ports: 0 (off) or a leased one; "port" 0 means 3306, so never 0.
PORT_OPTIONS = frozenset({"port", "extra-port", "admin-port", "mysqlx-port"})
# Addresses: loopback, and a port only when it is leased.
ADDRESS_OPTIONS = frozenset({"bind-address", "admin-address", "mysqlx-bind-address",
                             "wsrep-node-address", "wsrep-node-incoming-address",
                             "wsrep-sst-receive-address"})
PROVIDER_OPTIONS = "wsrep-provider-options"
CLUSTER_ADDRESS = "wsrep-cluster-address"
PROVIDER = "wsrep-provider"
LIST_SEPARATORS = re.compile(r"[:;]")
COMMAND_LINE = re.compile(r"[\s;&|`$<>(){}\\'\"*?]")


@dataclass(frozen=True)
class CaseBounds:
    """What one case's servers may reach.

    vardir: the lane's ``MYSQLTEST_VARDIR`` (every server's vardir is inside);
    ports: the ports leased for the case's servers (their spares included);
    sockets: the socket paths kewpie chose for them; plugin_dirs: where plugins
    load from; inputs: read-only inputs (the mysql-test tree, the suite
    directory, the server's share directory); providers: the Galera libraries
    kewpie found; basedir: the code tree's.
    """

    vardir: str
    ports: frozenset[int] = frozenset()
    sockets: frozenset[str] = frozenset()
    plugin_dirs: tuple[str, ...] = ()
    inputs: tuple[str, ...] = ()
    providers: tuple[str, ...] = ()
    basedir: str = ""


def _roots(paths: Iterable[str]) -> list[str]:
    out: list[str] = []
    for path in paths:
        if path:
            for form in (posixpath.normpath(path), os.path.realpath(path)):
                if form not in out:
                    out.append(form)
    return out


def _inside(full: str, roots: Iterable[str]) -> bool:
    return any(full == root or full.startswith(root.rstrip("/") + "/") for root in roots)


def _full(path: str, datadir: str) -> str:
    """path as the server resolves it (relative ones start in its datadir)."""
    return posixpath.normpath(path if path.startswith("/") else posixpath.join(datadir, path))


def _pieces(value: str) -> list[str]:
    """A value's paths: a list (``a:b``, ``a;b``) is judged item by item."""
    return [p.strip() for p in LIST_SEPARATORS.split(value) if p.strip()]


def write_problem(value: str, bounds: CaseBounds, datadir: str, extra: Iterable[str] = ()
                  ) -> str | None:
    """Why a path the server writes leaves the case's vardir (None when it stays)."""
    for piece in _pieces(value):
        if piece.startswith("~"):
            return f"{piece} is in a home directory, outside the case's vardir"
        full = _full(piece, datadir)
        if _inside(full, _roots([bounds.vardir])) or full in extra:
            continue
        where = "is outside" if piece.startswith("/") else "climbs out of"
        return (f"{piece} {where} the case's vardir {bounds.vardir} (kewpie keeps every file "
                f"a server writes in its vardir)")
    return None


def input_problem(value: str, bounds: CaseBounds, datadir: str, programs: bool = False
                  ) -> str | None:
    """Why a path of an unknown option (or a program the server runs: programs) is
    neither in the vardir nor in a read-only input (None when it is); a program may
    also be one of the code tree's (``<basedir>/bin``)."""
    roots = [bounds.vardir, *bounds.inputs]
    if programs and bounds.basedir:
        roots += [posixpath.join(bounds.basedir, "bin"), posixpath.join(bounds.basedir, "sbin")]
    for piece in _pieces(value):
        if not looks_like_path(piece):
            continue
        full = _full(piece, datadir)
        if _inside(full, _roots(roots)) or _inside(os.path.realpath(full), _roots(roots)):
            continue
        return (f"{piece} is neither in the case's vardir nor in the mysql-test tree, the "
                f"suite or the server's share directory"
                + (" or the code tree's bin directory" if programs else ""))
    return None


def port_problem(value: str | None, bounds: CaseBounds, zero_ok: bool) -> str | None:
    """Why a listener port is not one leased for this case (None when it is)."""
    text = (value or "").strip()
    try:
        number = int(text, 0) if text else 0
    except ValueError:
        return f"{text!r} is not a port number"
    if number == 0 and zero_ok:
        return None
    if number in bounds.ports:
        return None
    shown_port = "0 (the server's default port, 3306)" if number == 0 else str(number)
    return (f"it listens on port {shown_port}, which kewpie did not lease for this case "
            f"(leased: {', '.join(map(str, sorted(bounds.ports))) or 'none'})")


def address_with_port_problem(text: str, bounds: CaseBounds) -> str | None:
    """A loopback address, with (if any) a leased port."""
    bad = address_problem(text, port_allowed=True)
    if bad:
        return bad
    _, port = split_address(text)
    return port_problem(port, bounds, zero_ok=False) if port else None


def provider_problem(items: Iterable[tuple[str, str]], bounds: CaseBounds,
                     datadir: str) -> str | None:
    """Galera provider options: listeners on the loopback and leased ports, files in the
    vardir."""
    for key, value in items:
        where = f"provider option {key}={value}"
        if key == "gmcast.mcast_addr" and value:
            return f"{where}: multicast reaches other hosts"
        if key == "base_port":
            bad = port_problem(value, bounds, zero_ok=False)
        elif key in PROVIDER_LISTENERS or key in PROVIDER_ADDRESSES:
            bad = address_with_port_problem(value, bounds) if value else None
        elif LISTENERISH.search(key) and value:
            bad = (port_problem(value, bounds, zero_ok=True) if value.isdigit()
                   else address_with_port_problem(value, bounds))
        elif key in PROVIDER_READ_ONLY:
            bad = None
        elif key in PROVIDER_PATHS or looks_like_path(value):
            bad = write_problem(value, bounds, datadir)
        else:
            bad = None
        if bad:
            return f"{where}: {bad}"
    return None


def _plugin_problem(name: str, value: str | None, bounds: CaseBounds) -> str | None:
    if name in PLUGIN_LOADERS:
        for item in (value or "").split(";"):
            library = item.split("=", 1)[-1].strip()
            if "/" in library:
                return (f"plugin library {library} is a path: plugins load from the server's "
                        f"plugin directory only")
            if library.removesuffix(".so") in LISTENER_PLUGINS:
                return f"plugin {library} opens its own TCP listeners"
        return None
    if name == "plugin-dir":
        if value and not _inside(posixpath.normpath(value),
                                 _roots([*bounds.plugin_dirs, bounds.vardir])):
            return (f"{value} is not the server's plugin directory "
                    f"({', '.join(bounds.plugin_dirs) or 'none found'}) nor in the case's "
                    f"vardir: plugins load from there only")
        return None
    if name == PROVIDER:
        if not value or value.lower() == "none" or "/" not in value:
            return None  # none, or a bare name the loader looks up in the system's directories
        real = os.path.realpath(value)
        if any(real == os.path.realpath(p) for p in bounds.providers) or \
                _inside(posixpath.normpath(value), _roots(bounds.plugin_dirs)):
            return None
        return (f"{value} is not the Galera library kewpie found "
                f"({', '.join(bounds.providers) or 'none'})")
    return None


def _listener_problem(name: str, value: str | None, res: Resolution,
                      bounds: CaseBounds) -> str | None:
    if name in PORT_OPTIONS:
        return port_problem(value, bounds, zero_ok=name != "port")
    if name == "bind-address" and any(p in NEGATING for p in res.prefixes):
        return "--skip-bind-address listens on every interface"
    if name in ADDRESS_OPTIONS:
        if value is None or not value.strip() or value.strip().upper() == "AUTO":
            return "an automatic address may be one other hosts can reach"
        for item in value.split(","):
            bad = (address_problem(item, port_allowed=False) if name == "bind-address"
                   else address_with_port_problem(item, bounds))
            if bad:
                return bad
        return None
    if name == CLUSTER_ADDRESS and value:
        if not value.strip().lower().startswith("gcomm://"):
            return None  # no group communication: the provider connects nowhere
        hosts, params = cluster_address_parts(value)
        for host in hosts:
            bad = address_problem(host, port_allowed=True)
            if bad:
                return f"{host} points off this machine: {bad}"
        return provider_problem(params, bounds, "")
    return None


def judge(opt: Option, res: Resolution, bounds: CaseBounds, datadir: str) -> str | None:
    """Why one option of a case's server is unsafe (None when it is not)."""
    known = res.name is not None
    name = res.name or stem(res)
    value = res.effective_value(opt.value)
    if "maximum" in res.prefixes:
        return None  # only the limit of SET GLOBAL
    if name == PROVIDER_OPTIONS:
        return provider_problem(provider_items(opt.value or ""), bounds, datadir)
    bad = _listener_problem(name, value, res, bounds) or _plugin_problem(name, value, bounds)
    if bad or name in PORT_OPTIONS | ADDRESS_OPTIONS | {CLUSTER_ADDRESS, PROVIDER, "plugin-dir"} \
            | PLUGIN_LOADERS:
        return bad
    if not value or any(p in NEGATING for p in res.prefixes):
        return None  # switched off, or a flag
    if name == "basedir":
        if bounds.basedir and os.path.realpath(value) != os.path.realpath(bounds.basedir):
            return f"{value} is not the code tree under test ({bounds.basedir})"
        return None
    if name in DATA_FILE_LISTS:
        return next(filter(None, (write_problem(p, bounds, datadir)
                                  for p in data_file_names(value))), None)
    if name in DBUG_OPTIONS:
        return next(filter(None, (write_problem(p, bounds, datadir)
                                  for p in dbug_output_files(value))), None)
    if name == "secure-file-priv":
        return None if value.upper() == "NULL" else input_problem(value, bounds, datadir)
    if name in EXECUTED_INPUTS:
        if COMMAND_LINE.search(value.strip()):
            return "a command line: kewpie lets the server run a program given by its path only"
        return input_problem(value, bounds, datadir, programs=True)
    if name in WRITTEN:
        extra = bounds.sockets if name in ("socket", "mysqlx-socket") else ()
        return write_problem(value, bounds, datadir, extra)
    if name in READ_ONLY_PATHS:
        return None
    if not known and LISTENERISH.search(name):
        bad = (port_problem(value, bounds, zero_ok=True) if value.strip().isdigit()
               else address_with_port_problem(value, bounds))
        if bad:
            return bad
    if (not known or PATHISH.search(name)) and looks_like_path(value):
        return input_problem(value, bounds, datadir)
    return None


def long_form(opt: Option) -> Option:
    """A short option (``-P3306``) as the long one it stands for; others unchanged."""
    if opt.name.startswith("-") and not opt.name.startswith("--") and len(opt.name) > 1:
        long_name = SHORT_OPTIONS.get(opt.name[1])
        if long_name is not None:
            value = opt.name[2:].lstrip("=") or None
            return Option(long_name, value, False, opt.text or opt.name)
    return opt


def server_problem(options: Sequence[Option], catalog: OptionCatalog, bounds: CaseBounds
                   ) -> str | None:
    """Why one server's option list is unsafe: the first offending option, as written and
    as resolved, and the rule (None when every option is safe)."""
    datadir = posixpath.join(bounds.vardir, "data")
    for opt in options:
        if opt.name == "datadir" and opt.value:
            datadir = _full(opt.value, bounds.vardir)
    for opt in options:
        opt = long_form(opt)
        if opt.name.startswith("-"):
            continue  # another short option (-V...): no path, no listener
        res = resolve(("loose-" if opt.loose else "") + opt.name, catalog.names)
        if res.ambiguous:
            continue  # the server refuses it itself
        reason = judge(opt, res, bounds, datadir)
        if reason:
            return (f"server option {shown(opt)!r} resolves to "
                    f"{resolved_text(res, res.name or stem(res), opt)}: {reason}")
    return None


def case_problem(servers: Sequence[Sequence[Option]], catalog: OptionCatalog,
                 bounds: CaseBounds) -> str:
    """Why a case's servers may not start ('' when all are safe), naming the server
    (``mysqld.N``)."""
    for index, options in enumerate(servers):
        reason = server_problem(options, catalog, bounds)
        if reason:
            return f"mysqld.{index + 1}: {reason}"
    return ""
