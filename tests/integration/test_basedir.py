"""--basedir code paths: a tarball-style tree using the MySQL names for the tools.

Covers: lib/servers/codetree.py
"""
import os
import shutil
import tempfile

import pytest



LINKS = {
    "sbin/mariadbd": "/usr/sbin/mariadbd",
    "scripts/mysql_install_db": "/usr/bin/mariadb-install-db",
    "bin/mysql": "/usr/bin/mariadb",
    "bin/mysqldump": "/usr/bin/mariadb-dump",
    "bin/my_print_defaults": "/usr/bin/my_print_defaults",
    "share": "/usr/share",
    "lib/mysql": "/usr/lib/mysql",
}


@pytest.fixture
def fake_tree():
    base = tempfile.mkdtemp(prefix="kewpie-tree-", dir="/tmp")
    os.chmod(base, 0o755)
    for rel, target in LINKS.items():
        path = os.path.join(base, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        os.symlink(target, path)
    yield base
    shutil.rmtree(base, ignore_errors=True)


def test_tree_with_mysql_tool_names(kewpie, fake_tree):
    proc = kewpie.run(f"--basedir={fake_tree}", "--suite=main", "basic", "legacy")
    assert proc.returncode == 0, proc.stdout
    assert f"basedir: {fake_tree}" in proc.stdout
    assert f"clientbindir: {fake_tree}/bin" in proc.stdout


def test_tree_without_initialiser_is_one_error(kewpie, fake_tree):
    os.unlink(os.path.join(fake_tree, "scripts/mysql_install_db"))
    proc = kewpie.run(f"--basedir={fake_tree}", "--suite=main")
    assert proc.returncode == 2
    errors = [l for l in proc.stdout.splitlines() if " ERROR " in l]
    assert len(errors) == 1 and "no datadir initialiser" in errors[0]
