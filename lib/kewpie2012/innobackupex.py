"""kewpie's innobackupex front end: XtraBackup-era innobackupex command lines over
``mariadb-backup --innobackupex``.

On a MariaDB code tree, kewpie 2012 tests get ``scripts/innobackupex`` (which
runs this module) as ``system_manager.innobackupex_path``.  It takes the
command lines those tests wrote for Percona's innobackupex and runs MariaDB's
backup tool in its innobackupex mode, mapping or dropping what that mode
lacks.  Every mapping (:data:`MAPPINGS` documents them; so does
docs/writing-tests.md):

- ``--ibbackup=PATH``: mariabackup is its own backup engine.  When PATH is a
  mariabackup/mariadb-backup binary (kewpie's default ``xtrabackup_path`` on
  MariaDB) it is the binary run; any other PATH (xtrabackup, xtrabackup_55...)
  is dropped.
- ``--redo-only`` and ``--apply-log-only``: dropped.  Since MariaDB 10.2 a
  prepare never needs them: incrementals are applied in order onto the
  prepared base (10.11 refuses both options).
- ``--stream=tar``: mariabackup streams only xbstream.  The front end streams
  ``--stream=xbstream`` into ``mbstream -x`` in a scratch directory under the
  positional directory, then writes that directory as a tar archive on
  stdout, so ``innobackupex --stream=tar DIR > backup.tar`` and ``tar -xif``
  work as they did.
- ``--parallel=N`` with N < 1 (``--parallel=-1`` in old tests): dropped (one
  thread); mariabackup refuses it at option parsing.
- no ``--defaults-file``: ``--no-defaults`` is added, so nothing from
  /etc/mysql applies; ``--defaults-file``/``--no-defaults`` are moved right
  after ``--innobackupex``, where mariabackup wants them.
- ``--copy-back``/``--move-back`` run by root: the restored datadir is given
  to the owner of its parent (the server's vardir), so a server running as
  ``mysql`` can start on it.

Everything else (``--apply-log``, ``--copy-back``, ``--no-timestamp``,
``--use-memory``, ``--incremental*``, ``--slave-info``, ``--galera-info``,
``--export``, ``--include``, ``--databases``, ``--tables-file``,
``--stream=xbstream``, connection options...) is passed through unchanged.
The tool runs through :func:`lib.platform.tools.run_tool` (its output is
copied to stderr as it comes, as innobackupex printed its log there) with
``TMPDIR`` next to the backup.
"""
from __future__ import annotations

import os
import shutil
import sys
import tarfile
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import BinaryIO, Mapping, Sequence, TextIO

from ..backup.storage import chown_tree
from ..platform.tools import run_pipeline, run_tool
from .backup_methods import datadir_from_cnf

MARIABACKUP_NAMES = ("mariadb-backup", "mariabackup")
EXTRACTOR_NAMES = ("mbstream",)

MAPPINGS: Mapping[str, str] = MappingProxyType({
    "--ibbackup=PATH": "runs PATH when it is mariabackup/mariadb-backup; dropped otherwise",
    "--redo-only": "dropped (MariaDB 10.2+ prepares need no redo-only step)",
    "--apply-log-only": "dropped (MariaDB 10.2+ prepares need no redo-only step)",
    "--stream=tar": "--stream=xbstream | mbstream -x into a scratch directory, then a tar "
                    "archive of it on stdout",
    "--parallel=N (N < 1)": "dropped (one thread)",
    "no --defaults-file": "--no-defaults added (nothing from /etc/mysql applies)",
    "--copy-back/--move-back as root": "restored datadir given to the owner of its parent",
})


@dataclass
class Plan:
    """What the front end runs for one command line."""

    tool: str
    argv: list[str]                     # the mariabackup command
    stream_tar: bool = False            # --stream=tar: xbstream, extract, tar to stdout
    target: str | None = None           # the positional directory
    defaults_file: str | None = None
    restore: bool = False               # --copy-back / --move-back
    dropped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def is_mariabackup(path: str) -> bool:
    """True when path names MariaDB's backup tool."""
    return os.path.basename(path).startswith(MARIABACKUP_NAMES)


def find_mariabackup(hint: str | None = None) -> str | None:
    """The mariabackup to run: hint when it is one, else the first on PATH."""
    if hint and is_mariabackup(hint):
        return hint
    for name in MARIABACKUP_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


def _value(argv: Sequence[str], i: int, arg: str) -> tuple[str | None, int]:
    """The value of ``--opt=value`` or ``--opt value``; (value, next index)."""
    if "=" in arg:
        return arg.split("=", 1)[1], i + 1
    if i + 1 < len(argv) and not argv[i + 1].startswith("-"):
        return argv[i + 1], i + 2
    return None, i + 1


def translate(argv: Sequence[str], tool: str | None = None) -> Plan:
    """Map an innobackupex command line (without the program name) to a Plan.

    tool is the mariabackup to run when no ``--ibbackup`` names one (default:
    the first on PATH).  ValueError when no mariabackup can be found.
    """
    plan = Plan(tool="", argv=[])
    read = _ReadOptions(plan)
    i = 0
    while i < len(argv):
        i = read.take(argv, i)
    ibbackup, defaults = read.ibbackup, read.defaults
    chosen = tool if tool and not (ibbackup and is_mariabackup(ibbackup)) else None
    found = find_mariabackup(ibbackup) if chosen is None else chosen
    if not found:
        raise ValueError("kewpie innobackupex: no mariadb-backup found (install mariadb-backup, "
                         "or pass Percona's innobackupex with --innobackupex-path)")
    plan.tool = found
    if ibbackup and plan.tool == ibbackup:
        plan.dropped = [d for d in plan.dropped if not d.startswith("--ibbackup")]
        plan.notes.append(f"--ibbackup={ibbackup}: runs that mariabackup")
    if not any(d == "--no-defaults" or d.startswith("--defaults-file=") for d in defaults):
        defaults.insert(0, "--no-defaults")
    plan.target = read.positional[-1] if read.positional else None
    plan.argv = [plan.tool, "--innobackupex", *defaults, *read.rest]
    return plan


class _ReadOptions:
    """innobackupex's options read one at a time into mariabackup's: the option-file
    options (first on its command line), the rest, the positional arguments; what is
    dropped or changed goes into the plan."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.ibbackup: str | None = None
        self.defaults: list[str] = []
        self.rest: list[str] = []
        self.positional: list[str] = []

    def take(self, argv: Sequence[str], i: int) -> int:
        """Read the option at argv[i] (and its value); the index of the next one."""
        arg = argv[i]
        name = arg.split("=", 1)[0]
        plan = self.plan
        if name == "--ibbackup":
            self.ibbackup, i = _value(argv, i, arg)
            plan.dropped.append(f"--ibbackup={self.ibbackup}")
            return i
        if name in ("--redo-only", "--apply-log-only"):
            plan.dropped.append(arg)
        elif name == "--innobackupex":
            pass  # added in front anyway
        elif name in ("--defaults-file", "--defaults-extra-file", "--no-defaults"):
            return self._defaults(argv, i, arg, name)
        elif name == "--stream":
            return self._stream(argv, i, arg)
        elif name == "--parallel":
            return self._parallel(argv, i, arg)
        elif name in ("--copy-back", "--move-back"):
            plan.restore = True
            self.rest.append(arg)
        elif not arg.startswith("-"):
            self.positional.append(arg)
            self.rest.append(arg)
        else:
            self.rest.append(arg)
        return i + 1

    def _defaults(self, argv: Sequence[str], i: int, arg: str, name: str) -> int:
        """--defaults-file (first), --defaults-extra-file, --no-defaults."""
        if name == "--defaults-file":
            value, i = _value(argv, i, arg)
            self.plan.defaults_file = value
            self.defaults.insert(0, f"--defaults-file={value}")
            return i
        if name == "--defaults-extra-file":
            value, i = _value(argv, i, arg)
            self.defaults.append(f"--defaults-extra-file={value}")
            return i
        self.defaults.insert(0, arg)
        return i + 1

    def _stream(self, argv: Sequence[str], i: int, arg: str) -> int:
        """--stream: tar is streamed as xbstream (and re-archived as tar afterwards)."""
        value, i = _value(argv, i, arg)
        if value == "tar":
            self.plan.stream_tar = True
            self.plan.notes.append("--stream=tar: streamed as xbstream, extracted, re-archived "
                                   "as tar")
            self.rest.append("--stream=xbstream")
        else:
            self.rest.append(f"--stream={value}")
        return i

    def _parallel(self, argv: Sequence[str], i: int, arg: str) -> int:
        """--parallel N: dropped when N is below 1 (a value that is no number reads 1)."""
        value, i = _value(argv, i, arg)
        try:
            threads = int(value or "1")
        except ValueError:
            threads = 1
        if threads < 1:
            self.plan.dropped.append(f"--parallel={value}")
        else:
            self.rest.append(f"--parallel={threads}")
        return i


def datadir_of(cnf_file: str | None) -> str | None:
    """The ``datadir`` of an option file's ``[mysqld]`` section (None without a file)."""
    return datadir_from_cnf(cnf_file) if cnf_file else None


def give_to_parent_owner(path: str) -> int:
    """chown path and everything below it to the owner of its parent directory;
    how many entries changed."""
    st = os.stat(os.path.dirname(os.path.abspath(path)))
    return chown_tree(path, st.st_uid, st.st_gid)


def _scratch_parent(plan: Plan) -> str:
    target = plan.target or os.getcwd()
    return target if os.path.isdir(target) else os.path.dirname(os.path.abspath(target))


def _stream_tar(plan: Plan, err: TextIO, out: BinaryIO) -> int:
    """xbstream into mbstream -x in a scratch directory, then tar it to out."""
    extractor = None
    for name in EXTRACTOR_NAMES:
        candidate = os.path.join(os.path.dirname(plan.tool), name)
        extractor = candidate if os.access(candidate, os.X_OK) else shutil.which(name)
        if extractor:
            break
    if not extractor:
        err.write("kewpie innobackupex: --stream=tar needs mbstream (mariadb-backup's)\n")
        return 1
    parent = _scratch_parent(plan)
    scratch = os.path.join(parent, f"kewpie-stream-{os.getpid()}")
    os.makedirs(scratch)
    log = scratch + ".log"
    xlog = scratch + ".x.log"
    try:
        produced, extracted = run_pipeline(plan.argv, [extractor, "-x", "-C", scratch],
                                           log_path=log, consumer_log=xlog, tmpdir=parent)
        err.write(produced.output)
        err.write(extracted.output)
        if not produced.ok:
            return produced.returncode or 1
        if not extracted.ok:
            return extracted.returncode or 1
        with tarfile.open(fileobj=out, mode="w|") as archive:
            for entry in sorted(os.listdir(scratch)):
                archive.add(os.path.join(scratch, entry), arcname=entry)
        out.flush()
        return 0
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        for path in (log, xlog):
            if os.path.exists(path):
                os.unlink(path)


def run(argv: Sequence[str], err: TextIO, out: BinaryIO, tool: str | None = None) -> int:
    """Translate and run one innobackupex command line; the exit status."""
    try:
        plan = translate(argv, tool)
    except ValueError as exc:
        err.write(f"{exc}\n")
        return 2
    for note in plan.notes + [f"{d}: dropped" for d in plan.dropped]:
        err.write(f"kewpie innobackupex: {note}\n")
    if plan.stream_tar:
        return _stream_tar(plan, err, out)
    tmpdir = _scratch_parent(plan) if plan.target else None
    result = run_tool(plan.argv, tmpdir=tmpdir, on_line=lambda line: err.write(line + "\n"))
    err.flush()
    if result.returncode == 0 and plan.restore and os.geteuid() == 0:
        datadir = datadir_of(plan.defaults_file)
        if datadir and os.path.isdir(datadir):
            give_to_parent_owner(datadir)
    return result.returncode


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m lib.kewpie2012.innobackupex ARGS``: the exit status of the mapped run."""
    args = list(sys.argv[1:] if argv is None else argv)
    return run(args, sys.stderr, sys.stdout.buffer)


if __name__ == "__main__":
    raise SystemExit(main())
