"""Shared fixtures: run the real kewpie CLI in a private workdir, then check for leaks.

A failed test's report names the evidence of its kewpie workdirs (``failed/<run>/``,
the harness logs) in a "kewpie evidence" section; with CI=true that evidence is also
copied under the clone, to ``workdir/ci-evidence/<test>/`` (datadirs excepted), where
it outlives pytest's temporary directories; scripts/flake-hunt has it copied to its own
folder instead (KEWPIE_TEST_EVIDENCE).  A fixture value with a ``keep_evidence(dest)``
method (tests/fixtures/fleet.py's buildbot fleet: its daemons' and builds' logs, its
workers' kewpie workdirs) keeps its own evidence there too, in a folder named for the
fixture.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass

import psutil
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KEWPIE = os.path.join(ROOT, "kewpie.py")
FIXTURE_SUITES = os.path.join(ROOT, "tests", "fixtures", "suites")
OLD_VERSION = "10.11.18"   # the second code tree scripts/get-tree unpacks into trees/
OLD_TREE = os.path.join(ROOT, "trees", OLD_VERSION)
sys.path.insert(0, ROOT)


def tagged(workdir: str) -> list[psutil.Process]:
    """Live processes started for this workdir (kewpie tags their environment)."""
    from lib.platform.process import TAG_WORKDIR, tagged_processes
    return tagged_processes(TAG_WORKDIR, os.path.abspath(workdir))


@dataclass
class KewpieRunner:
    """Runs ./kewpie.py with a private workdir."""

    workdir: str

    def cmd(self, *args: str) -> list[str]:
        """The command line for these arguments."""
        return [sys.executable, KEWPIE, f"--workdir={self.workdir}", *args]

    def run(self, *args: str, timeout: float = 300,
            cwd: str | None = None) -> subprocess.CompletedProcess:
        """Run kewpie to completion, capturing output (in cwd: this process's when None)."""
        env = dict(os.environ, KEWPIE_NO_VENV="1")
        return subprocess.run(self.cmd(*args), capture_output=True, text=True, timeout=timeout,
                              env=env, stdin=subprocess.DEVNULL, cwd=cwd)

    def popen(self, *args: str) -> subprocess.Popen:
        """Start kewpie in the background with line-buffered stdout."""
        env = dict(os.environ, KEWPIE_NO_VENV="1")
        return subprocess.Popen(self.cmd(*args), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, bufsize=1, env=env, stdin=subprocess.DEVNULL)


def make_workdir(tmp_path_factory: pytest.TempPathFactory, name: str) -> str:
    """A fresh workdir path whose parent the mysql user can enter."""
    base = tmp_path_factory.mktemp(name)
    os.chmod(base, 0o755)
    return os.path.join(str(base), "wd")


CI_EVIDENCE = "ci-evidence"
FAILED_KEY = pytest.StashKey[bool]()


def _workdirs_of(value: object, depth: int = 0) -> list[str]:
    """The kewpie workdirs a fixture value names (a KewpieRunner, a workdir path, or a
    tuple or list holding them)."""
    if isinstance(value, KewpieRunner):
        return [value.workdir]
    if isinstance(value, (str, os.PathLike)):
        path = os.fspath(value)
        return [path] if os.path.isfile(os.path.join(path, ".kewpie-workdir")) else []
    if isinstance(value, (tuple, list)) and depth == 0:
        return [w for v in value for w in _workdirs_of(v, 1)]
    return []


def _keepers_of(funcargs: dict[str, object]) -> dict[str, object]:
    """The fixture values that keep evidence of their own (a ``keep_evidence`` method)."""
    return {name: value for name, value in funcargs.items()
            if callable(getattr(value, "keep_evidence", None))}


def _keep_for_ci(nodeid: str, workdirs: list[str], keepers: dict[str, object]) -> str:
    """Copy the workdirs' evidence and logs to <checkout>/workdir/ci-evidence/<test>/
    (a kewpie workdir that records it, so --mode=cleanup knows it); returns the path
    or why not."""
    from lib.platform.workdir import Workdir
    home = Workdir(os.path.join(ROOT, "workdir"))
    try:
        home.create()
        home.record_made(add=(CI_EVIDENCE,))
    except Exception as exc:  # noqa: BLE001 - the report says why, the test result stands
        return f"(not copied: {exc})"
    return _keep_evidence(os.path.join(home.path, CI_EVIDENCE), nodeid, workdirs, keepers)


def _keep_evidence(root: str, nodeid: str, workdirs: list[str],
                   keepers: dict[str, object] | None = None) -> str:
    """Copy the workdirs' failed/ (datadirs excepted) and harness logs to root/<test>/,
    and have each keeper keep its own in root/<test>/<fixture>/."""
    target = os.path.join(root, re.sub(r"[^\w.+-]+", "-", nodeid).strip("-."))
    shutil.rmtree(target, ignore_errors=True)
    for n, workdir in enumerate(workdirs):
        if not os.path.isdir(workdir):  # a test that failed before its run made the workdir
            continue
        dest = os.path.join(target, f"workdir{n}" if len(workdirs) > 1 else "workdir")
        os.makedirs(dest, exist_ok=True)
        if os.path.isdir(os.path.join(workdir, "failed")):
            shutil.copytree(os.path.join(workdir, "failed"), os.path.join(dest, "failed"),
                            symlinks=True, ignore=shutil.ignore_patterns("data"),
                            dirs_exist_ok=True)
        for name in os.listdir(workdir):
            if name.startswith("kewpie") and name.endswith(".log"):
                shutil.copy2(os.path.join(workdir, name), dest)
    for name, keeper in (keepers or {}).items():
        try:
            getattr(keeper, "keep_evidence")(os.path.join(target, name))
        except Exception as exc:  # noqa: BLE001 - the report says why, the result stands
            os.makedirs(target, exist_ok=True)
            with open(os.path.join(target, f"{name}-not-kept.txt"), "w") as fh:
                fh.write(f"{type(exc).__name__}: {exc}\n")
    return target


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """A failed test's report gets a section naming its kewpie workdirs' evidence."""
    outcome = yield
    report = outcome.get_result()
    if report.when != "call" or not report.failed:
        return
    item.stash[FAILED_KEY] = True
    funcargs = getattr(item, "funcargs", {})
    workdirs = list(dict.fromkeys(w for v in funcargs.values() for w in _workdirs_of(v)))
    keepers = _keepers_of(funcargs)
    if not workdirs and not keepers:
        return
    lines = [f"{name}: keeps its own evidence (logs, its kewpie workdirs' files)"
             for name in keepers]
    for workdir in workdirs:
        lines.append(f"workdir {workdir} (its log: kewpie.log)")
        latest = os.path.join(workdir, "failed", "latest")
        if os.path.isdir(latest):
            run = os.path.realpath(latest)
            lines.append(f"  evidence of its last failed run: {run}/")
            lines += [f"    {name}/" for name in sorted(os.listdir(run))]
        else:
            lines.append("  no failed kewpie test: no evidence folder")
    if os.environ.get("KEWPIE_TEST_EVIDENCE"):  # scripts/flake-hunt's folder for this run
        lines.append(f"kept: {_keep_evidence(os.environ['KEWPIE_TEST_EVIDENCE'], item.nodeid, workdirs, keepers)}")
    elif os.environ.get("CI") == "true":
        lines.append(f"kept under the clone: {_keep_for_ci(item.nodeid, workdirs, keepers)}")
    report.sections.append(("kewpie evidence", "\n".join(lines)))


@pytest.fixture
def kewpie(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest):
    """A KewpieRunner; after the test, no server of its workdir may be left running."""
    workdir = make_workdir(tmp_path_factory, request.node.name[:40])
    runner = KewpieRunner(workdir)
    yield runner
    leftovers = tagged(workdir)
    for proc in leftovers:  # stop by pid what the test leaked, then fail
        proc.kill()
    assert not leftovers, f"servers left running: {[p.pid for p in leftovers]}"


@pytest.fixture(autouse=True)
def _free_shm_after_test(tmp_path_factory: pytest.TempPathFactory):
    """Each test's kewpie workdirs keep caches in /dev/shm (RAM): remove them afterwards.

    The workdirs are found from the RAM side: each tree there records its workdir's path
    (lib/platform/workdir.py), and those under this session's temporary folders are
    ours.  (Walking the temporary folders instead cost every test a walk of all the
    folders the tests before it had made: some 20-60 ms a test, a minute of the unit
    tests' CPU.)"""
    yield
    from lib.platform.workdir import TREE_NAME, TREE_WORKDIR, Workdir, user_shm_root
    base = str(tmp_path_factory.getbasetemp()) + os.sep
    root = user_shm_root()
    try:
        names = os.listdir(root)
    except OSError:  # no RAM tree at all
        return
    for name in names:
        if not TREE_NAME.fullmatch(name):
            continue
        try:
            with open(os.path.join(root, name, TREE_WORKDIR)) as fh:
                workdir = fh.read().strip()
        except OSError:  # being made or removed by its own run
            continue
        if workdir.startswith(base) and not tagged(workdir):
            Workdir(workdir).remove_shm()


@pytest.fixture
def kewpie_reachable(request: pytest.FixtureRequest):
    """Like ``kewpie``, with the workdir under a 0755 directory in /tmp: servers run as
    mysql can enter it (pytest's own tmp dirs are 0700), as suites with
    ``storage = 'disk'`` and --no-shm runs need."""
    import tempfile
    from lib.platform.workdir import Workdir
    base = tempfile.mkdtemp(prefix="kewpie-it-", dir="/tmp")
    os.chmod(base, 0o755)
    workdir = os.path.join(base, "wd")
    yield KewpieRunner(workdir)
    leftovers = tagged(workdir)
    for proc in leftovers:
        proc.kill()
    Workdir(workdir).remove_shm()
    if not request.node.stash.get(FAILED_KEY, False):  # a failed test's workdir stays
        shutil.rmtree(base, ignore_errors=True)
    assert not leftovers, f"servers left running: {[p.pid for p in leftovers]}"


@pytest.fixture(scope="session")
def old_tree() -> str:
    """The bookworm 10.11.18 tree (with the installed tree's plugins), fetched by the set-up step;
    scripts/get-tree is idempotent (~5 ms when the tree is there)."""
    got = subprocess.run([os.path.join(ROOT, "scripts", "get-tree"), OLD_VERSION],
                         capture_output=True, text=True, timeout=300)
    assert got.returncode == 0, got.stdout + got.stderr
    return OLD_TREE
