"""--mode=replay on real servers: a small corpus of MariaDB QA's reproducers (read from
../shared/mariadb-qa/BUGS: one that crashes both trees, one that does not, one fixed
between them, and a bad file) replayed on 10.11.19 and trees/10.11.18 in one run --
the matrix, the JUnit report, the known-bugs file of the crashes, the results
history and its page for one bug in chromium (headless, JavaScript off); bad input
(one ERROR line, exit 2, nothing left running); and a hunt finding of a listed bug
(the crashing reproducer as a one-rule grammar) tagged known with its MDEV from
known_bugs.strings.

Covers: lib/modes/replay/, lib/replay/, lib/history/replays.py,
lib/history/templates/bugs.html, lib/history/templates/bug.html, lib/hunt/bugmatch.py,
lib/hunt/kbstrings.py, scripts/get-tree (the MyRocks plugin in the other tree)
"""
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from tests.conftest import KEWPIE, OLD_VERSION, ROOT, KewpieRunner, make_workdir, tagged
from tests.integration.test_history_page import _follow, _shot, browser  # noqa: F401

SHARED = os.path.normpath(os.path.join(ROOT, "..", "shared", "mariadb-qa"))
BUGS = os.path.join(SHARED, "BUGS")
KNOWN = os.path.join(SHARED, "known_bugs.strings")
CRASHES = "MDEV-36990"          # SIGFPE in TABLE::init_cost_info_for_usable_range_rowid_filters
CLEAN = "MDEV-15178"            # no crash on either tree
FIXED = "MDEV-40432"            # SIGFPE in Item_sum_ntile::val_int on 10.11.18, fixed in 10.11.19
NEW = "10.11.19"


def _corpus(folder):
    """A corpus folder: three reproducers of BUGS (linked) and a binary file."""
    os.makedirs(folder)
    for name in (CRASHES, CLEAN, FIXED):
        os.symlink(os.path.join(BUGS, f"{name}.sql"), os.path.join(folder, f"{name}.sql"))
    with open(os.path.join(folder, "MDEV-2.sql"), "wb") as fh:
        fh.write(b"\x7fELF\x00\x01\x02 not sql")
    return folder


@pytest.fixture(scope="module")
def replayed(tmp_path_factory, old_tree):
    """One replay of the small corpus on both trees: (runner, its output, paths)."""
    if not os.path.isdir(BUGS):
        pytest.fail(f"{BUGS} is missing: the shared mariadb-qa snapshot is needed")
    base = tmp_path_factory.mktemp("replay")
    runner = KewpieRunner(make_workdir(tmp_path_factory, "replay-wd"))
    corpus = _corpus(str(base / "corpus"))
    out, junit, store = str(base / "out"), str(base / "replay.xml"), str(base / "history.sqlite")
    ran = runner.run("--mode=replay", corpus, f"--known-bugs={KNOWN}", "--parallel=2",
                     "--replay-timeout=60", f"--replay-out={out}", f"--junit-xml={junit}",
                     f"--history={store}", timeout=600)
    leftovers = tagged(runner.workdir)
    for proc in leftovers:
        proc.kill()
    assert not leftovers, f"servers left running: {[p.pid for p in leftovers]}"
    return runner, ran, {"out": out, "junit": junit, "store": store, "corpus": corpus}


def test_small_corpus_on_both_trees(replayed):
    _, ran, paths = replayed
    text = ran.stdout + ran.stderr
    assert ran.returncode == 1, text[-4000:]            # a reproducer crashes 10.11.19
    assert re.search(rf"Replaying 3 reproducer\(s\) on 2 code tree\(s\) \({NEW} /usr, "
                     rf"{OLD_VERSION} \S+\)", text), text[-4000:]
    assert "skipped 1 file(s) of the corpus: MDEV-2.sql: not SQL: it holds NUL bytes" in text
    doc = json.load(open(os.path.join(paths["out"], "replay.json")))
    assert doc["trees"] == [NEW, OLD_VERSION]
    rows = {r["name"]: r["trees"] for r in doc["rows"]}
    assert sorted(rows) == sorted([CLEAN, FIXED, CRASHES])
    # the crash: present on both trees with one signature, its UniqueID, its own MDEV
    crash = rows[CRASHES]
    assert [crash[t]["state"] for t in (NEW, OLD_VERSION)] == ["present", "present"]
    assert crash[NEW]["signature"]["id"] == crash[OLD_VERSION]["signature"]["id"]
    uid = crash[NEW]["unique_id"]["text"]
    assert uid.startswith("SIGFPE|TABLE::init_cost_info_for_usable_range_rowid_filters|")
    assert crash[NEW]["known"]["tag"] == "known"
    assert crash[NEW]["known"]["match"]["bug_ids"] == [CRASHES]
    assert crash[NEW]["known"]["match"]["quality"] in ("exact", "similar")
    assert os.path.isfile(os.path.join(crash[NEW]["evidence"], "crash-report-s0.txt"))
    # the clean one absent on both, the fixed one present on 10.11.18 only
    assert [rows[CLEAN][t]["state"] for t in (NEW, OLD_VERSION)] == ["absent", "absent"]
    assert [rows[FIXED][t]["state"] for t in (NEW, OLD_VERSION)] == ["absent", "present"]
    assert f"present in {OLD_VERSION}, absent in {NEW}: 1: {FIXED}" in text
    assert doc["counts"][NEW]["crash"] == 1 and doc["counts"][OLD_VERSION]["crash"] == 2
    assert doc["skipped"][0]["reason"].startswith("not SQL")
    # the replay's summary ends as every run's does: the RAM cache's size and cap
    assert re.search(r"INFO Cache \S+: \d+ MB \(cap \d+ MB; \d+ datadir template\(s\), "
                     r"\d+ cluster snapshot\(s\)\); --mode=cleanup --drop-cache empties it$",
                     text, re.M), text[-2000:]
    # the terminal's matrix names the bug a known-bugs line gave it
    line = next(ln for ln in text.splitlines() if re.search(rf"INFO {CRASHES}\s+crash ", ln))
    assert f"{CRASHES} (" in line.split("crash")[-1]
    # JUnit: per tree, a failure for a reproduction with its UniqueID
    suites = {s.get("name"): s for s in ET.parse(paths["junit"]).getroot().iter("testsuite")}
    assert set(suites) == {f"replay.{NEW}", f"replay.{OLD_VERSION}"}
    failures = [c for c in suites[f"replay.{NEW}"].iter("testcase") if c.find("failure") is not None]
    assert [c.get("name") for c in failures] == [CRASHES]
    assert f"UniqueID: {uid}" in failures[0].find("failure").text
    # the known-bugs file of the crashes is one kewpie reads, ready for a hunt
    from lib.hunt.knownbugs import KnownBugs
    kb = os.path.join(paths["out"], "known_bugs.txt")
    entries = KnownBugs.load([kb]).entries
    assert {e.bug_id for e in entries} == {CRASHES, FIXED}
    assert any(e.match == f"uid:{uid}" for e in entries)


def test_history_page_of_a_bug_in_chromium(replayed, browser, tmp_path,  # noqa: F811
                                           record_property):
    from selenium.webdriver.common.by import By
    _, _, paths = replayed
    proc = subprocess.Popen([sys.executable, KEWPIE, "history", "serve",
                             f"--history={paths['store']}"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, stdin=subprocess.DEVNULL,
                            env=dict(os.environ, KEWPIE_NO_VENV="1"))
    try:
        line = proc.stdout.readline()
        assert "serving" in line, line + proc.stdout.read()
        url = line.split(" on ")[1].split()[0]
        out = str(tmp_path / "screenshots")
        os.makedirs(out)
        browser.get(url)
        _follow(browser, browser.find_element(By.LINK_TEXT, "Bugs"), "table.bugs")
        browser.find_element(By.ID, "bug-query").send_keys("SIGFPE|TABLE::init_cost_info")
        _follow(browser, browser.find_element(By.CSS_SELECTOR, "form.search button"),
                "table.bugs")
        names = [a.text for a in browser.find_elements(By.CSS_SELECTOR, "a.bug-link")]
        assert names == [CRASHES], browser.page_source[:3000]   # found by its UniqueID
        _shot(browser, out, "bugs", record_property)
        _follow(browser, browser.find_element(By.LINK_TEXT, CRASHES), "#bug-name")
        latest = browser.find_element(By.ID, "bug-latest").text
        assert f"{NEW}: fail present (crash)" in latest
        assert f"{OLD_VERSION}: fail present (crash)" in latest
        assert "SIGFPE|TABLE::init_cost_info_for_usable_range_rowid_filters" in \
            browser.find_element(By.ID, "bug-unique-ids").text
        assert len(browser.find_elements(By.CSS_SELECTOR, "tr.bug-run")) == 1
        _shot(browser, out, "bug", record_property)
        # searched by its MDEV, the fixed one shows absent on 10.11.19
        browser.get(url.rstrip("/") + f"/bugs?q={FIXED}")
        row = browser.find_element(By.CSS_SELECTOR, "tr.bug").text
        assert "absent" in row and "present" in row
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_bad_input(kewpie, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    binary = tmp_path / "MDEV-1.sql"
    binary.write_bytes(b"\x00\x01\x02")
    broken = tmp_path / "kb.strings"
    broken.write_text("SIGSEGV|a|b ## MDEV-1\n<<<<<<< HEAD\n")
    for args, words in (([str(empty)], "no reproducer in it"),
                        ([str(tmp_path / "nowhere")], "no such file or folder"),
                        ([str(binary)], "not SQL: it holds NUL bytes"),
                        ([], "needs the corpus"),
                        ([os.path.join(BUGS, f"{CLEAN}.sql"), f"--known-bugs={broken}"],
                         "kb.strings:2: a merge-conflict marker"),
                        ([os.path.join(BUGS, f"{CLEAN}.sql"), "--replay-timeout=0"],
                         "--replay-timeout must be")):
        ran = kewpie.run("--mode=replay", *args, timeout=120)
        errors = [ln for ln in (ran.stdout + ran.stderr).splitlines() if " ERROR " in ln]
        assert ran.returncode == 2 and len(errors) == 1 and words in errors[0], \
            (args, ran.stdout[-2000:], ran.stderr[-2000:])


def _one_rule_grammar(reproducer: str, path: str) -> str:
    """The reproducer's statements as one randgen rule (``query``), written to path."""
    statements = [ln.strip().rstrip(";") for ln in open(reproducer, encoding="utf-8")
                  if ln.strip() and not ln.lstrip().startswith("#")]
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("query:\n\t" + " ; ".join(statements) + " ;\n")
    return path


def test_hunt_finding_of_a_listed_bug_is_known_with_its_mdev(kewpie, tmp_path):
    grammar = _one_rule_grammar(os.path.join(BUGS, f"{CRASHES}.sql"),
                                str(tmp_path / "reproducer.yy"))
    ran = kewpie.run("--mode=hunt", f"--grammar={grammar}", "--trials=1", "--threads=1",
                     "--queries=1", "--trial-duration=60", f"--known-bugs={KNOWN}",
                     "--allow-known", timeout=300)
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-2000:]
    folder = re.search(r"^\d{8}-\d{6} INFO     (/\S+/findings/t\d{4}-\d+-crash-\w+)$",
                       ran.stdout, re.M).group(1)
    found = json.load(open(os.path.join(folder, "finding.json")))
    assert found["tag"] == "known" and found["bug"]["id"] == CRASHES
    assert found["unique_id"].startswith("SIGFPE|TABLE::init_cost_info_for_usable_range")
    assert found["known_match"]["bug_ids"] == [CRASHES]
    assert found["bug"]["file"] == KNOWN and found["bug"]["quality"]
    assert f"UniqueID: {found['unique_id']}" in ran.stdout
