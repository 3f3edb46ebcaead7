"""The reduced case confirmed on every code tree by running it as its report prints it.

For each code tree, the two lines the report and the case's README.txt print
(:mod:`lib.mtr.travel`) are run by ``sh -c`` from the case's folder, one after the
other: ``kewpie --mode=mtr`` (given a workdir of its own after the printed arguments:
the reduction holds its own) and mysql-test-run.pl (its ports leased from kewpie's lock
directory as ``MTR_BUILD_THREAD``, its vardir and temporary files under ``TMPDIR``: a
fresh folder in the workdir's tree in RAM (or the lock directory), short enough for the
sockets mtr makes there, removed after the run).  Both run without ``KEWPIE_NO_VENV``, as
a user's shell runs them (the checkout's kewpie.py finds its .venv).  A tool reproduces
the bug when its output
says the case failed the bug's way (:func:`lib.mtr.travel.reproduced`; an errorlog
case's ``--die`` line signed as the finding was, :func:`failed_as_found`).  A tree is
*present* when every tool reproduced it, *absent* when none did; when only one did, it
is present with ``(under kewpie only)`` or ``(under mtr only)``.  Each run's output is
kept (``<scratch>/tree<N>-<tool>.log``).
"""
from __future__ import annotations

import os
import shlex
import shutil
import tempfile
from dataclasses import asdict, dataclass, field
from typing import Any, Sequence

from ..mtr.reference import lease_reference_ports, reference_mtr_env
from ..mtr.travel import TreeCommands, failed_row, reproduced, run_line
from ..hunt.signature import Signature
from ..platform.logsetup import get_logger
from .errorlog import reproduced_in

TOOL_TIMEOUT = 600.0   # one tool's run of the case, server starts and bootstrap included


@dataclass(frozen=True)
class ToolRun:
    """One printed line run: the tree, the tool, whether it reproduced, how it ended."""

    tree: str
    tool: str
    line: str
    reproduced: bool
    exit_status: int
    seconds: float
    log: str


@dataclass
class Confirmation:
    """Every tool run of the confirmation, and what they say per tree."""

    runs: list[ToolRun] = field(default_factory=list)

    def verdict(self, tree: str) -> str:
        """``present``, ``absent`` or ``present (under <tool> only)`` for tree."""
        mine = [r for r in self.runs if r.tree == tree]
        hits = [r.tool for r in mine if r.reproduced]
        if not hits:
            return "absent"
        return "present" if len(hits) == len(mine) else f"present (under {hits[0]} only)"

    def split(self, trees: Sequence[str]) -> tuple[list[str], list[str]]:
        """(present, absent): the trees' labels, a one-tool presence noted."""
        present, absent = [], []
        for tree in trees:
            verdict = self.verdict(tree)
            if verdict == "absent":
                absent.append(tree)
            else:
                present.append(tree + verdict[len("present"):])
        return present, absent

    def to_json(self) -> list[dict[str, Any]]:
        """The runs, for reduce.json."""
        return [asdict(r) for r in self.runs]


@dataclass(frozen=True)
class Places:
    """Where the confirmation writes: its scratch folder (logs, kewpie's workdirs), a
    folder with a short path for mtr's TMPDIR, the lock directory of the port leases."""

    scratch: str
    short: str
    lock_dir: str


def confirm(commands: Sequence[TreeCommands], folder: str, places: Places, kind: str,
            suite: str, test: str, signature: Signature | None = None) -> Confirmation:
    """Run every tree's printed lines from folder (see the module docstring); signature:
    the finding's (an errorlog case's ``--die`` line is signed again)."""
    log = get_logger()
    result = Confirmation()
    for index, tree in enumerate(commands):
        label = tree.tree.label
        kewpie = _kewpie(tree.kewpie, folder,
                         os.path.join(places.scratch, f"tree{index}-kewpie"), kind, suite, test,
                         signature)
        result.runs.append(ToolRun(label, "kewpie", tree.kewpie, *kewpie))
        if tree.mtr:
            mtr = _mtr(tree.mtr, folder, os.path.join(places.scratch, f"tree{index}-mtr"),
                       kind, suite, test, places, signature)
            result.runs.append(ToolRun(label, "mtr", tree.mtr, *mtr))
        log.info(f"reduce: {result.verdict(label)} in {label}: "
                 + ", ".join(f"{r.tool} {'fails it' if r.reproduced else 'does not'} "
                             f"({r.seconds:.0f} s, {r.log})"
                             for r in result.runs if r.tree == label))
    return result


def failed_as_found(output: str, suite: str, test: str, kind: str,
                    signature: Signature | None) -> bool:
    """Does a tool's output say the case failed the bug's way
    (:func:`lib.mtr.travel.reproduced`; an errorlog case's: its ``[ fail ]`` row and its
    ``--die`` with a line of the finding's signature, :func:`.errorlog.reproduced_in`)?"""
    if kind != "errorlog":
        return reproduced(output, suite, test, kind)
    return signature is not None and failed_row(output, suite, test) and \
        reproduced_in(output, signature)


def _kewpie(line: str, folder: str, base: str, kind: str, suite: str, test: str,
            signature: Signature | None) -> tuple[bool, int, float, str]:
    """kewpie's line run as printed, with a workdir of its own after it."""
    os.makedirs(base, mode=0o755, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k != "KEWPIE_NO_VENV"}
    logfile = base + ".log"
    run = run_line(f"{line} --workdir={shlex.quote(os.path.join(base, 'workdir'))}", folder,
                   env, logfile, TOOL_TIMEOUT)
    return (failed_as_found(run.output, suite, test, kind, signature), run.returncode,
            round(run.seconds, 1), logfile)


def _mtr(line: str, folder: str, base: str, kind: str, suite: str, test: str,
         places: Places, signature: Signature | None) -> tuple[bool, int, float, str]:
    """mysql-test-run.pl's line run as printed, on leased ports, TMPDIR a fresh folder
    under places.short (removed after; the output stays in base's log)."""
    logfile = base + ".log"
    tmpdir = tempfile.mkdtemp(prefix="mtr-", dir=places.short)
    try:
        with lease_reference_ports(places.lock_dir) as span:
            env = {k: v for k, v in reference_mtr_env(span, tmpdir).items()
                   if k != "KEWPIE_NO_VENV"}
            run = run_line(line, folder, env, logfile, TOOL_TIMEOUT)
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
    return (failed_as_found(run.output, suite, test, kind, signature), run.returncode,
            round(run.seconds, 1), logfile)
