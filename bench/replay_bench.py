#!/usr/bin/env python3
"""Replay benchmark: MariaDB QA's reproducers on both code trees, kewpie's way against the
naive way.  Prints figures; asserts nothing.

1. **kewpie**: ``kewpie --mode=replay CORPUS --known-bugs KNOWN --parallel N`` on every
   code tree (the installed 10.11.19 and ``trees/10.11.18``): servers reused while
   the reuse rule keeps them, what a reproducer added undone first, fresh after a
   crash; its datadirs on /dev/shm (kewpie's default).  ``--parallel`` is 2 here
   (kewpie's default is 1; a user on 2 cores asks for 2), and the output says so.
2. **naive**: a fresh server per replay, as mariadb-qa's ``bug_report.sh`` runs one
   (``all_no_cl``: a new datadir by ``mariadb-install-db``, the server started;
   ``test``: the client fed the file; a crash's core read by gdb for the
   UniqueID; else the server shut down), ``--parallel`` at once (``bug_report.sh``'s
   ``test_all`` replays one reproducer on all its trees side by side), with
   kewpie's server options (sockets only: no port).  What ``bug_report.sh`` adds
   is left out, so the naive figures are its lower bound: ``wipe``'s second start
   and stop of each server, and its fixed sleeps (15-20 s a reproducer).  Its
   datadirs are on /dev/shm as kewpie's (the same storage: the harnesses compared,
   not the disks); the first ``--naive-disk`` reproducers of the draw also run
   with them on disk, in the bench's folder, as ``bug_report.sh`` keeps them in its
   basedir.  Both ways use the same rules: ``--timeout`` seconds a reproducer (then a
   timeout, its server killed: kewpie throws it away), a server that does not answer
   10 s after the run a hang; and the same server options: the replay's defaults
   (``lib/replay/defaults.py``: ``innodb_lock_wait_timeout`` 5 s, ``lock_wait_timeout``
   10 s, as MariaDB's random query generator runs its servers), then a reproducer's
   own.  Its servers may write cores (the core limit raised as kewpie raises its
   servers'), so a crash costs it gdb as it costs kewpie.
3. **bug_report.sh**: the first ``--bugreport`` reproducers of the draw through
   ``bug_report.sh``'s own flow, step for step and executed (:class:`BugReportFlow`:
   its fixed and random sleeps, ``wipe``'s start and stop before the real start, the
   restart for a reproducer's options, gdb twice on a core), one reproducer at a
   time on both trees side by side, as ``mass_bug_report.sh`` and ``test_all`` run
   it; datadirs on disk as it keeps them.  Its ratio is printed beside the fair
   naive ways', each labelled with its basis.

``--naive-first`` runs the naive ways before kewpie's: two runs in alternate order
even out a machine whose load drifts.

Both ways replay the same seeded random sample (``--naive-sample`` reproducers,
drawn uniformly, on each tree: the whole corpus the naive way would take hours),
kewpie first (a workdir of its own), in one command; then kewpie alone replays the
whole corpus (in the same workdir, as a user's second replay) unless
``--sample-only``.  The sample's figures are printed as soon as they are known.

Figures: replays (reproducer x tree) per minute of each way on the sample, side by
side, and their ratio (target: kewpie >= 5x); each way's time a replay split into
the reproducers' own (the client's run: the same statements both ways, ``SLEEP``s,
lock waits and timeouts included) and the harness's own (all the rest: datadir,
start, checks, restore, shutdown, gdb) -- the part a harness can shorten.  A
corpus's reproducers' own time is heavy-tailed (a few 50 s lock waits and 60 s
timeouts are half of it), so a sample of a hundred may be far slower or faster than
the corpus: the bench prints the sample's own time a replay beside the corpus's
(a reference whole run: this run's whole part, or ``--reference REPLAY_JSON``), and
the ratio for the corpus: each way's harness time a replay on the sample plus the
corpus's own time a replay.  Then the counts per outcome per tree; the
reproducers present in 10.11.18 and absent in 10.11.19; the matching's quality on
10.11.19 (of the crashing reproducers whose MDEV has lines in
``known_bugs.strings``: attributed to their own MDEV, to another one -- target
none -- or to none, the rest listed with both UniqueIDs; target >= 60 % own).  The
machine's load (``uptime``) is printed before, between the parts and after.

Run (one command; CPU-heavy: the sample about 20 minutes on 2 cores, the whole
corpus about 30 more)::

    bench/replay_bench.py [--corpus ../shared/mariadb-qa/BUGS]
        [--known-bugs ../shared/mariadb-qa/known_bugs.strings] [--parallel 2]
        [--naive-sample 120] [--naive-disk 20] [--timeout 60] [--seed 45]
        [--sample-only [--reference OLD/replay.json]] [--json out.json] [--keep]
        [--crashes tests/fixtures/replay/release_crashes.json]
    bench/replay_bench.py --rematch OUT/replay.json   # a kept run's figures, no replay
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

from lib.checks.backtrace import find_core  # noqa: E402
from lib.hunt.crashreport import crash_unique_id  # noqa: E402
from lib.hunt.kbstrings import StringsEntry, load_strings  # noqa: E402
from lib.replay.attribution import OTHER, OWN, SHARED, UNATTRIBUTED, attribute  # noqa: E402
from lib.platform.workdir import Workdir, user_shm_root  # noqa: E402
from lib.replay.corpus import discover  # noqa: E402
from lib.replay.defaults import SERVER_DEFAULTS  # noqa: E402
from lib.hunt.knownbugs import KnownBugs  # noqa: E402
from lib.hunt.signature import Signature  # noqa: E402
from lib.hunt.uniqueid import UniqueId  # noqa: E402
from lib.replay.execute import UNANSWERED_GRACE, ReplayResult, known_verdict  # noqa: E402
from lib.servers.codetree import CodeTree, discover as discover_tree  # noqa: E402

KEWPIE = os.path.join(ROOT, "kewpie.py")
QA_SNAPSHOT = os.path.join(ROOT, "..", "shared", "mariadb-qa")
OLD, NEW = "10.11.18", "10.11.19"
READY_SECONDS = 60.0


def _load() -> str:
    """``uptime``'s load averages (1, 5, 15 minutes), as it prints them."""
    try:
        out = subprocess.run(["uptime"], capture_output=True, text=True, check=False,
                             timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        out = ""
    if "load average:" in out:
        return out.split("load average:", 1)[1].strip()
    with open("/proc/loadavg", encoding="utf-8") as fh:
        return ", ".join(fh.read().split()[:3])


# ---------------------------------------------------------------- kewpie's way
def kewpie_replay(corpus: str, known: str, parallel: int, timeout: float, base: str,
                  name: str) -> tuple[float, dict[str, Any]]:
    """One ``kewpie --mode=replay`` run, its output in BASE/kewpie-NAME.log as it goes
    (a long run can be followed there); (wall seconds, its replay.json)."""
    out = os.path.join(base, f"out-{name}")
    log = os.path.join(base, f"kewpie-{name}.log")
    argv = [sys.executable, KEWPIE, f"--workdir={os.path.join(base, 'wd')}",
            "--mode=replay", corpus, f"--known-bugs={known}", f"--parallel={parallel}",
            f"--replay-timeout={timeout:g}", f"--replay-out={out}", "--history=off"]
    started = time.monotonic()
    with open(log, "w", encoding="utf-8") as fh:
        proc = subprocess.run(argv, stdout=fh, stderr=subprocess.STDOUT, check=False,
                              timeout=6 * 3600)
    seconds = time.monotonic() - started
    path = os.path.join(out, "replay.json")
    if proc.returncode not in (0, 1) or not os.path.exists(path):
        with open(log, encoding="utf-8", errors="replace") as fh:
            tail = "\n".join(fh.read().splitlines()[-15:])
        Workdir(os.path.join(base, "wd")).remove_shm()
        raise SystemExit(f"kewpie --mode=replay failed (exit {proc.returncode}):\n{tail}")
    with open(path, encoding="utf-8") as fh:
        return seconds, json.load(fh)


# ---------------------------------------------------------------- the naive way
class Naive:
    """One naive replay at a time per worker folder (see the module docstring), its
    datadirs under home: on /dev/shm as kewpie's, or on disk as ``bug_report.sh``'s
    (its basedir's ``data/``)."""

    def __init__(self, home: str, timeout: float) -> None:
        self.home = home
        self.timeout = timeout
        self.counts: dict[str, dict[str, int]] = {}
        self.lock = threading.Lock()
        self.replays = 0
        self.seconds = 0.0       # every replay's time, summed
        self.run_seconds = 0.0   # ... of which the reproducer's own (the client's run)

    def _count(self, tree: str, outcome: str) -> None:
        with self.lock:
            per = self.counts.setdefault(tree, {})
            per[outcome] = per.get(outcome, 0) + 1

    def _ping(self, client: str, sock: str, timeout: float) -> bool | None:
        """Does the server answer ``SELECT 1`` within timeout? None: no answer in time."""
        try:
            return subprocess.run([client, "--no-defaults", f"--socket={sock}", "-uroot", "-e",
                                   "SELECT 1"], capture_output=True, check=False,
                                  timeout=timeout).returncode == 0
        except subprocess.TimeoutExpired:
            return None

    def one(self, path: str, options: list[str], tree: CodeTree, slot: int) -> str:
        """Replay path on a fresh server of tree in slot's folder; the outcome.  The
        verdicts follow kewpie's rules: a reproducer past its time is a timeout and its
        server is killed (kewpie throws it away); a server that does not answer within
        UNANSWERED_GRACE seconds after the run and has not died is a hang (killed)."""
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
                                   "--core-file", "--skip-name-resolve", *SERVER_DEFAULTS,
                                   *options],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  preexec_fn=_allow_cores)
        client = tree.tool("client")
        deadline = time.monotonic() + READY_SECONDS
        while time.monotonic() < deadline and server.poll() is None:
            if self._ping(client, sock, READY_SECONDS):
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
            alive = self._ping(client, sock, UNANSWERED_GRACE) if server.poll() is None else False
            if not alive:
                try:
                    server.wait(timeout=10.0)      # a crash: its core written, it ends
                except subprocess.TimeoutExpired:
                    pass
            if alive is None and server.poll() is None:
                outcome = "hang"
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
        elif server.poll() is None and outcome in ("timeout", "hang", "skipped"):
            server.kill()                          # thrown away, as kewpie does
            server.wait()
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
            self.replays += 1
            self.seconds += time.monotonic() - began
            self.run_seconds += ran
        return outcome

    @property
    def harness_per_replay(self) -> float:
        """The naive way's own time a replay (all but the client's run)."""
        return (self.seconds - self.run_seconds) / self.replays if self.replays else 0.0

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


# ---------------------------------------------------------------- bug_report.sh's flow
def _allow_cores() -> None:
    """In a server's child before exec: cores allowed up to the hard limit, as kewpie
    allows its servers', and (startup.sh's ``start``) the core's filter 0x11."""
    import resource
    _, hard = resource.getrlimit(resource.RLIMIT_CORE)
    try:
        resource.setrlimit(resource.RLIMIT_CORE, (hard, hard))
        with open("/proc/self/coredump_filter", "w") as fh:
            fh.write("0x11")
    except (ValueError, OSError):
        pass


class BugReportFlow:
    """One reproducer the way mariadb-qa's ``bug_report.sh`` replays it, step for step and
    executed for real (read in mariadb-corporation/mariadb-qa: ``bug_report.sh``,
    ``mariadb-build-qa/test_all``, ``all_all``, ``stop_all``, ``start_all``,
    ``kill_all``, ``findbug_new``; the ``start``, ``stop``, ``wipe``, ``all_no_cl`` and
    ``test`` scripts ``startup.sh`` writes into each basedir; ``new_text_string.sh``).
    ``mass_bug_report.sh`` runs a folder of reproducers one after the other through it.

    1. ``bug_report.sh`` sleeps 1 s (after its notes) and 2.5 s ("for visual
       confirmation"), then runs ``test_all`` in the folder of all its trees;
    2. ``all_all``: on every tree at once, a random sleep of 0-5 s, then ``all_no_cl``:
       ``wipe`` -- the datadir removed, ``mariadb-install-db`` (timeout 120 s), the
       server started (``start``: ``mariadb-admin ping`` every 0.25 s until it answers,
       ``CREATE DATABASE IF NOT EXISTS test``), ``CREATE DATABASE IF NOT EXISTS test``
       again, the server stopped (``stop``: ``mariadb-admin shutdown``, then kill -9 of
       what is left) -- then ``start`` once more;
    3. a reproducer with options (its ``mysqld options required for replay`` line):
       ``stop_all`` (``stop``, sleep 1 s, kill) and ``start_all`` with the options
       (``PASS_MYEXTRA_TO_START_ONLY=1``, the default);
    4. on every tree at once: ``test`` (the client, ``--force --binary-mode``, fed the
       file), sleep 2 s, ``stop`` under a 25 s timeout; then sleep 13 s ("give servers
       some time to properly shutdown") and ``kill_all``;
    5. ``findbug_new``: on every tree at once ``new_text_string.sh``: with no core it
       sleeps 2 s; a core is waited for until its size stays the same (0.2 s apart,
       three times), then gdb prints the backtrace for the UniqueID;
    6. ``bug_report.sh`` runs ``kill_all`` again, and gdb once more on its own tree's
       core for the report's backtrace.

    Its servers: ``--no-defaults --loose-innodb-buffer-pool-in-core-dump=0
    --max_connections=10000 --core-file --server-id=100``, on a socket (no port here:
    kewpie's listeners rule), the datadir in its basedir (here: on disk, in the bench's
    folder); here also the replay's server defaults (``lib/replay/defaults.py``) before a
    reproducer's own options, as every way's servers: the same statements wait the
    same time (its own servers wait InnoDB's 50 s on a row lock).  Left out: its *SAN
    build checks (there are none here); its client runs without a time limit
    (``mass_bug_report.sh`` gives a reproducer 420 s): here the bench's ``--timeout``, as
    the other ways.
    """

    def __init__(self, home: str, timeout: float, seed: int) -> None:
        self.home = home
        self.timeout = timeout
        self.random = random.Random(seed)
        self.counts: dict[str, dict[str, int]] = {}
        self.replays = 0
        self.seconds = 0.0       # every replay's time (each tree's lane, the whole flow)
        self.run_seconds = 0.0   # ... of which the reproducer's own (the client's run)
        self.sleeps = 0.0        # the flow's fixed and random sleeps, a reproducer

    def _dir(self, tree: CodeTree) -> dict[str, str]:
        work = os.path.join(self.home, tree.label)
        return {"work": work, "data": os.path.join(work, "data"),
                "sock": os.path.join(work, "socket.sock"),
                "log": os.path.join(work, "log", "master.err"), "tmp": os.path.join(work, "tmp")}

    def _admin(self, tree: CodeTree, sock: str, *args: str, timeout: float = 90) -> int:
        try:
            return subprocess.run([tree.tool("admin"), "--no-defaults", "-uroot", f"-S{sock}",
                                   *args], capture_output=True, check=False,
                                  timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            return -1

    def _start(self, tree: CodeTree, options: Sequence[str]) -> subprocess.Popen[bytes]:
        """``start``: the server, pinged every 0.25 s (91 times at most), ``test`` made."""
        d = self._dir(tree)
        paths = [f"--{k}={v}" for k, v in tree.server_path_options() if k != "basedir"]
        server = subprocess.Popen(
            [tree.server, "--no-defaults", "--loose-innodb-buffer-pool-in-core-dump=0",
             "--max_connections=10000", "--core-file", f"--basedir={tree.basedir}", *paths,
             f"--tmpdir={d['tmp']}", f"--datadir={d['data']}", f"--socket={d['sock']}",
             "--skip-networking", f"--log-error={d['log']}", "--server-id=100", "--user=root",
             *SERVER_DEFAULTS, *options], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=_allow_cores)
        for _ in range(91):
            if server.poll() is not None or self._admin(tree, d["sock"], "ping", timeout=30) == 0:
                break
            time.sleep(0.25)
        self._client(tree, "CREATE DATABASE IF NOT EXISTS test;")
        return server

    def _client(self, tree: CodeTree, sql: str) -> None:
        subprocess.run([tree.tool("client"), "--no-defaults", "-uroot",
                        f"--socket={self._dir(tree)['sock']}", "-e", sql],
                       capture_output=True, check=False, timeout=60)

    def _stop(self, tree: CodeTree, server: subprocess.Popen[bytes], limit: float = 90) -> None:
        """``stop``: ``mariadb-admin shutdown`` (under limit seconds), then ``kill``."""
        self._admin(tree, self._dir(tree)["sock"], "shutdown", timeout=limit)
        if server.poll() is None:
            server.kill()
        server.wait()

    def _all_no_cl(self, tree: CodeTree, delay: float) -> subprocess.Popen[bytes]:
        """``all_all``'s random sleep, then ``all_no_cl``: ``wipe`` and ``start``."""
        time.sleep(delay)
        d = self._dir(tree)
        shutil.rmtree(d["work"], ignore_errors=True)
        os.makedirs(d["tmp"])
        os.makedirs(os.path.dirname(d["log"]))
        subprocess.run([tree.tool("install_db"), "--no-defaults",
                        "--loose-innodb-buffer-pool-in-core-dump=0", "--force",
                        "--auth-root-authentication-method=normal", f"--basedir={tree.basedir}",
                        f"--datadir={d['data']}", "--user=root"], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=False, timeout=120)
        server = self._start(tree, ())
        self._client(tree, "CREATE DATABASE IF NOT EXISTS test")
        self._stop(tree, server)
        return self._start(tree, ())

    def _test(self, tree: CodeTree, path: str,
              server: subprocess.Popen[bytes]) -> tuple[str, float]:
        """``test``, sleep 2, ``stop`` under 25 s: (the outcome, the client's seconds)."""
        began = time.monotonic()
        outcome = "none"
        with open(path, "rb") as fh:
            try:
                subprocess.run([tree.tool("client"), "--no-defaults", "-A", "-uroot",
                                f"-S{self._dir(tree)['sock']}", "--force", "--binary-mode",
                                "test"], stdin=fh, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, timeout=self.timeout, check=False)
            except subprocess.TimeoutExpired:
                outcome = "timeout"
        ran = time.monotonic() - began
        died = server.poll() is not None
        time.sleep(2)
        self._stop(tree, server, limit=25)
        if died or find_core(self._dir(tree)["data"]):
            outcome = "crash"
        return outcome, ran

    def _findbug(self, tree: CodeTree) -> None:
        """``new_text_string.sh`` of ``findbug_new``: its wait for the core, gdb on it."""
        core = find_core(self._dir(tree)["data"])
        if not core:
            time.sleep(2)
            return
        sizes: list[int] = []
        while len(sizes) < 50 and not (len(sizes) >= 3 and len(set(sizes[-3:])) == 1):
            sizes.append(os.path.getsize(core))
            time.sleep(0.2)
        self._gdb(tree, core)

    @staticmethod
    def _gdb(tree: CodeTree, core: str) -> None:
        subprocess.run(["gdb", "-q", "-batch", "-nx", "-iex", "set debuginfod enabled off",
                        "-ex", "set pagination off", "-ex", "bt", tree.server, core],
                       capture_output=True, check=False, timeout=300)

    def one(self, path: str, options: list[str], trees: Sequence[CodeTree]) -> None:
        """One ``bug_report.sh`` run of the reproducer at path on all the trees."""
        began = time.monotonic()
        delays = [float(f"{self.random.randrange(5)}.{self.random.randrange(32768)}")
                  for _ in trees]
        sleeps = 1 + 2.5 + max(delays) + (1 if options else 0) + 2 + 13 + 2
        time.sleep(1 + 2.5)
        servers = _each(trees, lambda i, t: self._all_no_cl(t, delays[i]))
        if options:
            def restart(i: int, t: CodeTree) -> subprocess.Popen[bytes]:
                self._stop(t, servers[i])
                time.sleep(1)
                return self._start(t, options)
            servers = _each(trees, restart)
        tested = _each(trees, lambda i, t: self._test(t, path, servers[i]))
        time.sleep(13)
        _each(trees, lambda i, t: self._findbug(t))
        own = find_core(self._dir(trees[0])["data"])
        if own:
            self._gdb(trees[0], own)
        seconds = time.monotonic() - began
        for tree, (outcome, ran) in zip(trees, tested):
            per = self.counts.setdefault(tree.label, {})
            per[outcome] = per.get(outcome, 0) + 1
            self.replays += 1
            self.seconds += seconds
            self.run_seconds += ran
        self.sleeps += sleeps
        for tree in trees:
            shutil.rmtree(self._dir(tree)["work"], ignore_errors=True)

    @property
    def harness_per_replay(self) -> float:
        """The flow's own time a replay (all but the client's run)."""
        return (self.seconds - self.run_seconds) / self.replays if self.replays else 0.0


def _each(trees: Sequence[CodeTree], step: Any) -> list[Any]:
    """step(index, tree) on every tree at once (``xargs -P``); their results in order."""
    out: list[Any] = [None] * len(trees)

    def run(i: int) -> None:
        out[i] = step(i, trees[i])
    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(trees))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def bugreport_run(home: str, timeout: float, seed: int, reproducers: Sequence[Any],
                  trees: Sequence[CodeTree]) -> tuple[BugReportFlow, float]:
    """``mass_bug_report.sh``'s loop: each reproducer through the flow, one after the other,
    its datadirs under home (removed after); (the flow, wall seconds)."""
    flow = BugReportFlow(home, timeout, seed)
    started = time.monotonic()
    try:
        for r in reproducers:
            flow.one(r.path, [o.as_arg() for o in r.options], trees)
        return flow, time.monotonic() - started
    finally:
        shutil.rmtree(home, ignore_errors=True)


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


def split_times(results: Sequence[ReplayResult]) -> tuple[float, float]:
    """(the reproducers' own time, the harness's own time) a replay of results: the
    client's run, and all the rest of each replay."""
    if not results:
        return 0.0, 0.0
    total = sum(r.seconds for r in results)
    run = sum(r.phases.get("run", 0.0) for r in results)
    return run / len(results), (total - run) / len(results)


def per_replay(results: Sequence[ReplayResult]) -> float:
    """Replay-seconds a replay (every replay's own time, whatever ran beside it)."""
    return sum(r.seconds for r in results) / len(results) if results else 0.0


def naive_run(home: str, timeout: float, jobs: list[tuple[str, list[str], CodeTree]],
              parallel: int) -> tuple[Naive, float]:
    """The naive way on jobs with its datadirs under home (removed after); (it, wall s)."""
    naive = Naive(home, timeout)
    try:
        return naive, naive.run(jobs, parallel)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark (see the module docstring)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--corpus", default=os.path.join(QA_SNAPSHOT, "BUGS"))
    p.add_argument("--known-bugs", default=os.path.join(QA_SNAPSHOT, "known_bugs.strings"))
    p.add_argument("--parallel", type=int, default=2)
    p.add_argument("--naive-sample", type=int, default=120, metavar="N",
                   help="reproducers of the sample replayed both ways (default: %(default)s)")
    p.add_argument("--naive-disk", type=int, default=20, metavar="M",
                   help="the first M of the sample's draw also the naive way with its "
                        "datadirs on disk, as bug_report.sh keeps them (0: not)")
    p.add_argument("--bugreport", type=int, default=20, metavar="B",
                   help="the first B of the sample's draw also through bug_report.sh's own "
                        "flow, its sleeps and second start included (0: not)")
    p.add_argument("--naive-first", action="store_true",
                   help="the naive ways before kewpie's (alternate runs to even out the "
                        "machine's load)")
    p.add_argument("--timeout", type=float, default=60.0)
    p.add_argument("--seed", type=int, default=45)
    p.add_argument("--reference", metavar="REPLAY_JSON",
                   help="a whole run's replay.json whose reproducers' own time stands for the "
                        "corpus (default: this run's whole part; with --sample-only, none)")
    p.add_argument("--whole-nice", type=int, default=0, metavar="N",
                   help="the whole-corpus part (a long run, not the ratio's measure) N "
                        "nicer than the sample's parts (default: %(default)s)")
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
                   help="only the sample, both ways (no whole-corpus run: its figures from "
                        "--reference when given)")
    args = p.parse_args(argv)
    corpus_dir = os.path.abspath(args.corpus)
    known = os.path.abspath(args.known_bugs)
    entries = load_strings(known, open(known, encoding="utf-8").read().splitlines())
    if args.rematch:
        with open(args.rematch, encoding="utf-8") as fh:
            whole = rematched(json.load(fh), known)
        print("\n".join([f"replay bench --rematch {args.rematch} (known bugs: {known})", "",
                         *corpus_figures(whole, entries, None)]), flush=True)
        if args.crashes:
            with open(args.crashes, "w", encoding="utf-8") as fh:
                json.dump(crashes_doc(whole, time.strftime("%Y-%m-%d")), fh, indent=1)
                fh.write("\n")
        return 0
    reference: dict[str, Any] | None = None
    if args.reference:
        with open(args.reference, encoding="utf-8") as fh:
            reference = rematched(json.load(fh), known)   # tagged by this checkout's rules
    info = machine_info()
    load_before = _load()
    base = tempfile.mkdtemp(prefix="replay-bench-", dir=os.path.join(ROOT, "workdir")
                            if os.path.isdir(os.path.join(ROOT, "workdir")) else None)
    corpus = discover([corpus_dir])
    trees = [discover_tree("/usr"), discover_tree(os.path.join(ROOT, "trees", OLD, "usr"))]
    lanes = args.parallel
    print(f"replay bench: {len(corpus.reproducers)} reproducers of {corpus_dir}, trees "
          f"{', '.join(t.label for t in trees)}, {lanes} lane(s) each way, load average "
          f"{load_before}", flush=True)

    drawn = random.Random(args.seed).sample(corpus.reproducers,
                                            min(args.naive_sample, len(corpus.reproducers)))
    sample = sorted(drawn, key=lambda r: r.name)
    sample_dir = os.path.join(base, "sample")
    os.makedirs(sample_dir)
    for r in sample:
        os.symlink(r.path, os.path.join(sample_dir, os.path.basename(r.path)))
    n_replays = len(sample) * len(trees)

    def kewpie_part() -> tuple[float, dict[str, Any]]:
        seconds, doc = kewpie_replay(sample_dir, known, lanes, args.timeout, base, "sample")
        print(f"kewpie, sample of {len(sample)}: {seconds:.0f} s "
              f"({rate(n_replays, seconds):.1f}/min), load average {_load()}", flush=True)
        return seconds, doc
    if not args.naive_first:
        kewpie_s, sampled = kewpie_part()
    jobs = [(r.path, [o.as_arg() for o in r.options], t) for t in trees for r in sample]
    os.makedirs(user_shm_root(), exist_ok=True)
    shm_home = tempfile.mkdtemp(prefix="replay-bench-naive-", dir=user_shm_root())
    naive, naive_s = naive_run(shm_home, args.timeout, jobs, lanes)
    n_sample = rate(n_replays, naive_s)
    print(f"naive on /dev/shm, sample of {len(sample)}: {naive_s:.0f} s ({n_sample:.1f}/min), "
          f"load average {_load()}", flush=True)
    disk_part = sorted(drawn[:max(0, args.naive_disk)], key=lambda r: r.name)
    disk: Naive | None = None
    disk_s = 0.0
    if disk_part:
        disk_jobs = [(r.path, [o.as_arg() for o in r.options], t)
                     for t in trees for r in disk_part]
        disk, disk_s = naive_run(os.path.join(base, "naive-disk"), args.timeout, disk_jobs,
                                 lanes)
        print(f"naive on disk, the first {len(disk_part)} of the draw: {disk_s:.0f} s "
              f"({rate(len(disk_jobs), disk_s):.1f}/min), load average {_load()}", flush=True)
    br_part = sorted(drawn[:max(0, args.bugreport)], key=lambda r: r.name)
    flow: BugReportFlow | None = None
    flow_s = 0.0
    if br_part:
        flow, flow_s = bugreport_run(os.path.join(base, "bugreport"), args.timeout, args.seed,
                                     br_part, trees)
        print(f"bug_report.sh's flow (disk), the first {len(br_part)} of the draw: "
              f"{flow_s:.0f} s ({rate(flow.replays, flow_s):.1f}/min), load average "
              f"{_load()}", flush=True)
    if args.naive_first:
        kewpie_s, sampled = kewpie_part()
    k_sample = rate(n_replays, kewpie_s)
    print(f"on the sample kewpie/naive (/dev/shm) {k_sample / n_sample if n_sample else 0:.1f}x",
          flush=True)
    if args.sample_only:
        whole_s, whole = kewpie_s, sampled
    else:   # the sample first: its ratio is printed before the long part
        if args.whole_nice:
            os.nice(args.whole_nice)
        print(f"kewpie, whole corpus{f' (nice +{args.whole_nice})' if args.whole_nice else ''}"
              f": following it in {os.path.join(base, 'kewpie-all.log')}", flush=True)
        whole_s, whole = kewpie_replay(corpus_dir, known, lanes, args.timeout, base, "all")
        print(f"kewpie, whole corpus: {whole_s:.0f} s, load average {_load()}", flush=True)
    load_after = _load()

    sample_results = results_of(sampled)
    k_run, k_own = split_times(sample_results)
    n_run = naive.run_seconds / naive.replays if naive.replays else 0.0
    n_own = naive.harness_per_replay
    lines = ["", "Replay benchmark (bench/replay_bench.py)", f"date:      {info['date']}",
             f"machine:   nproc {info['nproc']}, kernel {info['kernel']}; load average "
             f"(uptime) {load_before} before, {load_after} after",
             f"server:    {info['mariadbd']}", f"corpus:    {corpus_dir}: "
             f"{len(corpus.reproducers)} reproducers, {len(corpus.skipped)} skipped, "
             f"{len(corpus.ignored)} ignored",
             f"kewpie:    --mode=replay --parallel {lanes} (its default is 1: a user on "
             f"{info['nproc']} cores asks for {lanes}), datadirs on /dev/shm (its default), a "
             f"server reused while the reuse rule keeps it",
             f"naive:     (fair, the harnesses compared) a fresh server per replay, {lanes} at "
             f"once: a datadir by mariadb-install-db, the server started, the client fed the "
             f"file, gdb on a crash's core, the server shut down -- bug_report.sh's essentials "
             f"without its sleeps and second start, so its lower bound; datadirs on /dev/shm "
             f"(kewpie's storage) and on disk (where bug_report.sh keeps them)",
             f"bug_report.sh: (faithful) mariadb-qa's bug_report.sh flow step for step, "
             f"executed: a reproducer at a time (mass_bug_report.sh), on all trees side by "
             f"side (test_all): its sleeps (1 + 2.5 s, 0-5 s random before each start, 1 s "
             f"before a restart with options, 2 s after the test, 13 s after the stops, 2 s "
             f"in new_text_string.sh without a core), wipe's server start and stop before the "
             f"real start, mariadb-admin shutdown under 25 s, gdb on a core twice; datadirs "
             f"on disk (its basedir's data/)",
             f"rules:     all ways {args.timeout:g} s a reproducer (then a timeout, its server "
             f"killed), a server that does not answer {UNANSWERED_GRACE:g} s after the run a "
             f"hang; every way's servers start with the replay's defaults "
             f"({' '.join(SERVER_DEFAULTS)}), then a reproducer's own options; order: "
             f"{'naive ways first' if args.naive_first else 'kewpie first'}", ""]
    lines += [f"{'way (the sample)':<46} {'replays':>7} {'seconds':>8} {'per min':>8} "
              f"{'own s/replay':>13} {'harness s/replay':>17}",
              f"{'kewpie (/dev/shm)':<46} {n_replays:>7} {kewpie_s:>8.0f} {k_sample:>8.1f} "
              f"{k_run:>13.2f} {k_own:>17.2f}",
              f"{'naive, fresh server each (/dev/shm)':<46} {n_replays:>7} {naive_s:>8.0f} "
              f"{n_sample:>8.1f} {n_run:>13.2f} {n_own:>17.2f}"]
    d_run = d_own = 0.0
    if disk is not None:
        d_run, d_own = disk.run_seconds / disk.replays, disk.harness_per_replay
        lines.append(f"{f'naive, fresh server each (disk), {len(disk_part)} of them':<46} "
                     f"{disk.replays:>7} {disk_s:>8.0f} {rate(disk.replays, disk_s):>8.1f} "
                     f"{d_run:>13.2f} {d_own:>17.2f}")
    f_run = f_own = 0.0
    if flow is not None:
        f_run, f_own = flow.run_seconds / flow.replays, flow.harness_per_replay
        lines.append(f"{f'bug_report.sh flow (disk), {len(br_part)} of them':<46} "
                     f"{flow.replays:>7} {flow_s:>8.0f} {rate(flow.replays, flow_s):>8.1f} "
                     f"{f_run:>13.2f} {f_own:>17.2f}")
    lines.append(f"ratio on the sample: kewpie/naive (/dev/shm) "
                 f"{k_sample / n_sample if n_sample else 0:.1f}x (target >= 5x)")
    if flow is not None:
        names = {r.name for r in br_part}
        k_part = per_replay([r for r in sample_results if r.name in names])
        lines.append(f"  on the {len(br_part)} also run through bug_report.sh's flow, "
                     f"replay-seconds a replay: kewpie {k_part:.2f}, bug_report.sh "
                     f"{flow.seconds / flow.replays:.2f}: "
                     f"{flow.seconds / flow.replays / k_part if k_part else 0:.1f}x (its sleeps: "
                     f"{flow.sleeps / len(br_part):.1f} s a reproducer of {len(trees)} replays)")
    if disk is not None:
        names = {r.name for r in disk_part}
        k_part = per_replay([r for r in sample_results if r.name in names])
        lines.append(f"  on the {len(disk_part)} also run on disk, replay-seconds a replay: "
                     f"kewpie {k_part:.2f}, naive on disk "
                     f"{disk.seconds / disk.replays:.2f}: "
                     f"{disk.seconds / disk.replays / k_part if k_part else 0:.1f}x")
    references = ([(args.reference, reference)] if reference is not None else []) + \
        ([("this run's whole part", whole)] if not args.sample_only else [])
    names = {r.name for r in sample}
    for label, doc in references:
        ref = results_of(doc)
        ref_run, _ = split_times(ref)
        ref_sample_run, _ = split_times([r for r in ref if r.name in names])
        lines += ["", f"is the sample the corpus? {len(sample)} of {len(corpus.reproducers)} "
                      f"reproducers drawn uniformly (random.sample, seed {args.seed}); the "
                      f"reproducers' own time a replay: {k_run:.2f} s on the sample here, "
                      f"{ref_sample_run:.2f} s for the same reproducers in the reference run, "
                      f"{ref_run:.2f} s over its whole corpus ({len(ref)} replays; reference: "
                      f"{label})",
                  f"the corpus: each way's harness time a replay on the sample + the corpus's "
                  f"own time a replay ({ref_run:.2f} s, the same statements both ways): "
                  f"kewpie {k_own + ref_run:.2f} s, naive (/dev/shm) {n_own + ref_run:.2f} s"
                  + (f", naive (disk) {d_own + ref_run:.2f} s" if disk is not None else "")
                  + (f", bug_report.sh {f_own + ref_run:.2f} s" if flow is not None else "")
                  + f" a replay ({lanes} lanes: kewpie "
                  f"{rate(lanes, k_own + ref_run):.1f}/min, naive (/dev/shm) "
                  f"{rate(lanes, n_own + ref_run):.1f}/min"
                  + (f", naive (disk) {rate(lanes, d_own + ref_run):.1f}/min"
                     if disk is not None else "")
                  + (f", bug_report.sh {rate(lanes, f_own + ref_run):.1f}/min"
                     if flow is not None else "")
                  + f"): kewpie/naive {(n_own + ref_run) / (k_own + ref_run):.1f}x "
                  f"(/dev/shm)" + (f", {(d_own + ref_run) / (k_own + ref_run):.1f}x (disk)"
                                   if disk is not None else "")
                  + (f", {(f_own + ref_run) / (k_own + ref_run):.1f}x (bug_report.sh)"
                     if flow is not None else "") + " (target >= 5x)"]
    results = results_of(whole)
    replays = len(results)
    settings = whole.get("settings", {})
    if not args.sample_only:
        lines += ["", f"kewpie, whole corpus: {replays} replays in {whole_s:.0f} s "
                      f"({rate(replays, whole_s):.1f}/min"
                      f"{f', nice +{args.whole_nice}' if args.whole_nice else ''}; "
                      f"{per_replay(results):.2f} replay-seconds a replay, of which the harness's "
                      f"own {split_times(results)[1]:.2f}), {settings.get('server_starts')} server "
                      f"starts"]
        w_run = split_times(results)[0]
        k_wall = rate(replays, whole_s)
        ways = [("naive (/dev/shm)", n_own), ("naive (disk)", d_own if disk else None),
                ("bug_report.sh", f_own if flow else None)]
        lines.append("the whole corpus, wall clock: kewpie's run above against each way's "
                     f"harness time a replay on the sample + this run's own {w_run:.2f} s, "
                     f"{lanes} lanes packed full (a lane waiting on a SLEEP or a lock is "
                     f"kept: the naive ways lend none): " + ", ".join(
                         f"{label} {rate(lanes, own + w_run):.1f}/min: kewpie/it "
                         f"{k_wall / rate(lanes, own + w_run):.1f}x"
                         for label, own in ways if own is not None))
    phases: dict[str, list[float]] = {}
    for res in results:
        for name, value in res.phases.items():
            phases.setdefault(name, []).append(value)
    fresh = sum(1 for res in results if res.fresh)
    lines.append(f"where kewpie's time goes ({'whole corpus' if not args.sample_only else 'sample'}"
                 f"; {fresh} of {replays} replays on a fresh server): " + ", ".join(
                     f"{name} {len(v)}x median {statistics.median(v):.2f} s sum {sum(v):.0f} s"
                     for name, v in phases.items()))
    lines.append("")
    figures_of = whole if not args.sample_only or reference is None else reference
    lines += corpus_figures(figures_of, entries, naive.counts)
    if flow is not None:
        lines.append(f"  bug_report.sh's flow (the first {len(br_part)} of the draw): " + "; ".join(
            f"{t}: " + ", ".join(f"{o} {n}" for o, n in sorted(per.items()))
            for t, per in flow.counts.items()))
    print("\n".join(lines), flush=True)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"info": info, "load_before": load_before, "load_after": load_after,
                       "parallel": lanes, "seed": args.seed, "timeout": args.timeout,
                       "naive_first": args.naive_first, "sample_only": args.sample_only,
                       "reference": args.reference, "server_defaults": list(SERVER_DEFAULTS),
                       "kewpie_all_s": whole_s if not args.sample_only else None,
                       "kewpie_sample_s": kewpie_s, "naive_sample_s": naive_s,
                       "naive_disk_s": disk_s, "naive_disk_reproducers": len(disk_part),
                       "bugreport_s": flow_s, "bugreport_reproducers": len(br_part),
                       "bugreport_counts": flow.counts if flow is not None else None,
                       "replays": replays, "sample": len(sample),
                       "own_s_per_replay": {"kewpie": k_run, "naive": n_run, "naive_disk": d_run,
                                            "bugreport": f_run},
                       "harness_s_per_replay": {"kewpie": k_own, "naive": n_own,
                                                "naive_disk": d_own, "bugreport": f_own},
                       "counts": figures_of["counts"], "naive_counts": naive.counts,
                       "old_only": old_only(figures_of),
                       "quality": attribute(results_of(figures_of), NEW, entries).to_json()},
                      fh, indent=1)
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
