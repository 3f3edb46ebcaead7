"""The cross-reference page in a real browser: Debian's chromium, headless and with
JavaScript OFF, driven by selenium against ``kewpie history serve``: a failure searched
by its text (evidence still on disk a link, pruned evidence marked so), a test's page
with its pass/fail strip and duration plot, the flaky table and a sweep's plot.  A screenshot of each page is saved in the test's tmp dir (the
paths are printed and recorded as JUnit properties).

Covers: lib/history/web.py, lib/history/serve.py, lib/history/templates/, lib/history/svgplot.py
"""
import os
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from urllib.parse import quote

import pytest

from tests.conftest import KEWPIE

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"


def evidence_of(store: str, n: int) -> str:
    """Run n's evidence folder, beside the store."""
    return os.path.join(os.path.dirname(store), "wd", "failed", f"run{n}")


def fill_store(path: str) -> None:
    """Eight runs through the writer API: a test that fails every other run with a lock
    wait timeout, a steady one getting slower, a crash, and a sweep.  The failures'
    evidence is under ``wd/failed/`` beside the store: the last two failing runs' folders
    are on disk, the older ones pruned (lib/run/evidence.py keeps the last runs')."""
    import logging
    from lib.history.records import RunInfo, new_run_uuid, utcnow
    from lib.history.store import open_engine
    from lib.history.sweeps import SweepStore
    from lib.history.target import StoreTarget
    from lib.history.writer import HistoryWriter
    target = StoreTarget(sqlite_path=path)
    start = utcnow() - timedelta(days=8)
    for n in (4, 6):
        os.makedirs(evidence_of(path, n))
    for n in range(8):
        run = RunInfo(new_run_uuid(), started_at=start + timedelta(days=n), mode="native",
                      branch="10.11" if n % 2 else "main", tree_version="10.11.19",
                      platform="debian-12-x86_64", host=f"agent{n % 3}")
        writer = HistoryWriter(target, run, os.path.join(os.path.dirname(path), "spool"),
                               logging.getLogger("test"), background=False)
        at = run.started_at + timedelta(minutes=10)
        failed = n % 2 == 0
        writer.record_result("innodb.lock_wait", "fail" if failed else "pass", 900 + 40 * n,
                             failure="innodb.lock_wait.LockWait.test_wait:\nAssertionError: "
                                     "Lock wait timeout exceeded; try restarting transaction"
                             if failed else "", finished_at=at,
                             evidence=evidence_of(path, n) if failed else "")
        writer.record_result("main.steady", "pass", 2000 + 150 * n, finished_at=at)
        if n == 5:
            writer.record_result("galera.sst_crash", "timeout", 60000, finished_at=at,
                                 failure="galera.sst_crash: timed out after 60 s")
        writer.close(exit_code=1 if n % 2 == 0 else 0)
    engine = open_engine(target, writer=True)
    SweepStore(engine).save("read_only", "nightly", "k1", {"workload": "oltp_read_only"},
                            {"versions": ["10.11.19"]},
                            [{"version": "10.11.19", "value": None, "threads": t, "rep": 1,
                              "tps": 900.0 * t ** 0.8, "lat_pct": 2.0 + t / 4,
                              "result": {}} for t in (1, 2, 4, 8, 16)])
    engine.dispose()


@pytest.fixture
def served(tmp_path):
    """``kewpie history serve`` over a filled store; yields its URL and the store's path,
    stops it after."""
    store = str(tmp_path / "history.sqlite")
    fill_store(store)
    proc = subprocess.Popen([sys.executable, KEWPIE, "history", "serve", f"--history={store}"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=dict(os.environ, KEWPIE_NO_VENV="1"), stdin=subprocess.DEVNULL)
    try:
        line = proc.stdout.readline()  # the server says where it listens, once it does
        assert "serving" in line, line + proc.stdout.read()
        yield line.split(" on ")[1].split()[0], store
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture
def browser():
    """Headless chromium with JavaScript off and a fresh profile."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    if not (os.access(CHROMIUM, os.X_OK) and os.access(CHROMEDRIVER, os.X_OK)):
        pytest.fail("chromium and chromium-driver are missing: run scripts/setup.sh")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    profile = tempfile.mkdtemp(prefix="kewpie-chromium-")
    for arg in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-first-run",
                f"--user-data-dir={profile}", "--window-size=1366,900"):
        options.add_argument(arg)
    options.add_experimental_option("prefs", {"profile.managed_default_content_settings.javascript": 2})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()
        import shutil
        shutil.rmtree(profile, ignore_errors=True)


def _shot(driver, out, name: str, record_property) -> str:
    """Save the page's screenshot in the test's output: its tmp dir, the path printed and
    recorded as a property (JUnit's <properties>)."""
    path = os.path.join(out, f"{name}.png")
    driver.save_screenshot(path)
    print(f"screenshot: {path}")
    record_property(f"screenshot-{name}", path)
    return path


def _follow(driver, element, ready: str) -> None:
    """Click a link or a submit button, then wait for the page it loads: the old page's
    document gone, the new one loaded and its element ``ready`` (CSS) there.  A click
    returns once the browser has it, not always once the navigation it starts has begun."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import WebDriverWait
    old = driver.find_element(By.TAG_NAME, "html")
    element.click()
    wait = WebDriverWait(driver, 60)
    wait.until(EC.staleness_of(old))
    wait.until(lambda d: d.execute_script("return document.readyState") == "complete")
    wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, ready)))


def test_search_a_failure_then_open_its_test_page(served, browser, tmp_path, record_property):
    from selenium.webdriver.common.by import By
    out = str(tmp_path / "screenshots")
    os.makedirs(out)
    shot = lambda name: _shot(browser, out, name, record_property)  # noqa: E731
    url, store = served
    browser.get(url)
    browser.find_element(By.ID, "failure").send_keys("*lock wait timeout*")
    browser.find_element(By.ID, "branch").send_keys("main")
    # a plain GET form: no script runs
    _follow(browser, browser.find_element(By.ID, "search"), "table.results")
    rows = browser.find_elements(By.CSS_SELECTOR, "table.results tr.result")
    assert len(rows) == 4, browser.page_source[:3000]  # runs 0, 2, 4, 6 (branch main)
    assert "failure=*lock+wait+timeout*&branch=main" in browser.current_url  # a GET form
    whens = [r.find_element(By.CSS_SELECTOR, "td.when").text for r in rows]
    assert whens == sorted(whens, reverse=True)  # newest first
    assert rows[0].find_element(By.LINK_TEXT, "evidence").get_attribute("href") == \
        "file://" + quote(evidence_of(store, 6))   # still on disk: a link
    pruned = rows[-1].find_element(By.CSS_SELECTOR, "span.pruned")   # run 0's: pruned
    assert pruned.text == "evidence (pruned)" and not rows[-1].find_elements(By.LINK_TEXT, "evidence")
    assert pruned.get_attribute("title") == f"{evidence_of(store, 0)}: pruned, no longer on disk"
    shot("search")

    _follow(browser, rows[0].find_element(By.CSS_SELECTOR, "a.test-link"), "#test-name")
    assert browser.find_element(By.ID, "test-name").text == "innodb.lock_wait"
    cells = browser.find_elements(By.CSS_SELECTOR, "#strip rect.cell")
    colors = [c.get_attribute("fill") for c in cells]
    assert colors == ["#d62728", "#2e9d4a"] * 4  # oldest to newest: fail, pass, ...
    assert browser.find_elements(By.CSS_SELECTOR, "#duration-plot polyline.series")
    assert len(browser.find_elements(By.CSS_SELECTOR, "#duration-plot circle")) == 8
    assert "failure rate 50.0%" in browser.find_element(By.TAG_NAME, "main").text
    shot("test")

    _follow(browser, browser.find_element(By.LINK_TEXT, "Flaky"), "#flaky")
    table = browser.find_element(By.ID, "flaky").text
    assert "innodb.lock_wait" in table and "50.0% (4/8)" in table and "main.steady" not in table
    shot("flaky")

    _follow(browser, browser.find_element(By.LINK_TEXT, "Sweeps"), "svg.plot")
    assert browser.find_elements(By.CSS_SELECTOR, "svg.plot polyline.series")
    shot("sweeps")
    for name in ("search", "test", "flaky", "sweeps"):
        assert os.path.getsize(os.path.join(out, f"{name}.png")) > 10000
