"""What the randgen benchmarks share: one server started through kewpie, and its connection.

:func:`kewpie_server` runs ``./kewpie.py --suite=main --start-and-exit`` in a
workdir (:func:`kewpie_servers` any suite's servers), yields the server's description from ``<workdir>/cluster.json``
(port, socket, vardir, scripts), and runs ``./kewpie.py --mode=cleanup`` at
the end, whatever happened.
"""
from __future__ import annotations

import json
import os
import subprocess
import time
from contextlib import contextmanager
from typing import Any, Iterator

from benchlib import KEWPIE_RUN_TIMEOUT, ROOT, BenchError, kewpie_command


@contextmanager
def kewpie_servers(workdir: str, base_port: int,
                   suite_args: list[str]) -> Iterator[list[dict[str, Any]]]:
    """Start a suite's servers with kewpie (--start-and-exit); clean them up at the end."""
    argv = kewpie_command(workdir, base_port, [*suite_args, "--start-and-exit"])
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT,
                          timeout=KEWPIE_RUN_TIMEOUT, stdin=subprocess.DEVNULL)
    try:
        if proc.returncode != 0:
            raise BenchError(f"kewpie --start-and-exit failed (exit {proc.returncode}):\n"
                             + "\n".join(proc.stdout.splitlines()[-15:]))
        with open(os.path.join(workdir, "cluster.json")) as fh:
            yield json.load(fh)["servers"]
    finally:
        subprocess.run(kewpie_command(workdir, None, ["--mode=cleanup"]), capture_output=True,
                       cwd=ROOT, timeout=KEWPIE_RUN_TIMEOUT, stdin=subprocess.DEVNULL)


@contextmanager
def kewpie_server(workdir: str, base_port: int) -> Iterator[dict[str, Any]]:
    """Start one server with kewpie (--suite=main --start-and-exit); clean it up at the end."""
    with kewpie_servers(workdir, base_port, ["--suite=main"]) as servers:
        yield servers[0]


def stop_server(server: dict[str, Any], timeout: float = 60.0) -> None:
    """Stop the server with its vardir's stop script (nothing when it is not running)."""
    stop = server.get("scripts", {}).get("stop")
    if stop:
        subprocess.run([stop], capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL)


def restart_server(server: dict[str, Any], timeout: float = 60.0) -> bool:
    """Start a server that died again with its vardir's start script; True when it answers."""
    import pymysql
    start = server.get("scripts", {}).get("start")
    if not start:
        return False
    subprocess.run([start], capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            pymysql.connect(unix_socket=server["socket"], user="root", connect_timeout=2).close()
            return True
        except pymysql.MySQLError:
            time.sleep(0.2)
    return False
