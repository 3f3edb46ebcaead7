"""--start-and-exit leaves 3 replicating servers usable without kewpie; cleanup ends them.

Covers: lib/modes/native/start_and_exit.py, lib/run/cleanup.py, lib/servers/describe.py
"""
import json
import os
import re
import time

import pymysql

from tests.conftest import tagged


def test_start_and_exit_then_cleanup(kewpie):
    proc = kewpie.run("--suite=replication_basic", "--start-and-exit")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    ports = [int(p) for p in re.findall(r"INFO MASTER_PORT: (\d+)", proc.stdout)]
    assert len(ports) == 3
    for field in ("NAME: s0", "SOCKET_FILE: ", "VARDIR: ", "STATUS: 1"):
        assert field in proc.stdout
    state = json.load(open(os.path.join(kewpie.workdir, "servers.json")))
    assert [s["port"] for s in state["servers"]] == ports
    assert len(tagged(kewpie.workdir)) == 3
    try:
        conns = [pymysql.connect(host="127.0.0.1", port=p, user="root", autocommit=True) for p in ports]
        with conns[0].cursor() as cur:
            cur.execute("CREATE TABLE test.seen (id INT PRIMARY KEY)")
            cur.execute("INSERT INTO test.seen VALUES (42)")
        for conn in conns[1:]:
            deadline = time.monotonic() + 20
            rows = None
            while rows != ((42,),):
                assert time.monotonic() < deadline, f"row did not replicate (last: {rows})"
                time.sleep(0.05)
                with conn.cursor() as cur:
                    cur.execute("SELECT COUNT(*) FROM information_schema.TABLES "
                                "WHERE TABLE_SCHEMA='test' AND TABLE_NAME='seen'")
                    if cur.fetchone()[0] == 1:
                        cur.execute("SELECT id FROM test.seen")
                        rows = cur.fetchall()
        for conn in conns:
            conn.close()
        # The bind address is loopback only.
        for srv in state["servers"]:
            assert "bind-address=127.0.0.1" in open(srv["cnf"]).read()
    finally:
        clean = kewpie.run("--mode=cleanup")
    assert clean.returncode == 0, clean.stdout
    assert clean.stdout.count("Killing pid") == 3
    assert tagged(kewpie.workdir) == []
    assert not os.path.exists(os.path.join(kewpie.workdir, "servers.json"))


def test_port_held_by_foreign_process_is_skipped(kewpie):
    import socket
    from lib.platform.ports import align_up
    base = align_up(23100 + os.getpid() % 500 * 4)
    squatter = socket.socket()
    squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    squatter.bind(("127.0.0.1", base + 1))
    squatter.listen(1)
    try:
        proc = kewpie.run("--suite=main", "--start-and-exit", f"--base-port={base}")
        assert proc.returncode == 0, proc.stdout
        port = int(re.search(r"MASTER_PORT: (\d+)", proc.stdout).group(1))
        assert not base <= port < base + 4
    finally:
        squatter.close()
        kewpie.run("--mode=cleanup")
