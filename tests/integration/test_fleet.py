"""A buildbot fleet on this machine: a real master with examples/buildbot/master.cfg and
two real workers (each its own base directory and kewpie base port; the master's ports
leased, on 127.0.0.1), one MariaDB results store that kewpie starts (its password a
buildbot secret; of schema version 3, upgraded by the fleet).  One forced build runs
the suite in two shards, one per worker, then a hunt on each worker with seeds of its
own over the planted UDF crash (tests/fixtures/hunt/planted.py): every shard's results
are in the store, the shards' union is the suite, each worker's JUnit is published on
the master (and its evidence: the store records its URL there), the crash found by
both workers is one Findings row with count >= 2 and both workers, reduced by one
worker only (the other one's reduction step finds it running or done in the store),
``kewpie history findings`` and ``failures --signature`` answer, and the Findings page
shows it in chromium.  Nothing is left running.

Covers: examples/buildbot/master.cfg, lib/run/findings.py, lib/history/findings.py, lib/history/commands.py (history timings), lib/modes/hunt/run.py (recording)
"""
import glob
import os
import re
import subprocess
import sys

import pymysql
import pytest

from lib.platform.ports import PortLeaser, default_lock_dir
from tests.conftest import FIXTURE_SUITES, KEWPIE, KewpieRunner, make_workdir, tagged
from tests.fixtures.fleet import Fleet
from tests.fixtures.hunt.planted import CRASH_GRAMMAR, build_plugin_dir, remove_plugin_dir
from tests.integration.test_history_page import browser  # noqa: F401 - the fixture

SUITE_TESTS = {"fleet.a_version_test", "fleet.b_schemas_test", "fleet.c_table_test",
               "fleet.d_json_test"}
WORKERS = ["worker-1", "worker-2"]
pytestmark = pytest.mark.timeout(900)


@pytest.fixture
def store(kewpie):
    """A MariaDB server kewpie starts, with a user whose password only the DSN has."""
    started = kewpie.run("--suitepath=" + FIXTURE_SUITES, "--suite=fleet", "--start-and-exit")
    assert started.returncode == 0, started.stdout[-3000:]
    port = int(re.findall(r"INFO MASTER_PORT: (\d+)", started.stdout)[0])
    try:
        conn = pymysql.connect(host="127.0.0.1", port=port, user="root")
        with conn.cursor() as cur:
            cur.execute("CREATE DATABASE kewpie_fleet")
            cur.execute("CREATE USER 'fleet'@'127.0.0.1' IDENTIFIED BY 'fleet-s3cret'")
            cur.execute("GRANT ALL ON kewpie_fleet.* TO 'fleet'@'127.0.0.1'")
        conn.close()
        _schema_3(port)
        yield port
    finally:
        clean = kewpie.run("--mode=cleanup")
        assert clean.returncode == 0, clean.stdout


def _schema_3(port: int) -> None:
    """Make the store one of schema version 3 (before the findings): the fleet's first
    kewpie upgrades it on the server."""
    from lib.history.store import open_engine
    from lib.history.target import StoreTarget
    open_engine(StoreTarget(dsn=f"mysql://root@127.0.0.1:{port}/kewpie_fleet"), writer=True,
                create=True).dispose()
    conn = pymysql.connect(host="127.0.0.1", port=port, user="root", database="kewpie_fleet")
    with conn.cursor() as cur:
        cur.execute("DROP TABLE history_sightings, history_findings")
        cur.execute("UPDATE history_meta SET value = '3' WHERE name = 'schema_version'")
    conn.commit()
    conn.close()


@pytest.fixture
def fleet(store, tmp_path_factory):
    """The master and two workers, stopped (by pid) after the test."""
    base = os.path.dirname(make_workdir(tmp_path_factory, "fleet"))
    plugins = build_plugin_dir()
    lease = PortLeaser(default_lock_dir(), 24600).lease()
    bases = PortLeaser(default_lock_dir(), 25000)  # each worker's kewpie base port
    settings = {
        "KEWPIE_FLEET_CHECKOUT": os.path.dirname(KEWPIE),
        "KEWPIE_FLEET_SUITES": "fleet",
        "KEWPIE_FLEET_SUITE_ARGS": f"--suitepath={FIXTURE_SUITES} --force",
        # the trial's budget is statements, not seconds: the grammar crashes the server
        # within ~10 (its 3rd insert, then a check), however slow a loaded machine is
        "KEWPIE_FLEET_HUNT_ARGS": f"--grammar={CRASH_GRAMMAR} --threads=1 --trials=1 "
                                  f"--queries=500 --trial-duration=300 "
                                  f"--mysqld=--plugin-dir={plugins}",
        "KEWPIE_FLEET_BASE_PORTS": ",".join(f"{w}={bases.base_port + 400 * i}"
                                            for i, w in enumerate(WORKERS)),
        "KEWPIE_FLEET_JOB": "kewpie-fleet-test", "KEWPIE_FLEET_REDUCE": "1",
        "KEWPIE_FLEET_EVIDENCE_URL": f"file://{base}/master/fleet"}
    fleet = Fleet(base, WORKERS, f"mysql://fleet:fleet-s3cret@127.0.0.1:{store}/kewpie_fleet",
                  settings, lease.port(0), lease.port(1))
    try:
        fleet.start()
        yield fleet
    finally:
        fleet.stop()
        lease.release()
        remove_plugin_dir(plugins)
        left = [p.pid for w in WORKERS for b in ("kewpie-shard", "kewpie-hunt")
                for p in tagged(os.path.join(base, w, b, "build", "workdir"))]
        assert not left, f"processes of the workers left running: {left}"


def _query(port: int, sql: str) -> list[tuple]:
    conn = pymysql.connect(host="127.0.0.1", port=port, user="root", database="kewpie_fleet")
    try:
        with conn.cursor() as cur:
            cur.execute(sql)
            return list(cur.fetchall())
    finally:
        conn.close()


def test_a_fleet_build_shards_the_suite_and_finds_the_crash_once(fleet, store, browser,
                                                                  tmp_path):
    build = fleet.wait_build(480)
    shards, hunts = fleet.builds("kewpie-shard"), fleet.builds("kewpie-hunt")
    detail = "\n".join(f"{b['state_string']} {b['properties'].get('workername')}"
                       for b in [build, *shards, *hunts])
    assert build["results"] in (0, 1), detail + fleet.output("master")  # success / warnings
    assert sorted(b["properties"]["workername"][0] for b in shards) == WORKERS, detail
    assert sorted(b["properties"]["workername"][0] for b in hunts) == WORKERS, detail
    seeds = {b["properties"]["hunt"][0] for b in hunts}
    assert len(seeds) == 2, detail

    runs = _query(store, "SELECT r.shard, JSON_VALUE(r.labels, '$.node'), x.test, x.status"
                         " FROM history_results x JOIN history_runs r ON r.id = x.run_id"
                         " WHERE r.mode = 'native'")
    by_shard: dict[str, set[str]] = {}
    for shard, node, test, status in runs:
        assert status == "pass", runs
        by_shard.setdefault(f"{shard}@{node}", set()).add(test)
    assert sorted(by_shard) == ["1/2@worker-1", "2/2@worker-2"], by_shard
    one, two = by_shard.values()
    assert one and two and not one & two and one | two == SUITE_TESTS, by_shard
    urls = _query(store, "SELECT build_url, job, build FROM history_runs WHERE mode = 'native'")
    for url, job, number in urls:  # each run names its shard build's page and the fleet build
        assert re.fullmatch(rf"http://127\.0\.0\.1:{fleet.www_port}/#/builders/\d+/builds/\d+",
                            url) and (job, number) == ("kewpie-fleet-test", build["number"]), urls
    junit = os.path.join(fleet.master_dir, "fleet", str(build["number"]), "junit")
    assert sorted(os.listdir(junit)) == ["hunt-1-worker-1.xml", "hunt-2-worker-2.xml",
                                         "shard-1-worker-1.xml", "shard-2-worker-2.xml"]

    assert _query(store, "SELECT value FROM history_meta WHERE name = 'schema_version'") == \
        [("4",)]  # upgraded from 3 by the fleet's first kewpie
    found = _query(store, "SELECT signature, count, kind FROM history_findings")
    hunted = fleet.hunt_summary()  # each worker's trials, findings, results stored or spooled
    assert len(found) == 1 and found[0][1] >= 2 and found[0][2] == "crash", f"{found}\n{hunted}"
    signature = found[0][0]
    seen = _query(store, "SELECT machine, folder FROM history_sightings ORDER BY 1")
    assert sorted({m for m, _ in seen}) == WORKERS, f"{seen}\n{hunted}"
    for _, folder in seen:  # on the master, uploaded: evidence that outlives the worker
        assert folder.startswith(f"file://{fleet.master_dir}/fleet/"), folder
        assert os.path.exists(os.path.join(folder[len("file://"):], "finding.json")), folder
    _commands_answer(store, signature)
    _reduced_once(fleet, store, signature)
    _page_shows(store, signature, browser, tmp_path)
    assert "fleet-s3cret" not in fleet.output("master", tail=10 ** 7)


def _commands_answer(port: int, signature: str) -> None:
    """``kewpie history findings`` and ``failures --signature`` over the fleet's store."""
    env = dict(os.environ, KEWPIE_NO_VENV="1",
               KEWPIE_HISTORY_DSN=f"mysql://fleet:fleet-s3cret@127.0.0.1:{port}/kewpie_fleet")
    run = [sys.executable, KEWPIE, "history"]
    found = subprocess.run([*run, "findings", "--machine", "worker-2"], env=env, text=True,
                           capture_output=True, timeout=120, stdin=subprocess.DEVNULL)
    assert found.returncode == 0, found.stdout + found.stderr
    line, = [l for l in found.stdout.splitlines() if signature in l]
    assert re.search(rf"\s(\d+)\s+crash\s+{signature}\s+new\s+worker-1,worker-2\s", line), \
        found.stdout
    trials = subprocess.run([*run, "failures", "--signature", signature, "--status", "all"],
                            env=env, text=True, capture_output=True, timeout=120,
                            stdin=subprocess.DEVNULL)
    assert trials.returncode == 0 and trials.stdout.count("hunt.planted_crash") >= 2, trials.stdout


def _reduced_once(fleet, port: int, signature: str) -> None:
    """Both workers found the crash; one reduced it, the other was told by the store."""
    (state, owner, case), = _query(port, "SELECT reduction, reduction_owner, reduced_case "
                                         "FROM history_findings")
    assert state == "done" and case.endswith("reduced.test"), (state, owner, case)
    assert case.startswith("file://") and os.path.exists(case[len("file://"):]), case
    reduced = [w for w in WORKERS for _ in glob.glob(os.path.join(
        fleet.base, w, "kewpie-hunt", "build", "workdir", "hunt", "*", "findings", "*",
        "reduce", "reduce.json"))]
    assert len(reduced) == 1 and owner.startswith(reduced[0] + " "), (reduced, owner)


def _page_shows(port: int, signature: str, browser, tmp_path) -> None:  # noqa: F811
    """The Findings page, served over the store, in chromium: one row for the crash with
    its count and both workers; its page lists a sighting per finding folder."""
    from selenium.webdriver.common.by import By
    env = dict(os.environ, KEWPIE_NO_VENV="1",
               KEWPIE_HISTORY_DSN=f"mysql://fleet:fleet-s3cret@127.0.0.1:{port}/kewpie_fleet")
    proc = subprocess.Popen([sys.executable, KEWPIE, "history", "serve"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            stdin=subprocess.DEVNULL)
    try:
        line = proc.stdout.readline()
        assert "serving" in line and "fleet-s3cret" not in line, line
        url = line.split(" on ")[1].split()[0]
        browser.get(url + "findings")
        rows = browser.find_elements(By.CSS_SELECTOR, "tr.finding")
        assert len(rows) == 1, browser.page_source[-3000:]
        assert rows[0].find_element(By.CSS_SELECTOR, "a.finding-link").text == signature
        assert int(rows[0].find_element(By.CSS_SELECTOR, ".finding-count").text) >= 2
        assert rows[0].find_element(By.CSS_SELECTOR, ".finding-machines").text == \
            "worker-1, worker-2"
        browser.save_screenshot(str(tmp_path / "findings.png"))
        print(f"screenshot: {tmp_path / 'findings.png'}")
        rows[0].find_element(By.CSS_SELECTOR, "a.finding-link").click()
        assert len(browser.find_elements(By.CSS_SELECTOR, "tr.sighting")) >= 2
        assert "fleet-s3cret" not in browser.page_source
    finally:
        proc.terminate()
        proc.wait(timeout=30)
