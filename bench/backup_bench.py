#!/usr/bin/env python3
"""Backup benchmark: kewpie's backup layer against the same tool called directly.

Measures, on this machine and in one run, for a dataset of a few hundred MB
(``--tables`` InnoDB tables of ``--rows`` sysbench-like rows, made with
``INSERT ... SELECT`` from a sequence table on a server started through
kewpie's own classes: the harness's RunEnvironment builds the bot's manager,
whose port leaser, settings and bootstrap cache make the two Servers):

- **backup**, **prepare** and **copy-back** through kewpie's backup layer
  (``lib.backup.ServerBackups``: backup of server s0, prepare, restore into
  the stopped server s1 with ``start=False``);
- the same three steps with ``mariabackup`` called directly by this script
  (the same options, the same user, output to a log file);
- ``cp -a`` of s0's stopped datadir: the floor for copying the data at all.

Every step starts after an ``os.sync()``; the target datadir of a copy-back
is empty beforehand (untimed) for both.  One warm-up round of each is
discarded (the first backup after loading the data is much slower).  Runs
are interleaved (kewpie and direct alternate which goes first) and medians
are compared; the ``cp -a`` runs come after them, because each stops and
restarts s0 and the first backup after a restart is slower.  After the last
run s1 is started on kewpie's restored datadir and its ``CHECKSUM TABLE``
values must equal s0's.

It prints a table (min/median/max in ms), a step-by-step table of medians with
the kewpie/direct ratio and the ratio to ``cp -a``, and the targets: kewpie's
overhead within 10% of the direct calls for each step and in total (PASS/MISS,
print only).  Exit status: 0 when every figure could be measured (whatever
PASS/MISS says), 2 when the benchmark cannot run.

For scale (``measured-here.md`` section 4, a 294 MB datadir): backup about
0.6-1.1 s, prepare 0.3 s, copy-back 0.25-0.4 s, ``cp -a`` about 0.9 s.

The workdir is on disk (``/tmp``) unless ``--shm``.

Usage::

    bench/backup_bench.py [--runs 7] [--tables 4] [--rows 200000] [--shm]
                          [--json PATH] [--workdir DIR] [--base-port 9640]
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Callable, Sequence

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import (BenchError, Series, Target, attempt, bench_parser,  # noqa: E402
                      bench_workdir, default_server_user, enter_venv, fmt_ms, machine_info,
                      measuring, parse_bench_args, publish, render_report)

enter_venv(__file__)   # before anything the venv provides

from lib.backup import ServerBackups  # noqa: E402
from lib.servers.codetree import CodeTree, discover  # noqa: E402
from lib.errors import KewpieError  # noqa: E402
from lib.platform.logsetup import configure, get_logger  # noqa: E402
from lib.platform.logtail import tail_file  # noqa: E402
from lib.servers.options import bootstrap_subset, parse_options  # noqa: E402
from lib.platform.ports import PortLease  # noqa: E402
from lib.platform.process import group_of  # noqa: E402
from lib.config import RunConfig, Servers  # noqa: E402
from lib.run.environment import RunEnvironment  # noqa: E402
from lib.servers.server import Server, ServerSettings, write_files  # noqa: E402

TARGET_RATIO = 1.10            # kewpie's time / the direct call's, per step and in total
SERVER_OPTIONS = ["--innodb-buffer-pool-size=256M"]
STEPS = ("backup", "prepare", "copy-back")
TABLE_DDL = ("CREATE TABLE bench.sbtest{n} (id INT NOT NULL PRIMARY KEY, k INT NOT NULL, "
             "c CHAR(120) NOT NULL, pad CHAR(60) NOT NULL, KEY k_{n} (k)) ENGINE=InnoDB")
TABLE_FILL = ("INSERT INTO bench.sbtest{n} SELECT seq, FLOOR(1 + RAND() * {rows}), "
              "CONCAT_WS('-', MD5(seq), MD5(seq + 1), MD5(seq + 2), LEFT(MD5(seq + 3), 20)), "
              "CONCAT_WS('-', MD5(seq * 7), LEFT(MD5(seq * 11), 27)) "
              "FROM bench.seq_1_to_{rows}")


@dataclass
class Rig:
    """The benchmark's servers and where its backups go."""

    source: Server
    target: Server
    backups: ServerBackups
    tool: str

    @property
    def user(self) -> str | None:
        """The user the servers (and the tools) run as."""
        return self.source.settings.user


# ---------------------------------------------------------------- set-up
def make_server(name: str, index: int, tree: CodeTree, bot_dir: str, lease: PortLease,
                settings: ServerSettings) -> Server:
    """A kewpie Server in bot_dir/var_<name> (not started)."""
    server = Server(name, index, tree, os.path.join(bot_dir, f"var_{name}"), lease,
                    parse_options(SERVER_OPTIONS), settings)
    server.paths.make_dirs()
    return server


def set_up(env: RunEnvironment, leases: list[PortLease]) -> Rig:
    """Discover the tree, bootstrap, start s0 (s1 stays stopped); return the rig.

    The bot's directory, socket directory, settings, port leaser and bootstrap
    cache come from kewpie's one manager factory (``env.make_manager``).
    """
    log = get_logger()
    user = env.server_user
    env.open_workdir(fresh=False)
    tree = env.tree = discover(env.config.basedir)
    if "mariabackup" not in tree.tools:
        raise BenchError("no mariadb-backup/mariabackup found under /usr")
    manager = env.make_manager("bot0")
    leases += [manager.leaser.lease(), manager.leaser.lease()]
    source = make_server("s0", 0, tree, manager.bot_dir, leases[0], manager.settings)
    target = make_server("s1", 1, tree, manager.bot_dir, leases[1], manager.settings)
    cache = manager.cache
    cache.copy_to(cache.template(bootstrap_subset(source.effective_options())), source.paths.datadir)
    source.start()
    write_files(target)
    os.makedirs(target.paths.datadir, mode=0o750, exist_ok=True)
    if user:
        shutil.chown(target.paths.datadir, user, group_of(user))
    backups = ServerBackups(source, label="bench")
    log.info(f"bench: s0 on port {source.port} ({source.paths.vardir}), tool {backups.tool.path}, "
             f"workdir {env.workdir.path} ({'/dev/shm' if env.workdir.use_shm else 'disk'})")
    return Rig(source, target, backups, backups.tool.path)


def load_dataset(server: Server, tables: int, rows: int) -> float:
    """Create bench.sbtest1..N with rows rows each; return seconds."""
    start = time.monotonic()
    server.execute("CREATE DATABASE bench")
    for n in range(1, tables + 1):
        server.execute(TABLE_DDL.format(n=n))
        server.execute(TABLE_FILL.format(n=n, rows=rows))
    return time.monotonic() - start


def du_mb(path: str) -> float:
    """Disk usage of a directory tree in MB."""
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_blocks * 512
            except OSError:
                pass
    return total / 1e6


# ---------------------------------------------------------------- one step, two ways
def timed(fn: Callable[[], object]) -> float:
    """sync, then time fn in ms."""
    os.sync()
    start = time.monotonic()
    fn()
    return (time.monotonic() - start) * 1000.0


def direct(argv: list[str], log_path: str, user: str | None, cwd: str) -> None:
    """Run the tool as the servers' user, output to log_path; BenchError if it fails."""
    extra: dict[str, object] = {}
    if user and os.geteuid() == 0:
        extra = {"user": user, "group": group_of(user), "extra_groups": []}
    with open(log_path, "wb") as out:
        rc = subprocess.run(argv, stdout=out, stderr=out, stdin=subprocess.DEVNULL, cwd=cwd,
                            **extra).returncode   # type: ignore[call-overload]
    if rc != 0:
        raise BenchError(f"{' '.join(argv)} failed (exit {rc}):\n{tail_file(log_path, 15)}")


def empty_target(rig: Rig) -> None:
    """Empty s1's datadir (untimed, before each copy-back)."""
    if rig.target.is_alive():
        rig.target.stop()
    shutil.rmtree(rig.target.paths.datadir, ignore_errors=True)
    os.makedirs(rig.target.paths.datadir, mode=0o750)
    if rig.user:
        shutil.chown(rig.target.paths.datadir, rig.user, group_of(rig.user))


def run_kewpie(rig: Rig, run: int) -> dict[str, float]:
    """backup, prepare, copy-back through kewpie's backup layer; ms per step."""
    times: dict[str, float] = {}
    holder: dict[str, object] = {}
    try:
        times["backup"] = timed(lambda: holder.update(b=rig.backups.backup(f"kewpie-{run}")))
        backup = holder["b"]
        times["prepare"] = timed(lambda: rig.backups.prepare(backup))  # type: ignore[arg-type]
        empty_target(rig)
        times["copy-back"] = timed(lambda: rig.backups.restore(backup, rig.target,  # type: ignore[arg-type]
                                                               start=False))
    except KewpieError as exc:
        raise BenchError(f"kewpie run {run + 1}: {exc}") from exc
    finally:
        shutil.rmtree(os.path.join(rig.backups.root, f"kewpie-{run}"), ignore_errors=True)
    return times


def run_direct(rig: Rig, run: int) -> dict[str, float]:
    """The same three steps with mariabackup called directly; ms per step."""
    root = rig.backups.root
    target = os.path.join(root, f"direct-{run}")
    tmp = os.path.join(root, "tmp")
    src, dst = rig.source, rig.target
    times: dict[str, float] = {}
    try:
        times["backup"] = timed(lambda: direct(
            [rig.tool, f"--defaults-file={src.paths.cnf_path}", "--backup", f"--target-dir={target}",
             "--user=root", f"--socket={src.paths.socket_file}"], target + ".backup.log", rig.user, root))
        times["prepare"] = timed(lambda: direct(
            [rig.tool, "--no-defaults", "--prepare", f"--target-dir={target}", f"--tmpdir={tmp}"],
            target + ".prepare.log", rig.user, root))
        empty_target(rig)
        times["copy-back"] = timed(lambda: direct(
            [rig.tool, f"--defaults-file={dst.paths.cnf_path}", "--copy-back", f"--target-dir={target}",
             f"--datadir={dst.paths.datadir}"], target + ".copy-back.log", rig.user, root))
    finally:
        shutil.rmtree(target, ignore_errors=True)
    return times


def run_cp(rig: Rig, run: int) -> float:
    """cp -a of s0's stopped datadir (s0 is stopped and restarted untimed); ms."""
    copy = os.path.join(rig.backups.root, f"cp-{run}")
    rig.source.stop()
    try:
        def cp() -> None:
            proc = subprocess.run(["cp", "-a", rig.source.paths.datadir, copy], capture_output=True,
                                  text=True)
            if proc.returncode != 0:
                raise BenchError(f"cp -a failed: {proc.stderr.strip()}")
        return timed(cp)
    finally:
        shutil.rmtree(copy, ignore_errors=True)
        rig.source.start()


def verify(rig: Rig, tables: int) -> str:
    """Start s1 on kewpie's last restore and compare CHECKSUM TABLE with s0."""
    rig.target.start()
    try:
        names = ", ".join(f"bench.sbtest{n}" for n in range(1, tables + 1))
        want = rig.source.execute(f"CHECKSUM TABLE {names}")
        got = rig.target.execute(f"CHECKSUM TABLE {names}")
    finally:
        rig.target.stop()
    if want != got:
        raise BenchError(f"restored checksums differ: s0 {want} s1 {got}")
    return f"{tables} tables, CHECKSUM TABLE equal on s0 and the restored s1"


# ---------------------------------------------------------------- report
def step_table(series: dict[str, Series]) -> list[str]:
    """Medians side by side: kewpie, direct, their ratio, and each against cp -a."""
    floor = series["cp"].stats()["median"]
    out = ["", f"{'step':<22} {'kewpie ms':>10} {'direct ms':>10} {'kewpie/direct':>14} "
               f"{'kewpie/cp -a':>13} {'direct/cp -a':>13}"]
    out.append("-" * len(out[-1]))
    total_k = total_d = 0.0
    for step in (*STEPS, "total"):
        if step == "total":
            k, d = total_k, total_d
        else:
            k = series[f"kewpie {step}"].stats()["median"] or 0.0
            d = series[f"direct {step}"].stats()["median"] or 0.0
            total_k, total_d = total_k + k, total_d + d
        ratio = f"{k / d:.2f}" if d else "-"
        vs_k = f"{k / floor:.2f}" if floor else "-"
        vs_d = f"{d / floor:.2f}" if floor else "-"
        label = "backup+prepare+copy" if step == "total" else step
        out.append(f"{label:<22} {fmt_ms(k):>10} {fmt_ms(d):>10} {ratio:>14} {vs_k:>13} {vs_d:>13}")
    out.append(f"{'cp -a (floor)':<22} {fmt_ms(floor):>10}")
    return out


def targets_for(series: dict[str, Series]) -> list[Target]:
    """kewpie/direct ratio of medians per step and in total, target <= 1.10."""
    targets = []
    total_k = total_d = 0.0
    for step in STEPS:
        k = series[f"kewpie {step}"].stats()["median"]
        d = series[f"direct {step}"].stats()["median"]
        ratio = k / d if k is not None and d else None
        total_k += k or 0.0
        total_d += d or 0.0
        targets.append(Target(f"{step}: kewpie / direct (medians)", ratio, TARGET_RATIO,
                              unit="ratio", inclusive=True))
    targets.append(Target("backup+prepare+copy-back: kewpie / direct", total_k / total_d
                          if total_d else None, TARGET_RATIO, unit="ratio", inclusive=True))
    return targets


# ---------------------------------------------------------------- main
def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command-line options."""
    p = bench_parser("bench/backup_bench.py", __doc__, runs=7, base_port=9640,
                     base_port_help="where port leases start for the two servers")
    p.add_argument("--tables", type=int, default=4, help="tables in the dataset (default: 4)")
    p.add_argument("--rows", type=int, default=200000,
                   help="rows per table, about 240 bytes each (default: 200000)")
    p.add_argument("--shm", action="store_true", help="put the workdir's servers and backups "
                                                      "on /dev/shm (default: on disk)")
    return parse_bench_args(p, argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark, print the report; return the exit status."""
    args = parse_args(argv)
    log = configure(verbose=args.verbose)
    labels = [f"{who} {step}" for step in STEPS for who in ("kewpie", "direct")]
    series = {label: Series(label) for label in labels}
    series["cp"] = Series("cp -a of the stopped datadir (floor)")
    details: list[str] = []
    leases: list[PortLease] = []
    rig: Rig | None = None
    with bench_workdir(args.workdir, "kewpie-bench-backup-") as path, measuring() as outcome:
        default_server_user()  # the bench's own error when root has no 'mysql' user
        env = RunEnvironment(RunConfig(workdir=path, servers=Servers(use_shm=args.shm,
                                                                     base_port=args.base_port)))
        try:
            info = machine_info()
            rig = set_up(env, leases)
            load_s = load_dataset(rig.source, args.tables, args.rows)
            rig.source.stop()
            size = du_mb(rig.source.paths.datadir)
            rig.source.start()
            log.info(f"bench: dataset {args.tables} x {args.rows} rows in {load_s:.1f} s; "
                     f"stopped datadir {size:.0f} MB")
            warm = {**run_kewpie(rig, -1), **{f"direct {k}": v
                                              for k, v in run_direct(rig, -1).items()}}
            log.info("warm-up round (discarded): " +
                     ", ".join(f"{s} {ms:.0f} ms" for s, ms in warm.items()))
            for run in range(args.runs):
                order = (run_kewpie, run_direct) if run % 2 == 0 else (run_direct, run_kewpie)
                for fn in order:
                    who = "kewpie" if fn is run_kewpie else "direct"
                    times = attempt(series[f"{who} backup"], run, args.runs,
                                    lambda fn=fn: fn(rig, run))  # type: ignore[misc]
                    for step, ms in (times or {}).items():
                        series[f"{who} {step}"].samples_ms.append(ms)
                    if times:
                        log.info(f"run {run + 1}/{args.runs} {who}: " +
                                 ", ".join(f"{s} {ms:.0f} ms" for s, ms in times.items()))
            for run in range(args.runs):   # last: each restarts s0, which slows the next backup
                ms = attempt(series["cp"], run, args.runs, lambda: run_cp(rig, run))
                if ms is not None:
                    series["cp"].samples_ms.append(ms)
                    log.info(f"run {run + 1}/{args.runs} cp -a: {ms:.0f} ms")
            checked = verify(rig, args.tables)
            details = [f"runs:      {args.runs}, interleaved (kewpie and direct alternate first), "
                       f"after 1 discarded warm-up round; every step after os.sync()",
                       f"dataset:   {args.tables} InnoDB tables x {args.rows} rows, loaded in "
                       f"{load_s:.1f} s; stopped datadir {size:.0f} MB "
                       f"({'/dev/shm' if args.shm else 'disk'})",
                       f"tool:      {rig.tool} as {rig.user or 'the invoking user'}; "
                       f"direct = the same options by hand",
                       f"verified:  {checked}"]
        finally:
            for server in ([rig.source, rig.target] if rig else []):
                if server.is_alive():
                    server.stop()
            for lease in leases:
                lease.release()
            env.close()
    if outcome.status is not None:
        return outcome.status

    ordered = [series[label] for label in labels] + [series["cp"]]
    targets = targets_for(series)
    report = render_report("kewpie backup benchmark (mariabackup)", info, details, ordered,
                           targets, name_width=44)
    report += "\n" + "\n".join(step_table(series))
    doc: dict[str, object] = {
        "machine": info, "runs": args.runs, "tables": args.tables, "rows": args.rows,
        "series": {k: s.to_json() for k, s in series.items()},
        "targets": [t.to_json() for t in targets]}
    return publish(report, ordered, args.json, doc)


if __name__ == "__main__":
    sys.exit(main())
