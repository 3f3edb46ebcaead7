"""What the kewpie benchmarks (``bench/startup.py``, ``bench/cluster_startup.py``) share.

The venv switch, paths and timeouts, the configuration and sample series
types, machine information, the server user, ``mariadb-install-db``, stopping
processes, the workdir and its caches, the per-run error accounting, the PASS/MISS
targets, the report table, the common options and the end of ``main`` (print,
JSON, exit status).

Imported by a script of bench/ under another python, it re-executes that script under
the project's venv first (``lib.platform.workdir`` needs psutil), before importing
anything of lib/.  Scripts still call :func:`enter_venv` themselves, which is then a
no-op::

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from benchlib import enter_venv, ...  # noqa: E402
    enter_venv(__file__)
    import pymysql  # noqa: E402
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import pwd
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Callable, Iterator, Sequence, TypeVar

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV_DIR = os.path.join(ROOT, ".venv")
VENV_PYTHON = os.path.join(VENV_DIR, "bin", "python")

if ROOT not in sys.path:
    sys.path.insert(0, ROOT)


# ---------------------------------------------------------------- venv
def enter_venv(script: str) -> None:
    """Re-exec script (with the same arguments) under the project's venv python.

    Does nothing when this interpreter already is the venv's, when there is no
    venv, or when ``KEWPIE_NO_VENV`` is set.  Call it before importing anything
    the venv provides.
    """
    if (os.path.exists(VENV_PYTHON)
            and os.path.realpath(sys.prefix) != os.path.realpath(VENV_DIR)
            and not os.environ.get("KEWPIE_NO_VENV")):
        os.execv(VENV_PYTHON, [VENV_PYTHON, os.path.abspath(script), *sys.argv[1:]])


if os.path.dirname(os.path.abspath(sys.argv[0])) == os.path.dirname(os.path.abspath(__file__)):
    enter_venv(sys.argv[0])   # a bench script: lib needs the venv's packages (psutil)

from lib.platform import safedirs  # noqa: E402
from lib.platform.logsetup import get_logger  # noqa: E402
from lib.platform.logtail import tail_file  # noqa: E402
from lib.platform.workdir import SHM_ROOT, SHM_ROOT_ENV, SPARES, Workdir  # noqa: E402

KEWPIE = os.path.join(ROOT, "kewpie.py")
MARIADBD = "/usr/sbin/mariadbd"
INSTALL_DB = "/usr/bin/mariadb-install-db"
INSTALL_DB_TIMEOUT = 300.0     # seconds mariadb-install-db may take
KEWPIE_RUN_TIMEOUT = 600.0     # seconds one kewpie run may take in all
STOP_TIMEOUT = 60.0            # seconds a SIGTERMed process (mariadbd, kewpie) may take to exit
ECHO_PREFIX = "    | "         # before each of kewpie's own lines echoed by --verbose

T = TypeVar("T")


# ---------------------------------------------------------------- types
@dataclass(frozen=True)
class Config:
    """One configuration to time: its key (in the JSON) and its label (in the table)."""

    key: str
    label: str


@dataclass
class Series:
    """Samples of one configuration (ms) and the errors of failed runs."""

    label: str
    samples_ms: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when at least one run succeeded."""
        return bool(self.samples_ms)

    def stats(self) -> dict[str, float | None]:
        """min, median and max in ms (None when there is no sample)."""
        if not self.samples_ms:
            return {"min": None, "median": None, "max": None}
        return {"min": min(self.samples_ms), "median": statistics.median(self.samples_ms),
                "max": max(self.samples_ms)}

    def to_json(self) -> dict[str, object]:
        """Every field, then min, median and max: the series' entry in the JSON figures."""
        return {**asdict(self), **self.stats()}


class BenchError(Exception):
    """The benchmark (or one run of it) cannot go on."""


# ---------------------------------------------------------------- machine
def machine_info(extra: Callable[[], dict[str, str]] | None = None) -> dict[str, str]:
    """Date, nproc, ``mariadbd --version``, kernel and python of this run.

    extra, when given, is called once the server has told its version (it may
    raise BenchError); the fields it returns follow the server's.
    """
    try:
        nproc = len(os.sched_getaffinity(0))
    except AttributeError:
        nproc = os.cpu_count() or 0
    try:
        version = subprocess.run([MARIADBD, "--version"], capture_output=True, text=True,
                                 timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BenchError(f"cannot run {MARIADBD} --version: {exc}") from exc
    return {"date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "nproc": str(nproc),
            "mariadbd": version, **(extra() if extra else {}),
            "kernel": platform.release(), "python": platform.python_version()}


def default_server_user() -> str | None:
    """'mysql' when we run as root (like kewpie: rsync SST fails as root), else None.

    None means the servers run as us.
    """
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam("mysql")
    except KeyError as exc:
        raise BenchError("running as root but there is no 'mysql' user") from exc
    return "mysql"


# ---------------------------------------------------------------- servers and processes
def install_db(home: str, user: str | None) -> float:
    """``mariadb-install-db`` into home/data (log in home/install-db.log); return seconds.

    Raises BenchError (with the log's last lines) when it fails or takes over
    INSTALL_DB_TIMEOUT.
    """
    argv = [INSTALL_DB, "--no-defaults", f"--datadir={os.path.join(home, 'data')}",
            "--auth-root-authentication-method=normal", "--skip-test-db"]
    if user:
        argv.insert(3, f"--user={user}")
    log = os.path.join(home, "install-db.log")
    start = time.monotonic()
    with open(log, "wb") as out:
        try:
            rc = subprocess.run(argv, stdout=out, stderr=out, stdin=subprocess.DEVNULL,
                                cwd=home, timeout=INSTALL_DB_TIMEOUT).returncode
        except subprocess.TimeoutExpired as exc:
            raise BenchError(f"{' '.join(argv)} took over {INSTALL_DB_TIMEOUT:.0f}s") from exc
    took = time.monotonic() - start
    if rc != 0:
        raise BenchError(f"{' '.join(argv)} failed (exit {rc}):\n{tail_file(log)}")
    return took


def stop_process(proc: subprocess.Popen[bytes] | subprocess.Popen[str],
                 timeout: float = STOP_TIMEOUT) -> None:
    """SIGTERM proc unless it has exited and wait for it; SIGKILL it if it hangs."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def kewpie_command(workdir: str, base_port: int | None, options: Sequence[str]) -> list[str]:
    """argv of ``./kewpie.py`` with options, then --workdir and (if given) --base-port.

    Launched exactly as a user does: the script itself (shebang, then its
    venv re-exec).
    """
    argv = [KEWPIE, *options, f"--workdir={workdir}"]
    if base_port is not None:
        argv.append(f"--base-port={base_port}")
    return argv


def echo_kewpie(line: str) -> None:
    """Write one line of kewpie's own output, indented (for --verbose)."""
    sys.stdout.write(ECHO_PREFIX + line + ("" if line.endswith("\n") else "\n"))


# ---------------------------------------------------------------- workdir
@contextmanager
def bench_workdir(requested: str | None, prefix: str,
                  cleanup: Callable[[str], None] | None = None,
                  private_cache: bool = False) -> Iterator[str]:
    """The kewpie workdir for the with-block (created if missing, mode 755).

    requested (--workdir) is kept at the end; without it a fresh directory
    whose name starts with prefix is made under /tmp and removed at the end
    (see :func:`remove_workdir`).  cleanup, when given, is called with the
    path at the end, whatever happened, before any removal.

    private_cache (benches whose cold runs empty the caches): without --workdir,
    kewpie's RAM tree, shared cache included, is a fresh directory in /dev/shm
    for the block ($KEWPIE_SHM_ROOT, inherited by the kewpie runs), removed at
    the end, so clearing the caches never takes the cache from under another run
    of the user's (a test run, another bench) at the same time.
    """
    if requested:
        path = os.path.abspath(requested)
        os.makedirs(path, mode=0o755, exist_ok=True)
    else:
        path = tempfile.mkdtemp(prefix=prefix, dir="/tmp")
    os.chmod(path, 0o755)
    shm = None
    before = os.environ.get(SHM_ROOT_ENV)
    if private_cache and not requested:
        shm = tempfile.mkdtemp(prefix="kewpie-bench-shm-", dir=SHM_ROOT)
        os.chmod(shm, 0o755)
        os.environ[SHM_ROOT_ENV] = shm
    try:
        yield path
    finally:
        try:
            if cleanup is not None:
                cleanup(path)
            if not requested:
                remove_workdir(path)
        finally:
            if shm is not None:
                if before is None:
                    os.environ.pop(SHM_ROOT_ENV, None)
                else:
                    os.environ[SHM_ROOT_ENV] = before
                shutil.rmtree(shm, ignore_errors=True)


def cache_root(workdir: str) -> str:
    """The real directory behind ``<workdir>/cache`` (a link into /dev/shm)."""
    return os.path.realpath(os.path.join(workdir, "cache"))


def clear_caches(workdir: str, kinds: Sequence[str]) -> None:
    """Delete the contents of the caches of those kinds (``bootstrap``, ``galera``), and
    with ``bootstrap`` the pristine datadirs the workdir kept from its last run.

    The caches are shared by every workdir of the user under one RAM tree: without
    bench_workdir's private_cache, run such benchmarks alone."""
    if "bootstrap" in kinds:
        safedirs.remove_tree(os.path.join(Workdir(workdir).shm_path, SPARES),
                             ignore_errors=True)
    for kind in kinds:
        real = os.path.realpath(os.path.join(workdir, "cache", kind))
        if not os.path.isdir(real):
            continue
        for name in os.listdir(real):
            path = os.path.join(real, name)
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path)
            else:
                os.unlink(path)


def remove_workdir(path: str) -> None:
    """Remove a bench workdir and its own tree in /dev/shm (the user's shared
    cache stays: clear_caches empties it for cold runs)."""
    if not os.path.isdir(path):
        return
    Workdir(path).remove_shm()
    shutil.rmtree(path, ignore_errors=True)  # rmtree unlinks links, never follows them


# ---------------------------------------------------------------- runs
def attempt(series: Series, run: int, runs: int, step: Callable[[], T]) -> T | None:
    """Call step for run number run (0-based) of runs and return what it returns.

    A BenchError is recorded in series.errors and logged, and None returned:
    one failed run does not stop the benchmark.
    """
    try:
        return step()
    except BenchError as exc:
        series.errors.append(str(exc))
        get_logger().error(f"{series.label}: run {run + 1}/{runs} failed: {exc}")
        return None


@dataclass
class Outcome:
    """How a :func:`measuring` block ended: status None when it ran to its end."""

    status: int | None = None


@contextmanager
def measuring() -> Iterator[Outcome]:
    """Run the measurements in the with-block and stop them on a fatal error.

    A BenchError (the benchmark cannot run: exit status 2) or KeyboardInterrupt
    (130) is logged and put in the yielded Outcome instead of propagating.
    """
    outcome = Outcome()
    log = get_logger()
    try:
        yield outcome
    except BenchError as exc:
        log.error(f"the benchmark cannot run: {exc}")
        outcome.status = 2
    except KeyboardInterrupt:
        log.error("interrupted")
        outcome.status = 130


# ---------------------------------------------------------------- targets and report
def fmt_ms(value: float | None) -> str:
    """A table cell: whole ms, or '-' when there is no figure."""
    return "-" if value is None else f"{value:.0f}"


@dataclass(frozen=True)
class Target:
    """A figure judged against its target (print only).

    PASS when value < target (value <= target when inclusive), MISS
    otherwise or when the figure could not be measured.  unit is "ms" (shown
    as whole ms) or "ratio" (shown with 2 decimals).
    """

    name: str
    value: float | None
    target: float
    unit: str = "ms"
    inclusive: bool = False

    @property
    def verdict(self) -> str:
        """PASS or MISS."""
        if self.value is None:
            return "MISS"
        hit = self.value <= self.target if self.inclusive else self.value < self.target
        return "PASS" if hit else "MISS"

    def _show(self, value: float) -> str:
        """value in this target's unit."""
        return f"{value:.0f} ms" if self.unit == "ms" else f"{value:.2f}"

    @property
    def shown(self) -> str:
        """The figure as printed ('n/a' when unmeasured)."""
        return "n/a" if self.value is None else self._show(self.value)

    @property
    def target_text(self) -> str:
        """``target < 3000 ms``, ``target <= 1.20``."""
        return f"target {'<=' if self.inclusive else '<'} {self._show(self.target)}"

    def line(self, name_width: int, text_width: int = 0) -> str:
        """The report line: name, figure, target and verdict in columns."""
        return (f"{self.name:<{name_width}} {self.shown:>8}   "
                f"{self.target_text.ljust(text_width)}   {self.verdict}")

    def to_json(self, ms_keys: bool = False) -> dict[str, object]:
        """The target's entry in the JSON figures.

        With ms_keys, the short form of bench/startup.py (name, value_ms,
        target_ms, verdict); else name, value, unit, target, shown,
        target_text and verdict.
        """
        if ms_keys:
            return {"name": self.name, "value_ms": self.value, "target_ms": self.target,
                    "verdict": self.verdict}
        return {"name": self.name, "value": self.value, "unit": self.unit,
                "target": self.target, "shown": self.shown, "target_text": self.target_text,
                "verdict": self.verdict}


def render_report(title: str, info: dict[str, str], details: Sequence[str],
                  series: Sequence[Series], targets: Sequence[Target],
                  name_width: int, text_width: int = 0) -> str:
    """The final header, table and target lines as text.

    details are the header lines after the server's; name_width and
    text_width lay out the target lines (see :meth:`Target.line`).
    """
    width = max(len(s.label) for s in series)
    out = [
        "",
        title,
        f"date:      {info['date']}",
        f"machine:   nproc {info['nproc']}, kernel {info['kernel']}, python {info['python']}",
        f"server:    {info['mariadbd']}",
        *details,
        "",
    ]
    header = f"{'configuration':<{width}}  {'ok':>5}  {'min ms':>8}  {'median ms':>9}  {'max ms':>8}"
    out += [header, "-" * len(header)]
    for s in series:
        st = s.stats()
        ok = f"{len(s.samples_ms)}/{len(s.samples_ms) + len(s.errors)}"
        out.append(f"{s.label:<{width}}  {ok:>5}  {fmt_ms(st['min']):>8}  "
                   f"{fmt_ms(st['median']):>9}  {fmt_ms(st['max']):>8}")
    out.append("")
    out += [t.line(name_width, text_width) for t in targets]
    return "\n".join(out)


def publish(report: str, series: Sequence[Series], json_path: str | None,
            doc: dict[str, object]) -> int:
    """Print the report, write doc to json_path (if given); return the exit status.

    The status is 0 when every series has a successful run, else 2 (logged).
    """
    print(report, flush=True)
    log = get_logger()
    if json_path:
        with open(json_path, "w") as fh:
            json.dump(doc, fh, indent=2)
            fh.write("\n")
        log.info(f"figures written to {json_path}")
    failed = [s.label for s in series if not s.ok]
    if failed:
        log.error(f"no successful run for: {', '.join(failed)}")
        return 2
    return 0


# ---------------------------------------------------------------- options
def bench_parser(prog: str, doc: str, runs: int, base_port: int,
                 base_port_help: str) -> argparse.ArgumentParser:
    """A parser with --runs, --json, --workdir and --base-port.

    doc is the script's docstring (its first paragraph describes the
    program); a script adds its own options, then calls :func:`parse_bench_args`.
    """
    p = argparse.ArgumentParser(prog=prog, description=doc.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=runs, metavar="N",
                   help=f"runs per configuration (default: {runs})")
    p.add_argument("--json", metavar="PATH", help="also write the figures to PATH as JSON")
    p.add_argument("--workdir", metavar="DIR",
                   help="kewpie workdir to use and keep (default: a fresh one under /tmp, "
                        "removed at the end)")
    p.add_argument("--base-port", type=int, default=base_port, metavar="PORT",
                   help=f"{base_port_help} (default: {base_port})")
    return p


def parse_bench_args(parser: argparse.ArgumentParser,
                     argv: Sequence[str] | None) -> argparse.Namespace:
    """Add --verbose (the last option), parse argv and check --runs is at least 1."""
    parser.add_argument("--verbose", action="store_true", help="echo kewpie's own output")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    return args
