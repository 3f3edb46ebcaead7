"""Judging option values: is an address loopback, does a path stay in the vardir.

Each ``*_problem`` function returns None when the value is fine, else a short
reason for the one error line.  Paths are judged as mysqld resolves them:
relative paths are relative to the datadir (``<vardir>/data``), so
``../log/x`` stays in the vardir and ``../../x`` leaves it.  Without a known
vardir (suites are checked before any vardir exists) every absolute path is
outside.
"""
from __future__ import annotations

import os
import posixpath

VIRTUAL_VARDIR = "/<vardir>"
LOCALHOST_NAMES = frozenset({"localhost"})


def split_address(text: str) -> tuple[str, str | None]:
    """``[scheme://]host[:port][/...][?...]`` (IPv6 in brackets or bare) -> (host, port)."""
    rest = text.strip()
    if "://" in rest:
        rest = rest.split("://", 1)[1]
    rest = rest.split("?", 1)[0].split("/", 1)[0]
    if rest.startswith("["):
        host, _, tail = rest[1:].partition("]")
        return host, (tail[1:] or None) if tail.startswith(":") else None
    if rest.count(":") == 1:
        host, port = rest.split(":")
        return host, port or None
    return rest, None


def is_loopback(host: str) -> bool:
    """127.0.0.0/8, ::1 and localhost (which mysqld resolves to those)."""
    name = host.strip().lower()
    if name in LOCALHOST_NAMES:
        return True
    import ipaddress  # only for an address option (~3 ms of imports)
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def address_problem(text: str, port_allowed: bool) -> str | None:
    """Why an address is not a loopback one without an unleased port, or None."""
    host, port = split_address(text)
    if not host or not is_loopback(host):
        shown = host or "every interface"
        return f"{shown} is not a loopback address (a server must not be reachable from other hosts)"
    if port is not None and not port_allowed:
        return (f"port {port} was not leased by kewpie (it sets the listener ports of every "
                f"server from its lease)")
    return None


def port_problem(value: str | None) -> str | None:
    """A listener port other than 0 (off) is one kewpie never leased."""
    text = (value or "").strip()
    try:
        number = int(text, 0) if text else 0
    except ValueError:
        return f"{text!r} is not a port number"
    if number == 0:
        return None
    return f"it opens a listener on port {number}, which kewpie did not lease"


def looks_like_path(value: str | None) -> bool:
    """A value a server could take as a path outside its datadir."""
    if not value:
        return False
    return value.startswith(("/", "~")) or "/" in value or value == ".."


def path_problem(value: str | None, vardir: str | None = None, datadir: str | None = None) -> str | None:
    """Why a path-valued option would leave the server's vardir, or None."""
    if value is None or value.strip() == "":
        return None
    text = value.strip()
    if text.startswith("~"):
        return f"{text} is in a home directory, outside the server's vardir"
    base = vardir or VIRTUAL_VARDIR
    data = datadir or posixpath.join(base, "data")
    if os.path.isabs(text):
        if vardir is None:
            return f"{text} is outside the server's vardir (an absolute path; use a relative one)"
        full = posixpath.normpath(text)
    else:
        full = posixpath.normpath(posixpath.join(data, text))
    roots = {posixpath.normpath(base)}
    if vardir is not None:
        roots.add(os.path.realpath(vardir))
    if any(full == root or full.startswith(root.rstrip("/") + "/") for root in roots):
        return None
    if os.path.isabs(text):
        return f"{text} is outside the server's vardir"
    return f"{text} climbs out of the server's vardir (relative paths start in its datadir)"


def data_file_names(value: str) -> list[str]:
    """The file names in an InnoDB ``name:size[:autoextend];...`` list."""
    return [part.split(":", 1)[0] for part in value.split(";") if part.strip()]


def dbug_output_files(value: str) -> list[str]:
    """The trace files in a DBUG control string (``d:t:o,/tmp/trace``)."""
    files = []
    for field in value.split(":"):
        flag, _, arg = field.partition(",")
        if flag.strip().lstrip("+-") in ("o", "O", "a", "A") and arg:
            files.append(arg)
    return files


def provider_items(value: str) -> list[tuple[str, str]]:
    """``key=value;key=value`` (Galera provider options) as (lower-case key, value) pairs."""
    items = []
    for part in value.split(";"):
        key, _, item = part.partition("=")
        if key.strip():
            items.append((key.strip().lower(), item.strip()))
    return items


def cluster_address_parts(value: str) -> tuple[list[str], list[tuple[str, str]]]:
    """``gcomm://h1:p1,h2?key=v&key2=v2`` -> (hosts with ports, provider options)."""
    rest = value.strip()
    if "://" in rest:
        rest = rest.split("://", 1)[1]
    hosts, _, query = rest.partition("?")
    params = [(k.strip().lower(), v.strip()) for k, _, v in
              (p.partition("=") for p in query.split("&")) if k.strip()]
    return [h for h in hosts.split(",") if h.strip()], params
