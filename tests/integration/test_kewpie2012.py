"""kewpie 2012 suites through the real CLI: the kewpie2012_compat suite (a test of every
2012 API gap, in 2012 style) with --randgen-seed and --opt-matrix, servers run as root
with --server-user=root, and a module that does not import failing alone.

Covers: lib/kewpie2012/, percona_tests/kewpie2012_compat/
"""
import re

from tests.conftest import FIXTURE_SUITES


def _rows(out):
    return dict(re.findall(r"INFO (\S+)\s+\[ (\w+) \]\s+\d+$", out, re.M))


def test_kewpie2012_compat_suite(kewpie):
    proc = kewpie.run("--suite=kewpie2012_compat", "--force", "--randgen-seed=7",
                      "--opt-matrix=expect_seed=7,engine=InnoDB")
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr
    assert _rows(proc.stdout) == {
        "kewpie2012_compat.backup_test": "pass", "kewpie2012_compat.environment_test": "pass",
        "kewpie2012_compat.modules_test": "pass", "kewpie2012_compat.randgen_test": "pass",
        "kewpie2012_compat.server_api_test": "pass", "kewpie2012_compat.skipped_test": "skipped"}
    assert "skipped: Test requires XtraDB." in proc.stdout


def test_servers_as_root_and_a_module_that_does_not_import(kewpie):
    proc = kewpie.run(f"--suitepath={FIXTURE_SUITES}", "--suite=kewpie2012_root",
                      "--server-user=root", "--force")
    assert _rows(proc.stdout) == {"kewpie2012_root.py2_test": "fail",
                                  "kewpie2012_root.root_backup_test": "pass"}, proc.stdout[-4000:]
    assert proc.returncode == 1
    line = re.search(r"py2_test\s+\[ fail \]\s+\d+\n.*? INFO (.*)\n", proc.stdout).group(1)
    assert line.endswith("py2_test.py:10: syntax error: Missing parentheses in call to 'print'. "
                         "Did you mean print(...)?")
    # asked for by name, the other module never imports the broken one
    proc = kewpie.run(f"--suitepath={FIXTURE_SUITES}", "--suite=kewpie2012_root", "--list",
                      "root_backup")
    assert (proc.returncode, proc.stdout.split()) == (0, ["kewpie2012_root.root_backup_test"])


def test_bad_opt_matrix_is_one_line(kewpie):
    proc = kewpie.run("--suite=kewpie2012_compat", "--opt-matrix=engine")
    errors = [l for l in (proc.stdout + proc.stderr).splitlines() if " ERROR " in l]
    assert proc.returncode == 2 and len(errors) == 1, proc.stdout + proc.stderr
    assert "'engine' is not name=value" in errors[0]
