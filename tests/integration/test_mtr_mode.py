"""--mode=mtr (issue 15): the server's own mysql-test cases run by mariadb-test on servers
kewpie starts.

One kewpie run (two bots) covers the slice; each test below reads its rows:
a plain fixture test, a real test with an .opt file, a real test that restarts
its server through the expect-file protocol, a real test that skips itself, a
fixture test whose result differs ([ fail ] with the unified diff), one real
multi-server rpl test (its suite's my.cnf with @mysqld.N templates), a case of a
nested suite (compat/oracle), one whose -master.opt has a bare --log-error and one
whose -master.opt names a relative log file (issue 34); kewpie writes nothing into
its working directory.  Runs of their own: a crash of a known bug and a case past
--test-timeout (the attempt pipeline's known-bugs lookup and watchdog), --list, a
bad name, --ps-protocol, --valgrind, the run order, a left replication source, and
the second lane.
Skipped when Debian's mariadb-test package (scripts/setup.sh) is missing.

Covers: lib/modes/mtr/run.py, lib/modes/mtr/lane.py, lib/mtr/, lib/run/mtr_junit.py,
lib/run/attempt.py (mtr cases through it)
"""
import glob
import os
import re
import shutil

import pytest

from tests.conftest import ROOT, KewpieRunner, make_workdir, tagged

MTR_ROOT = "/usr/share/mysql/mysql-test"
FIXTURE = os.path.join(ROOT, "tests", "fixtures", "mtr", "kw_mtr")
FIXTURE_PATH = f"--suitepath={os.path.dirname(FIXTURE)}"  # the fixture suite is named kw_mtr
NESTED = "compat/oracle.func_add_months"                 # a nested suite name (issue 34)
BARE_LOG_ERROR = "binlog.binlog_stm_unsafe_warning,stmt"  # -master.opt: a bare --log-error
NAMED_LOG_ERROR = "sys_vars.myisam_data_pointer_size_func"  # -master.opt: --log-error='dummy.log'
SLICE = ["kw_mtr.plain", "kw_mtr.differs", "kw_mtr.leaves_state", "kw_mtr.disabled_one",
         "main.my_getopt_case_insensitive", "main.comment_database", "main.auth_named_pipe",
         "rpl.rpl_charset,row", NESTED, BARE_LOG_ERROR, NAMED_LOG_ERROR]

pytestmark = pytest.mark.skipif(
    not (shutil.which("mariadb-test") and os.path.isfile(os.path.join(MTR_ROOT, "mysql-test-run.pl"))),
    reason="mariadb-test (Debian package mariadb-test, installed by scripts/setup.sh) is not installed")


def _rows(out: str) -> dict[str, tuple[str, str]]:
    """test -> (status, the lines reported under its row)."""
    rows: dict[str, tuple[str, list[str]]] = {}
    last = None
    for line in out.splitlines():
        row = re.search(r"INFO (\S+)\s+(?:bot\d+\s+)?\[ (\w+) \]\s+\d+$", line)
        if row:
            last = row.group(1)
            rows[last] = (row.group(2), [])
            continue
        if last and re.search(r"INFO =====", line):
            last = None
        elif last:
            rows[last][1].append(line.split(" INFO ", 1)[-1])
    return {name: (status, "\n".join(lines)) for name, (status, lines) in rows.items()}


@pytest.fixture(scope="module")
def mtr_run(tmp_path_factory):
    """One --mode=mtr run of the slice on two bots; (exit status, output, rows, workdir)."""
    workdir = make_workdir(tmp_path_factory, "mtr_mode")
    runner = KewpieRunner(workdir)
    junit = os.path.join(os.path.dirname(workdir), "mtr.xml")
    xml = os.path.join(os.path.dirname(workdir), "mtr-report.xml")  # mtr's own dialect
    cwd = os.path.join(os.path.dirname(workdir), "cwd")  # kewpie's working directory
    os.mkdir(cwd)
    proc = runner.run("--mode=mtr", "--force", "--parallel=2", f"--junit-xml={junit}",
                      f"--xml-report={xml}",
                      FIXTURE_PATH, "--suite=main,rpl,kw_mtr", *SLICE, timeout=240, cwd=cwd)
    yield proc.returncode, proc.stdout, _rows(proc.stdout), workdir, junit
    assert os.listdir(cwd) == [], "kewpie wrote into its working directory"
    assert not tagged(workdir), "servers left running"
    from lib.platform.workdir import Workdir
    Workdir(workdir).remove_shm()


def test_exit_status_and_summary(mtr_run):
    rc, out, rows, _, junit = mtr_run
    assert rc == 1, out[-4000:]  # the failing cases fail the run
    assert set(rows) == set(SLICE), out[-4000:]
    assert "FAILED TESTS: kw_mtr.differs kw_mtr.leaves_state" in out or \
        "FAILED TESTS: kw_mtr.leaves_state kw_mtr.differs" in out
    with open(junit) as fh:
        assert "kw_mtr.differs" in fh.read()


def test_xml_report_in_mtrs_dialect_and_the_history(mtr_run):
    import sqlite3
    import xml.etree.ElementTree as ET
    _, _, _, workdir, _ = mtr_run
    root = ET.parse(os.path.join(os.path.dirname(workdir), "mtr-report.xml")).getroot()
    cases = {(c.get("classname"), c.get("name"), c.get("combinations")): c
             for c in root.iter("testcase")}
    assert cases[("kw_mtr", "differs", "")].get("status") == "MTR_RES_FAILED"
    assert cases[("kw_mtr", "differs", "")].find("failure").get("type") == "MTR_RES_FAILED"
    assert cases[("rpl", "rpl_charset", "row")].get("status") == "MTR_RES_PASSED"
    assert cases[("kw_mtr", "disabled_one", "")].find("disabled") is not None
    history = sqlite3.connect(os.path.join(workdir, "history.sqlite"))
    stored = set(history.execute("SELECT test, combination, status FROM history_results"))
    assert ("rpl.rpl_charset", "row", "pass") in stored and ("kw_mtr.differs", "", "fail") in stored
    assert history.execute("SELECT mode FROM history_runs").fetchall() == [("mtr",)]


def test_nested_suite_name_runs(mtr_run):
    """compat/oracle is how mtr names the suite; its case runs and passes."""
    _, out, rows, _, junit = mtr_run
    assert rows[NESTED][0] == "pass", rows.get(NESTED, out[-3000:])
    with open(junit) as fh:
        assert 'classname="compat/oracle"' in fh.read()


def test_bare_log_error_case_passes(mtr_run):
    """binlog.binlog_stm_unsafe_warning's bare --log-error sends mysqld's log to its
    default place (run/mysqld.err, from the pid file's name): kewpie waits for the server
    there, as mtr does, instead of timing out, and the test reads its warnings there."""
    _, out, rows, _, _ = mtr_run
    assert rows[BARE_LOG_ERROR][0] == "pass", rows.get(BARE_LOG_ERROR, out[-3000:])


def test_named_log_error_case_passes_and_writes_in_the_datadir(mtr_run):
    """sys_vars.myisam_data_pointer_size_func's --log-error='dummy.log' is the datadir's
    file, as mysqld makes it; the server's output and CURRENT_TEST go to the config's log
    (as under mtr), never into kewpie's working directory (checked as the run ends)."""
    _, out, rows, _, _ = mtr_run
    assert rows[NAMED_LOG_ERROR][0] == "pass", rows.get(NAMED_LOG_ERROR, out[-3000:])


def test_plain_fixture_passes(mtr_run):
    assert mtr_run[2]["kw_mtr.plain"][0] == "pass"


def test_opt_file_reaches_the_server(mtr_run):
    # main.my_getopt_case_insensitive.opt: --slOw_QuEry_loG=OFF, checked by the test
    assert mtr_run[2]["main.my_getopt_case_insensitive"][0] == "pass", mtr_run[2]


def test_restart_protocol(mtr_run):
    # main.comment_database removes db.opt, then include/restart_mysqld.inc (expect file)
    assert mtr_run[2]["main.comment_database"][0] == "pass", mtr_run[2]["main.comment_database"]


def test_skip_with_reason(mtr_run):
    status, text = mtr_run[2]["main.auth_named_pipe"]
    assert status == "skipped" and "Need windows" in text


def test_disabled_def(mtr_run):
    status, text = mtr_run[2]["kw_mtr.disabled_one"]
    assert status == "skipped" and "listed as disabled" in text


def test_result_difference_fails_with_unified_diff(mtr_run):
    _, _, rows, workdir, _ = mtr_run
    status, text = rows["kw_mtr.differs"]
    assert status == "fail"
    assert "differs.result" in text and "differs.reject" in text
    assert "\n-3\n+2\n" in text, text
    evidence = os.path.join(workdir, "failed", "latest", "kw_mtr.differs")
    assert os.path.isfile(os.path.join(evidence, "failure.txt"))
    assert os.path.isfile(os.path.join(evidence, "tool_logs", "differs.reject"))


def test_state_left_behind_is_reported(mtr_run):
    status, text = mtr_run[2]["kw_mtr.leaves_state"]
    assert status == "fail" and "check-testcase" in text and "t_left_behind" in text


def test_multi_server_rpl(mtr_run):
    assert mtr_run[2]["rpl.rpl_charset,row"][0] == "pass", mtr_run[2]["rpl.rpl_charset,row"]


def test_list_names_and_skips(tmp_path_factory):
    runner = KewpieRunner(make_workdir(tmp_path_factory, "mtr_list"))
    proc = runner.run("--mode=mtr", "--list", FIXTURE_PATH, "--suite=kw_mtr", timeout=60)
    assert proc.returncode == 0, proc.stdout
    lines = proc.stdout.splitlines()
    assert "kw_mtr.plain" in lines
    assert any(line.startswith("kw_mtr.disabled_one  # skipped: disabled") for line in lines)


def test_unknown_test_is_one_error_line(tmp_path_factory):
    runner = KewpieRunner(make_workdir(tmp_path_factory, "mtr_bad"))
    proc = runner.run("--mode=mtr", "main.no_such_test_here", timeout=60)
    assert proc.returncode == 2
    assert "mtr test 'main.no_such_test_here' not found" in proc.stdout


def test_ps_protocol_reaches_mariadb_test(tmp_path_factory):
    """--ps-protocol is given to mariadb-test as mtr gives it: a test that needs the plain
    protocol skips itself (include/no_protocol.inc reads $PS_PROTOCOL), others still pass."""
    runner = KewpieRunner(make_workdir(tmp_path_factory, "mtr_ps"))
    proc = runner.run("--mode=mtr", "--force", "--ps-protocol", "main.mysqltest_tracking_info",
                      "main.ps_1general", timeout=120)
    rows = _rows(proc.stdout)
    assert rows["main.mysqltest_tracking_info"][0] == "skipped", proc.stdout[-3000:]
    assert "ps-protocol" in rows["main.mysqltest_tracking_info"][1]
    assert rows["main.ps_1general"][0] == "pass", proc.stdout[-3000:]
    assert not tagged(runner.workdir), "servers left running"


def test_mtr_options_need_mtr_mode(tmp_path_factory):
    runner = KewpieRunner(make_workdir(tmp_path_factory, "mtr_opts"))
    proc = runner.run("--suite=main", "--ps-protocol", timeout=60)
    assert proc.returncode == 2
    assert "--ps-protocol: only with --mode=mtr" in proc.stdout


def test_valgrind_runs_mtr_servers(tmp_path_factory):
    """--valgrind wraps the servers of mtr cases as kewpie's own: a clean case passes
    under memcheck, a failing one keeps the valgrind log in its evidence."""
    runner = KewpieRunner(make_workdir(tmp_path_factory, "mtr_vg"))
    proc = runner.run("--mode=mtr", "--force", "--valgrind", FIXTURE_PATH, "--suite=kw_mtr",
                      "kw_mtr.plain", "kw_mtr.differs", timeout=300)
    rows = _rows(proc.stdout)
    assert rows["kw_mtr.plain"][0] == "pass" and rows["kw_mtr.differs"][0] == "fail", \
        proc.stdout[-3000:]
    logs = glob.glob(os.path.join(runner.workdir, "failed", "latest", "kw_mtr.differs", "s0",
                                  "valgrind.*.log"))
    assert logs, proc.stdout[-3000:]
    text = open(logs[0]).read()
    assert "Memcheck" in text and "ERROR SUMMARY: 0 errors" in text, text[-2000:]
    assert not tagged(runner.workdir), "servers left running"


def test_named_cases_are_grouped_as_mtr_orders_them(tmp_path_factory):
    runner = KewpieRunner(make_workdir(tmp_path_factory, "mtr_order"))
    named = ["main.comment_database", "main.alias"]
    proc = runner.run("--mode=mtr", "--list", *named, timeout=60)
    assert proc.returncode == 0 and proc.stdout.split() == sorted(named), proc.stdout
    proc = runner.run("--mode=mtr", "--list", "--no-reorder", *named, timeout=60)
    assert proc.returncode == 0 and proc.stdout.split() == named, proc.stdout


def test_left_replication_source_gets_fresh_servers(tmp_path_factory):
    """main.mysqldump-nl leaves a stopped 127.0.0.1/root source (check-testcase prints it
    as none); main.temp_table_frm restarts its server, which would then start the replica
    threads: kewpie gives the next case fresh servers instead."""
    runner = KewpieRunner(make_workdir(tmp_path_factory, "mtr_replica"))
    proc = runner.run("--mode=mtr", "--verbose", "--no-reorder", "main.mysqldump-nl",
                      "main.temp_table_frm", timeout=120)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "servers reset: the test left a replication source configured" in proc.stdout
    assert _rows(proc.stdout)["main.temp_table_frm"][0] == "pass"


def test_next_cases_servers_start_while_a_test_runs(tmp_path_factory):
    """Each case here needs other servers than the one before: they start on the bot's
    second lane (workdir/bot0b, its own MYSQLTEST_VARDIR and ports) while the previous
    case runs, with their check-testcase recorded, and take over when the case comes."""
    runner = KewpieRunner(make_workdir(tmp_path_factory, "mtr_lanes"))
    cases = ["kw_mtr.plain", "kw_mtr.opt", "main.comment_database"]
    proc = runner.run("--mode=mtr", "--no-reorder", FIXTURE_PATH, "--suite=main,kw_mtr", *cases,
                      timeout=120)
    assert proc.returncode == 0, proc.stdout[-3000:]
    rows = _rows(proc.stdout)
    assert all(rows[c][0] == "pass" for c in cases), rows
    with open(os.path.join(runner.workdir, "kewpie.log")) as fh:  # one bot: the run's log
        log = fh.read()
    for case in cases[1:]:
        assert f"servers for {case} prepared in the background" in log, log[-3000:]
    assert "(failed:" not in log
    assert log.count("servers ready in") == 3, log[-3000:]  # one set per case, no more
    assert os.path.isdir(os.path.join(runner.workdir, "bot0b"))
    assert not tagged(runner.workdir), "servers left running"


def test_known_bug_crash_and_test_timeout(tmp_path_factory):
    """A case whose server crashes of a bug a --known-bugs file lists fails naming the bug
    (the run passes with --allow-known), as kewpie's own tests do; --test-timeout's
    watchdog kills a hung case's servers and mariadb-test: [ timeout ]."""
    known = os.path.join(ROOT, "tests", "fixtures", "known_bugs_mtr.txt")
    runner = KewpieRunner(make_workdir(tmp_path_factory, "mtr_known"))
    proc = runner.run("--mode=mtr", "--force", "--enable-disabled", FIXTURE_PATH,
                      "--suite=kw_mtr", "kw_mtr.segv", "kw_mtr.hangs", f"--known-bugs={known}",
                      "--test-timeout=10", "--allow-known", timeout=240)
    out = proc.stdout
    rows = _rows(out)
    assert rows["kw_mtr.segv"][0] == "fail", out[-3000:]
    text = rows["kw_mtr.segv"][1]
    assert "mysqld.1 (s0) exited (status -11) with no expect file: the server crashed" in text
    assert re.search(r"crash signature [0-9a-f]{12}: crash \| signal 11 \|", text), text
    assert "known bug FIXTURE-13 (open): kw_mtr.segv sends its server SIGSEGV" in text, text
    assert "FAILED ON KNOWN BUGS: kw_mtr.segv (FIXTURE-13 (open)" in out
    status, text = rows["kw_mtr.hangs"]
    assert status == "timeout", out[-3000:]
    assert text.startswith("test exceeded --test-timeout 10s: its servers were killed"), text
    assert proc.returncode == 1, out[-3000:]  # the timeout fails the run; the known bug not
    assert not tagged(runner.workdir), "servers left running"
    alone = runner.run("--mode=mtr", "--enable-disabled", FIXTURE_PATH, "--suite=kw_mtr",
                       "kw_mtr.segv", f"--known-bugs={known}", "--allow-known", timeout=120)
    assert alone.returncode == 0, alone.stdout[-3000:]
