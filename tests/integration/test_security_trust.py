"""Security issue 43 (items 1 and 2): nothing user ``nobody`` owns steers root's run, and
no output is written through a link.

Run as root, with the planted material owned by ``nobody`` (os.chown):

- a suite folder (``--suitepath``) whose test module would write a file when imported
  and whose kewpie.toml sets ``basedir``: refused with exit 2 and one ERROR line naming
  the folder, its owner and mode and ``--trust``; nothing imported, no workdir made,
  the kewpie.toml not read; with ``--trust`` the same folder is accepted (its
  kewpie.toml read, its one tiny test run);
- a finding folder of nobody's holding a planted ``reduce -> victim`` link, given to
  ``--mode=reduce``: refused; trusted on purpose, its ``reduce`` link is not followed
  (the run is refused before anything starts), the victim folder untouched;
- a ``--basedir`` tree and a ``--randgen-path`` checkout of nobody's: refused before any
  of their programs runs.

Covers: lib/platform/trustedpath.py, lib/platform/safewrite.py, lib/platform/usertrust.py,
lib/cli.py, lib/servers/codetree.py, lib/modes/reduce/run.py
"""
from __future__ import annotations

import os
import shutil
import tempfile

import pytest

from tests.fixtures.reduce.planted import write_finding

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="runs as root, plants as nobody")

NOBODY = 65534


def give_to_nobody(top: str) -> None:
    """Everything under top (top too) owned by nobody, links included."""
    for dirpath, dirnames, filenames in os.walk(top):
        for name in dirnames + filenames:
            os.lchown(os.path.join(dirpath, name), NOBODY, NOBODY)
    os.lchown(top, NOBODY, NOBODY)


def error_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if " ERROR " in line]


def refused(proc, *words: str) -> str:
    """Exit status 2 with exactly one ERROR line holding every word; returns the line."""
    assert proc.returncode == 2, proc.stdout[-3000:] + proc.stderr[-3000:]
    errors = error_lines(proc.stdout)
    assert len(errors) == 1, proc.stdout[-3000:]
    for word in words:
        assert word in errors[0], errors[0]
    assert "Traceback" not in proc.stdout + proc.stderr
    return errors[0]


def snapshot(top: str) -> dict[str, tuple]:
    """Every entry under top (not following links): type, owner, mode and content."""
    seen = {}
    for dirpath, dirnames, filenames in os.walk(top):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            if os.path.islink(path):
                what = ("link", os.readlink(path))
            elif os.path.isdir(path):
                what = ("dir", None)
            else:
                with open(path, "rb") as fh:
                    what = ("file", fh.read())
            seen[os.path.relpath(path, top)] = (*what, st.st_uid, st.st_mode, st.st_mtime_ns)
    return seen


@pytest.fixture
def public():
    """A folder in /tmp (root's, 0755) where nobody's material is planted; removed after."""
    base = tempfile.mkdtemp(prefix="kewpie-it-43-", dir="/tmp")
    os.chmod(base, 0o755)
    yield base
    shutil.rmtree(base)


@pytest.fixture
def victim():
    """A root-only folder with content: where a planted link points."""
    base = tempfile.mkdtemp(prefix="kewpie-it-43-root-", dir="/tmp")
    target = os.path.join(base, "victimdir")
    os.mkdir(target, 0o700)
    with open(os.path.join(target, "precious"), "w") as fh:
        fh.write("root's own content\n")
    yield target
    shutil.rmtree(base)


@pytest.fixture
def user_config(tmp_path, monkeypatch):
    """No safe-directories of the real user's: XDG_CONFIG_HOME is a fresh folder."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    return tmp_path / "config" / "kewpie" / "config.toml"


def plant_suite(public: str, marker: str) -> str:
    """Suites of nobody's: ``evil`` (its module writes marker when imported) and a
    kewpie.toml that sets basedir; the suite path."""
    suites = os.path.join(public, "suites")
    os.makedirs(os.path.join(suites, "evil"))
    with open(os.path.join(suites, "evil", "suite_config.py"), "w") as fh:
        fh.write("server_requirements = [[]]\n")
    with open(os.path.join(suites, "evil", "tiny_test.py"), "w") as fh:
        fh.write(f"open({marker!r}, 'w').close()  # runs as root when imported\n"
                 "from lib.testcase import KewpieTestCase\n\n\n"
                 "class Tiny(KewpieTestCase):\n"
                 "    def test_tiny(self):\n"
                 "        self.servers[0].execute('SELECT 1')\n")
    with open(os.path.join(suites, "kewpie.toml"), "w") as fh:
        fh.write('[defaults]\nbasedir = "/usr"\n')
    give_to_nobody(suites)
    return suites


def test_a_foreign_suitepath_is_refused_then_accepted_on_trust(kewpie, public, tmp_path,
                                                               user_config):
    marker = str(tmp_path / "imported")
    suites = plant_suite(public, marker)
    proc = kewpie.run(f"--suitepath={suites}", "--suite=evil", timeout=60)
    line = refused(proc, f"refusing --suitepath {suites}", "uid 65534 (nobody)", "mode 0755",
                   f"--trust {suites}", "safe-directories")
    assert "Settings from" not in proc.stdout  # its kewpie.toml was not read
    assert not os.path.exists(marker), line
    assert not os.path.exists(kewpie.workdir)  # nothing written

    # a folder of root's holding nobody's suites: refused too, naming the entry in it
    mixed = os.path.join(public, "mixed")
    shutil.copytree(suites, mixed, symlinks=True)  # root's copy, then its suite nobody's
    give_to_nobody(os.path.join(mixed, "evil"))
    proc = kewpie.run(f"--suitepath={mixed}", "--suite=evil", timeout=60)
    refused(proc, f"refusing --suitepath {mixed}", f"{mixed}/evil", "(in it)", "nobody")
    assert not os.path.exists(marker) and not os.path.exists(kewpie.workdir)

    proc = kewpie.run(f"--suitepath={suites}", "--suite=evil", f"--trust={suites}",
                      timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert f"Settings from {suites}/kewpie.toml" in proc.stdout
    assert "evil.tiny_test" in proc.stdout and os.path.exists(marker)


def test_safe_directories_in_the_users_own_config_trust_a_folder(kewpie, public, tmp_path,
                                                                 user_config):
    marker = str(tmp_path / "imported")
    suites = plant_suite(public, marker)
    user_config.parent.mkdir(parents=True)
    user_config.write_text(f'safe-directories = ["{suites}"]\n')
    proc = kewpie.run(f"--suitepath={suites}", "--suite=evil", "--list", timeout=60)
    assert proc.returncode == 0 and "evil.tiny_test" in proc.stdout, proc.stdout[-3000:]
    os.chown(user_config, NOBODY, NOBODY)  # a config another user could change trusts nothing
    proc = kewpie.run(f"--suitepath={suites}", "--suite=evil", "--list", timeout=60)
    refused(proc, "refusing your kewpie config", str(user_config), "nobody")


def test_a_foreign_finding_folder_and_its_planted_reduce_link(kewpie, public, victim,
                                                              user_config):
    finding = write_finding(os.path.join(public, "t0001-1-crash-planted"),
                            [(0, "CREATE TABLE t (a INT)"), (0, "SELECT 1")], [])
    os.symlink(victim, os.path.join(finding, "reduce"))
    give_to_nobody(finding)
    before = snapshot(victim)
    proc = kewpie.run("--mode=reduce", finding, timeout=60)
    refused(proc, f"refusing the TEST path {finding}", "uid 65534 (nobody)", f"--trust {finding}")
    proc = kewpie.run("--mode=reduce", finding, f"--trust={finding}", timeout=60)
    refused(proc, f"refusing to write the finding's reduce folder {finding}/reduce",
            f"a symbolic link to {victim}", "never writes through a link")
    assert snapshot(victim) == before
    assert not os.path.exists(kewpie.workdir)
    out = os.path.join(public, "out")  # the output elsewhere: into a link there, refused too
    os.symlink(victim, out)
    proc = kewpie.run("--mode=reduce", finding, f"--trust={finding}", f"--reduce-out={out}",
                      timeout=60)
    refused(proc, f"refusing to write --reduce-out {out}", f"a symbolic link to {victim}")
    assert snapshot(victim) == before


def test_a_foreign_basedir_and_randgen_path_are_refused(kewpie, public, tmp_path, user_config):
    marker = str(tmp_path / "ran")
    tree = os.path.join(public, "tree")
    os.makedirs(os.path.join(tree, "sbin"))
    for name in ("mariadbd", "mariadb-install-db"):
        path = os.path.join(tree, "sbin", name)
        with open(path, "w") as fh:
            fh.write(f"#!/bin/sh\ntouch {marker}\necho 'mariadbd  Ver 10.11.99-MariaDB for "
                     f"debian-linux-gnu on x86_64'\n")
        os.chmod(path, 0o755)
    randgen = os.path.join(public, "randgen")
    os.makedirs(randgen)
    with open(os.path.join(randgen, "gentest.pl"), "w") as fh:
        fh.write(f"system('touch {marker}');\n")
    give_to_nobody(tree)
    give_to_nobody(randgen)
    proc = kewpie.run(f"--basedir={tree}", timeout=60)
    refused(proc, f"refusing --basedir {tree}", "uid 65534 (nobody)", f"--trust {tree}")
    proc = kewpie.run(f"--randgen-path={randgen}", timeout=60)
    refused(proc, f"refusing --randgen-path {randgen}", "uid 65534 (nobody)")
    assert not os.path.exists(marker) and not os.path.exists(kewpie.workdir)
    # a tree of root's whose server binary is nobody's: refused before it runs
    os.lchown(tree, 0, 0)
    os.lchown(os.path.join(tree, "sbin"), 0, 0)
    proc = kewpie.run(f"--basedir={tree}", timeout=60)
    refused(proc, f"{tree}/sbin/mariadb", "program", "nobody")
    assert not os.path.exists(marker)
