"""A mysql-test case that travels: a suite folder that runs wherever it is copied, under
``kewpie --mode=mtr`` and under MariaDB's own mysql-test-run.pl, by commands printed for it
and checked by running them.

The folder (``kw_reduce/``: ``t/``, ``r/``, ``plugin/``, ``README.txt``) names nothing
outside itself:

- the libraries its cases load are in its ``plugin/`` folder, and the ``.opt`` names
  them ``--plugin-dir=$MTR_SUITE_DIR/plugin``: both tools set ``MTR_SUITE_DIR`` to the
  suite's folder and expand ``$VAR`` in ``.opt`` files (mtr's ``get_extra_opts``);
- the commands run from the folder itself (``cd`` into it, or into a copy of it).

kewpie takes the folder by its parent and its name (``--suitepath=.. --suite=kw_reduce``),
whatever the path holds.  mysql-test-run.pl (run from its own directory: it refuses
another) cuts every ``--suite`` value at ``-`` and ``,`` (``collect_suite_name``'s
``split '-'``), so a suite given by an absolute path works only when the path holds no
``-``; a path with one (every hunt finding's folder has them) fails with "Could not find
'...'".  What mtr does accept: a suite name it looks up under ``mysql-test/suite/``
through Perl's ``glob`` (``My::Find::my_find_dir``), so a name that climbs from there to
``/`` and spells each ``-`` (``,``, space) as ``?`` finds the folder:
``--suite="../../../../..$(pwd | tr ' ,-' '???')"`` from ``/usr/share/mysql/mysql-test``.
mtr then names the case by that relative path, and on a failure saves the servers' files
in ``$vardir/log/<that name>`` before moving them to ``$vardir/log/kw_reduce.reduced``
(and may write there after the move): the same climb from ``$vardir/log`` would land
anywhere -- beside the case's folder (where a world-writable log left behind makes the
folder untrusted for kewpie's line) or, from a deeper ``$TMPDIR``, outside every folder
the run owns.  So the line's vardir is that many levels deep
(``--vardir="${TMPDIR:-/tmp}/kw_reduce-var/v/v/v/v"`` for a climb of five,
:func:`vardir_arg`): the climb from its ``log/`` ends in ``kw_reduce-var`` itself.  (A
path holding glob characters, or a sibling that differs only where a ``?`` stands --
``a-b`` beside ``a_b`` -- would match otherwise: such paths are for kewpie's line.)

Another code tree: kewpie's ``--basedir`` (with ``--mtr-root`` when the tree has no
mysql-test directory, as trees/10.11.18 from scripts/get-tree has none); mtr's
``MTR_BINDIR_FORCED`` (the variable its ``restart_bindir`` sets: the server binary from
that tree, everything else -- mariadb-test, the bootstrap SQL, messages -- from mtr's own).
"""
from __future__ import annotations

import os
import re
import shlex
import shutil
import sys
from dataclasses import dataclass
from typing import Mapping, Sequence

from ..home import checkout_root
from ..platform.tools import ToolResult, run_tool

PLUGIN_FOLDER = "plugin"
PLUGIN_DIR_OPTION = f"--plugin-dir=$MTR_SUITE_DIR/{PLUGIN_FOLDER}"
README = "README.txt"
MTR_DIR_CANDIDATES = ("mysql-test", "share/mysql/mysql-test", "share/mariadb/mysql-test",
                      "share/mysql-test", "mariadb-test")
# what mtr's --suite is cut at ('-', ',') or its glob splits at (' '): spelt '?'
MTR_SUITE_UNSAFE = " ,-"
# the case lost its server: mysqltest's own line, or mysql-test-run.pl's when it saw the
# server die before mysqltest did (it then kills mysqltest: no 2013 is printed)
LOST_SERVER = re.compile(r"\((?:2013|2006)\)|Lost connection|server has gone away"
                         r"|Server \[mysqld\.\d+[^\]\n]*\] failed during test run")
# a case's "wrong result (differential): ...", "wrong result (radar): ..." (and a case
# written before session 10, whose differential check died with "wrong result: SELECT ...")
WRONG_RESULT = re.compile(r"wrong result(?: \([\w-]+\))?:")
# a performance finding's case (CERT's estimates): "performance (cert): ..."
PERFORMANCE = re.compile(r"performance \([\w-]+\):")


def mysql_test_dir(basedir: str) -> str:
    """The code tree's mysql-test directory ('' when it has none)."""
    for sub in MTR_DIR_CANDIDATES:
        path = os.path.join(basedir, sub)
        if os.path.isfile(os.path.join(path, "include", "default_my.cnf")):
            return path
    return ""


def climb(mtr_root: str) -> str:
    """``../`` from mtr's ``suite/`` folder up to ``/`` (mtr resolves the directory it runs
    in, so the physical path counts)."""
    parts = [p for p in os.path.realpath(os.path.join(mtr_root, "suite")).split("/") if p]
    return "/".join([".."] * len(parts))


def vardir_arg(suite: str, mtr_root: str) -> str:
    """The mtr line's ``--vardir`` value: ``$TMPDIR/<suite>-var`` and under it as many
    levels as :func:`climb` climbs less one, so mtr's save folder (``$vardir/log/`` and the
    suite's climbing name) stays inside ``<suite>-var``."""
    levels = climb(mtr_root).count("..")
    return "${TMPDIR:-/tmp}/" + "/".join([f"{suite}-var", *["v"] * (levels - 1)])


def kewpie_command(workdir: str = "") -> str:
    """kewpie's own command as it runs here: ``kewpie.py`` of this checkout by its absolute
    path (a ``kewpie`` console script is on PATH only when installed; installed, the
    script on PATH, else the one that runs now by its absolute path), with ``--workdir``
    when the run was given one other than the default."""
    root = checkout_root()
    program = os.path.join(root, "kewpie.py") if root else \
        ("kewpie" if shutil.which("kewpie") else os.path.abspath(sys.argv[0]))
    default = os.path.join(root or os.getcwd(), "workdir")
    given = workdir and os.path.abspath(workdir) != os.path.abspath(default)
    return shlex.quote(program) + (f" --workdir={shlex.quote(workdir)}" if given else "")


@dataclass(frozen=True)
class Tree:
    """A code tree a case is run on: how it is shown, its basedir."""

    label: str
    basedir: str


@dataclass(frozen=True)
class TreeCommands:
    """The commands that run a case folder on one code tree, from the folder itself."""

    tree: Tree
    kewpie: str
    mtr: str      # '' when there is no mysql-test-run.pl to run


@dataclass(frozen=True)
class CaseCommands:
    """How a suite folder's case is run: its suite and test, the trees, mtr's directory."""

    suite: str
    test: str
    mtr_root: str
    kewpie: str = ""       # kewpie_command()
    repeat: int = 1
    default_basedir: str = "/usr"   # the tree kewpie takes without --basedir

    def kewpie_line(self, tree: Tree) -> str:
        """``kewpie --mode=mtr`` on tree, from the case's folder."""
        args = [self.kewpie or kewpie_command(), "--mode=mtr"]
        if os.path.realpath(tree.basedir) != os.path.realpath(self.default_basedir):
            args.append(f"--basedir={shlex.quote(tree.basedir)}")
            if not mysql_test_dir(tree.basedir) and self.mtr_root:
                args.append(f"--mtr-root={shlex.quote(self.mtr_root)}")
        args += ["--suitepath=..", f"--suite={self.suite}"]
        args += [f"--repeat={self.repeat}"] if self.repeat > 1 else []
        return " ".join(args + [self.test])

    def mtr_line(self, tree: Tree) -> str:
        """mysql-test-run.pl on tree, from the case's folder, in a subshell (the caller's
        shell stays where it is; '' without a mysql-test-run.pl)."""
        root = self.mtr_root
        if not root or not os.path.isfile(os.path.join(root, "mysql-test-run.pl")):
            return ""
        script = "./mtr" if os.path.exists(os.path.join(root, "mtr")) else "./mysql-test-run.pl"
        own = os.path.realpath(mysql_test_dir(tree.basedir) or "/nonexistent") == \
            os.path.realpath(root)
        bindir = "" if own or _serves(root, tree.basedir) else \
            f"MTR_BINDIR_FORCED={shlex.quote(tree.basedir)} "
        repeat = f" --repeat={self.repeat}" if self.repeat > 1 else ""
        return (f"(here=$(pwd | tr '{MTR_SUITE_UNSAFE}' '???'); cd {shlex.quote(root)} && "
                f"{bindir}{script} --vardir=\"{vardir_arg(self.suite, root)}\"{repeat} "
                f"--suite=\"{climb(root)}$here\" {self.test})")

    def for_trees(self, trees: Sequence[Tree]) -> list[TreeCommands]:
        """The commands of every tree."""
        return [TreeCommands(t, self.kewpie_line(t), self.mtr_line(t)) for t in trees]


def _serves(mtr_root: str, basedir: str) -> bool:
    """Whether mtr in mtr_root finds basedir's server by itself (Debian's: /usr for
    /usr/share/mysql/mysql-test, mtr's basedir climbing to a folder with bin/)."""
    base = os.path.dirname(os.path.realpath(mtr_root))
    for _ in range(3):
        if os.path.isdir(os.path.join(base, "bin")):
            return os.path.realpath(basedir) == base
        base = os.path.dirname(base)
    return False


def readme_text(commands: Sequence[TreeCommands], title: str, suite: str) -> str:
    """The folder's README.txt: what it is and the commands that run it, from itself."""
    lines = [f"{title}", "",
             f"A mysql-test suite folder ({suite}/: t/, r/, {PLUGIN_FOLDER}/); it names nothing",
             "outside itself (the libraries it loads are in plugin/, the .opt says",
             f"{PLUGIN_DIR_OPTION}).  Copy it anywhere (keeping its name, {suite});",
             f"run these from inside it (cd {suite}), one line each, in sh or bash:", ""]
    for tree_commands in commands:
        lines.append(f"On {tree_commands.tree.label}:")
        lines.append(f"  {tree_commands.kewpie}")
        if tree_commands.mtr:
            lines.append(f"  {tree_commands.mtr}")
        lines.append("")
    lines += ["mysql-test-run.pl cuts --suite at '-', so the line above names this folder",
              "by a path from mysql-test/suite/ with each '-' spelt '?' (mtr globs it).", ""]
    return "\n".join(lines)


def run_line(line: str, cwd: str, env: Mapping[str, str], log_path: str,
             timeout: float) -> ToolResult:
    """One printed line run as printed, by ``sh -c`` in cwd (the case's folder)."""
    return run_tool(["sh", "-c", line], env=env, cwd=cwd, log_path=log_path, timeout=timeout)


def failed_row(output: str, suite: str, test: str) -> bool:
    """Whether a tool's output has the case's row ``[ fail ]`` (mysql-test-run.pl's
    ``--repeat`` numbers the second run on: ``[ 3 fail ]``)."""
    row = re.compile(rf"{re.escape(suite)}\.{re.escape(test)}\s+(?:w\d+\s+)?"
                     rf"\[ (?:\d+ )?fail \]")
    return bool(row.search(output))


def reproduced(output: str, suite: str, test: str, kind: str) -> bool:
    """Whether a tool's output says the case failed with the bug: its row ``[ fail ]``
    and, for a crash, the lost server (mysqltest's 2013/2006, or mysql-test-run.pl's
    "Server [mysqld.1 - pid: ...] failed during test run" when it saw the server die
    first), for a wrong result the case's ``--die wrong result:``, for a performance
    finding its ``--die performance (cert):``."""
    if not failed_row(output, suite, test):
        return False
    pattern = {"wrong-result": WRONG_RESULT, "performance": PERFORMANCE}.get(kind, LOST_SERVER)
    return bool(pattern.search(output))
