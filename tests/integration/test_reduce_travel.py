"""A reproducer that travels: the planted UDF crash (gcc-built, tests/fixtures/hunt/) is
reduced by --mode=reduce, whose confirmation runs the case from its folder on each code
tree under kewpie --mode=mtr and the real mysql-test-run.pl; the case's folder is then
copied to a new directory with dashes in its path (the original removed), and every
line its README.txt prints runs there exactly as printed -- kewpie's own command as it
is invoked here, mysql-test-run.pl from its directory -- and crashes 10.11.19 and
10.11.18 (trees/10.11.18 from scripts/get-tree).  The copy names nothing outside itself:
its .opt says --plugin-dir=$MTR_SUITE_DIR/plugin and the UDF is in its plugin/.

Covers: lib/mtr/travel.py, lib/reduce/confirm.py, lib/reduce/mtrcase.py, lib/modes/reduce/run.py
"""
import glob
import json
import os
import re
import shutil
import subprocess
import tempfile

import pytest

from lib.mtr.reference import lease_reference_ports, reference_mtr_env
from lib.platform.ports import default_lock_dir
from lib.reduce.settings import PINNED
from tests.conftest import OLD_TREE, ROOT, tagged
from tests.fixtures.hunt.planted import LIBRARY, build_plugin_dir, remove_plugin_dir
from tests.fixtures.reduce.planted import crash_trace, write_finding

MTR_ROOT = "/usr/share/mysql/mysql-test"
LOST = "(2013): Lost connection to server during query"
# mysql-test-run.pl's line when it sees the server die before mysqltest reports the lost
# connection (it kills mysqltest then: a race, either line may come)
MTR_SERVER_DIED = re.compile(r"Server \[mysqld\.1 - pid: \d+[^\]]*\] failed during test run")

pytestmark = pytest.mark.skipif(
    not os.path.isfile(os.path.join(MTR_ROOT, "mysql-test-run.pl")),
    reason="mysql-test-run.pl (Debian's mariadb-test) is not installed")


def printed_lines(readme: str) -> dict[str, list[str]]:
    """The README's commands per tree: the indented lines under each 'On <tree>:'."""
    out: dict[str, list[str]] = {}
    tree = None
    for line in readme.splitlines():
        if line.startswith("On ") and line.endswith(":"):
            tree = line[3:-1]
            out[tree] = []
        elif tree is not None and line.startswith("  "):
            out[tree].append(line.strip())
        elif not line.strip():
            tree = None
    return out


def run_as_printed(line: str, cwd: str, base: str) -> subprocess.CompletedProcess:
    """A printed line run by sh in cwd, as a user pastes it; mtr's ports leased from
    kewpie's lock directory and its temporary files (and vardir) under base, through the
    environment only."""
    tmpdir = tempfile.mkdtemp(prefix="tmp", dir=base)
    os.chmod(tmpdir, 0o755)
    with lease_reference_ports(default_lock_dir()) as span:
        env = reference_mtr_env(span, tmpdir)
        env.pop("KEWPIE_NO_VENV", None)   # a user's shell: kewpie.py finds its .venv
        return subprocess.run(["sh", "-c", line], cwd=cwd, capture_output=True, text=True,
                              timeout=600, env=env, stdin=subprocess.DEVNULL)


def lost_server(out: str) -> bool:
    """Whether a tool's output says the case lost its server (mysqltest's 2013, or mtr's
    line when mtr saw the server die first)."""
    return LOST in out or bool(MTR_SERVER_DIED.search(out))


def confirmation_evidence(runs: list[dict]) -> str:
    """Each confirmation run, how it ended and its log's tail: what a failure needs to be
    understood from CI's output alone (reduce.json's list alone is cut by pytest)."""
    parts = []
    for run in runs:
        try:
            with open(run["log"], errors="replace") as handle:
                tail = handle.read()[-2500:]
        except OSError as exc:
            tail = f"(its log: {exc})"
        parts.append(f"{run['tree']} {run['tool']}: reproduced={run['reproduced']} "
                     f"exit={run.get('exit_status')} {run.get('seconds')} s\n"
                     f"  line: {run['line']}\n{tail}")
    return "\n\n".join(parts)


@pytest.fixture(scope="module")
def plugin_dir():
    """A plugin directory holding the planted UDF (built with gcc now), removed after."""
    path = build_plugin_dir()
    yield path
    remove_plugin_dir(path)


def test_reduced_case_travels_and_crashes_both_trees_under_both_tools(kewpie, plugin_dir):
    base = tempfile.mkdtemp(prefix="kw-travel-", dir="/tmp")
    os.chmod(base, 0o755)  # the servers run as their own user: they load the case's UDF
    try:
        finding = write_finding(os.path.join(base, "t0001-1-crash-planted"),
                                crash_trace(8, 2, 3), [f"--plugin-dir={plugin_dir}"])
        proc = kewpie.run("--mode=reduce", finding, "--reduce-parallel=1", timeout=600)
        assert proc.returncode == 0, proc.stdout[-4000:]
        assert not tagged(kewpie.workdir)
        # mtr's save folder ($vardir/log/<suite>.<test>, the suite a climb to '/') stayed
        # inside what the confirmation owns: before, from a vardir in kewpie's RAM tree the
        # climb ended in /dev/shm and mtr left /dev/shm/tmp/<this folder>/... behind
        strays = [p for depth in range(4) for p in glob.glob(
            os.path.join("/dev/shm", *["*"] * depth, os.path.basename(base)))]
        assert strays == [], strays
        figures = json.load(open(os.path.join(finding, "reduce", "reduce.json")))
        trees = ["10.11.19"] + (["10.11.18"] if os.path.isdir(OLD_TREE) else [])
        # the confirmation ran the case from its folder under both tools on each tree
        runs = figures["confirmation"]
        for version in trees:
            mine = [r for r in runs if r["tree"].startswith(version)]
            assert sorted(r["tool"] for r in mine) == ["kewpie", "mtr"], runs
            assert all(r["reproduced"] for r in mine), confirmation_evidence(mine)
            assert any(p.startswith(f"{version} (") and "only" not in p
                       for p in figures["present"]), figures["present"]

        # the folder copied where its path has dashes, the original gone
        suite_src = os.path.dirname(os.path.dirname(figures["test"]))
        report = open(figures["report"]).read()
        suite = os.path.join(base, "bug-reports", "copy-1", "kw_reduce")
        shutil.copytree(suite_src, suite, symlinks=True)
        shutil.rmtree(os.path.join(finding, "reduce"))
        # the plugin folder the case carries, after the settings mysql-test's config changes
        opts = open(os.path.join(suite, "t", "reduced.opt")).read().split()
        assert opts[-1] == "--plugin-dir=$MTR_SUITE_DIR/plugin", opts
        assert {o.split("=", 1)[0] for o in opts[:-1]} <= \
            {"--" + n.replace("_", "-") for n in PINNED}, opts
        assert os.path.isfile(os.path.join(suite, "plugin", LIBRARY))
        lines = printed_lines(open(os.path.join(suite, "README.txt")).read())
        assert [t.split(" ")[0] for t in lines] == trees, lines
        for tree, (kewpie_line, mtr_line) in lines.items():
            assert f"  {kewpie_line}\n" in report and f"  {mtr_line}\n" in report
            assert kewpie_line.startswith(os.path.join(ROOT, "kewpie.py") + " ")
            assert mtr_line.startswith("(") and f"cd {MTR_ROOT} && " in mtr_line
            for line, row in ((kewpie_line, r"kw_reduce\.reduced\s+\[ fail \]"),
                              (mtr_line, r"copy.1/kw_reduce\.reduced\s+\[ fail \]")):
                done = run_as_printed(line, suite, base)
                out = done.stdout + done.stderr
                assert done.returncode != 0 and re.search(row, out), (tree, line, out[-4000:])
                assert lost_server(out) and tree.split(" ")[0] in out, (tree, line, out[-4000:])
            assert not tagged(kewpie.workdir)
        # mtr saved the failures' files in its vardir (moved there from beside the folder)
        assert sorted(os.listdir(os.path.dirname(suite))) == ["kw_reduce"]
    finally:
        shutil.rmtree(base, ignore_errors=True)
