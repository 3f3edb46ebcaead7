"""randgen through the real CLI: the randgen suites, and python -m lib.randgen against a server.

Covers: lib/randgen/, lib/kewpie2012/randgen_methods.py
"""
import json
import os
import re
import subprocess
import sys

import pymysql

from tests.conftest import ROOT


def rows_of(out):
    return re.findall(r"^\d{8}-\d{6} INFO (\S+)\s+\[ (\w+) \]\s+(\d+)$", out, re.M)


def test_randgen_suites_pass(kewpie):
    proc = kewpie.run("--suite=randgen_basic,replication_randgen")
    out = proc.stdout
    assert proc.returncode == 0, out[-5000:] + proc.stderr
    names = {name for name, _, _ in rows_of(out)}
    assert {"randgen_basic.transactions_test", "randgen_basic.zero_sum_test",
            "randgen_basic.ddl_dml_test", "randgen_basic.legacy_test",
            "randgen_basic.server_lost_test",
            "replication_randgen.transactions_test", "replication_randgen.zero_sum_test",
            "replication_randgen.ddl_dml_test", "replication_randgen.legacy_test"} <= names
    assert all(status == "pass" for _, status, _ in rows_of(out))
    assert "STATUS: PASS, 9/9 test cases" in out


def test_cluster_randgen_passes(kewpie):
    proc = kewpie.run("--suite=cluster_randgen", "--test-timeout=240", timeout=600)
    assert proc.returncode == 0, proc.stdout[-5000:]
    assert "STATUS: PASS, 2/2 test cases" in proc.stdout


def randgen_cli(*args):
    env = dict(os.environ, KEWPIE_NO_VENV="1")
    return subprocess.run([sys.executable, "-m", "lib.randgen", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


def test_cli_against_a_started_server(kewpie):
    proc = kewpie.run("--suite=main", "--start-and-exit")
    assert proc.returncode == 0, proc.stdout[-3000:]
    try:
        desc = json.load(open(os.path.join(kewpie.workdir, "cluster.json")))
        server = desc["servers"][0]
        dsn = f"--dsn=dbi:mysql:host=127.0.0.1:port={server['port']}:user=root:database=test"
        run = randgen_cli(dsn, "--gendata=conf/kewpie/zero_sum.zz",
                          "--grammar=conf/kewpie/zero_sum.yy", "--queries=100", "--threads=2",
                          "--json=-")
        assert run.returncode == 0, run.stderr
        result = json.loads(run.stdout)
        assert result["status"] == "ok" and result["statements"] >= 200
        assert set(result["errors"]) <= {"1213", "1205", "1305"}
        conn = pymysql.connect(unix_socket=server["socket"], user="root", database="test",
                               autocommit=True)
        with conn.cursor() as cur:
            cur.execute("SELECT (SELECT SUM(balance) FROM accounts_a) + "
                        "(SELECT SUM(balance) FROM accounts_b)")
            assert int(cur.fetchone()[0]) == 40000
        traces = []
        for run in (1, 2):  # same seed: same data, same statements
            with conn.cursor() as cur:
                cur.execute("DROP SCHEMA test")
                cur.execute("CREATE SCHEMA test")
            log = os.path.join(kewpie.workdir, f"trace{run}.log")
            traced = randgen_cli(f"--socket={server['socket']}", "--seed=42", "--sqltrace",
                                 "--gendata=conf/kewpie/transactions.zz", f"--log={log}",
                                 "--grammar=conf/kewpie/transactions.yy", "--queries=100",
                                 "--threads=1")
            assert traced.returncode == 0, traced.stderr
            traces.append([line.split(" ", 2)[2] for line in open(log) if " INFO [" in line])
        assert len(traces[0]) > 100 and traces[0] == traces[1]
        conn.close()
        missing = randgen_cli(f"--socket={server['socket']}", "--grammar=conf/kewpie/nope.yy")
        assert missing.returncode == 110 and "grammar not found" in missing.stderr
        generated = randgen_cli("--generate=5", "--grammar=conf/kewpie/transactions.yy",
                                "--gendata=conf/kewpie/transactions.zz")
        assert generated.returncode == 0 and len(generated.stdout.splitlines()) == 5
    finally:
        cleanup = kewpie.run("--mode=cleanup")
        assert cleanup.returncode == 0, cleanup.stdout[-2000:]


def test_statement_channels_agree_on_outcomes(kewpie):
    """mysqlclient's and PyMySQL's channels: rows drained, error codes, a lost connection."""
    from lib.randgen.channel import CChannel, PyChannel, StatementError, open_channel
    from lib.randgen.colocate import server_thread
    from lib.randgen.connection import ConnectionSpec

    proc = kewpie.run("--suite=main", "--start-and-exit")
    assert proc.returncode == 0, proc.stdout[-3000:]
    try:
        server = json.load(open(os.path.join(kewpie.workdir, "cluster.json")))["servers"][0]
        spec = ConnectionSpec(port=server["port"], unix_socket=server["socket"])
        admin = pymysql.connect(unix_socket=server["socket"], user="root", autocommit=True)
        for rows, kind in ((False, CChannel), (True, PyChannel)):
            chan = open_channel(spec, rows=rows)
            assert isinstance(chan, kind)
            chan.run("CREATE TABLE IF NOT EXISTS test.ch (a INT PRIMARY KEY, b VARCHAR(10))")
            chan.run("REPLACE INTO test.ch VALUES (1, 'é'), (2, 'x')")
            chan.run("SELECT * FROM test.ch")           # rows read and dropped
            chan.run("SELECT 1")                        # no 2014: the last result was drained
            tid = server_thread(chan.value)             # what a one-thread run pins
            assert tid and os.path.isdir(f"/proc/{server['pid']}/task/{tid}"), tid
            for sql, code in (("SELEC 1", 1064), ("SELECT * FROM test.nope", 1146)):
                try:
                    chan.run(sql)
                    raise AssertionError(f"{sql} did not fail")
                except StatementError as exc:
                    assert (exc.code, exc.lost) == (code, False), exc.args
            with admin.cursor() as cur:
                cur.execute("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = %s",
                            (chan.thread_id(),))
                assert cur.fetchone()[0] == 1
                cur.execute(f"KILL CONNECTION {chan.thread_id()}")
            try:
                chan.run("SELECT 1")
                raise AssertionError("a killed connection still answers")
            except StatementError as exc:
                assert exc.lost, exc.args
            chan.close()
            chan.close()                                # closing twice does not raise
        # host=localhost means TCP to this server for both libraries (not libmariadb's
        # default socket, which could be another server)
        chan = open_channel(ConnectionSpec(host="localhost", port=server["port"]))
        with admin.cursor() as cur:
            cur.execute("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = %s",
                        (chan.thread_id(),))
            assert cur.fetchone()[0] == 1
        chan.close()
        admin.close()
    finally:
        cleanup = kewpie.run("--mode=cleanup")
        assert cleanup.returncode == 0, cleanup.stdout[-2000:]
