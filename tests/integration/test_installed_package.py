"""kewpie installed as a user would (``pip install <checkout>``, not editable), used from
another directory: the ``kewpie`` command runs a suite, pytest gets the plugin's
fixtures, and no top-level ``lib`` is importable.

Covers: pyproject.toml (packages, data), lib/home.py, lib/aliases.py, lib/kewpie2012/.
"""
from __future__ import annotations

import os
import site
import subprocess
import sys
import sysconfig
import zipfile

import pytest

from tests.conftest import ROOT, tagged


def _run(argv: list[str], cwd: str, env: dict[str, str] | None = None,
         timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A fresh venv outside the checkout with kewpie pip-installed from it.

    The venv's other packages (PyMySQL, psutil...) come from the checkout's
    venv through a .pth line (a plain path: no .pth of that venv runs, so its
    editable kewpie is not seen), which keeps the test to seconds; kewpie
    itself is built and installed from the checkout as a wheel."""
    base = tmp_path_factory.mktemp("installed")
    os.chmod(base, 0o755)
    venv = os.path.join(str(base), "venv")
    _run([sys.executable, "-m", "venv", venv], cwd=str(base)).check_returncode()
    python = os.path.join(venv, "bin", "python")
    purelib = _run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                   cwd=str(base)).stdout.strip()
    ours = sysconfig.get_paths()["purelib"] if sys.prefix != sys.base_prefix else \
        site.getsitepackages()[0]
    with open(os.path.join(purelib, "zz_checkout_deps.pth"), "w") as fh:
        fh.write(ours + "\n")
    wheels = os.path.join(str(base), "wheels")
    built = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                  "--disable-pip-version-check", "-q", "-w", wheels, ROOT], cwd=str(base))
    assert built.returncode == 0, built.stdout + built.stderr
    wheel = os.path.join(wheels, os.listdir(wheels)[0])
    done = _run([python, "-m", "pip", "install", "--no-deps", "--disable-pip-version-check",
                 "-q", wheel], cwd=str(base))
    assert done.returncode == 0, done.stdout + done.stderr
    user = os.path.join(str(base), "project")
    os.makedirs(user)
    return {"venv": venv, "python": python, "wheel": wheel, "cwd": user,
            "kewpie": os.path.join(venv, "bin", "kewpie")}


def test_the_wheel_has_no_lib_and_ships_what_a_run_needs(installed: dict[str, str]) -> None:
    names = zipfile.ZipFile(installed["wheel"]).namelist()
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert tops == {"kewpie"}
    for shipped in ("kewpie/servers/valgrind.supp", "kewpie/randgen/coprocess.pl",
                    "kewpie/_data/percona_tests/main/basic_test.py",
                    "kewpie/_data/randgen/conf/kewpie/transactions.yy",
                    "kewpie/_data/scripts/innobackupex",
                    "kewpie/_data/std_data/bug723097.sql",
                    "kewpie/_data/sysbench/tpcc_like.lua", "kewpie/_data/sysbench/reconnect.lua"):
        assert shipped in names, shipped


def test_no_top_level_lib_is_importable(installed: dict[str, str]) -> None:
    done = _run([installed["python"], "-c", "import lib"], cwd=installed["cwd"])
    assert done.returncode == 1 and "No module named 'lib'" in done.stderr
    done = _run([installed["python"], "-c", "import kewpie.cli, kewpie; print(kewpie.__file__)"],
                cwd=installed["cwd"])
    assert done.returncode == 0 and installed["venv"] in done.stdout, done.stderr
    # kewpie 2012's API by its 2012 name, installed: one module under both names
    done = _run([installed["python"], "-c",
                 "import kewpie.util.mysqlBaseTestCase as old, kewpie.kewpie2012.mysqlBaseTestCase"
                 " as new; assert old is new; print(old.__name__)"], cwd=installed["cwd"])
    assert done.stdout.strip() == "kewpie.kewpie2012.mysqlBaseTestCase", done.stderr


def test_kewpie_command_runs_the_main_suite(installed: dict[str, str]) -> None:
    workdir = os.path.join(installed["cwd"], "workdir")
    done = _run([installed["kewpie"], "--suite=main"], cwd=installed["cwd"])
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "STATUS: PASS, 4/4" in done.stdout
    assert "/kewpie/_data/percona_tests" in done.stdout or "main.basic_test" in done.stdout
    assert os.path.isdir(workdir)  # the default workdir is the current directory's
    assert tagged(workdir) == []


def test_pytest_fixture_from_another_project(installed: dict[str, str]) -> None:
    tests = os.path.join(installed["cwd"], "test_uses_kewpie.py")
    with open(tests, "w") as fh:
        fh.write("def test_server_answers(kewpie_server):\n"
                 "    assert kewpie_server.execute('SELECT 1+1')[0][0] == 2\n")
    workdir = os.path.join(installed["cwd"], "pytest-workdir")
    done = _run([installed["python"], "-m", "pytest", "-q", "-p", "no:cacheprovider",
                 f"--kewpie-workdir={workdir}", tests], cwd=installed["cwd"])
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "1 passed" in done.stdout
    assert tagged(workdir) == []
