#!/usr/bin/env python3
"""Wrong-result oracles benchmark: NoREC/TLP false positives, the planted differential.

Starts two servers through kewpie (``--start-and-exit`` of the fixture suite
tests/fixtures/suites/wrongresult: server 1 with the defaults, server 2 with
``--div-precision-increment=8``; cleaned up at the end, whatever happened) and:

1. **false positives**: for every stock gendata file (``.zz`` under
   ``--zz-dir``, default the stock grammars' ``../shared/randgen-conf`` and
   kewpie's ``randgen/conf/kewpie``), its tables are built in a fresh schema
   on server 1 (rows capped at ``--max-rows``) and NoREC and TLP run over
   them, until ``--selects`` generated SELECTs (default 20,000) have run in
   all.  Server 1 is healthy, so every finding is a false positive of the
   oracles or a real server bug: the target is **0 findings**, with the
   generator steering clear of the wrong results of 10.11 it knows
   (``lib/hunt/wrongresult/generator.py``, ``KNOWN_BUGS``).  Printed: SELECTs,
   checks (one generated query and its partner), compared (both ran), skipped
   by error code, generator errors (malformed SQL: must be 0), unconfirmed
   (did not repeat), findings, SELECTs per second;
2. **planted differential**: the tables of tests/fixtures/suites/wrongresult/
   types.zz on both servers, ``--differential-checks`` generated SELECTs on
   each: the differential oracle must find the difference (a division or an
   AVG), and find nothing between two connections to server 1;
3. with ``--hunt-known-bugs``: NoREC and TLP over the tables of types.zz on
   server 1 with the known-bug avoidance off (``--known-bug-checks`` checks
   each): the real discrepancies of this server they then detect (the wrong
   results of 10.11 listed in docs/hunting.md), by shape -- NoREC and TLP
   finding a real difference between a query's optimized and unoptimized
   forms, planted by nothing but the server itself.

The machine's load average is printed: the SELECTs per second are only
comparable on an idle machine.  Exit status 0 when the figures were measured
(whatever PASS/MISS says), 2 when the benchmark could not run.

:func:`false_positive_run` is the part ``bench/hunt_bench.py`` can call with a
connection of its own.

Usage::

    bench/wrongresult_bench.py [--selects 20000] [--zz-dir DIR]... [--max-rows 100]
        [--seed 1] [--differential-checks 300] [--hunt-known-bugs]
        [--known-bug-checks 3000] [--json PATH] [--workdir DIR] [--base-port 9870]
"""
from __future__ import annotations

import argparse
import glob
import json
import math
import os
import sys
import time
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from typing import Any, Sequence

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import (ROOT, BenchError, bench_workdir, enter_venv,  # noqa: E402
                      machine_info, measuring)
from randgen_common import kewpie_servers  # noqa: E402

enter_venv(__file__)

import pymysql  # noqa: E402

from lib.hunt.wrongresult import WrongResult, wrong_result_oracles  # noqa: E402
from lib.hunt.wrongresult.gendata import load_gendata  # noqa: E402
from lib.hunt.wrongresult.generator import GeneratorOptions  # noqa: E402
from lib.hunt.wrongresult.oracle import OracleBase, OracleStats  # noqa: E402
from lib.platform.logsetup import configure, get_logger  # noqa: E402
from lib.randgen.metadata import Metadata  # noqa: E402

FIXTURE_SUITES = os.path.join(ROOT, "tests", "fixtures", "suites")
TYPES_ZZ = os.path.join(FIXTURE_SUITES, "wrongresult", "types.zz")
DEFAULT_ZZ_DIRS = (os.path.join(os.path.dirname(ROOT), "shared", "randgen-conf"),
                   "/work/shared/randgen-conf", os.path.join(ROOT, "randgen", "conf", "kewpie"))
SELECTS_PER_CHECK = 2   # NoREC and TLP run two SELECTs per check (fewer when one fails)
SCHEMA = "wr_bench"


@dataclass
class FalsePositiveRun:
    """What :func:`false_positive_run` measured: totals per oracle and every finding."""

    stats: dict[str, OracleStats] = field(default_factory=dict)
    findings: list[tuple[str, WrongResult]] = field(default_factory=list)  # (zz file, finding)
    files: list[tuple[str, int, int]] = field(default_factory=list)  # (zz, tables, load errors)
    seconds: float = 0.0

    @property
    def selects(self) -> int:
        """Generated SELECTs run (confirmations included)."""
        return sum(s.statements for s in self.stats.values())

    @property
    def oracle_seconds(self) -> float:
        """Time spent inside the oracles (gendata excluded)."""
        return sum(s.seconds for s in self.stats.values())


def zz_files(dirs: Sequence[str]) -> list[str]:
    """The .zz files under dirs (recursively), sorted; a missing directory is skipped."""
    found: list[str] = []
    for d in dirs:
        if os.path.isdir(d):
            found += glob.glob(os.path.join(d, "**", "*.zz"), recursive=True)
    return sorted({os.path.realpath(f) for f in found})


def false_positive_run(conn: pymysql.connections.Connection, files: Sequence[str], selects: int,
                       seed: int = 1, max_rows: int = 100, oracles: Sequence[str] = ("norec", "tlp"),
                       options: GeneratorOptions | None = None) -> FalsePositiveRun:
    """NoREC and TLP over the tables of each file, about selects generated SELECTs in all.

    conn: a connection (autocommit) to a healthy server; each file's tables
    are built in schema wr_bench (dropped and rebuilt per file; left at the
    end).  The SELECTs left are spread over the files left (a file whose
    tables this server cannot create gets none), topped up at the end on the
    file with most tables.  options: the generator's (default: known bugs
    avoided).
    """
    log = get_logger()
    run = FalsePositiveRun()
    started = time.monotonic()
    richest: tuple[int, str] = (0, "")
    for n, zz in enumerate(files):
        load = load_gendata(conn, zz, SCHEMA, seed=seed, max_rows=max_rows)
        tables = len(load.metadata.tables_by_schema.get(SCHEMA, ()))
        run.files.append((zz, tables, load.errors))
        richest = max(richest, (tables, zz))
        if tables:  # the budget left, spread over the files left (some have no table here)
            checks = math.ceil(max(0, selects - run.selects)
                               / (SELECTS_PER_CHECK * len(oracles) * (len(files) - n)))
            _run_oracles(run, conn, zz, load.metadata, seed, checks, oracles, options)
    top_up = 0
    while run.selects < selects and richest[0] and top_up < 3:  # on the file with most tables
        top_up += 1
        load = load_gendata(conn, richest[1], SCHEMA, seed=seed, max_rows=max_rows)
        checks = math.ceil((selects - run.selects) / (SELECTS_PER_CHECK * len(oracles)))
        _run_oracles(run, conn, richest[1], load.metadata, seed + top_up, checks, oracles,
                     options)
    run.seconds = time.monotonic() - started
    return run


def _run_oracles(run: FalsePositiveRun, conn: pymysql.connections.Connection, zz: str,
                 metadata: Metadata, seed: int, checks: int, oracles: Sequence[str],
                 options: GeneratorOptions | None, given: Any = None) -> None:
    """Each oracle (or the one given), checks checks over the file's tables; totals and
    findings into run."""
    log = get_logger()
    tables = len(metadata.tables_by_schema.get(SCHEMA, ()))
    for oracle in [given] if given is not None else wrong_result_oracles(oracles):
        if options is not None and isinstance(oracle, OracleBase):
            oracle.options = options
        found = oracle.run([conn], metadata, seed, checks)
        stats: OracleStats = getattr(oracle, "stats")
        run.stats.setdefault(oracle.name, OracleStats()).merge(stats)
        run.findings += [(zz, f) for f in found]
        log.info(f"{os.path.basename(zz)}: {tables} tables, {oracle.name}: {stats.checks} "
                 f"checks, {stats.compared} compared, {stats.findings} findings"
                 + (f", stopped: {stats.stopped}" if stats.stopped else ""))
        if stats.stopped:
            raise BenchError(f"{oracle.name} on {zz}: {stats.stopped}")


def known_bugs_run(conn: pymysql.connections.Connection, checks: int,
                   seed: int) -> FalsePositiveRun:
    """NoREC and TLP over types.zz's tables with the known-bug avoidance off."""
    run = FalsePositiveRun()
    started = time.monotonic()
    load = load_gendata(conn, TYPES_ZZ, SCHEMA, seed=seed, max_rows=50)
    run.files.append((TYPES_ZZ, len(load.metadata.tables_by_schema.get(SCHEMA, ())), load.errors))
    for name in ("norec", "tlp"):
        (oracle,) = wrong_result_oracles([name])
        if isinstance(oracle, OracleBase):
            oracle.options = replace(oracle.options, avoid=frozenset())
        _run_oracles(run, conn, TYPES_ZZ, load.metadata, seed, checks, [name], None,
                     given=oracle)
    run.seconds = time.monotonic() - started
    return run


def fixture_servers(workdir: str, base_port: int
                    ) -> AbstractContextManager[list[dict[str, Any]]]:
    """The fixture suite's two servers (kewpie --start-and-exit), cleaned up at the end."""
    return kewpie_servers(workdir, base_port, [f"--suitepath={FIXTURE_SUITES}",
                                               "--suite=wrongresult"])


def connect(server: dict[str, Any]) -> pymysql.connections.Connection:
    """An autocommit connection to a server of cluster.json."""
    return pymysql.connect(unix_socket=server["socket"], user="root", autocommit=True)


def planted_differential(servers: Sequence[dict[str, Any]], checks: int,
                         seed: int) -> tuple[OracleStats, list[WrongResult], OracleStats, int]:
    """(stats and findings between the two servers, stats and findings count within server 1)."""
    conns = [connect(s) for s in servers[:2]]
    try:
        for conn in conns:
            load = load_gendata(conn, TYPES_ZZ, "wr_diff", seed=seed, max_rows=20)
        (oracle,) = wrong_result_oracles(["differential"])
        again = connect(servers[0])
        try:
            same = oracle.run([conns[0], again], load.metadata, seed, checks)
            control: OracleStats = getattr(oracle, "stats")
        finally:
            again.close()
        found = oracle.run(conns, load.metadata, seed, checks)
        return getattr(oracle, "stats"), found, control, len(same)
    finally:
        for conn in conns:
            conn.close()


def describe(name: str, s: OracleStats) -> list[str]:
    """Report lines for one oracle's totals."""
    skipped = ", ".join(f"{code}: {n}" for code, n in sorted(s.skipped.items(), key=lambda x: -x[1]))
    lines = [f"  {name:<13} {s.checks:>7} checks {s.compared:>7} compared {s.statements:>8} SELECTs "
             f"{s.findings:>4} findings {s.unconfirmed:>3} unconfirmed "
             f"{s.generator_errors:>3} generator errors",
             f"  {'':<13} skipped by error code: {skipped or 'none'}"]
    lines += [f"  {'':<13} generator error: {g}" for g in s.generator_samples]
    return lines


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line."""
    p = argparse.ArgumentParser(prog="wrongresult_bench.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--selects", type=int, default=20000,
                   help="generated SELECTs for the false-positive run (default: 20000)")
    p.add_argument("--zz-dir", action="append", metavar="DIR",
                   help="folder of .zz files (repeatable; default: the stock randgen-conf "
                        "and randgen/conf/kewpie)")
    p.add_argument("--max-rows", type=int, default=100, help="rows per table (default: 100)")
    p.add_argument("--seed", type=int, default=1, help="seed of gendata and oracles (default: 1)")
    p.add_argument("--differential-checks", type=int, default=300,
                   help="generated SELECTs for the planted differential (default: 300)")
    p.add_argument("--hunt-known-bugs", action="store_true",
                   help="also run NoREC/TLP with the known-bug avoidance off")
    p.add_argument("--known-bug-checks", type=int, default=3000,
                   help="checks per oracle for --hunt-known-bugs (default: 3000)")
    p.add_argument("--json", metavar="PATH", help="also write the figures to PATH as JSON")
    p.add_argument("--workdir", metavar="DIR",
                   help="kewpie workdir to use and keep (default: a fresh one under /tmp)")
    p.add_argument("--base-port", type=int, default=9870, metavar="PORT",
                   help="where kewpie's port search starts (default: 9870)")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Measure, print the report; return the exit status."""
    args = parse_args(argv)
    configure(verbose=False, stream=sys.stderr)
    log = get_logger()
    files = zz_files(args.zz_dir or DEFAULT_ZZ_DIRS)
    info: dict[str, str] = {}
    doc: dict[str, Any] = {}
    lines: list[str] = []
    with bench_workdir(args.workdir, "kewpie-wrongresult-bench-") as workdir, \
            measuring() as outcome:
        if not files:
            raise BenchError(f"no .zz file under {args.zz_dir or DEFAULT_ZZ_DIRS}")
        info = machine_info()
        load_before = " ".join(f"{x:.1f}" for x in os.getloadavg())
        with fixture_servers(workdir, args.base_port) as servers:
            conn = connect(servers[0])
            log.info(f"false positives: {len(files)} gendata files, {args.selects} SELECTs")
            fp = false_positive_run(conn, files, args.selects, args.seed, args.max_rows)
            log.info(f"planted differential: {args.differential_checks} SELECTs")
            diff, diff_found, control, control_found = planted_differential(
                servers, args.differential_checks, args.seed)
            hunted: FalsePositiveRun | None = None
            if args.hunt_known_bugs:
                log.info(f"known bugs hunted: {args.known_bug_checks} checks each, avoidance off")
                hunted = known_bugs_run(conn, args.known_bug_checks, args.seed)
            conn.close()
        load_after = " ".join(f"{x:.1f}" for x in os.getloadavg())
        rate = fp.selects / fp.oracle_seconds if fp.oracle_seconds else 0.0
        fp_verdict = "PASS" if not fp.findings and fp.selects >= args.selects else "MISS"
        gen_errors = sum(s.generator_errors for s in fp.stats.values())
        diff_verdict = "PASS" if diff_found and control_found == 0 else "MISS"
        lines = ["", "wrong-result oracles benchmark",
                 f"date:      {info['date']}",
                 f"machine:   nproc {info['nproc']}, kernel {info['kernel']}, "
                 f"python {info['python']}",
                 f"server:    {info['mariadbd']}",
                 f"load:      {load_before} before, {load_after} after (1/5/15 min)",
                 f"gendata:   {len(fp.files)} files, {sum(t for _, t, _ in fp.files)} tables, "
                 f"at most {args.max_rows} rows each; seed {args.seed}", "",
                 "1. false positives (NoREC, TLP on a healthy server, known bugs avoided)"]
        for name, s in fp.stats.items():
            lines += describe(name, s)
        lines += [f"  generated SELECTs: {fp.selects}; findings: {len(fp.findings)} (must be 0); "
                  f"generator errors: {gen_errors}; {rate:.0f} SELECTs/s "
                  f"({fp.seconds:.0f} s with gendata)"]
        for zz, f in fp.findings[:10]:
            lines += [f"  FINDING in {os.path.basename(zz)}:", *("    " + x for x in
                                                                 f.summary().splitlines())]
        lines += ["", "2. planted differential (div_precision_increment 4 vs 8)"]
        lines += describe("differential", diff)
        lines += [f"  findings between the two servers: {len(diff_found)} (must be > 0); "
                  f"between two connections to server 1: {control_found} (must be 0)"]
        if diff_found:
            lines += ["  first finding:", *("    " + x for x in diff_found[0].summary().splitlines())]
        if hunted is not None:
            shapes: dict[str, int] = {}
            for _, f in hunted.findings:
                shapes[f"{f.oracle}: {f.shape[:150]}"] = shapes.get(f"{f.oracle}: {f.shape[:150]}", 0) + 1
            lines += ["", "3. known bugs hunted (types.zz, avoidance off): real discrepancies of this "
                          "server"]
            for name, s in hunted.stats.items():
                lines += describe(name, s)
            lines += [f"  findings: {len(hunted.findings)} in {hunted.selects} SELECTs, "
                      f"{len(shapes)} distinct shapes"]
            lines += [f"    {n:>3} x {shape}" for shape, n in sorted(shapes.items(),
                                                                       key=lambda x: -x[1])[:20]]
        lines += ["", f"NoREC/TLP false positives: {len(fp.findings)} in {fp.selects} SELECTs "
                      f"(target: 0 in >= {args.selects})   {fp_verdict}",
                  f"planted differential found: {len(diff_found)} finding(s), control "
                  f"{control_found}   {diff_verdict}"]
        doc = {"info": {**info, "load_before": load_before, "load_after": load_after},
               "selects": fp.selects, "selects_per_second": rate,
               "stats": {k: vars(v) for k, v in fp.stats.items()},
               "findings": [{"zz": zz, **f.to_json()} for zz, f in fp.findings],
               "files": fp.files, "false_positive_verdict": fp_verdict,
               "differential": {"stats": vars(diff), "findings": [f.to_json() for f in diff_found],
                                "control_findings": control_found, "verdict": diff_verdict},
               "known_bugs": None if hunted is None else {
                   "selects": hunted.selects,
                   "findings": [{"zz": zz, **f.to_json()} for zz, f in hunted.findings]}}
    if outcome.status is not None:
        return outcome.status
    print("\n".join(lines), flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(doc, fh, indent=2, default=str)
            fh.write("\n")
        log.info(f"figures written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
