"""Figures of issue 46's loads for bench/hunt_bench.py (figures 5 and 6).

5. **The surface generator** (lib/hunt/surface): for ``seeds`` seeds, the schema of
   each built on one healthy server, then ``statements`` statements of its stream
   sent on one connection; what they cover (statement kinds, functions and
   operators, clauses, column types, schema features, of all the generator can
   write), how many the server refused (by error code: the generator's error rate),
   how many are deterministic, and statements per second and per core-second.  A
   server that dies is restarted and counted (a crash the generator found).
6. **The pquery-style load** (lib/hunt/pquery): mining the installed mysql-test
   corpus (seconds, statements read, kept, refused per rule), then one hunt trial
   of it (``--sql-file=mysql-test``, ``seconds`` long, 4 threads): statements per
   second and per core-second, and the share the server refused.

Both print lines; nothing is asserted.
"""
from __future__ import annotations

import os
import time
from collections import Counter
from typing import Any, Callable

import psutil

from lib.hunt.pquery.corpus import build_corpus
from lib.hunt.surface import Surface
from lib.hunt.surface.coverage import Coverage
from lib.hunt.topology import parse_topology
from lib.hunt.trial import HuntSettings, Load, run_trial
from lib.platform.logsetup import configure
from lib.randgen.api import server_connection
from lib.randgen.channel import StatementError, open_channel
from lib.randgen.executor import RANDGEN_HOME
from lib.config import RunConfig
from lib.run.environment import RunEnvironment

# statement errors that are the load's own doing, not the generator's: a statement
# interrupted (max_statement_time), a lock wait or deadlock between its own statements
NOT_REFUSED = frozenset({1317, 1969, 1205, 1213})


def _cpu(pids: list[int]) -> float:
    own = sum(os.times()[:2])
    for pid in pids:
        try:
            t = psutil.Process(pid).cpu_times()
            own += t.user + t.system
        except psutil.Error:
            pass
    return own


def _server(workdir: str) -> tuple[RunEnvironment, Any, Any]:
    env = RunEnvironment(RunConfig(workdir=workdir))
    env.open_workdir()
    configure(False, logfile=env.workdir.log_file, console=False)
    env.discover_tree()
    manager = env.make_manager("bot0")
    servers = manager.get_servers(parse_topology("single").requirements)
    return env, manager, servers[0]


def surface_figures(workdir: str, seeds: int, statements: int,
                    say: Callable[[str], None] = print) -> dict[str, Any]:
    """Figure 5 (see the module docstring)."""
    env, manager, server = _server(workdir)
    cov = Coverage()
    crashes: list[str] = []
    samples: dict[int, str] = {}
    sent = 0
    started = time.monotonic()
    cpu0 = _cpu([server.server_pid])
    try:
        for seed in range(1, seeds + 1):
            surface = Surface(seed)
            cov.add_schema(surface.schema)
            chan = open_channel(server_connection(server, "test"))
            try:
                setup_failed = 0
                for sql in surface.setup():
                    try:
                        chan.run(sql)
                    except StatementError:
                        setup_failed += 1
                cov.errors.update({-1: setup_failed} if setup_failed else {})
                stream = surface.statements(statements, thread=1)
                cov.add(stream)
                chan.run("SET SESSION max_statement_time = 10")
                for st in stream:
                    sent += 1
                    try:
                        chan.run(st.sql)
                        cov.ran += 1
                    except StatementError as exc:
                        if exc.lost:
                            crashes.append(f"seed {seed}: {st.sql[:200]}")
                            break
                        if exc.code not in NOT_REFUSED:
                            cov.ran += 1
                            cov.errors[exc.code] += 1
                            samples.setdefault(exc.code, f"{exc.message[:100]} [{st.sql[:160]}]")
            finally:
                chan.close()
            if crashes and crashes[-1].startswith(f"seed {seed}:"):
                manager.teardown(fast=True, discard=True)
                server = manager.get_servers(parse_topology("single").requirements)[0]
        wall = time.monotonic() - started
        cpu = _cpu([server.server_pid]) - cpu0
    finally:
        env.close()
    lines = cov.lines()
    say(f"5. the surface generator, {seeds} seed(s) x {statements} statements on one "
        f"healthy server: {sent} sent in {wall:.1f} s ({sent / max(wall, 1e-9):.0f}/s wall, "
        f"{sent / max(cpu, 1e-9):.0f} per core-s)")
    for line in lines:
        say(f"   {line}")
    for code, sample in sorted(samples.items(), key=lambda kv: -cov.errors[kv[0]])[:6]:
        say(f"   refused {code} x{cov.errors[code]}: {sample}")
    for c in crashes:
        say(f"   SERVER DIED: {c}")
    return {"seeds": seeds, "statements": sent, "wall_s": wall, "cpu_s": cpu,
            "kinds": dict(cov.kinds), "functions": len(cov.functions()[0]),
            "functions_known": len(cov.functions()[1]), "clauses": len(cov.clauses()[0]),
            "clauses_known": len(cov.clauses()[1]), "types": len(cov.types),
            "refused": sum(cov.errors.values()), "ran": cov.ran,
            "errors": {str(k): v for k, v in cov.errors.items()},
            "deterministic": cov.deterministic, "crashes": crashes, "lines": lines}


def pquery_figures(workdir: str, seconds: float,
                   say: Callable[[str], None] = print) -> dict[str, Any]:
    """Figure 6 (see the module docstring)."""
    env, manager, server = _server(workdir)
    try:
        assert env.tree is not None
        started = time.monotonic()
        cpu0 = sum(os.times()[:2])
        corpus = build_corpus("mysql-test", env.tree.basedir, env.workdir.path)
        mine_wall, mine_cpu = time.monotonic() - started, sum(os.times()[:2]) - cpu0
        stats = corpus.stats
        say(f"6. the pquery-style load: mining {stats.path}: {stats.files} files, "
            f"{stats.statements} statements read, {stats.duplicates} duplicates, refused "
            f"{sum(stats.refused.values())} ({', '.join(f'{k} {v}' for k, v in sorted(stats.refused.items()))}), "
            f"{stats.undecodable} not UTF-8, {stats.kept} kept, in {mine_wall:.1f} s "
            f"({mine_cpu:.1f} CPU-s)")
        settings = HuntSettings(loads=(Load("mysql-test", corpus=corpus.cache),),
                                topology=parse_topology("single"),
                                findings_dir=os.path.join(workdir, "findings"),
                                randgen_home=RANDGEN_HOME, threads=4, trial_duration=seconds,
                                oracles=("crash", "hang"), hang_timeout=60.0)
        pids = [server.server_pid]
        started, cpu0 = time.monotonic(), _cpu(pids)
        trial = run_trial(settings.trial(1), settings, [server], manager.wait_for_replicas,
                          os.path.join(workdir, "trial"), "bot0")
        wall, cpu = time.monotonic() - started, _cpu(pids) - cpu0
        errors = Counter({int(k): int(v) for k, v in
                          (e.split(" x") for e in trial.errors.split(", ") if " x" in e)})
        failed = sum(errors.values())
        say(f"   one trial, 4 threads, {seconds:g} s: {trial.statements} statements "
            f"({trial.statements / max(wall, 1e-9):.0f}/s wall, "
            f"{trial.statements / max(cpu, 1e-9):.0f} per core-s); refused by the server "
            f"{failed} ({100.0 * failed / max(trial.statements, 1):.0f}%; top: "
            f"{', '.join(f'{c} x{n}' for c, n in errors.most_common(5))}); "
            f"{len(trial.findings)} finding(s)")
        for w in trial.findings:
            say(f"   finding: {w.kind} {w.signature_id} {w.summary[:150]}")
    finally:
        env.close()
    return {"files": stats.files, "read": stats.statements, "kept": stats.kept,
            "refused": stats.refused, "mine_s": mine_wall, "statements": trial.statements,
            "wall_s": wall, "cpu_s": cpu, "errors": failed,
            "findings": [w.signature_id for w in trial.findings]}
