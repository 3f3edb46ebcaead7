"""kewpie 2012 suites wherever they live: tests/fixtures/suites2012 (2012-style suites
named like kewpie's own cluster_basic and upgrade, and innodbCrash, which kewpie lacks;
each module imports its suite_config and a sibling helper by package path and checks
they are its own folder's) copied outside the checkout, into a folder not called
percona_tests and without __init__.py, and run with --suitepath; one line names the
folder used for a name kewpie also ships; the same names inside the checkout still run
kewpie's own.

Covers: lib/suites/suite_imports.py, lib/suites/loader.py, lib/run/selection.py
"""
import os
import re
import shutil

import pytest

from tests.conftest import OLD_VERSION, ROOT

SUITES2012 = os.path.join(ROOT, "tests", "fixtures", "suites2012")


def _rows(out):
    return dict(re.findall(r"INFO (\S+)\s+\[ (\w+) \]\s+\d+$", out, re.M))


def _shadow_lines(out):
    return [line for line in out.splitlines() if re.search(r" INFO suite \S+: using ", line)]



def test_suites_outside_the_checkout_import_their_own_folders(kewpie, tmp_path):
    tree = tmp_path / "old_tests"
    shutil.copytree(SUITES2012, tree)
    assert not (tree / "__init__.py").exists()
    proc = kewpie.run(f"--suitepath={tree}", "--suite=cluster_basic,upgrade,innodbCrash",
                      "--force")
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr
    assert _rows(proc.stdout) == {"cluster_basic.replace_test": "pass",
                                  "upgrade.restart_keeps_data_test": "pass",
                                  "innodbCrash.innodbCrash1_test": "pass"}
    assert "cluster_basic fixture on port" in proc.stdout  # the copy's module ran
    shadows = _shadow_lines(proc.stdout)
    assert len(shadows) == 2, shadows
    for name in ("cluster_basic", "upgrade"):
        line = next(l for l in shadows if f" suite {name}: " in l)
        assert f"using {tree / name};" in line
        assert f"also in {os.path.join(ROOT, 'percona_tests', name)}, not used" in line
        assert "--suitepath order" in line


def test_the_checkouts_own_suites_keep_their_names(kewpie, tmp_path, old_tree):
    listed = kewpie.run("--list", "--suite=cluster_basic,upgrade")
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert listed.stdout.split() == ["cluster_basic.autoinc_test", "cluster_basic.conflict_test",
                                     "cluster_basic.rejoin_test", "cluster_basic.replicate_test",
                                     "upgrade.upgrade_test"]
    # in one run: the copy's innodbCrash and kewpie's own upgrade (two code trees)
    tree = tmp_path / "more_tests"
    tree.mkdir()
    shutil.copytree(os.path.join(SUITES2012, "innodbCrash"), tree / "innodbCrash")
    proc = kewpie.run("--basedir=/usr", f"--basedir={old_tree}", f"--suitepath={tree}",
                      "--suite=innodbCrash,upgrade")
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr
    assert _rows(proc.stdout) == {"innodbCrash.innodbCrash1_test": "pass",
                                  "upgrade.upgrade_test": "pass"}
    assert f"upgrade: {OLD_VERSION}-MariaDB" in proc.stdout
    assert _shadow_lines(proc.stdout) == []
