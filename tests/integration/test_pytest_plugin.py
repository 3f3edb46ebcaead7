"""The pytest plugin, run as users run it: pytest in a subprocess on a small folder of
tests (tests/fixtures/pytest_plugin/), with real servers.

Servers shared by the reuse rule, options from the marker, a module scope,
evidence of a failure and of a crash, a KewpieTestCase class; pytest-xdist
workers as separate bots; Ctrl-C; kept servers of a failed test; bad markers
and unsafe options before anything starts.

Covers: lib/pytest_plugin/, lib/run/recording.py (the plugin's results history)
"""
import importlib.metadata
import os
import signal
import sqlite3
import subprocess
import sys
import time

import psutil
import pytest

from tests.conftest import ROOT, make_workdir, tagged

FOLDER = os.path.join(ROOT, "tests", "fixtures", "pytest_plugin")


def _sigint_default():
    """In the child before exec: SIGINT back to its default disposition."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _pytest(workdir, *args, notes=None, extra_env=None, popen=False):
    """pytest with only the plugins named here (whatever the venv has installed)."""
    env = dict(os.environ, PYTHONPATH=ROOT, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1",
               KEWPIE_PLUGIN_NOTES=notes or os.devnull, **(extra_env or {}))
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "pytest_timeout",
           "-p", "xdist.plugin", "-p", "kewpie.pytest_plugin.plugin", "--noconftest", "-rA",
           f"--kewpie-workdir={workdir}", *args]
    if popen:  # in its own process group, as a terminal's foreground job: with Ctrl-C at
        # its default even when this run inherited it ignored (a shell's `cmd &` without job
        # control ignores SIGINT, and python then never installs KeyboardInterrupt)
        return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, stdin=subprocess.DEVNULL,
                                start_new_session=True, preexec_fn=_sigint_default)
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=240,
                          stdin=subprocess.DEVNULL)


def _outcomes(stdout):
    """{test name: PASSED/FAILED/...} from -rA's short summary."""
    found = {}
    for line in stdout.splitlines():
        word, _, rest = line.partition(" ")
        if word in ("PASSED", "FAILED", "ERROR") and "::" in rest:
            found[rest.split(" ")[0].split("::")[-1]] = word
    return found


@pytest.fixture
def workdir(tmp_path_factory, request):
    path = make_workdir(tmp_path_factory, request.node.name[:30])
    yield path
    leftovers = tagged(path)
    for proc in leftovers:
        proc.kill()
    assert not leftovers, f"servers left running: {[p.pid for p in leftovers]}"


def _no_servers_recorded(workdir):
    return not [n for n in os.listdir(workdir) if n.startswith("servers") and n.endswith(".json")]


def test_fixtures_reuse_scope_evidence_crash(workdir, tmp_path):
    notes = str(tmp_path / "notes")
    result = _pytest(workdir, FOLDER, notes=notes)
    outcomes = _outcomes(result.stdout)
    assert result.returncode == 1, result.stdout[-3000:]
    assert {k for k, v in outcomes.items() if v == "FAILED"} == {"test_f_fails", "test_g_crash"}
    assert len([v for v in outcomes.values() if v == "PASSED"]) == 8, result.stdout[-3000:]
    pids = dict(line.split() for line in open(notes))
    assert pids["a"] == pids["b"]                     # the reuse rule kept the server
    assert pids["c"] != pids["b"]                     # other options: other servers
    assert pids["d"] == pids["e"]                     # scope=module: shared, database kept
    assert pids["h"] != pids["g"]                     # fresh server after the crash
    assert "server s0 died during the test (killed by signal 9)" in result.stdout
    failed = os.path.realpath(os.path.join(workdir, "failed", "latest"))  # failed/<session>/
    assert sorted(os.listdir(failed)) == ["test_plugin_single.test_f_fails",
                                          "test_plugin_single.test_g_crash"]
    evidence = os.path.join(failed, "test_plugin_single.test_f_fails")
    assert "meant to fail" in open(os.path.join(evidence, "failure.txt")).read()
    assert os.path.exists(os.path.join(evidence, "s0", "error.log"))
    assert f"evidence of test_plugin_single.test_f_fails: {evidence}" in result.stdout
    assert tagged(workdir) == [] and _no_servers_recorded(workdir)
    history = sqlite3.connect(os.path.join(workdir, "history.sqlite"))  # the results history
    assert history.execute("SELECT mode, exit_code FROM history_runs").fetchall() == [("pytest", 1)]
    failing = dict(history.execute("SELECT test, evidence FROM history_results WHERE failing = 1"))
    assert failing == {"test_plugin_single.test_f_fails": evidence,
                       "test_plugin_single.test_g_crash": os.path.join(failed,
                                                                       "test_plugin_single.test_g_crash")}


def test_xdist_workers_are_bots_with_their_own_ports(workdir):
    result = _pytest(workdir, "-n", "2", "--dist", "loadfile", "-k",
                     "test_a or test_b or test_d or test_e or test_replica_in_sync", FOLDER)
    assert result.returncode == 0, result.stdout[-3000:]
    ports = {}
    for bot in ("bot0", "bot1"):
        log = open(os.path.join(workdir, f"kewpie-{bot}.log")).read()
        ports[bot] = {line.split("leased ports ")[1].split()[0]
                      for line in log.splitlines() if "leased ports" in line}
        assert ports[bot], f"{bot} started no server"
    assert not ports["bot0"] & ports["bot1"]
    assert tagged(workdir) == [] and _no_servers_recorded(workdir)
    history = sqlite3.connect(os.path.join(workdir, "history.sqlite"))  # one run, two bots
    assert history.execute("SELECT COUNT(*), COUNT(DISTINCT run_id), COUNT(DISTINCT bot) "
                           "FROM history_results").fetchone() == (5, 1, 2)


def test_ctrl_c_under_xdist_leaves_no_server(workdir, tmp_path):
    notes = tmp_path / "notes"
    proc = _pytest(workdir, "-n", "2", "-k", "test_slow or test_replica_in_sync", FOLDER,
                   notes=str(notes), popen=True,
                   extra_env={"KEWPIE_PLUGIN_SLOW": "1", "PYTHONFAULTHANDLER": "1"})
    deadline = time.monotonic() + 60
    while not (notes.exists() and "slow" in notes.read_text()) and time.monotonic() < deadline:
        time.sleep(0.2)  # until test_slow has its server (it then sleeps for a minute)
    assert tagged(workdir), "the servers should be running"
    # Ctrl-C in a terminal: SIGINT to the controller and its workers.  (SIGINT to the
    # controller alone works too, but xdist lets the workers run on for up to 10 s.)
    os.killpg(proc.pid, signal.SIGINT)
    try:
        out, _ = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        raise AssertionError("pytest did not end within 60 s of Ctrl-C; where its processes "
                             "were:\n" + _stacks_then_kill(proc)) from None
    assert proc.returncode == 2, out[-3000:]
    assert tagged(workdir) == []
    assert _no_servers_recorded(workdir)


def _stacks_then_kill(proc):
    """The Python stacks of a hung pytest's processes (faulthandler, on SIGABRT), then
    SIGKILL for the rest of its group; its output's end."""
    for child in [psutil.Process(proc.pid), *psutil.Process(proc.pid).children(recursive=True)]:
        try:
            if "python" in child.name():
                child.send_signal(signal.SIGABRT)
        except psutil.Error:
            pass
    try:
        out, _ = proc.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
    return out[-12000:]


def test_keep_failed_leaves_the_servers_for_cleanup(workdir):
    result = _pytest(workdir, "--kewpie-keep-failed", "-k", "test_f_fails or test_h_after_crash",
                     FOLDER)
    assert result.returncode == 1, result.stdout[-3000:]
    assert "kewpie kept the servers of test_plugin_single.test_f_fails running" in result.stdout
    assert _outcomes(result.stdout) == {"test_f_fails": "FAILED"}  # the session stopped there
    kept = tagged(workdir)
    assert len(kept) == 1
    server = kept[0]
    assert server.is_running()
    cleanup = subprocess.run([sys.executable, os.path.join(ROOT, "kewpie.py"), "--mode=cleanup",
                              f"--workdir={workdir}"], capture_output=True, text=True, timeout=60,
                             env=dict(os.environ, KEWPIE_NO_VENV="1"))
    assert cleanup.returncode == 0, cleanup.stdout
    assert tagged(workdir) == []


def test_unsafe_option_stops_the_run_before_any_server(workdir, tmp_path):
    """(A malformed marker is pytest's usage error at collection: tests/unit.)"""
    tests = tmp_path / "bad"
    tests.mkdir()
    (tests / "test_bad.py").write_text(
        "import pytest\n\n@pytest.mark.kewpie(options=['--general-log-file=/etc/x.log'])\n"
        "def test_x(kewpie_server):\n    pass\n")
    result = _pytest(workdir, str(tests))
    assert result.returncode == 2, result.stdout + result.stderr
    assert "kewpie: " in result.stdout and "general-log-file" in result.stdout
    assert tagged(workdir) == []


def test_the_entry_point_is_declared():
    """pip install -e . (scripts/setup.sh) registers the plugin as 'kewpie'."""
    import tomllib
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as fh:
        project = tomllib.load(fh)["project"]
    assert project["entry-points"]["pytest11"] == {"kewpie": "kewpie.pytest_plugin.plugin"}
    installed = [ep for ep in importlib.metadata.entry_points(group="pytest11")
                 if ep.name == "kewpie"]
    if installed:  # a venv installed from this checkout: no -p needed
        assert installed[0].value == "kewpie.pytest_plugin.plugin"
