"""The results history's password never leaves the store's connection, through the real
CLI, as root, on a MariaDB store kewpie starts: a user with a password, its DSN given in
KEWPIE_HISTORY_DSN (and in a private config file), a run with a failing test, JUnit and a
secret server option, then ``kewpie history run``, ``history html``, ``history serve``'s
run pages, ``--list-options`` and the pytest plugin: the password is in none of the store's
rows, the pages, the static copy, the logs, JUnit, the outputs or anywhere in the run's
workdir, nor in the environment or command line of a server kewpie started; a store
written before the fix (schema version 1, the password in a run's options, written
straight into the tables) is scrubbed when it is opened.  On the command line, or in a
config file others may read, the DSN with its password is refused: one ERROR line, exit 2.

Covers: lib/platform/secrets.py, lib/history/migrations.py, lib/history/dsn.py,
lib/cli.py (the store's DSN), lib/run/configfile.py (private files), lib/run/recording.py,
lib/history/commands.py, lib/history/web.py, lib/history/export.py,
lib/pytest_plugin/options.py, lib/platform/process.py (children's environment)
"""
from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import sys
import urllib.request

import pymysql

from lib.history.schema import SCHEMA_VERSION
from tests.conftest import FIXTURE_SUITES, KEWPIE, ROOT, KewpieRunner, make_workdir, tagged

SUITE = ("--suitepath=" + FIXTURE_SUITES, "--suite=history_flaky", "--force")
PW = "Pw-" + secrets.token_hex(8)        # the store's password
SST_PW = "Sst-" + secrets.token_hex(8)   # a secret server option's (it must be in my.cnf)


def _kewpie(*args: str, env_dsn: str = "", workdir: str = "",
            cwd: str | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, KEWPIE_NO_VENV="1")
    env.pop("KEWPIE_HISTORY_DSN", None)
    if env_dsn:
        env["KEWPIE_HISTORY_DSN"] = env_dsn
    head = [f"--workdir={workdir}"] if workdir else []
    cmd = [sys.executable, KEWPIE, *head, *args] if args[:1] != ("history",) else \
        [sys.executable, KEWPIE, *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env,
                          stdin=subprocess.DEVNULL, cwd=cwd)


def _errors(text: str) -> list[str]:
    return [line for line in text.splitlines() if re.match(r"^\d{8}-\d{6} ERROR ", line)]


def _files_holding(top: str, *needles: str) -> list[str]:
    """Every file under top (symbolic links followed: the vardirs in /dev/shm too) whose
    bytes hold one of needles."""
    found, seen = [], set()
    for folder, dirs, files in os.walk(top, followlinks=True):
        real = os.path.realpath(folder)
        if real in seen:
            dirs[:] = []
            continue
        seen.add(real)
        for name in files:
            path = os.path.join(folder, name)
            try:
                with open(path, "rb") as fh:
                    data = fh.read()
            except OSError:  # a socket, a fifo
                continue
            if any(n.encode() in data for n in needles):
                found.append(path)
    return found


def _store_text(port: int) -> str:
    """Every row of every table of the store, as text."""
    conn = pymysql.connect(host="127.0.0.1", port=port, user="root", database="kewpie_history")
    try:
        with conn.cursor() as cur:
            cur.execute("SHOW TABLES")
            tables = [t for (t,) in cur.fetchall()]
            rows = []
            for table in tables:
                cur.execute(f"SELECT * FROM `{table}`")
                rows += [repr(row) for row in cur.fetchall()]
        return "\n".join(rows)
    finally:
        conn.close()


def _old_store(port: int, dsn: str) -> None:
    """The store as a kewpie before the fix left it: schema version 1, a run whose options
    hold the DSN with its password and a result whose failure holds it, written straight
    into the tables (today's: version 2 only rewrote rows, and version 3 keeps the
    sweeps' details tables a store already has)."""
    from lib.history.schema import metadata
    from sqlalchemy import create_engine
    engine = create_engine(f"mysql+mysqldb://root@127.0.0.1:{port}/kewpie_history")
    metadata.create_all(engine)
    engine.dispose()
    conn = pymysql.connect(host="127.0.0.1", port=port, user="root", database="kewpie_history",
                           autocommit=True)
    with conn.cursor() as cur:
        cur.execute("INSERT INTO history_meta (name, value) VALUES ('schema_version', '1')")
        cur.execute("INSERT INTO history_runs (uuid, started_at, host, platform, kewpie_version, "
                    "mode, selection, shard, options, tree_version, tree_path, trees, branch, "
                    "revision, job, build_url, labels) VALUES ('before-the-fix', "
                    "'2026-11-01 10:00:00', 'agent0', 'debian-12-x86_64', '', 'native', "
                    "'--suite=main', '', %s, '10.11.19', '/usr', '[]', 'main', '', '', '', '{}')",
                    (json.dumps({"history_dsn": dsn, "force": True}),))
        cur.execute("INSERT INTO history_results (run_id, bot, seq, test, combination, status, "
                    "failing, duration_ms, attempts, finished_at, failure, signature, evidence) "
                    "SELECT id, 'bot0', 1, 'main.old', '', 'fail', 1, 10, 1, "
                    "'2026-11-01 10:01:00', %s, '', '' FROM history_runs "
                    "WHERE uuid = 'before-the-fix'", (f"could not reach {dsn}",))
    conn.close()


def _serve_pages(dsn: str, paths: list[str]) -> tuple[str, list[str]]:
    """``kewpie history serve`` over the store (the DSN from the environment): its first
    line and the pages at paths; stopped by its pid after."""
    env = dict(os.environ, KEWPIE_NO_VENV="1", KEWPIE_HISTORY_DSN=dsn)
    proc = subprocess.Popen([sys.executable, KEWPIE, "history", "serve", "--no-config"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                            stdin=subprocess.DEVNULL)
    try:
        line = proc.stdout.readline()
        assert "serving" in line, line + proc.stdout.read()
        url = line.split(" on ")[1].split()[0].rstrip("/")
        pages = []
        for path in paths:
            with urllib.request.urlopen(url + path, timeout=30) as response:
                pages.append(response.read().decode())
        return line, pages
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_a_dsn_with_a_password_leaves_no_trace(kewpie, tmp_path_factory, tmp_path):
    started = kewpie.run("--suitepath=" + FIXTURE_SUITES, "--suite=history_flaky",
                         "--start-and-exit")
    assert started.returncode == 0, started.stdout[-3000:]
    port = int(re.findall(r"INFO MASTER_PORT: (\d+)", started.stdout)[0])
    dsn = f"mysql://hist:{PW}@127.0.0.1:{port}/kewpie_history"
    shown = f"mysql://hist:***@127.0.0.1:{port}/kewpie_history"
    agent = KewpieRunner(make_workdir(tmp_path_factory, "agent"))
    out = tmp_path / "out"
    out.mkdir()
    outputs: list[str] = []
    try:
        root = pymysql.connect(host="127.0.0.1", port=port, user="root", autocommit=True)
        with root.cursor() as cur:
            cur.execute("CREATE DATABASE kewpie_history CHARACTER SET utf8mb4")
            for host in ("127.0.0.1", "localhost"):
                cur.execute(f"CREATE USER 'hist'@'{host}' IDENTIFIED BY '{PW}'")
                cur.execute(f"GRANT ALL ON kewpie_history.* TO 'hist'@'{host}'")
        root.close()
        _old_store(port, dsn)

        # a run: the DSN in the environment, a failing test, JUnit, a secret server option
        junit = str(out / "junit.xml")
        run = _kewpie(*SUITE, f"--junit-xml={junit}", f"--mysqld=--loose-wsrep-sst-auth=sst:{SST_PW}",
                      "--label=branch=secrets", env_dsn=dsn, workdir=agent.workdir)
        outputs.append(run.stdout + run.stderr)
        assert run.returncode == 1, run.stdout[-3000:]  # the planted failure, stored
        assert f"Results history: 2 result(s) in {shown}" in run.stdout, run.stdout[-2000:]
        log = open(os.path.join(agent.workdir, "kewpie.log")).read()
        assert PW not in log and SST_PW not in log and shown in log

        # the store: upgraded, the old row scrubbed, the new one redacted
        stored = _store_text(port)
        assert PW not in stored and SST_PW not in stored
        conn = pymysql.connect(host="127.0.0.1", port=port, user="root", database="kewpie_history")
        with conn.cursor() as cur:
            cur.execute("SELECT value FROM history_meta WHERE name = 'schema_version'")
            # 2: the scrub; 3: the sweeps' details tables; 4: findings and sightings
            assert cur.fetchone()[0] == str(SCHEMA_VERSION) == "4"
            cur.execute("SELECT id, uuid, options FROM history_runs ORDER BY id")
            runs = cur.fetchall()
            cur.execute("SELECT failure FROM history_results WHERE test = 'main.old'")
            assert cur.fetchone()[0] == f"could not reach {shown}"
        conn.close()
        (old_id, _, old_options), (new_id, _, new_options) = runs
        assert json.loads(old_options) == {"history_dsn": shown, "force": True}
        new = json.loads(new_options)
        assert new["history.dsn"] == shown  # a run's options as section.field
        assert new["servers.mysqld_options"] == ["--loose-wsrep-sst-auth=***"]

        # kewpie history run, the static copy, the served pages
        shown_run = _kewpie("history", "run", str(new_id), "--no-config", env_dsn=dsn)
        outputs.append(shown_run.stdout + shown_run.stderr)
        assert shown_run.returncode == 0, shown_run.stderr
        assert f"history.dsn={shown}" in shown_run.stdout
        assert "servers.mysqld_options=['--loose-wsrep-sst-auth=***']" in shown_run.stdout
        copy = str(out / "history-page")
        html = _kewpie("history", "html", copy, "--no-config", env_dsn=dsn)
        outputs.append(html.stdout + html.stderr)
        assert html.returncode == 0, html.stderr
        keys = {old_id: "history_dsn", new_id: "history.dsn"}  # the old kewpie's, ours
        for run_id, key in keys.items():
            page = open(os.path.join(copy, "runs", f"{run_id}.html")).read()
            assert f"{key}={shown}" in page, page
        first, pages = _serve_pages(dsn, [f"/run/{old_id}", f"/run/{new_id}"])
        outputs += [first, *pages]
        assert shown in first and all(f"{key}={shown}" in p for key, p in zip(keys.values(), pages))
        assert "--loose-wsrep-sst-auth=***" in pages[1]

        # --list-options from the environment, then from a config file only root may read
        listed = _kewpie("--list-options", "--no-config", env_dsn=dsn, workdir=agent.workdir)
        outputs.append(listed.stdout + listed.stderr)
        assert re.search(r"--history-dsn\s+\"" + re.escape(shown) + r"\"\s+environment "
                         r"KEWPIE_HISTORY_DSN", listed.stdout), listed.stdout
        config = tmp_path / "history.toml"
        config.write_text(f'[defaults]\nhistory-dsn = "{dsn}"\n')
        os.chmod(config, 0o600)
        private = _kewpie("history", "runs", f"--config={config}")
        outputs.append(private.stdout + private.stderr)
        assert private.returncode == 0 and private.stdout.count(" native ") == 2, private.stderr
        os.chmod(config, 0o644)
        refused = _kewpie("--list-options", f"--config={config}", workdir=agent.workdir)
        outputs.append(refused.stdout + refused.stderr)
        errors = _errors(refused.stdout + refused.stderr)
        assert refused.returncode == 2 and len(errors) == 1, refused.stdout + refused.stderr
        assert f"may read {config} (mode 0644)" in errors[0] and "chmod 600" in errors[0]

        # on the command line: refused before anything starts
        for option in ("--history-dsn", "--results-db-dsn"):
            given = _kewpie(*SUITE, f"{option}={dsn}", "--no-config", workdir=agent.workdir)
            outputs.append(given.stdout + given.stderr)
            errors = _errors(given.stdout + given.stderr)
            assert given.returncode == 2 and len(errors) == 1, given.stdout + given.stderr
            assert "KEWPIE_HISTORY_DSN" in errors[0] and shown in errors[0]
        given = _kewpie("history", "runs", f"--history-dsn={dsn}", "--no-config")
        assert given.returncode == 2 and len(_errors(given.stdout + given.stderr)) == 1
        outputs.append(given.stdout + given.stderr)

        # servers kewpie starts never get the DSN: their environment and command line
        kept = _kewpie(*SUITE, "--start-and-exit", env_dsn=dsn, workdir=agent.workdir)
        outputs.append(kept.stdout + kept.stderr)
        assert kept.returncode == 0, kept.stdout[-2000:]
        servers = tagged(agent.workdir)
        assert servers
        for proc in servers:
            assert PW not in " ".join(proc.cmdline())
            assert "KEWPIE_HISTORY_DSN" not in proc.environ() and PW not in repr(proc.environ())
        cleaned = _kewpie("--mode=cleanup", workdir=agent.workdir)
        assert cleaned.returncode == 0, cleaned.stdout

        # the pytest plugin: the DSN from the environment, named in its report header
        test_file = tmp_path / "test_one_server.py"
        test_file.write_text("def test_select(kewpie_server):\n"
                             "    assert kewpie_server.execute('SELECT 1')[0][0] == 1\n")
        plugin = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p",
             "kewpie.pytest_plugin.plugin", "--noconftest", "-rA",
             f"--kewpie-workdir={agent.workdir}", str(test_file)],
            cwd=ROOT, capture_output=True, text=True, timeout=240, stdin=subprocess.DEVNULL,
            env=dict(os.environ, PYTHONPATH=ROOT, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1",
                     KEWPIE_HISTORY_DSN=dsn))
        outputs.append(plugin.stdout + plugin.stderr)
        assert plugin.returncode == 0, plugin.stdout[-3000:]
        assert f"kewpie: results history {shown} (from KEWPIE_HISTORY_DSN)" in plugin.stdout
        conn = pymysql.connect(host="127.0.0.1", port=port, user="root", database="kewpie_history")
        with conn.cursor() as cur:
            cur.execute("SELECT COUNT(*) FROM history_runs WHERE mode = 'pytest'")
            assert cur.fetchone()[0] == 1
        conn.close()

        # nowhere: the outputs, the run's workdir (its log, spool, vardirs), JUnit, the copy
        assert not [o for o in outputs if PW in o], [o[-500:] for o in outputs if PW in o]
        assert not [o for o in outputs if SST_PW in o]
        assert PW not in _store_text(port)
        # the grep reaches the servers' files: a secret server option must be in my.cnf
        assert _files_holding(agent.workdir, SST_PW), "the workdir walk found no my.cnf"
        assert _files_holding(agent.workdir, PW) == []
        assert _files_holding(str(out), PW, SST_PW) == []
        assert PW not in open(junit).read() and "<failure" in open(junit).read()
    finally:
        for workdir in (agent.workdir, kewpie.workdir):
            clean = _kewpie("--mode=cleanup", workdir=workdir)
            assert clean.returncode == 0, clean.stdout
        assert not tagged(agent.workdir)
