"""A mysql-test case that travels: the lines printed for a suite folder (kewpie's own
command, mtr from its directory with the folder named by a globbed path from
mysql-test/suite/, another tree through --basedir/--mtr-root and MTR_BINDIR_FORCED), the
folder's README, what counts as the bug reproduced, and the confirmation's verdicts.

Covers: lib/mtr/travel.py, lib/reduce/confirm.py
"""
import glob
import os
import subprocess

from lib.hunt.wrongresult.rowsform import DIFFERENTIAL
from lib.mtr.travel import (CaseCommands, Tree, climb, kewpie_command, mysql_test_dir,
                            readme_text, reproduced, vardir_arg)
from lib.reduce.confirm import Confirmation, ToolRun
from tests.conftest import ROOT


def _mtr_root(tmp_path):
    root = tmp_path / "usr" / "share" / "mysql" / "mysql-test"
    (root / "include").mkdir(parents=True)
    (root / "suite").mkdir()
    (root / "include" / "default_my.cnf").write_text("")
    (root / "mysql-test-run.pl").write_text("")
    (root / "mtr").symlink_to("mysql-test-run.pl")
    (tmp_path / "usr" / "bin").mkdir()
    return str(root)


def test_climb_reaches_the_root_from_mtrs_suite_folder(tmp_path):
    root = _mtr_root(tmp_path)
    up = climb(root)
    assert os.path.realpath(os.path.join(root, "suite", up)) == "/"
    assert climb("/usr/share/mysql/mysql-test") == "../../../../.."


def test_mtrs_save_folder_stays_inside_the_lines_vardir(tmp_path):
    """mtr saves a failed case's files in $vardir/log/<suite name>: the suite's climb from
    there ends inside <suite>-var, however deep $TMPDIR is."""
    root = "/usr/share/mysql/mysql-test"
    arg = vardir_arg("kw_reduce", root)
    assert arg == "${TMPDIR:-/tmp}/kw_reduce-var/v/v/v/v"
    for tmpdir in ("/tmp", "/dev/shm/kewpie-0/wd-0123/mtr-abc"):
        vardir = arg.replace("${TMPDIR:-/tmp}", tmpdir)
        landed = os.path.normpath(os.path.join(vardir, "log", climb(root)))
        assert landed == os.path.join(tmpdir, "kw_reduce-var")


def test_kewpie_command_is_this_checkouts_script_with_a_given_workdir():
    assert kewpie_command() == os.path.join(ROOT, "kewpie.py")
    assert kewpie_command(os.path.join(ROOT, "workdir")) == os.path.join(ROOT, "kewpie.py")
    assert kewpie_command("/w d") == os.path.join(ROOT, "kewpie.py") + " --workdir='/w d'"


def test_lines_for_the_default_tree_and_another(tmp_path):
    root = _mtr_root(tmp_path)
    usr = str(tmp_path / "usr")
    old = str(tmp_path / "trees" / "10.11.18" / "usr")
    assert mysql_test_dir(usr) == root and mysql_test_dir(old) == ""
    commands = CaseCommands("kw_reduce", "reduced", root, "/k/kewpie.py", 1, usr)
    mine, other = commands.for_trees([Tree("10.11.19 (usr)", usr), Tree("10.11.18", old)])
    assert mine.kewpie == "/k/kewpie.py --mode=mtr --suitepath=.. --suite=kw_reduce reduced"
    assert other.kewpie == (f"/k/kewpie.py --mode=mtr --basedir={old} --mtr-root={root} "
                            f"--suitepath=.. --suite=kw_reduce reduced")
    assert mine.mtr == (f"(here=$(pwd | tr ' ,-' '???'); cd {root} && ./mtr "
                        f"--vardir=\"{vardir_arg('kw_reduce', root)}\" "
                        f"--suite=\"{climb(root)}$here\" reduced)")
    assert f"&& MTR_BINDIR_FORCED={old} ./mtr " in other.mtr
    sporadic = CaseCommands("kw_reduce", "reduced", root, "/k/kewpie.py", 8, usr)
    line = sporadic.for_trees([Tree("t", usr)])[0]
    assert "--repeat=8 reduced" in line.kewpie and "--repeat=8 --suite=" in line.mtr
    assert CaseCommands("s", "t", "", "k").for_trees([Tree("t", usr)])[0].mtr == ""


def test_the_mtr_line_names_a_folder_with_dashes_as_mtr_finds_it(tmp_path):
    """The shell part of the line turns the folder's path into the globbed name; the glob
    (as Perl's, over mtr's suite/ folder) finds the folder again."""
    root = _mtr_root(tmp_path)
    folder = tmp_path / "my-cases" / "a,b c" / "kw_reduce"
    folder.mkdir(parents=True)
    line = CaseCommands("kw_reduce", "reduced", root, "k").for_trees(
        [Tree("t", str(tmp_path / "usr"))])[0].mtr
    shell = line.split(";")[0].lstrip("(") + f'; printf %s "{climb(root)}$here"'
    name = subprocess.run(["sh", "-c", shell], cwd=folder, capture_output=True,
                          text=True, check=True).stdout
    assert not set("-, ") & set(name)
    found = glob.glob(os.path.join(root, "suite", name))
    assert [os.path.realpath(p) for p in found] == [os.path.realpath(folder)]


def test_readme_lists_each_trees_lines():
    commands = CaseCommands("kw_reduce", "reduced", "", "/k/kewpie.py").for_trees(
        [Tree("10.11.19 (/usr)", "/usr")])
    text = readme_text(commands, "planted crash (7eeb1eeb9e1f)", "kw_reduce")
    assert text.startswith("planted crash (7eeb1eeb9e1f)\n")
    assert "On 10.11.19 (/usr):\n  /k/kewpie.py --mode=mtr --suitepath=.. " in text
    assert "$MTR_SUITE_DIR/plugin" in text


def test_reproduced_wants_the_cases_failure_the_bugs_way():
    lost = ("kw_reduce.reduced   [ fail ]\nmysqltest: At line 7: query 'SELECT 1' failed: "
            "<Unknown> (2013): Lost connection to server during query\n")
    assert reproduced(lost, "kw_reduce", "reduced", "crash")
    assert reproduced("../../x/kw_reduce.reduced w1 [ fail ]\n(2013)", "kw_reduce",
                      "reduced", "crash")
    assert not reproduced(lost, "kw_reduce", "reduced", "wrong-result")
    # mtr saw the server die before mysqltest did: it kills mysqltest, no 2013 is printed
    died = ("kw_reduce.reduced   [ fail ]\n        Test ended at 2026-11-28 12:00:00\n\n"
            "Server [mysqld.1 - pid: 4242, winpid: 4242] failed during test run\n"
            "Server log from this test:\n")
    assert reproduced(died, "kw_reduce", "reduced", "crash")
    assert not reproduced(died.replace("failed during test run", "ended"), "kw_reduce",
                          "reduced", "crash")
    assert not reproduced("kw_reduce.reduced [ pass ]\n(2013)", "kw_reduce", "reduced", "crash")
    # an oracle's case judged again dies with its oracle's name (the Radar case of
    # 0ec90c9b96b3 was confirmed "absent" on both trees while it failed so)
    assert reproduced("kw_reduce.reduced [ fail ]\nmysqltest: At line 56: wrong result (radar): "
                      "statement 2 gives other rows than statement 1", "kw_reduce", "reduced",
                      "wrong-result")
    assert not reproduced("kw_reduce.reduced [ fail ]\nAt line 48: query 'CREATE TABLE' failed: "
                          "ER_UNKNOWN_STORAGE_ENGINE", "kw_reduce", "reduced", "wrong-result")
    assert reproduced("kw_reduce.reduced [ fail ]\nAt line 9: wrong result: SELECT",
                      "kw_reduce", "reduced", "wrong-result")   # a case before session 10
    assert reproduced(f"kw_reduce.reduced [ fail ]\nAt line 40: {DIFFERENTIAL}",
                      "kw_reduce", "reduced", "wrong-result")


def test_a_repeated_runs_numbered_fail_row_is_the_cases_failure():
    # mysql-test-run.pl --repeat=30 numbers the runs after the first; a sporadic crash on
    # the third run was confirmed "absent" (issue 46's CI failure of 62cbb9b)
    repeated = ("../../x/kw_reduce.reduced [ pass ]     24\n"
                "../../x/kw_reduce.reduced [ 2 pass ]      3\n"
                "../../x/kw_reduce.reduced [ 3 fail ]\n"
                "mysqltest: At line 7: query 'SELECT 1' failed: (2013): Lost connection\n")
    assert reproduced(repeated, "kw_reduce", "reduced", "crash")
    assert reproduced(repeated.replace("reduced [ 3", "reduced w2 [ 3"), "kw_reduce",
                      "reduced", "crash")
    assert not reproduced(repeated.replace("[ 3 fail ]", "[ 3 pass ]"), "kw_reduce",
                          "reduced", "crash")
    assert not reproduced(repeated.replace("reduced [ 3", "reduced2 [ 3"), "kw_reduce",
                          "reduced", "crash")


def test_confirmation_verdicts_per_tree():
    def run(tree, tool, ok):
        return ToolRun(tree, tool, "line", ok, 1, 2.0, "log")
    both = Confirmation([run("a", "kewpie", True), run("a", "mtr", True),
                         run("b", "kewpie", True), run("b", "mtr", False),
                         run("c", "kewpie", False), run("c", "mtr", False),
                         run("d", "kewpie", True)])
    assert both.split(["a", "b", "c", "d"]) == (["a", "b (under kewpie only)", "d"], ["c"])
    assert both.to_json()[0]["tool"] == "kewpie"
