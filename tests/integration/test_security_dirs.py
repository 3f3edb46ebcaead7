"""Security issue 12: what a local user plants in /dev/shm, the lock directory or the
workdir never makes root write or delete there; RAM of deleted workdirs comes back.

Each test uses a private stand-in for /dev/shm (KEWPIE_SHM_ROOT, mode 1777 like
the real one), so runs on the same machine are never disturbed, and removes it.

Covers: lib/platform/safedirs.py, lib/platform/workdir.py, lib/platform/ports.py
"""
import os
import shutil
import subprocess
import tempfile

import pytest

from lib.platform.workdir import SHM_ROOT_ENV, Workdir
from tests.conftest import KewpieRunner, tagged

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"),
                                reason="runs as root and acts as user nobody via setpriv")

AS_NOBODY = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]


@pytest.fixture
def shm_root(monkeypatch):
    """A private, world-writable, sticky stand-in for /dev/shm; removed afterwards."""
    base = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
    root = tempfile.mkdtemp(prefix="kewpie-it-sec-", dir=base)
    os.chmod(root, 0o1777)
    monkeypatch.setenv(SHM_ROOT_ENV, root)
    yield root
    shutil.rmtree(root)  # as root, never following a link out of it


@pytest.fixture
def canary(shm_root):
    """A directory of user nobody's with a file in it: what the attacker points kewpie at."""
    path = os.path.join(shm_root, "canary")
    nobody(f"mkdir -m 755 {path} && echo keep-me > {path}/precious")
    return path


def nobody(script: str) -> None:
    """Run a shell script as user nobody."""
    subprocess.run(AS_NOBODY + ["sh", "-ec", script], check=True)


def intact(canary: str) -> bool:
    """The canary directory holds exactly its file, unchanged."""
    with open(os.path.join(canary, "precious")) as fh:
        return os.listdir(canary) == ["precious"] and fh.read() == "keep-me\n"


def error_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if " ERROR " in line]


def refused(proc: subprocess.CompletedProcess, *words: str) -> str:
    """Exit status 2 with exactly one error line holding every word; returns the line."""
    assert proc.returncode == 2, proc.stdout[-3000:]
    errors = error_lines(proc.stdout)
    assert len(errors) == 1, errors
    for word in words:
        assert word in errors[0], errors[0]
    return errors[0]


@pytest.mark.parametrize("mode", ["777", "755"])
def test_shm_tree_pre_created_by_another_user_is_refused(kewpie, shm_root, canary, mode):
    w = Workdir(kewpie.workdir)
    nobody(f"mkdir -m {mode} {w.shm_root} {w.shm_root}/cache {w.shm_path}; "
           f"ln -s {canary} {w.shm_path}/bot0; ln -s {canary} {w.shm_root}/cache/bootstrap; "
           f"chmod {mode} {w.shm_root}")
    line = refused(kewpie.run("--suite=main", "basic_test"), w.shm_root, "uid 65534 (nobody)",
                   f"mode 0{mode}", "--no-shm")
    assert "rm -rf" in line
    assert intact(canary)
    assert sorted(os.listdir(w.shm_root)) == ["cache", w.tree_name]  # nothing written there
    assert os.listdir(w.shm_path) == ["bot0"]
    assert not os.path.lexists(os.path.join(kewpie.workdir, "bot0"))


def test_lock_dir_pre_created_by_another_user_is_refused(kewpie, shm_root, canary):
    locks = os.path.join(shm_root, "locks")
    nobody(f"mkdir -m 777 {locks}; for p in $(seq 9300 4 9400); do "
           f"ln -s {canary}/precious {locks}/port-$p.lock; done; ln -s {canary} {locks}/sock")
    refused(kewpie.run("--suite=main", "basic_test", f"--lock-dir={locks}"), locks,
            "uid 65534 (nobody)", "--lock-dir")
    assert intact(canary)


@pytest.mark.parametrize("name", ["bot0", "cache"])
def test_workdir_link_planted_by_another_user_is_refused(kewpie, shm_root, canary, name):
    os.makedirs(kewpie.workdir, mode=0o755)
    open(os.path.join(kewpie.workdir, ".kewpie-workdir"), "w").close()
    link = os.path.join(kewpie.workdir, name)
    os.symlink(canary, link)
    os.lchown(link, 65534, 65534)
    refused(kewpie.run("--suite=main", "basic_test"), f"refusing to follow {link}", canary)
    assert intact(canary)
    proc = kewpie.run("--mode=cleanup")  # cleanup refuses as well: it would empty the target
    assert proc.returncode == 2 and intact(canary)
    os.unlink(link)
    proc = kewpie.run("--suite=main", "basic_test")  # once removed, the run goes ahead
    assert proc.returncode == 0, proc.stdout[-3000:]


def _trees(root: str) -> list[str]:
    return sorted(n for n in os.listdir(root) if n.startswith("wd-"))


def _templates(root: str) -> list[str]:
    cache = os.path.join(root, "cache", "bootstrap")
    return sorted(n for n in os.listdir(cache) if not n.endswith(".lock"))


def _size(root: str) -> int:
    total = 0
    for dirpath, _, files in os.walk(root):
        total += sum(os.lstat(os.path.join(dirpath, f)).st_size for f in files)
    return total


def test_throwaway_workdirs_leave_one_set_of_caches(tmp_path, shm_root):
    root = os.path.join(shm_root, f"kewpie-{os.getuid()}")
    sizes = []
    for i in range(10):
        base = tmp_path / f"run{i}"
        base.mkdir()
        runner = KewpieRunner(str(base / "wd"))
        proc = runner.run("--suite=main", "basic_test")
        assert proc.returncode == 0, proc.stdout[-3000:]
        assert tagged(runner.workdir) == []
        shutil.rmtree(base)  # the throwaway workdir goes
        assert _templates(root) and len(_templates(root)) == 1, _templates(root)
        assert len(_trees(root)) <= 1, _trees(root)  # the previous run's tree was reclaimed
        sizes.append(_size(shm_root))
    assert max(sizes) < 1.2 * sizes[0] + (1 << 20), sizes  # RAM does not grow per workdir
    runner = KewpieRunner(str(tmp_path / "last" / "wd"))
    proc = runner.run("--mode=cleanup")  # no workdir: nothing to do, nothing made
    assert proc.returncode == 0 and not os.path.exists(runner.workdir)
    proc = runner.run("--suite=main", "basic_test")  # the next run reclaims the tenth tree
    assert proc.returncode == 0 and _trees(root) == [Workdir(runner.workdir).tree_name]
    proc = runner.run("--mode=cleanup")  # cleanup empties the bots of the tree it keeps
    assert proc.returncode == 0
    assert sorted(os.listdir(os.path.join(root, _trees(root)[0]))) == ["lock", "workdir"]
