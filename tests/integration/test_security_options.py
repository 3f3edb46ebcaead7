"""Security issue 27: mtr options, the option probe, suite names, leftover processes.

- A mysql-test suite planted by user ``nobody`` (``tests/fixtures/mtr/kw_unsafe``,
  copied into a directory of nobody's, trusted on purpose with ``--trust``: without it
  the suite path is refused, tests/integration/test_security_trust.py) whose ``.opt``
  files write the general log
  outside the vardir, or listen on port 3306, or whose test restarts its server
  with such an option, is run by root: those cases are skipped with their reason, counted in the summary, and under ``strace -f``
  nothing is created in the target directory (nobody's, world-writable) and
  nothing binds port 3306.  A case that leaves a ``sleep`` behind fails naming it,
  and the sleep is stopped.
- The option probe (``mariadbd --no-defaults --verbose --help``, run for the
  option catalog and mysql-test's features) writes nothing outside the workdir:
  under ``strace -f`` the probe processes never touch ``/var/lib/mysql`` and
  create, write or remove files only in the workdir.
- ``--suite=../x`` (and other paths) exits 2 with one ERROR line before anything
  is imported or written, even when nobody planted a suite there.
- A kewpie test that leaves ``sleep`` processes behind (a child in its own
  session, an orphaned daemon) fails naming them, and they are stopped; a suite
  that declares ``kept_processes`` keeps its sleep until the run ends.

Covers: lib/mtr/option_check.py, lib/servers/help_probe.py,
lib/platform/suite_names.py, lib/run/leftovers.py
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile

import psutil
import pytest

from tests.conftest import FIXTURE_SUITES, ROOT, KewpieRunner

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"),
                                reason="runs as root and acts as user nobody via setpriv")
needs_strace = pytest.mark.skipif(not shutil.which("strace"), reason="strace is not installed")

AS_NOBODY = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
MTR_FIXTURES = os.path.join(ROOT, "tests", "fixtures", "mtr")
TRACED = "execve,bind,open,openat,creat,mkdir,mkdirat,unlink,unlinkat,rename,renameat,renameat2,chdir"
LINE = re.compile(r'^(\d+)\s+(\w+)\((.*)$')
PATH = re.compile(r'"([^"]*)"')
BIND_3306 = re.compile(r"sin6?_port=htons\(3306\)")
WRITING = re.compile(r"O_WRONLY|O_RDWR|O_CREAT|O_TRUNC|O_TMPFILE")


def nobody(script: str) -> None:
    """Run a shell script as user nobody."""
    subprocess.run(AS_NOBODY + ["sh", "-ec", script], check=True)


@pytest.fixture
def public_dir():
    """A directory in /tmp that user nobody owns (as an attacker's would be); removed after."""
    path = tempfile.mkdtemp(prefix="kewpie-it-27-", dir="/tmp")
    os.chmod(path, 0o755)
    os.chown(path, 65534, 65534)
    yield path
    shutil.rmtree(path)


def error_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if " ERROR " in line]


def traced_run(kewpie: KewpieRunner, trace: str, *args: str, env: dict[str, str] | None = None,
               timeout: float = 600) -> subprocess.CompletedProcess:
    """kewpie under strace -f (every process of the run), output captured."""
    argv = ["strace", "-f", "--seccomp-bpf", "-qq", "-s", "400", "-e", f"trace={TRACED}",
            "-o", trace, *kewpie.cmd(*args)]
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ, KEWPIE_NO_VENV="1", PYTHONDONTWRITEBYTECODE="1",
                                   **(env or {})), stdin=subprocess.DEVNULL)


def syscalls(trace: str) -> list[tuple[int, str, str]]:
    """(pid, call, rest of the line) for every traced call that succeeded."""
    out = []
    with open(trace, errors="replace") as fh:
        for line in fh:
            m = LINE.match(line.rstrip())
            if m and not re.search(r"= -1 E[A-Z]+", m.group(3)):
                out.append((int(m.group(1)), m.group(2), m.group(3)))
    return out


def row(out: str, name: str) -> tuple[str, str]:
    """(status, the message line after the row) of test name in kewpie's output."""
    lines = out.splitlines()
    for i, line in enumerate(lines):
        m = re.search(rf"\s{re.escape(name)}\s.*\[ (\w+) \]", line)
        if m:
            following = lines[i + 1].split(" INFO ", 1)[-1] if i + 1 < len(lines) else ""
            return m.group(1), following
    raise AssertionError(f"no row for {name}:\n{out[-3000:]}")


def gone(pid: int) -> bool:
    """The process has exited (a zombie its parent has not collected yet counts)."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


@needs_strace
def test_mtr_unsafe_options_are_skipped_and_nothing_escapes(kewpie, public_dir, tmp_path):
    suites, escape = os.path.join(public_dir, "suites"), os.path.join(public_dir, "escape")
    nobody(f"mkdir -m 755 {suites} && cp -r {MTR_FIXTURES}/kw_unsafe {suites}/ && "
           f"chmod -R a+rX {suites} && mkdir -m 777 {escape}")
    trace = str(tmp_path / "trace")
    proc = traced_run(kewpie, trace, "--mode=mtr", f"--suitepath={suites}", "--suite=kw_unsafe",
                      f"--trust={suites}",  # nobody's suite, run on purpose (issue 43)
                      "--force", env={"KEWPIE_IT_ESCAPE": escape})
    out = proc.stdout
    assert proc.returncode == 1, out[-3000:]  # the leftover case fails
    status, why = row(out, "kw_unsafe.escape_log")
    assert status == "skipped" and why.startswith("not run by kewpie: mysqld.1: server option "
                                                  f"'--general-log-file={escape}/general.log'")
    assert "outside the case's vardir" in why
    status, why = row(out, "kw_unsafe.port_3306")
    assert status == "skipped" and "'--port=3306'" in why and "did not lease" in why
    status, why = row(out, "kw_unsafe.restart_escape")  # options of the restart protocol
    assert status == "skipped" and why.startswith("not run by kewpie: mysqld.1's restart: server "
                                                  f"option '--general-log-file={escape}/restart.log'")
    assert row(out, "kw_unsafe.vardir_log")[0] == "pass"  # placeholders resolved, in bounds
    summary = re.search(r"NOT RUN FOR UNSAFE SERVER OPTIONS \(skipped, 3\): (.*)$", out, re.M)
    assert summary and set(summary.group(1).split()) == {
        "kw_unsafe.escape_log", "kw_unsafe.port_3306", "kw_unsafe.restart_escape"}, out[-3000:]
    status, why = row(out, "kw_unsafe.leaves_sleep")
    m = re.search(r"pid (\d+) \(sleep 1004\)", why)
    assert status == "fail" and m and "stopped by kewpie" in why, why
    assert gone(int(m.group(1)))
    assert os.listdir(escape) == []
    calls = syscalls(trace)
    assert not [c for c in calls if c[1] == "bind" and BIND_3306.search(c[2])]
    assert not [c for c in calls if escape in c[2] and c[1] != "execve"]


def _probe_pids(calls: list[tuple[int, str, str]]) -> dict[int, str]:
    """pid -> --datadir of every process that ran mariadbd --verbose --help."""
    found = {}
    for pid, call, rest in calls:
        if call == "execve" and '"--verbose", "--help"' in rest and "mariadbd" in rest:
            m = re.search(r'"--datadir=([^"]+)"', rest)
            found[pid] = m.group(1) if m else ""
    return found


@needs_strace
def test_option_probe_writes_nothing_outside_the_workdir(kewpie, tmp_path):
    trace = str(tmp_path / "trace")
    proc = traced_run(kewpie, trace, "--mode=mtr", f"--suitepath={MTR_FIXTURES}",
                      "--suite=kw_mtr", "kw_mtr.plain")
    assert proc.returncode == 0, proc.stdout[-3000:]
    calls = syscalls(trace)
    probes = _probe_pids(calls)
    assert len(probes) >= 2, probes  # the option catalog and mysql-test's features
    roots = [os.path.realpath(kewpie.workdir), os.path.abspath(kewpie.workdir)]
    for datadir in probes.values():
        assert any(datadir.startswith(r + "/") for r in roots), (datadir, roots)
    cwd: dict[int, str] = {}
    for pid, call, rest in calls:
        if pid not in probes:
            continue
        assert "/var/lib/mysql" not in rest, (pid, call, rest)
        path = (PATH.findall(rest) or [""])[0]
        if call == "chdir":
            cwd[pid] = path
            continue
        if call in ("open", "openat", "creat") and not (call == "creat" or WRITING.search(rest)):
            continue  # read only
        if call not in ("open", "openat", "creat", "mkdir", "mkdirat", "unlink", "unlinkat",
                        "rename", "renameat", "renameat2"):
            continue
        full = path if path.startswith("/") else os.path.join(cwd.get(pid, probes[pid]), path)
        if full.startswith("/dev/"):
            continue
        assert any(os.path.normpath(full).startswith(r + "/") for r in roots), (call, rest)
    assert not [n for n in os.listdir(kewpie.workdir) if n.startswith(".help-probe-")]


@pytest.mark.parametrize("args", [
    ("--suite=../x",), ("--suite={planted}",), ("--suite=../../../..{planted}",),
    ("--suite=main,../../x",), ("../../x.evil",), ("--mode=mtr", "--suite={planted}"),
    ("--mode=mtr", "--suite=../../../..{planted}"), ("--mode=mtr", "--suite=compat/../../x"),
])
def test_suite_paths_are_refused_before_anything_is_imported(kewpie, public_dir, args):
    planted = os.path.join(public_dir, "x")
    marker = os.path.join(public_dir, "imported")
    nobody(f"mkdir -m 755 {planted} && echo 'server_requirements = [[]]' > "
           f"{planted}/suite_config.py && printf '%s\\n' 'import os' "
           f"'open(\"{marker}\", \"w\").close()' > {planted}/evil_test.py && chmod 777 {public_dir}")
    proc = kewpie.run(*(a.format(planted=planted) for a in args), timeout=60)
    assert proc.returncode == 2, proc.stdout[-3000:]
    errors = error_lines(proc.stdout)
    assert len(errors) == 1 and "a suite is named, not given as a path" in errors[0], errors
    assert not os.path.exists(marker)
    assert not os.path.exists(kewpie.workdir)


def test_mtr_group_suite_names_still_work(kewpie):
    proc = kewpie.run("--mode=mtr", "--list", "--suite=compat/oracle", timeout=120)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "compat/oracle.sp" in proc.stdout.splitlines()


def test_a_test_that_leaves_a_sleep_behind_fails_and_it_is_stopped(kewpie):
    proc = kewpie.run(f"--suitepath={FIXTURE_SUITES}", "--suite=leftovers,leftovers_kept",
                      "--force", timeout=300)
    out = proc.stdout
    assert proc.returncode == 1, out[-3000:]
    status, why = row(out, "leftovers.a_leaves_sleep_test")
    child = re.search(r"pid (\d+) \(sleep 1001\)", why)
    daemon = re.search(r"pid (\d+) \(sleep 1002\)", why)
    assert status == "fail" and child and daemon, why
    assert "left 2 process(es) running, stopped by kewpie" in why and "kept_processes" in why
    assert gone(int(child.group(1))) and gone(int(daemon.group(1)))
    assert row(out, "leftovers.b_clean_test")[0] == "pass"
    assert row(out, "leftovers_kept.keeps_sleep_test")[0] == "pass"
    kept = int(re.search(r"^KEPT (\d+)$", out, re.M).group(1))
    assert gone(kept)  # the run's end stopped the process the suite kept
    assert "FAILED TESTS: leftovers.a_leaves_sleep_test" in out
