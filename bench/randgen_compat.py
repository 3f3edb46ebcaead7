#!/usr/bin/env python3
"""randgen compatibility check: how many stock grammars the built-in engine runs.

For every ``.yy`` under the given folder (``../shared/randgen-conf``, or a
Perl randgen checkout's ``conf/``), one row:

- **parsed**: the grammar reads (rules, includes, Perl blocks placed);
- **generated**: 1000 sentences generated without a server, from the table
  metadata its gendata would create (Perl blocks natively, or in a perl
  coprocess when they are outside the native subset);
- **ran**: a run against one MariaDB server started through kewpie
  (``--start-and-exit``, cleaned up at the end): its gendata (capped at
  ``--max-rows`` rows per table), then ``--queries`` sentences per thread on
  ``--threads`` threads, in a fresh ``test`` schema.  It ran when the run
  ends ``ok``: the server survived and the grammar did not fail.  Statement
  errors are counted, not judged (stock grammars are written for other
  servers and data);
- **why not**: the reason for the first step that failed.

A redefine-only file (rules but no ``query``/``threadN`` rule of its own:
an overlay for ``--redefine``) runs over its base grammar, as the Perl
tool's combinations files pair them (:mod:`lib.randgen.combinations`: a
``.cc`` file naming it, else the grammar of its folder defining most of its
rules, else ``query: SELECT 1``); its row says which.

Grammars are isolated from each other: any failure of one (an engine
exception included) is its row, never the end of the check; before each
run every user schema is dropped (files a grammar left in a schema folder,
e.g. ``SELECT ... INTO OUTFILE``, are removed first); after a run that
changed global variables or accounts the server is restarted.

The gendata of a grammar is the ``.zz`` of the same name in its folder, else
the folder's ``.zz`` sharing the longest name prefix, else the folder's
``<folder>.zz``, else randgen's simple data set.  The last line is
``total: N of M ran (P%)`` (target: at least 97%).  Exit status 0 when the
check ran (whatever the total), 2 when it could not (no server...).

Usage::

    bench/randgen_compat.py ../shared/randgen-conf [--queries 100] [--threads 2]
        [--max-rows 20] [--no-server] [--json PATH] [--workdir DIR] [--base-port 9800]
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Sequence

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import BenchError, bench_workdir, enter_venv, machine_info, measuring  # noqa: E402

enter_venv(__file__)

import pymysql  # noqa: E402

from lib.platform.logsetup import configure, get_logger  # noqa: E402
from lib.randgen.api import run_randgen  # noqa: E402
from lib.randgen.cmdline import RandgenOptions  # noqa: E402
from lib.randgen.connection import ConnectionSpec  # noqa: E402
from lib.randgen.errors import RandgenError  # noqa: E402
from lib.randgen.combinations import MINIMAL_BASE, is_redefine_only, pick_base  # noqa: E402
from lib.randgen.grammar import Grammar  # noqa: E402
from lib.randgen.offline import offline_generators  # noqa: E402
from randgen_common import kewpie_server, restart_server, stop_server  # noqa: E402

TARGET_PERCENT = 97.0
# global variables that change by themselves (not a grammar's doing)
VOLATILE_VARIABLES = frozenset({"gtid_binlog_pos", "gtid_current_pos", "gtid_binlog_state",
                                "gtid_slave_pos", "timestamp", "last_insert_id",
                                "innodb_buffer_pool_load_at_startup"})
SENTENCES = 1000
SYSTEM = ("mysql", "information_schema", "performance_schema", "sys")


@dataclass
class Row:
    """One grammar's outcome."""

    grammar: str
    gendata: str
    parsed: bool = False
    generated: bool = False
    ran: bool = False
    why: str = ""
    perl: str = "-"           # native, coprocess or - (no blocks)
    runaways: int = 0
    statements: int = 0
    errors: int = 0
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    base: str = ""            # a redefine-only file: the base grammar it ran over


def _redefine_only(path: str, conf: str) -> bool:
    try:
        return is_redefine_only(path, [os.path.dirname(path), conf])
    except Exception:  # unreadable: it gets its own row with the reason
        return False


def pick_gendata(grammar: str) -> str:
    """The gendata file for a grammar ('' for the simple data set)."""
    folder = os.path.dirname(grammar)
    base = os.path.splitext(os.path.basename(grammar))[0]
    same = os.path.join(folder, base + ".zz")
    if os.path.isfile(same):
        return same
    best, best_len = "", 3
    for zz in sorted(glob.glob(os.path.join(folder, "*.zz"))):
        name = os.path.splitext(os.path.basename(zz))[0]
        common = len(os.path.commonprefix([name, base]))
        if common > best_len:
            best, best_len = zz, common
    if best:
        return best
    default = os.path.join(folder, os.path.basename(folder) + ".zz")
    return default if os.path.isfile(default) else ""


def options_for(grammar: str, gendata: str, queries: int, threads: int,
                max_rows: int) -> RandgenOptions:
    """The run's options: gendata (or the simple set), capped rows, short lock waits."""
    return RandgenOptions(grammar=grammar, gendata=gendata or None,
                          gendata_simple=not gendata, queries=queries, threads=threads,
                          duration=20, seed=1, max_rows=max_rows, querytimeout=10)


def check_offline(row: Row, opts: RandgenOptions) -> None:
    """Parse and generate SENTENCES sentences without a server (never raises)."""
    try:
        _check_offline(row, opts)
    except Exception as exc:  # one grammar's engine failure is a row, never the end of the check
        row.why = row.why or f"engine: {type(exc).__name__}: {exc}"


def _check_offline(row: Row, opts: RandgenOptions) -> None:
    try:
        grammar = Grammar.from_files([opts.grammar or "", *opts.redefine],
                                     [os.path.dirname(opts.grammar or "")])
    except RandgenError as exc:
        row.why = f"parse: {exc}"
        return
    row.parsed = True
    if grammar.perl_blocks():
        from lib.randgen.generator import compile_blocks
        row.perl = "native" if not compile_blocks(grammar)[1] else "coprocess"
    gens = []
    try:
        gens = offline_generators(opts, os.path.dirname(opts.grammar or ""))
        for _ in range(SENTENCES):
            gens[0].next_sentence()
        row.runaways = gens[0].runaways
        row.generated = True
        if row.runaways:
            row.notes.append(f"{row.runaways} runaway sentence(s) dropped")
    except RandgenError as exc:
        row.why = f"generate: {exc}"
    finally:
        for g in gens:
            g.close()


def reset_schemas(conn: ConnectionSpec) -> None:
    """Drop every user schema and create an empty test schema.

    A schema folder holding a file the server did not make (``SELECT ... INTO
    OUTFILE 'x'`` writes into it) cannot be dropped (error 1010): its tables
    are dropped first, then the stray files removed, then the schema.
    """
    c = conn.connect(database="")
    try:
        with c.cursor() as cur:
            cur.execute("SET SESSION sql_mode='', foreign_key_checks=0")
            cur.execute("SELECT @@datadir")
            datadir = str(cur.fetchone()[0])
            cur.execute("SELECT SCHEMA_NAME FROM information_schema.SCHEMATA")
            for (name,) in cur.fetchall():
                if name in SYSTEM:
                    continue
                try:
                    cur.execute(f"DROP SCHEMA `{name}`")
                except pymysql.MySQLError as exc:
                    if exc.args[0] != 1010:
                        raise
                    _drop_stubborn_schema(cur, datadir, name)
            cur.execute("CREATE SCHEMA test")
    finally:
        c.close()


def _drop_stubborn_schema(cur: Any, datadir: str, name: str) -> None:
    """DROP SCHEMA after removing what the server does not know in its folder."""
    cur.execute("SELECT TABLE_NAME, TABLE_TYPE FROM information_schema.TABLES "
                "WHERE TABLE_SCHEMA = %s", (name,))
    for table, kind in cur.fetchall():
        what = "VIEW" if kind == "VIEW" else "TABLE"
        cur.execute(f"DROP {what} IF EXISTS `{name}`.`{table}`")
    folder = os.path.join(datadir, name)
    for entry in os.listdir(folder) if os.path.isdir(folder) else []:
        if entry != "db.opt":
            path = os.path.join(folder, entry)
            if os.path.isdir(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                os.unlink(path)
    cur.execute(f"DROP SCHEMA `{name}`")


def global_state(conn: ConnectionSpec) -> dict[str, Any]:
    """Global variables and accounts: a grammar that changes them is followed by a restart."""
    c = conn.connect(database="")
    try:
        with c.cursor() as cur:
            cur.execute("SHOW GLOBAL VARIABLES")
            state: dict[str, Any] = {k: v for k, v in cur.fetchall()
                                     if k not in VOLATILE_VARIABLES}
            cur.execute("SELECT COUNT(*) FROM mysql.global_priv")
            state["(accounts)"] = cur.fetchone()[0]
            return state
    finally:
        c.close()


def run_on_server(row: Row, opts: RandgenOptions, conn: ConnectionSpec, server: dict[str, Any],
                  log_dir: str, baseline: dict[str, Any] | None) -> None:
    """Run the grammar against the server, isolated from the others (never raises).

    Before: a clean schema set (restarting the server if it does not answer);
    after: a restart when the grammar changed global variables or accounts.
    """
    try:
        _run_on_server(row, opts, conn, server, log_dir)
    except Exception as exc:  # one grammar's failure is a row, never the end of the check
        row.ran = False
        row.why = row.why or f"engine: {type(exc).__name__}: {exc}"
    try:
        state = global_state(conn) if baseline is not None else None
        if baseline is not None and state != baseline:
            changed = sorted(k for k in set(state or {}) | set(baseline)
                             if (state or {}).get(k) != baseline.get(k))
            row.notes.append(f"changed {', '.join(changed[:3])}: server restarted")
            stop_server(server)
            restart_server(server)
            baseline.clear()  # the state a restart gives is the clean state from now on
            baseline.update(global_state(conn))
    except (RandgenError, pymysql.MySQLError, OSError, subprocess.SubprocessError):
        stop_server(server)
        restart_server(server)


def _run_on_server(row: Row, opts: RandgenOptions, conn: ConnectionSpec, server: dict[str, Any],
                   log_dir: str) -> None:
    try:
        reset_schemas(conn)
    except (RandgenError, pymysql.MySQLError, OSError) as exc:
        stop_server(server)
        if not restart_server(server):
            row.why = f"server unavailable: {exc}"
            return
        reset_schemas(conn)
    log = os.path.join(log_dir, os.path.basename(opts.grammar or "x") + ".log")
    t0 = time.monotonic()
    result = run_randgen(opts, conn, os.path.dirname(opts.grammar or ""), log)
    row.seconds = time.monotonic() - t0
    row.statements, row.errors = result.statements, result.error_count
    if result.ok:
        row.ran = True
    else:
        row.why = f"run: {result.status}: {result.reason[:200]}"
        if result.status == "server_lost" and not restart_server(server):
            row.why += " (and the server could not be restarted)"


def render(rows: list[Row], info: dict[str, str], args: argparse.Namespace) -> str:
    """The report: header, one row per grammar, the total."""
    width = max(len(r.grammar) for r in rows)
    gwidth = max(len(os.path.basename(r.gendata)) for r in rows)
    yes = {True: "yes", False: "no"}
    out = ["", "randgen compatibility (kewpie built-in engine)",
           f"date:      {info['date']}", f"server:    {info['mariadbd']}",
           f"grammars:  {args.conf} ({len(rows)}); {SENTENCES} sentences generated offline; "
           f"runs: {args.queries} queries x {args.threads} threads, gendata <= {args.max_rows} "
           f"rows/table", "",
           f"{'grammar':<{width}}  {'gendata':<{gwidth}}  parsed  generated  ran  perl       "
           f"stmts  errors  why not"]
    out.append("-" * len(out[-1]))
    for r in rows:
        ran = yes[r.ran] if not args.no_server else "-"
        out.append(f"{r.grammar:<{width}}  {os.path.basename(r.gendata):<{gwidth}}  {yes[r.parsed]:<6}  {yes[r.generated]:<9}  {ran:<3}  "
                   f"{r.perl:<9}  {r.statements:>5}  {r.errors:>6}  "
                   f"{r.why or '; '.join(r.notes)}")
    done = sum(r.ran for r in rows) if not args.no_server else sum(r.generated for r in rows)
    verb = "ran" if not args.no_server else "generated"
    pct = 100.0 * done / len(rows) if rows else 0.0
    paired = [r for r in rows if r.base]
    if paired:
        out += ["", f"redefine-only files: {len(paired)}, each run over its base grammar "
                    f"({sum(r.ran for r in paired) if not args.no_server else sum(r.generated for r in paired)} "
                    f"{verb})"]
    out += ["", f"total: {done} of {len(rows)} {verb} ({pct:.1f}%)"
            + (f"  target >= {TARGET_PERCENT:.0f}%: {'PASS' if pct >= TARGET_PERCENT else 'MISS'}"
               if not args.no_server else "")]
    return "\n".join(out)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command-line options."""
    p = argparse.ArgumentParser(prog="bench/randgen_compat.py", description=__doc__.split("\n\n")[0])
    p.add_argument("conf", help="folder of .yy/.zz files (e.g. ../shared/randgen-conf)")
    p.add_argument("--queries", type=int, default=100, help="queries per thread (default 100)")
    p.add_argument("--threads", type=int, default=2, help="threads per run (default 2)")
    p.add_argument("--max-rows", type=int, default=20, help="gendata rows per table (default 20)")
    p.add_argument("--no-server", action="store_true", help="only parse and generate")
    p.add_argument("--json", metavar="PATH", help="also write the rows to PATH as JSON")
    p.add_argument("--workdir", metavar="DIR", help="kewpie workdir (default: a fresh one)")
    p.add_argument("--base-port", type=int, default=9800, help="first port to lease (default 9800)")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Check every grammar, print the report; return the exit status."""
    args = parse_args(argv)
    configure(verbose=False, stream=sys.stderr)
    log = get_logger()
    conf = os.path.abspath(args.conf)
    grammars = sorted(glob.glob(os.path.join(conf, "**", "*.yy"), recursive=True))
    if not grammars:
        log.error(f"no .yy files under {conf}")
        return 2
    rows: list[Row] = []
    info: dict[str, str] = {}
    base_dir = ""
    with bench_workdir(args.workdir, "kewpie-randgen-compat-") as workdir, measuring() as outcome:
        info = machine_info()
        plans = []
        redefines = {p for p in grammars if _redefine_only(p, conf)}
        bases = [p for p in grammars if p not in redefines]
        base_dir = tempfile.mkdtemp(prefix="kewpie-compat-base-")  # the workdir stays empty
        minimal = os.path.join(base_dir, "kewpie-minimal-base.yy")
        with open(minimal, "w") as fh:
            fh.write(MINIMAL_BASE)
        for path in grammars:
            base, redefine = path, []
            if path in redefines:
                base = pick_base(path, bases, conf) or minimal
                redefine = [path]
            gendata = pick_gendata(base if base != minimal else path)
            row = Row(os.path.relpath(path, conf),
                      os.path.relpath(gendata, conf) if gendata else "(simple)")
            if redefine:
                row.base = os.path.relpath(base, conf) if base != minimal else "(SELECT 1)"
                row.notes.append(f"redefine over {row.base}")
            opts = options_for(base, gendata, args.queries, args.threads, args.max_rows)
            opts.redefine = redefine
            check_offline(row, opts)
            rows.append(row)
            plans.append(opts)
        if not args.no_server:
            log.info(f"starting a server in {workdir}")
            with kewpie_server(workdir, args.base_port) as server:
                conn = ConnectionSpec(port=server["port"], unix_socket=server["socket"])
                log_dir = os.path.join(workdir, "randgen-compat-logs")
                os.makedirs(log_dir, exist_ok=True)
                baseline = None
                try:
                    baseline = global_state(conn)
                except (RandgenError, pymysql.MySQLError) as exc:
                    log.warning(f"cannot read the server's global state ({exc}): no restarts")
                for row, opts in zip(rows, plans):
                    if not row.generated:
                        continue
                    log.info(f"running {row.grammar} (gendata {row.gendata})")
                    run_on_server(row, opts, conn, server, log_dir, baseline)
    if base_dir:
        shutil.rmtree(base_dir, ignore_errors=True)
    if outcome.status is not None:
        return outcome.status
    print(render(rows, info, args), flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"machine": info, "rows": [asdict(r) for r in rows]}, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
