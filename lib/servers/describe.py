"""A started server set describes itself: a JSON file and per-server shell scripts.

After ``--start-and-exit`` the workdir holds ``cluster.json`` and, in each
vardir, ``use`` (the mariadb client, connected), ``stop`` and ``start``.
They work without kewpie, in the spirit of dbdeployer's sandboxes.  The option
file they read holds the Galera SST password: it is not world-readable
(``write_cnf``), so the scripts work for root and the server user.  ``start``
gives the server the environment kewpie gives it (workdir tag, ``TMPDIR``
inside the vardir; ``use`` and ``start`` enter its network namespace when it
has one), and ``cluster.json`` is private (mode 0600) as it lists
the suites' options.
"""
from __future__ import annotations

import json
import os
import shlex
from typing import Any

from ..platform.process import TAG_NAME, TAG_WORKDIR
from .server import Server, write_private_file

USE = """#!/bin/sh
# Connect to {name} (started by kewpie) with the command-line client.
export TMPDIR={tmpdir}
exec {netns_exec}{client} --defaults-file={cnf} "$@"
"""

STOP = """#!/bin/sh
# Stop {name}: SIGTERM by pid file (a clean shutdown), SIGKILL after 30 s.
pidfile={pid_file}
[ -s "$pidfile" ] || {{ echo "{name} is not running (no $pidfile)"; exit 0; }}
pid=$(cat "$pidfile")
gone() {{ [ ! -e /proc/$pid ] || grep -q '^State:.*Z' /proc/$pid/status 2>/dev/null; }}
gone && {{ echo "{name} is not running"; exit 0; }}
kill -TERM "$pid"
i=0
while ! gone; do
  sleep 0.1; i=$((i + 1))
  [ $i -ge 300 ] && {{ kill -KILL "$pid"; echo "{name} killed"; exit 0; }}
done
echo "{name} stopped"
"""

START = """#!/bin/sh
# Start {name} again with the options kewpie gave it ({cnf}).
# {galera_note}
extra=""
[ "$1" = "--new-cluster" ] && extra="--wsrep-new-cluster"
runas=""
[ "$(id -u)" = 0 ] && [ -n "{user}" ] && runas="runuser -u {user} --"
cd {vardir}
export {tag}={workdir} {name_tag}={vardir} TMPDIR={tmpdir}
setsid {netns_exec}$runas {server} --defaults-file={cnf} $extra >> {stdout_log} 2>&1 < /dev/null &
i=0
until {netns_exec}{admin} --defaults-file={cnf} ping >/dev/null 2>&1; do
  sleep 0.1; i=$((i + 1))
  [ $i -ge 1200 ] && {{ echo "{name} did not start; see {error_log}"; exit 1; }}
done
echo "{name} is running on port {port}"
"""


def info_block(server: Server) -> list[str]:
    """kewpie's per-server block (NAME, MASTER_PORT, SOCKET_FILE, VARDIR, STATUS; a Galera
    node's ports besides), from its description."""
    data = server.describe()
    galera = [f"{label}: {data[key]}" for label, key in (
        ("GALERA_LISTEN_PORT", "galera_listen_port"), ("GALERA_RECV_PORT", "galera_recv_port"),
        ("GALERA_SST_PORT", "galera_sst_port")) if key in data]
    return [f"NAME: {server.name}", f"MASTER_PORT: {server.port}", *galera,
            f"SOCKET_FILE: {data['socket']}", f"VARDIR: {data['vardir']}",
            f"STATUS: {data['status']}"]


def write_scripts(server: Server, user: str | None) -> dict[str, str]:
    """Write use/stop/start into the server's vardir; return their paths."""
    q = shlex.quote
    values = dict(tag=TAG_WORKDIR, workdir=q(server.settings.env.get(TAG_WORKDIR, "")),
                  name=server.name, cnf=q(server.paths.cnf_path), pid_file=q(server.paths.pid_file),
                  vardir=q(server.paths.vardir), server=q(server.tree.server), user=user or "",
                  name_tag=TAG_NAME, tmpdir=q(server.paths.tmpdir),
                  stdout_log=q(server.paths.stdout_log), error_log=server.paths.error_log,
                  port=server.port,
                  client=q(server.tree.tool("client")), admin=q(server.tree.tool("admin")),
                  netns_exec=(f"ip netns exec {q(server.net.namespace)} " if server.net else ""),
                  galera_note=("Galera node: pass --new-cluster when no other node of its "
                               "cluster runs." if server.server_type == "galera"
                               else "Plain server."))
    paths = {}
    for name, template in (("use", USE), ("stop", STOP), ("start", START)):
        path = os.path.join(server.paths.vardir, name)
        with open(path, "w") as fh:
            fh.write(template.format(**values))
        os.chmod(path, 0o755)
        paths[name] = path
    return paths


def write_description(path: str, servers: list[Server], run: dict[str, Any],
                      user: str | None, arbitrators: list[dict[str, Any]] | None = None) -> str:
    """Write the set's JSON description (with script paths) to path; arbitrators (the
    descriptions of its garbd processes) under ``arbitrators`` when there are any."""
    nodes = []
    for server in servers:
        entry = server.describe()
        entry["scripts"] = write_scripts(server, user)
        nodes.append(entry)
    kinds = {s.server_type for s in servers}
    data = {"type": kinds.pop() if len(kinds) == 1 else sorted(kinds), "run": run,
            "servers": nodes, **({"arbitrators": arbitrators} if arbitrators else {})}
    write_private_file(path, json.dumps(data, indent=2, sort_keys=True))
    return path
