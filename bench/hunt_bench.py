#!/usr/bin/env python3
"""Hunt benchmark: what the hunt's oracles cost, how fast a crash becomes a finding,
and whether one bug keeps one signature.  Prints figures; asserts nothing.

1. **Throughput**: the same grammar for ``--seconds`` on the same servers (a
   primary and a replica), first as a plain randgen load
   (:func:`lib.randgen.api.run_randgen`: no trace, no reporter), then as one
   hunt trial with every oracle on (:func:`lib.hunt.trial.run_trial`: the
   per-connection trace, the Deadlock reporter, the divergence check, the
   error-log check, and NoREC/TLP when ``lib/hunt/wrongresult`` is there).
   Statements per second of wall time, and per core: statements per CPU
   second of the client and the servers together (``statements/core-s``);
   the hunt's figures count its oracles' time after the load too.
2. **Crash to finding**: hunts of the planted UDF crash (one thread, so one
   crashing statement); for each, the seconds from the crashing statement's
   send time (its trace record) to ``finding.json`` on disk (target: <= 5 s),
   and to gdb's backtrace.
3. **One signature**: the planted crash in ``--seeds`` trials with different
   seeds (two threads, ``--parallel 2``): how many distinct signatures
   (target: 1).
5. **The surface generator** and 6. **the pquery-style load** (issue 46; the
   code is bench/surface_figures.py): what the generator's statements cover and how
   many a healthy server refuses; the mysql-test corpus mined and one trial of it.
7. **Plan and rewrite oracles** (issue 46: DQP, EET, CODDTest, Pinolo, DQE,
   Radar, the TLP variants, CERT): each over the tables of every stock gendata
   file on a healthy server, ``--oracle-checks`` checks (default 20,000):
   checks per core-second (this process and the server) and findings -- false
   positives, the known wrong results of 10.11 being avoided (target 0).
4. **Wrong-result false positives** (issue 31's NoREC/TLP figure, once
   ``lib/hunt/wrongresult`` and ``bench/wrongresult_bench.py`` are merged):
   NoREC and TLP over the tables of every stock gendata file on a healthy
   server, through ``wrongresult_bench.false_positive_run``; every finding
   there is a false positive (target: 0 over >= 20,000 generated SELECTs).

Run (about 5 minutes on 2 idle cores)::

    bench/hunt_bench.py [--seconds 30] [--seeds 10] [--crashes 3] [--selects 20000]
                        [--randgen-conf ../shared/randgen-conf] [--json out.json]
                        [--surface-seeds 10] [--surface-statements 1000]
                        [--pquery-seconds 60] [--oracle-checks 20000]
                        [--oracles dqp,eet,...] [--only 1,2,3,4,5,6,7]
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_VENV = os.path.join(_ROOT, ".venv")
if (os.path.exists(os.path.join(_VENV, "bin", "python")) and not os.environ.get("KEWPIE_NO_VENV")
        and os.path.realpath(sys.prefix) != os.path.realpath(_VENV)):  # benchlib needs the venv
    os.execv(os.path.join(_VENV, "bin", "python"), [os.path.join(_VENV, "bin", "python"),
                                                     os.path.abspath(__file__), *sys.argv[1:]])
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import ROOT, machine_info, remove_workdir  # noqa: E402
from surface_figures import pquery_figures, surface_figures  # noqa: E402

import psutil  # noqa: E402

from lib.hunt.topology import parse_topology  # noqa: E402
from lib.hunt.trial import HuntSettings, Load, run_trial  # noqa: E402
from lib.platform.logsetup import configure  # noqa: E402
from lib.randgen.api import make_options, run_randgen, server_connection  # noqa: E402
from lib.randgen.executor import RANDGEN_HOME  # noqa: E402
from lib.config import RunConfig  # noqa: E402
from lib.modes.hunt.options import HuntOptions  # noqa: E402
from lib.run.environment import RunEnvironment  # noqa: E402
from tests.fixtures.hunt.planted import (CRASH_GRAMMAR, build_plugin_dir,  # noqa: E402
                                         remove_plugin_dir)

KEWPIE = os.path.join(ROOT, "kewpie.py")
GRAMMAR = os.path.join(RANDGEN_HOME, "conf", "kewpie", "transactions.yy")
GENDATA = os.path.join(RANDGEN_HOME, "conf", "kewpie", "transactions.zz")
WRONG_RESULT = ("norec", "tlp")


def wrong_result_available() -> bool:
    """Is lib/hunt/wrongresult (issue 31's NoREC/TLP/differential oracles) here?"""
    try:
        import lib.hunt.wrongresult  # noqa: F401
    except ImportError:
        return False
    return True


def cpu_seconds(pids: list[int]) -> float:
    """This process's CPU time plus that of the given (server) processes."""
    own = sum(os.times()[:2])
    servers = 0.0
    for pid in pids:
        try:
            t = psutil.Process(pid).cpu_times()
            servers += t.user + t.system
        except psutil.Error:
            pass
    return own + servers


def throughput(workdir: str, seconds: float, threads: int) -> dict[str, float]:
    """Figure 1: a plain load and a hunt trial with every oracle, on one primary+replica."""
    config = RunConfig(workdir=workdir, mode="hunt",
                       mode_section=HuntOptions(topology="replication:1"))
    env = RunEnvironment(config)
    try:
        env.open_workdir()
        configure(False, logfile=env.workdir.log_file, console=False)
        env.discover_tree()
        manager = env.make_manager("bot0")
        topology = parse_topology("replication:1")
        servers = manager.get_servers(topology.requirements)
        pids = [s.server_pid for s in servers if s.server_pid]
        # plain: the load alone (the same gendata, fresh tables)
        opts = make_options(GRAMMAR, GENDATA, 10 ** 9, threads, seconds, 1, processes=1)
        started, cpu0 = time.monotonic(), cpu_seconds(pids)
        plain = run_randgen(opts, server_connection(servers[0]), RANDGEN_HOME,
                            os.path.join(workdir, "plain.log"))
        plain_wall, plain_cpu = time.monotonic() - started, cpu_seconds(pids) - cpu0
        manager.wait_for_replicas(120)
        oracles = ("crash", "hang", "errorlog", "divergence") + (
            WRONG_RESULT if wrong_result_available() else ())
        settings = HuntSettings(loads=(Load(GRAMMAR, GENDATA),), topology=topology,
                                findings_dir=os.path.join(workdir, "findings"),
                                randgen_home=RANDGEN_HOME, threads=threads,
                                trial_duration=seconds, oracles=oracles, hang_timeout=60.0)
        started, cpu0 = time.monotonic(), cpu_seconds(pids)
        trial = run_trial(settings.trial(1), settings, servers, manager.wait_for_replicas,
                          os.path.join(workdir, "trial"), "bot0")
        hunt_wall, hunt_cpu = time.monotonic() - started, cpu_seconds(pids) - cpu0
    finally:
        env.close()
    return {"plain_statements": plain.statements, "plain_wall_s": plain_wall,
            "plain_cpu_s": plain_cpu, "hunt_statements": trial.statements,
            "hunt_load_s": trial.load_seconds, "hunt_wall_s": hunt_wall, "hunt_cpu_s": hunt_cpu,
            "hunt_findings": len(trial.findings), "oracles": ",".join(oracles),
            "plain_status": plain.status, "hunt_status": trial.status}


def kewpie(workdir: str, *args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    """Run kewpie.py with a workdir; its completed process."""
    env = dict(os.environ, KEWPIE_NO_VENV="1")
    return subprocess.run([sys.executable, KEWPIE, f"--workdir={workdir}", *args],
                          capture_output=True, text=True, timeout=timeout, env=env,
                          stdin=subprocess.DEVNULL)


def findings_of(stdout: str) -> list[dict[str, object]]:
    """The finding.json of every finding a hunt printed."""
    folders = re.findall(r"^\d{8}-\d{6} INFO     (/\S+/findings/t\d{4}-\d+-[\w-]+)$", stdout, re.M)
    out = []
    for folder in folders:
        with open(os.path.join(folder, "finding.json")) as fh:
            data = json.load(fh)
        data["_folder"] = folder
        out.append(data)
    return out


def crash_latency(workdir: str, plugins: str, runs: int) -> list[dict[str, float]]:
    """Figure 2: seconds from the crashing statement's send to finding.json, per run."""
    times = []
    for run in range(runs):
        proc = kewpie(workdir, "--mode=hunt", f"--grammar={CRASH_GRAMMAR}", "--threads=1",
                      "--trials=1", f"--randgen-seed={100 + run}", "--trial-duration=120",
                      f"--mysqld=--plugin-dir={plugins}")
        crashes = [f for f in findings_of(proc.stdout) if f["kind"] == "crash"]
        if not crashes:
            print(f"  crash run {run + 1}: no crash finding (exit {proc.returncode}):\n"
                  + proc.stdout[-1500:])
            continue
        found = crashes[0]
        details = found["details"]
        sent = None
        with open(os.path.join(str(found["_folder"]), "trace.jsonl")) as fh:
            for line in fh:
                record = json.loads(line)
                if record["sql"] == details["query"] and record.get("result") == "error":
                    sent = record["t"]
        if sent is None:
            continue
        times.append({"to_finding_s": found["written_at"] - sent,
                      "to_backtrace_s": (found.get("backtrace_at") or found["written_at"]) - sent})
    return times


def one_signature(workdir: str, plugins: str, seeds: int) -> dict[str, object]:
    """Figure 3: the planted crash in trials with different seeds: distinct signatures."""
    proc = kewpie(workdir, "--mode=hunt", f"--grammar={CRASH_GRAMMAR}", "--threads=2",
                  f"--trials={seeds}", "--parallel=2", "--randgen-seed=1000",
                  "--trial-duration=120", f"--mysqld=--plugin-dir={plugins}", timeout=1800)
    found = findings_of(proc.stdout)
    crashes = [f for f in found if f["kind"] == "crash"]
    return {"trials": seeds, "crash_findings": len(crashes),
            "seeds": sorted({f["trial"]["seed"] for f in crashes}),
            "signatures": sorted({f["signature"]["id"] for f in crashes}),
            "texts": sorted({f["signature"]["text"] for f in crashes}),
            "other_findings": len(found) - len(crashes),
            "from_gdb": sum(1 for f in crashes if f["details"].get("frames_from", "").startswith("gdb"))}


def false_positives(workdir: str, conf: str, selects: int) -> dict[str, object] | None:
    """Figure 4: NoREC and TLP over stock gendata on a healthy server, through
    bench/wrongresult_bench.py's ``false_positive_run`` (None when the wrong-result
    oracles, issue 31's lib/hunt/wrongresult, are not in this checkout)."""
    if not wrong_result_available() or not os.path.exists(
            os.path.join(os.path.dirname(os.path.abspath(__file__)), "wrongresult_bench.py")):
        return None
    from wrongresult_bench import false_positive_run, zz_files
    env = RunEnvironment(RunConfig(workdir=workdir))
    try:
        env.open_workdir()
        configure(False, logfile=env.workdir.log_file, console=False)
        env.discover_tree()
        server = env.make_manager("bot0").get_servers(parse_topology("single").requirements)[0]
        conn = server.connect()
        try:
            run = false_positive_run(conn, zz_files([conf]), selects)
        finally:
            conn.close()
    finally:
        env.close()
    return {"files": len(run.files), "selects": run.selects,
            "checks": sum(st.checks for st in run.stats.values()),
            "compared": sum(st.compared for st in run.stats.values()),
            "findings": len(run.findings),
            "samples": [f"{os.path.basename(zz)}: {f.oracle}: {f.detail}"
                        for zz, f in run.findings[:5]]}


NEW_ORACLES = ("dqp", "eet", "coddtest", "pinolo", "dqe", "radar", "tlp-aggregate",
               "tlp-distinct", "tlp-groupby", "tlp-having", "cert")


def oracle_figures(workdir: str, dirs: list[str], checks: int, oracles: tuple[str, ...],
                   max_rows: int, seed: int) -> dict[str, object] | None:
    """Figure 7: each plan and rewrite oracle (issue 46) over the tables of every stock
    gendata file on a healthy server, at least ``checks`` checks each: checks per
    core-second (this process's and the server's CPU during the oracle's runs) and its
    findings -- false positives, the server being healthy and the known wrong results of
    10.11 avoided (target 0)."""
    if not wrong_result_available():
        return None
    from lib.hunt.wrongresult import wrong_result_oracles
    from lib.hunt.wrongresult.gendata import load_gendata
    from lib.hunt.wrongresult.oracle import OracleStats
    from wrongresult_bench import zz_files
    files = zz_files(dirs)
    env = RunEnvironment(RunConfig(workdir=workdir))
    totals = {name: OracleStats() for name in oracles}
    cpu = {name: 0.0 for name in oracles}
    samples: dict[str, list[str]] = {name: [] for name in oracles}
    try:
        env.open_workdir()
        configure(False, logfile=env.workdir.log_file, console=False)
        env.discover_tree()
        server = env.make_manager("bot0").get_servers(parse_topology("single").requirements)[0]
        pids = [server.server_pid] if server.server_pid else []
        conn = server.connect()
        try:
            loaded = []
            for n, zz in enumerate(files):
                load = load_gendata(conn, zz, "hb_oracles", seed=seed, max_rows=max_rows)
                if load.metadata.tables_by_schema.get("hb_oracles"):
                    loaded.append(zz)
                else:
                    continue
                left = len(files) - n
                for name in oracles:
                    want = max(0, checks - totals[name].checks)
                    budget = -(-want // left) if left else want
                    if budget <= 0:
                        continue
                    (oracle,) = wrong_result_oracles([name])
                    before = cpu_seconds(pids)
                    found = oracle.run([conn], load.metadata, seed=seed + n, budget=budget)
                    cpu[name] += cpu_seconds(pids) - before
                    stats = getattr(oracle, "stats")
                    totals[name].merge(stats)
                    samples[name] += [f"{os.path.basename(zz)}: {f.detail[:240]}" for f in found]
            rounds = 0
            while loaded and any(t.checks < checks for t in totals.values()) and rounds < 5:
                rounds += 1  # top up on the richest files, other seeds
                for zz in loaded[:3]:
                    load = load_gendata(conn, zz, "hb_oracles", seed=seed + 100 + rounds,
                                        max_rows=max_rows)
                    for name in oracles:
                        want = max(0, checks - totals[name].checks)
                        if want <= 0:
                            continue
                        (oracle,) = wrong_result_oracles([name])
                        before = cpu_seconds(pids)
                        found = oracle.run([conn], load.metadata, seed=seed + 100 + rounds,
                                           budget=-(-want // 3))
                        cpu[name] += cpu_seconds(pids) - before
                        totals[name].merge(getattr(oracle, "stats"))
                        samples[name] += [f"{os.path.basename(zz)}: {f.detail[:240]}"
                                          for f in found]
        finally:
            conn.close()
    finally:
        env.close()
    return {"files": len(files), "oracles": {
        name: {"checks": t.checks, "compared": t.compared, "statements": t.statements,
               "findings": t.findings, "unconfirmed": t.unconfirmed,
               "generator_errors": t.generator_errors, "cpu_s": round(cpu[name], 1),
               "wall_s": round(t.seconds, 1),
               "checks_per_core_s": round(t.checks / cpu[name], 1) if cpu[name] else 0.0,
               "skipped": dict(sorted(t.skipped.items(), key=lambda x: -x[1])[:5]),
               "samples": samples[name][:5]}
        for name, t in totals.items()}}


def main() -> int:
    """Run the figures and print them."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds", type=float, default=30.0, help="load seconds for figure 1")
    p.add_argument("--threads", type=int, default=4, help="load threads for figure 1")
    p.add_argument("--crashes", type=int, default=3, help="planted-crash hunts for figure 2")
    p.add_argument("--seeds", type=int, default=10, help="planted-crash trials for figure 3")
    p.add_argument("--selects", type=int, default=20000,
                   help="generated SELECTs of NoREC and TLP in all, for figure 4")
    p.add_argument("--randgen-conf", default="/work/shared/randgen-conf",
                   help="stock grammars' folder (figure 4's gendata files; default: "
                        "%(default)s)")
    p.add_argument("--oracle-checks", type=int, default=20000,
                   help="checks per plan/rewrite oracle for figure 7 (default: 20000)")
    p.add_argument("--oracles", default=",".join(NEW_ORACLES),
                   help="the oracles of figure 7 (comma list; default: all of issue 46's)")
    p.add_argument("--oracle-rows", type=int, default=100,
                   help="rows per gendata table for figure 7 (default: 100)")
    p.add_argument("--surface-seeds", type=int, default=10,
                   help="figure 5: schemas of the surface generator (default %(default)s)")
    p.add_argument("--surface-statements", type=int, default=1000,
                   help="figure 5: statements per schema (default %(default)s)")
    p.add_argument("--pquery-seconds", type=float, default=60.0,
                   help="figure 6: one pquery-style trial's seconds (default %(default)g)")
    p.add_argument("--only", default="1,2,3,4,5,6,7", help="which figures (comma list)")
    p.add_argument("--json", default="", help="also write the figures here")
    args = p.parse_args()
    conf = os.path.abspath(args.randgen_conf)
    only = set(args.only.split(","))
    base = tempfile.mkdtemp(prefix="kewpie-hunt-bench-", dir="/tmp")
    os.chmod(base, 0o755)
    info = machine_info()
    info["load"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    figures: dict[str, object] = {"machine": info}
    print("hunt benchmark (bench/hunt_bench.py)")
    for key, value in info.items():
        print(f"  {key}: {value}")
    plugins = build_plugin_dir()
    cores = len(os.sched_getaffinity(0))
    try:
        if "1" in only:
            t = throughput(os.path.join(base, "w1"), args.seconds, args.threads)
            figures["throughput"] = t
            plain_rate = t["plain_statements"] / t["plain_wall_s"]
            hunt_load = t["hunt_statements"] / max(1e-9, t["hunt_load_s"])
            hunt_rate = t["hunt_statements"] / t["hunt_wall_s"]
            plain_core = t["plain_statements"] / max(1e-9, t["plain_cpu_s"])
            hunt_core = t["hunt_statements"] / max(1e-9, t["hunt_cpu_s"])
            print(f"1. throughput, conf/kewpie/transactions.yy, {args.threads} threads, "
                  f"{args.seconds:g} s, primary + replica ({cores} cores):")
            print(f"   plain load:            {plain_rate:8.0f} statements/s   "
                  f"{plain_core:8.0f} statements/core-s   ({t['plain_statements']} statements)")
            print(f"   hunt, every oracle:    {hunt_rate:8.0f} statements/s   "
                  f"{hunt_core:8.0f} statements/core-s   (load alone {hunt_load:.0f}/s; "
                  f"oracles {t['oracles']}; {t['hunt_findings']} finding(s))")
            print(f"   hunt / plain:          {hunt_rate / plain_rate:8.2f} (wall)        "
                  f"{hunt_core / plain_core:8.2f} (per core)")
        if "2" in only:
            lat = crash_latency(os.path.join(base, "w2"), plugins, args.crashes)
            figures["crash_to_finding"] = lat
            if lat:
                worst = max(x["to_finding_s"] for x in lat)
                print(f"2. planted crash to finding.json on disk, {len(lat)} run(s): median "
                      f"{statistics.median(x['to_finding_s'] for x in lat):.2f} s, max "
                      f"{worst:.2f} s (target <= 5 s: {'PASS' if worst <= 5 else 'MISS'}); to "
                      f"gdb's backtrace: median "
                      f"{statistics.median(x['to_backtrace_s'] for x in lat):.2f} s")
            else:
                print("2. planted crash to finding: not measured (no crash finding)")
        if "3" in only:
            one = one_signature(os.path.join(base, "w3"), plugins, args.seeds)
            figures["one_signature"] = one
            sigs = one["signatures"]
            print(f"3. planted crash, {one['trials']} trials with seeds {one['seeds']}: "
                  f"{one['crash_findings']} crash finding(s), {len(sigs)} signature(s) "
                  f"{sigs} ({one['from_gdb']} signed from gdb's backtrace; target 1: "
                  f"{'PASS' if len(sigs) == 1 and one['crash_findings'] == one['trials'] else 'MISS'})")
            for text in one["texts"]:
                print(f"   {text}")
        if "4" in only:
            fp = false_positives(os.path.join(base, "w4"), conf, args.selects)
            figures["false_positives"] = fp
            if fp is None:
                print("4. NoREC/TLP false positives: not measured (lib/hunt/wrongresult, "
                      "issue 31's wrong-result oracles, is not in this checkout)")
            else:
                print(f"4. NoREC/TLP on a healthy server, {fp['files']} stock gendata file(s): "
                      f"{fp['checks']} checks, {fp['selects']} SELECTs, {fp['compared']} "
                      f"compared: false positives {fp['findings']} (target 0 over >= 20,000: "
                      f"{'PASS' if fp['findings'] == 0 and fp['selects'] >= 20000 else 'MISS'})")
                for s in fp["samples"]:
                    print(f"   {s[:300]}")
        if "5" in only:
            figures["surface"] = surface_figures(os.path.join(base, "w5"), args.surface_seeds,
                                                 args.surface_statements)
        if "6" in only:
            figures["pquery"] = pquery_figures(os.path.join(base, "w6"), args.pquery_seconds)
        if "7" in only:
            dirs = [conf, os.path.join(ROOT, "randgen", "conf", "kewpie")]
            names = tuple(n for n in args.oracles.split(",") if n)
            of = oracle_figures(os.path.join(base, "w7"), dirs, args.oracle_checks, names,
                                args.oracle_rows, 1)
            figures["oracles"] = of
            if of is None:
                print("7. plan and rewrite oracles: not measured (lib/hunt/wrongresult missing)")
            else:
                print(f"7. plan and rewrite oracles on a healthy server, {of['files']} gendata "
                      f"file(s), >= {args.oracle_checks} checks each (known wrong results of "
                      f"10.11 avoided):")
                print(f"   {'oracle':<14} {'checks':>7} {'compared':>8} {'statements':>10} "
                      f"{'cpu s':>7} {'checks/core-s':>13} {'false pos':>9} {'gen err':>7}")
                for name, o in of["oracles"].items():
                    print(f"   {name:<14} {o['checks']:>7} {o['compared']:>8} "
                          f"{o['statements']:>10} {o['cpu_s']:>7} {o['checks_per_core_s']:>13} "
                          f"{o['findings']:>9} {o['generator_errors']:>7}")
                for name, o in of["oracles"].items():
                    for sample in o["samples"]:
                        print(f"   {name}: {sample}")
                worst = sum(o["findings"] for o in of["oracles"].values())
                enough = all(o["checks"] >= args.oracle_checks for o in of["oracles"].values())
                print(f"   false positives in all: {worst} (target 0 over >= "
                      f"{args.oracle_checks} checks each: "
                      f"{'PASS' if worst == 0 and enough else 'MISS'})")
    finally:
        remove_plugin_dir(plugins)
        for wd in glob.glob(os.path.join(base, "w*")):
            kewpie(wd, "--mode=cleanup", timeout=120)
            remove_workdir(wd)
        remove_workdir(base)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(figures, fh, indent=2, default=str)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
