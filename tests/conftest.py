"""Shared fixtures: run the real kewpie CLI in a private workdir, then check for leaks."""
from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass

import psutil
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KEWPIE = os.path.join(ROOT, "kewpie.py")
FIXTURE_SUITES = os.path.join(ROOT, "tests", "fixtures", "suites")
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

    def run(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
        """Run kewpie to completion, capturing output."""
        env = dict(os.environ, KEWPIE_NO_VENV="1")
        return subprocess.run(self.cmd(*args), capture_output=True, text=True, timeout=timeout,
                              env=env, stdin=subprocess.DEVNULL)

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
    """Each test's kewpie workdirs keep caches in /dev/shm (RAM): remove them afterwards."""
    yield
    from lib.platform.workdir import Workdir
    base = str(tmp_path_factory.getbasetemp())
    for dirpath, dirnames, _ in os.walk(base):
        if os.path.basename(dirpath) == "wd" or ".kewpie-workdir" in os.listdir(dirpath):
            if not tagged(dirpath):
                Workdir(dirpath).remove_shm()
            dirnames[:] = []


@pytest.fixture
def kewpie_reachable():
    """Like ``kewpie``, with the workdir under a 0755 directory in /tmp: servers run as
    mysql can enter it (pytest's own tmp dirs are 0700), as suites with
    ``storage = 'disk'`` and --no-shm runs need."""
    import shutil
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
    shutil.rmtree(base, ignore_errors=True)
    assert not leftovers, f"servers left running: {[p.pid for p in leftovers]}"
