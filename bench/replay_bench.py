#!/usr/bin/env python3
"""Replay benchmark: MariaDB QA's reproducers on both code trees, kewpie's way against the
naive way.  Prints figures; asserts nothing.

1. **kewpie**: one command, ``kewpie --mode=replay CORPUS --known-bugs KNOWN
   --parallel N`` on every code tree (the installed 10.11.19 and
   ``trees/10.11.18``): servers reused while the reuse rule keeps them, what a
   reproducer added undone first, fresh after a crash.
2. **naive**: a fresh server per reproducer, as mariadb-qa's ``bug_report.sh``
   runs one (``all_no_cl``: a new datadir by ``mariadb-install-db``, the server
   started; ``test``: the client fed the file; a crash's core read by gdb for the
   UniqueID; else the server shut down), on a seeded sample of ``--naive-sample``
   reproducers (the whole corpus would take hours), on each tree, ``--parallel``
   of them at once, with kewpie's server options (sockets only: no port).
   kewpie replays the same sample first (a workdir of its own, its pristine
   datadirs made in that run), for a like-for-like rate; then the whole corpus
   (in the same workdir: the pristine datadirs made once, as a user's second
   replay).  The sample's figures are printed as soon as they are known.

Figures: replays (reproducer x tree) per minute of each, side by side, and their
ratio (target: kewpie >= 5x); the counts per outcome per tree; the reproducers
present in 10.11.18 and absent in 10.11.19; the matching's quality on
10.11.19 (of the crashing reproducers whose MDEV has lines in
``known_bugs.strings``: attributed to their own MDEV, to another one -- target
none -- or to none, the rest listed with both UniqueIDs; target >= 60 % own).
Where the time goes: on the sample, the reproducers' own time (the client's
run: the same statements both ways, ``SLEEP``s, lock waits and ``--timeout``s
included) against the harness's own time a replay (all the rest: datadir,
start, checks, restore, shutdown, gdb), each way -- the part kewpie can
shorten.  The machine's load (``/proc/loadavg``) is printed before, between
the parts and after.

Run (one command; CPU-heavy, about an hour on 2 cores)::

    nice -n 5 bench/replay_bench.py [--corpus ../shared/mariadb-qa/BUGS]
        [--known-bugs ../shared/mariadb-qa/known_bugs.strings] [--parallel 2]
        [--naive-sample 60] [--timeout 60] [--json out.json] [--keep]
        [--crashes tests/fixtures/replay/release_crashes.json]
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any, Sequence

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import ROOT, enter_venv, machine_info, remove_workdir  # noqa: E402
enter_venv(__file__)

from lib.hunt.crashreport import crash_unique_id  # noqa: E402
from lib.hunt.kbstrings import StringsEntry, load_strings  # noqa: E402
from lib.replay.attribution import OTHER, OWN, SHARED, UNATTRIBUTED, attribute  # noqa: E402
from lib.platform.workdir import Workdir  # noqa: E402
from lib.replay.corpus import discover  # noqa: E402
from lib.hunt.knownbugs import KnownBugs  # noqa: E402
from lib.hunt.signature import Signature  # noqa: E402
from lib.hunt.uniqueid import UniqueId  # noqa: E402
from lib.replay.execute import ReplayResult, known_verdict  # noqa: E402
from lib.servers.codetree import CodeTree, discover as discover_tree  # noqa: E402

KEWPIE = os.path.join(ROOT, "kewpie.py")
QA_SNAPSHOT = os.path.join(ROOT, "..", "shared", "mariadb-qa")
OLD, NEW = "10.11.18", "10.11.19"
READY_SECONDS = 60.0


def _load() -> str:
    with open("/proc/loadavg", encoding="utf-8") as fh:
        return " ".join(fh.read().split()[:3])


# ---------------------------------------------------------------- kewpie's way
def kewpie_replay(corpus: str, known: str, parallel: int, timeout: float, base: str,
                  name: str) -> tuple[float, dict[str, Any]]:
    """One ``kewpie --mode=replay`` run; (wall seconds, its replay.json)."""
    out = os.path.join(base, f"out-{name}")
    argv = [sys.executable, KEWPIE, f"--workdir={os.path.join(base, 'wd')}",
            "--mode=replay", corpus, f"--known-bugs={known}", f"--parallel={parallel}",
            f"--replay-timeout={timeout:g}", f"--replay-out={out}", "--history=off"]
    started = time.monotonic()
    proc = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=6 * 3600)
    seconds = time.monotonic() - started
    with open(os.path.join(base, f"kewpie-{name}.log"), "w", encoding="utf-8") as fh:
        fh.write(proc.stdout + proc.stderr)
    path = os.path.join(out, "replay.json")
    if proc.returncode not in (0, 1) or not os.path.exists(path):
        tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-15:])
        Workdir(os.path.join(base, "wd")).remove_shm()
        raise SystemExit(f"kewpie --mode=replay failed (exit {proc.returncode}):\n{tail}")
    with open(path, encoding="utf-8") as fh:
        return seconds, json.load(fh)


# ---------------------------------------------------------------- the naive way
class Naive:
    """One naive replay at a time per worker folder (see the module docstring)."""

    def __init__(self, home: str, timeout: float) -> None:
        self.home = home
        self.timeout = timeout
        self.counts: dict[str, dict[str, int]] = {}
        self.lock = threading.Lock()
        self.seconds = 0.0       # every replay's time, summed
        self.run_seconds = 0.0   # ... of which the reproducer's own (the client's run)

    def _count(self, tree: str, outcome: str) -> None:
        with self.lock:
            per = self.counts.setdefault(tree, {})
            per[outcome] = per.get(outcome, 0) + 1

    def one(self, path: str, options: list[str], tree: CodeTree, slot: int) -> str:
        """Replay path on a fresh server of tree in slot's folder; the outcome."""
        began = time.monotonic()
        ran = 0.0
        work = os.path.join(self.home, f"slot{slot}")
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        data, sock = os.path.join(work, "data"), os.path.join(work, "s.sock")
        log = os.path.join(work, "error.log")
        subprocess.run([tree.tool("install_db"), "--no-defaults", f"--datadir={data}",
                        f"--basedir={tree.basedir}", "--user=root",
                        "--auth-root-authentication-method=normal", "--force"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        paths = [f"--{k}={v}" for k, v in tree.server_path_options()]
        server = subprocess.Popen([tree.server, "--no-defaults", *paths, f"--datadir={data}",
                                   f"--socket={sock}", "--skip-networking", "--user=root",
                                   f"--log-error={log}", f"--pid-file={work}/s.pid",
                                   "--innodb-log-file-size=16M", "--innodb-buffer-pool-size=128M",
                                   "--core-file", "--skip-name-resolve", *options],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client = tree.tool("client")
        deadline = time.monotonic() + READY_SECONDS
        while time.monotonic() < deadline and server.poll() is None:
            ping = subprocess.run([client, "--no-defaults", f"--socket={sock}", "-uroot",
                                   "-e", "SELECT 1"], capture_output=True, check=False)
            if ping.returncode == 0:
                break
            time.sleep(0.1)
        outcome = "skipped"
        if server.poll() is None:
            subprocess.run([client, "--no-defaults", f"--socket={sock}", "-uroot",
                            "-e", "CREATE DATABASE IF NOT EXISTS test"], capture_output=True,
                           check=False)
            run_began = time.monotonic()
            with open(path, "rb") as fh:
                try:
                    subprocess.run([client, "--no-defaults", f"--socket={sock}", "-uroot",
                                    "--force", "--binary-mode", "test"], stdin=fh,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                   timeout=self.timeout, check=False)
                    outcome = "none"
                except subprocess.TimeoutExpired:
                    outcome = "timeout"
            ran = time.monotonic() - run_began
            alive = subprocess.run([client, "--no-defaults", f"--socket={sock}", "-uroot", "-e",
                                    "SELECT 1"], capture_output=True, check=False).returncode == 0
            if not alive:
                try:
                    server.wait(timeout=10.0)      # a crash: its core written, it ends
                except subprocess.TimeoutExpired:
                    pass
        if server.poll() is not None and server.returncode != 0 and outcome != "skipped":
            outcome = "crash"
            cores = glob.glob(os.path.join(data, "core*"))
            gdb = ""
            if cores:
                gdb = subprocess.run(["gdb", "-batch", "-nx", "-ex", "bt 40", tree.server,
                                      cores[0]], capture_output=True, text=True,
                                     check=False).stdout
            with open(log, encoding="utf-8", errors="replace") as fh:
                crash_unique_id(fh.read(), gdb)
        elif server.poll() is None:
            subprocess.run([client, "--no-defaults", f"--socket={sock}", "-uroot", "-e",
                            "SHUTDOWN"], capture_output=True, check=False)
            try:
                server.wait(timeout=60)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
        shutil.rmtree(work, ignore_errors=True)
        self._count(tree.label, outcome)
        with self.lock:
            self.seconds += time.monotonic() - began
            self.run_seconds += ran
        return outcome

    def run(self, jobs: list[tuple[str, list[str], CodeTree]], parallel: int) -> float:
        """Every job, parallel at once; the wall seconds."""
        queue = list(jobs)
        lock = threading.Lock()

        def worker(slot: int) -> None:
            while True:
                with lock:
                    if not queue:
                        return
                    path, options, tree = queue.pop(0)
                self.one(path, options, tree, slot)
        started = time.monotonic()
        threads = [threading.Thread(target=worker, args=(i,)) for i in range(parallel)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return time.monotonic() - started


# ---------------------------------------------------------------- figures
def results_of(doc: dict[str, Any]) -> list[ReplayResult]:
    """Every result of a replay.json."""
    out = []
    for row in doc["rows"]:
        for cell in row["trees"].values():
            data = {k: v for k, v in cell.items() if k != "state"}
            out.append(ReplayResult.from_json(data))
    return out


def crashes_doc(whole: dict[str, Any], date: str) -> dict[str, Any]:
    """The crashes of a replay.json as tests/fixtures/replay/release_crashes.json keeps
    them (each reproducer's name, bug and tree, the UniqueID's parts, kewpie's
    signature id), for the matching's regression test."""
    crashes = []
    for row in whole["rows"]:
        for tree, cell in row["trees"].items():
            uid = cell.get("unique_id") or {}
            if cell.get("outcome") != "crash" or not uid.get("signal"):
                continue
            crashes.append({"name": row["name"], "bug": cell.get("bug") or row.get("bug", ""),
                            "tree": tree, "signal": uid["signal"],
                            "assertion": uid.get("assertion", ""),
                            "stack": uid.get("stack") or uid.get("frames") or [],
                            "signature_id": (cell.get("signature") or {}).get("id", "")})
    crashes.sort(key=lambda c: (c["name"], c["tree"]))
    return {"about": "Crashes of MariaDB QA's reproducers (../shared/mariadb-qa/BUGS) on "
                     "Debian's release builds, as kewpie --mode=replay saw them "
                     f"(bench/replay_bench.py --crashes, {date}): each reproducer's name and "
                     "bug, the tree, and the UniqueID's parts (signal, assertion, kept "
                     "frames) with kewpie's signature id.",
            "crashes": crashes}


def rematched(whole: dict[str, Any], known: str) -> dict[str, Any]:
    """A replay.json whose crashes are tagged again with this checkout's matching (the
    recorded UniqueIDs and signatures against the known-bugs file), as a replay tags them."""
    bugs = KnownBugs.load([known])
    for row in whole["rows"]:
        for tree, cell in row["trees"].items():
            uid_doc, sig_doc = cell.get("unique_id") or {}, cell.get("signature") or {}
            if cell.get("outcome") != "crash" or not uid_doc.get("signal"):
                continue
            stack = tuple(uid_doc.get("stack") or uid_doc.get("frames") or ())
            uid = UniqueId(uid_doc["signal"], stack[:4], uid_doc.get("assertion", ""), stack)
            sig = Signature(sig_doc.get("kind", "crash"), tuple(sig_doc.get("parts") or ()),
                            unique_id=uid)
            cell["known"] = known_verdict(bugs, sig, tree, cell.get("bug", ""))
    return whole


def old_only(whole: dict[str, Any]) -> list[str]:
    """The reproducers present in the old tree and absent in the new one."""
    return [r["name"] for r in whole["rows"]
            if r["trees"].get(OLD, {}).get("state") in ("present", "changed")
            and r["trees"].get(NEW, {}).get("state") == "absent"]


def corpus_figures(whole: dict[str, Any], entries: Sequence[StringsEntry],
                   naive_counts: dict[str, dict[str, int]] | None) -> list[str]:
    """The whole run's lines: outcomes per tree, the bugs fixed in between, and the
    matching's quality on the new tree."""
    lines: list[str] = []
    quality = attribute(results_of(whole), NEW, entries)
    gone = old_only(whole)
    lines.append("outcomes per tree (kewpie, whole corpus):")
    for tree, per in whole["counts"].items():
        lines.append(f"  {tree}: " + ", ".join(f"{o} {n}" for o, n in per.items()))
    if naive_counts is not None:
        lines.append("  naive (sample): " + "; ".join(
            f"{t}: " + ", ".join(f"{o} {n}" for o, n in sorted(per.items()))
            for t, per in naive_counts.items()))
    lines.append(f"present in {OLD}, absent in {NEW}: {len(gone)}: {', '.join(gone)}")
    lines.append("")
    lines.append(f"matching on {NEW}: {quality.crashes} crashing reproducers, {quality.listed} "
                 f"with lines in known_bugs.strings, {quality.shared} of them in a crash shared "
                 f"with other bugs' reproducers; of the other {quality.judged}: own "
                 f"{quality.count(OWN)} ({quality.own_share:.0%}, target >= 60%), other "
                 f"{quality.count(OTHER)} (target 0), unattributed {quality.count(UNATTRIBUTED)}")
    for a in quality.rows:
        if a.verdict not in (OWN, SHARED):
            lines.append(f"  {a.name} [{a.verdict}{': ' + ', '.join(a.named) if a.named else ''}]"
                         f"\n    crash:  {a.unique_id}\n    listed: {a.listed}")
    shared = [a.name for a in quality.rows if a.verdict == SHARED]
    lines.append(f"  shared crash ({len(shared)}; named for another bug: "
                 f"{len(quality.shared_named_other)}): {', '.join(shared)}")
    for a in quality.shared_named_other:
        lines.append(f"    {a.name} named {', '.join(a.named)}: {a.unique_id}")
    lines.append(f"  own ({quality.count(OWN)}): " + ", ".join(
        f"{a.name} [{a.quality}]" for a in quality.rows if a.verdict == OWN))
    return lines


def rate(replays: int, seconds: float) -> float:
    """Replays a minute."""
    return replays / seconds * 60 if seconds else 0.0


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark (see the module docstring)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--corpus", default=os.path.join(QA_SNAPSHOT, "BUGS"))
    p.add_argument("--known-bugs", default=os.path.join(QA_SNAPSHOT, "known_bugs.strings"))
    p.add_argument("--parallel", type=int, default=2)
    p.add_argument("--naive-sample", type=int, default=60, metavar="N")
    p.add_argument("--timeout", type=float, default=60.0)
    p.add_argument("--seed", type=int, default=45)
    p.add_argument("--json", metavar="PATH")
    p.add_argument("--crashes", metavar="PATH",
                   help="write the whole run's crashes there, as "
                        "tests/fixtures/replay/release_crashes.json keeps them")
    p.add_argument("--keep", action="store_true", help="keep the bench's folder")
    p.add_argument("--rematch", metavar="REPLAY_JSON",
                   help="no replay: a kept whole run's replay.json, its crashes tagged again "
                        "with this checkout's matching; its outcomes, bugs fixed in between "
                        "and matching figures")
    p.add_argument("--sample-only", action="store_true",
                   help="only the sample, both ways (a quick look; no whole-corpus figures)")
    args = p.parse_args(argv)
    corpus_dir = os.path.abspath(args.corpus)
    known = os.path.abspath(args.known_bugs)
    if args.rematch:
        with open(args.rematch, encoding="utf-8") as fh:
            whole = rematched(json.load(fh), known)
        entries = load_strings(known, open(known, encoding="utf-8").read().splitlines())
        print("\n".join([f"replay bench --rematch {args.rematch} (known bugs: {known})", "",
                         *corpus_figures(whole, entries, None)]), flush=True)
        if args.crashes:
            with open(args.crashes, "w", encoding="utf-8") as fh:
                json.dump(crashes_doc(whole, time.strftime("%Y-%m-%d")), fh, indent=1)
                fh.write("\n")
        return 0
    info = machine_info()
    load_before = _load()
    base = tempfile.mkdtemp(prefix="replay-bench-", dir=os.path.join(ROOT, "workdir")
                            if os.path.isdir(os.path.join(ROOT, "workdir")) else None)
    corpus = discover([corpus_dir])
    trees = [discover_tree("/usr"), discover_tree(os.path.join(ROOT, "trees", OLD, "usr"))]
    print(f"replay bench: {len(corpus.reproducers)} reproducers of {corpus_dir}, trees "
          f"{', '.join(t.label for t in trees)}, load {load_before}", flush=True)

    sample = sorted(random.Random(args.seed).sample(corpus.reproducers,
                                                    min(args.naive_sample,
                                                        len(corpus.reproducers))),
                    key=lambda r: r.name)
    sample_dir = os.path.join(base, "sample")
    os.makedirs(sample_dir)
    for r in sample:
        os.symlink(r.path, os.path.join(sample_dir, os.path.basename(r.path)))
    kewpie_s, sampled = kewpie_replay(sample_dir, known, args.parallel, args.timeout, base,
                                      "sample")
    print(f"kewpie, sample of {len(sample)}: {kewpie_s:.0f} s, load {_load()}", flush=True)
    naive = Naive(os.path.join(base, "naive"), args.timeout)
    jobs = [(r.path, [o.as_arg() for o in r.options], t) for t in trees for r in sample]
    naive_s = naive.run(jobs, args.parallel)
    k_sample = rate(len(sample) * len(trees), kewpie_s)
    n_sample = rate(len(sample) * len(trees), naive_s)
    print(f"naive, sample of {len(sample)}: {naive_s:.0f} s, load {_load()}; on the sample "
          f"kewpie {k_sample:.1f}/min, naive {n_sample:.1f}/min, "
          f"{k_sample / n_sample if n_sample else 0:.1f}x", flush=True)
    if args.sample_only:
        whole_s, whole = kewpie_s, sampled
    else:   # the sample first: its ratio is printed before the long part
        whole_s, whole = kewpie_replay(corpus_dir, known, args.parallel, args.timeout, base, "all")
        print(f"kewpie, whole corpus: {whole_s:.0f} s, load {_load()}", flush=True)
    load_after = _load()

    results = results_of(whole)
    replays = len(results)
    entries = load_strings(known, open(known, encoding="utf-8").read().splitlines())
    settings = whole.get("settings", {})
    lines = ["", "Replay benchmark (bench/replay_bench.py)", f"date:      {info['date']}",
             f"machine:   nproc {info['nproc']}, kernel {info['kernel']}, "
             f"load {load_before} before, {load_after} after",
             f"server:    {info['mariadbd']}", f"corpus:    {corpus_dir}: "
             f"{len(corpus.reproducers)} reproducers, {len(corpus.skipped)} skipped, "
             f"{len(corpus.ignored)} ignored", ""]
    k_all = rate(replays, whole_s)
    lines += [f"{'way':<40} {'replays':>8} {'seconds':>9} {'per minute':>11}",
              f"{'kewpie, whole corpus':<40} {replays:>8} {whole_s:>9.0f} {k_all:>11.1f}",
              f"{'kewpie, the sample':<40} {len(sample) * len(trees):>8} {kewpie_s:>9.0f} "
              f"{k_sample:>11.1f}",
              f"{'naive (fresh server each), the sample':<40} {len(sample) * len(trees):>8} "
              f"{naive_s:>9.0f} {n_sample:>11.1f}",
              f"ratio kewpie/naive: {k_sample / n_sample if n_sample else 0:.1f}x on the sample, "
              f"{k_all / n_sample if n_sample else 0:.1f}x whole corpus against the naive sample "
              f"(target >= 5x); kewpie's server starts: {settings.get('server_starts')} for "
              f"{replays} replays", ""]
    sample_results = results_of(sampled)
    k_total = sum(r.seconds for r in sample_results)
    k_run = sum(r.phases.get("run", 0.0) for r in sample_results)
    k_own = (k_total - k_run) / len(sample_results) if sample_results else 0.0
    n_own = (naive.seconds - naive.run_seconds) / len(jobs) if jobs else 0.0
    lines.append(f"on the sample, the reproducers' own time (the client's run) is "
                 f"{k_run:.0f} s of kewpie's {k_total:.0f} replay-seconds and "
                 f"{naive.run_seconds:.0f} s of the naive way's {naive.seconds:.0f}; the "
                 f"harness's own time a replay (the rest): kewpie {k_own:.2f} s, naive "
                 f"{n_own:.2f} s, {n_own / k_own if k_own else 0:.1f}x")
    phases: dict[str, list[float]] = {}
    for res in results:
        for name, value in res.phases.items():
            phases.setdefault(name, []).append(value)
    fresh = sum(1 for res in results if res.fresh)
    lines.append(f"where kewpie's time goes (whole corpus; {fresh} of {replays} replays on a "
                 f"fresh server): " + ", ".join(
                     f"{name} {len(v)}x median {statistics.median(v):.2f} s sum {sum(v):.0f} s"
                     for name, v in phases.items()))
    lines.append("")
    lines += corpus_figures(whole, entries, naive.counts)
    print("\n".join(lines), flush=True)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"info": info, "load_before": load_before, "load_after": load_after,
                       "kewpie_all_s": whole_s, "kewpie_sample_s": kewpie_s,
                       "naive_sample_s": naive_s, "replays": replays, "sample": len(sample),
                       "harness_s_per_replay": {"kewpie": k_own, "naive": n_own},
                       "counts": whole["counts"], "naive_counts": naive.counts,
                       "old_only": old_only(whole),
                       "quality": attribute(results, NEW, entries).to_json()}, fh, indent=1)
    if args.crashes:
        with open(args.crashes, "w", encoding="utf-8") as fh:
            json.dump(crashes_doc(whole, info["date"][:10]), fh, indent=1)
            fh.write("\n")
    if not args.keep:
        remove_workdir(os.path.join(base, "wd"))
        shutil.rmtree(base, ignore_errors=True)
    else:   # the outputs and logs; the workdir's datadirs in /dev/shm go either way
        Workdir(os.path.join(base, "wd")).remove_shm()
        print(f"kept {base}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
