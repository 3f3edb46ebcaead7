#!/usr/bin/env python3
"""Galera benchmark: how long from launch to a 3-node Synced cluster.

Measures, on this machine and in one run:

- **kewpie cold (full SST)**: ``./kewpie.py --default-server-type=galera
  --suite=cluster_basic --start-and-exit`` after the workdir's ``bootstrap``
  and ``galera`` caches are deleted, so ``mariadb-install-db`` runs, node 0
  bootstraps the cluster and nodes 1 and 2 join it by rsync SST;
- **kewpie warm**: the same command with the caches kept, so the three nodes
  start together from the cluster snapshot the cold run just before left in
  ``cache/galera`` (each warm run is then checked: every node of
  ``cluster.json`` must say Synced, cluster size 3);
- **hand-made reference**: the same cluster built by hand with no kewpie code
  (except ``lib.ports.PortLeaser`` for the ports): ``mariadb-install-db`` for
  node 0, one my.cnf per node, node 0 started with ``--wsrep-new-cluster``,
  then nodes 1 and 2 one after another from empty datadirs (rsync SST), each
  awaited by polling its wsrep status every 20 ms.

Each kewpie figure is the time from just before ``Popen`` of ``kewpie.py`` to
its exit (``--start-and-exit`` exits once all 3 nodes are Synced with cluster
size 3; it must exit 0); ``kewpie.py --mode=cleanup`` then stops the servers,
untimed.  The reference figure runs from the start of ``mariadb-install-db`` to
all 3 nodes Synced.  Runs are interleaved (reference 1, cold 1, warm 1,
reference 2, ...) so drift affects every configuration alike; each cold run
replaces the snapshot, so the warm run right after it starts from that fresh
snapshot.

For scale: a hand-made rsync-SST 3-node cluster here took about 10.7 s
(median of 3).

It prints a table (min/median/max in ms), the warm median against its target
and the cold/reference ratio of medians against its target (PASS/MISS, print
only).  Exit status: 0 when every figure could be measured (whatever PASS/MISS
says), 2 when the benchmark itself cannot run (setup failed, or a configuration
got no successful run).  Individual failed runs are reported and counted.

Usage::

    bench/cluster_startup.py [--runs 3] [--json PATH] [--workdir DIR]
                             [--base-port 9600] [--ref-base-port 9700]
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import platform
import pwd
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from typing import Sequence

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV_PYTHON = os.path.join(ROOT, ".venv", "bin", "python")

if (os.path.exists(VENV_PYTHON)
        and os.path.realpath(sys.prefix) != os.path.realpath(os.path.join(ROOT, ".venv"))
        and not os.environ.get("KEWPIE_NO_VENV")):
    os.execv(VENV_PYTHON, [VENV_PYTHON, os.path.abspath(__file__), *sys.argv[1:]])
sys.path.insert(0, ROOT)

import pymysql  # noqa: E402

from lib.logsetup import configure, get_logger  # noqa: E402
from lib.errors import PortLeaseError  # noqa: E402
from lib.logtail import tail_file  # noqa: E402
from lib.ports import PortLease, PortLeaser, default_lock_dir  # noqa: E402
from lib.workdir import MARKER, Workdir  # noqa: E402

KEWPIE = os.path.join(ROOT, "kewpie.py")
SUITE = "cluster_basic"
MARIADBD = "/usr/sbin/mariadbd"
INSTALL_DB = "/usr/bin/mariadb-install-db"
GALERA_PROVIDER = "/usr/lib/galera/libgalera_smm.so"
HOST = "127.0.0.1"
NODES = 3
POLL_INTERVAL = 0.020          # seconds between wsrep status polls of the reference
NODE_SYNC_TIMEOUT = 180.0      # seconds one reference node may take to be Synced
INSTALL_DB_TIMEOUT = 300.0     # seconds mariadb-install-db may take
KEWPIE_RUN_TIMEOUT = 600.0     # seconds one kewpie run may take in all
CLEANUP_TIMEOUT = 180.0        # seconds kewpie --mode=cleanup may take
TARGET_WARM_MS = 3000.0        # warm 3-node cluster Synced
TARGET_COLD_RATIO = 1.20       # kewpie cold median / reference median
SCALE_NOTE = "a hand-made rsync-SST 3-node cluster here took about 10.7 s (median of 3)"
WARM_FALLBACK_MARK = "forming it by SST instead"   # kewpie's warning when a warm start fails
NO_SNAPSHOT_MARK = "could not snapshot the cluster"


@dataclass(frozen=True)
class Config:
    """One configuration to time."""

    key: str
    label: str


REFERENCE = Config("reference", "hand-made reference (rsync SST)")
COLD = Config("cold", "kewpie cold (full SST)")
WARM = Config("warm", "kewpie warm (snapshot)")
CONFIGS: tuple[Config, ...] = (REFERENCE, COLD, WARM)


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


class BenchError(Exception):
    """The benchmark (or one run of it) cannot go on."""


# ---------------------------------------------------------------- machine
def machine_info() -> dict[str, str]:
    """nproc, mariadbd --version, Galera package, kernel and date of this run."""
    try:
        nproc = len(os.sched_getaffinity(0))
    except AttributeError:
        nproc = os.cpu_count() or 0
    try:
        version = subprocess.run([MARIADBD, "--version"], capture_output=True, text=True,
                                 timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BenchError(f"cannot run {MARIADBD} --version: {exc}") from exc
    if not os.path.isfile(GALERA_PROVIDER):
        raise BenchError(f"no Galera provider at {GALERA_PROVIDER}")
    if shutil.which("rsync") is None:
        raise BenchError("rsync is not installed (needed for rsync SST)")
    try:
        galera = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "galera-4"],
                                capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        galera = ""
    return {"date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "nproc": str(nproc),
            "mariadbd": version, "galera": f"galera-4 {galera or '?'} ({GALERA_PROVIDER})",
            "kernel": platform.release(), "python": platform.python_version()}


def default_server_user() -> str | None:
    """'mysql' when we run as root (like kewpie: rsync SST fails as root), else None."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam("mysql")
    except KeyError as exc:
        raise BenchError("running as root but there is no 'mysql' user") from exc
    return "mysql"


# ---------------------------------------------------------------- wsrep status
def wsrep_status(socket_path: str) -> dict[str, str] | None:
    """The node's ``wsrep_%`` status over its unix socket (None if it does not answer)."""
    try:
        conn = pymysql.connect(unix_socket=socket_path, user="root", password="",
                               connect_timeout=2, read_timeout=5)
    except (pymysql.err.MySQLError, OSError):
        return None
    try:
        with conn.cursor() as cur:
            cur.execute("SHOW STATUS LIKE 'wsrep%'")
            return {str(k): str(v) for k, v in cur.fetchall()}
    except (pymysql.err.MySQLError, OSError):
        return None
    finally:
        conn.close()


def is_synced(status: dict[str, str] | None, size: int, need_ready: bool = True) -> bool:
    """True when status says Synced in a cluster of size nodes (and wsrep_ready=ON)."""
    if status is None:
        return False
    return (status.get("wsrep_local_state_comment") == "Synced"
            and status.get("wsrep_cluster_size") == str(size)
            and (not need_ready or status.get("wsrep_ready") == "ON"))


def _brief(status: dict[str, str] | None) -> str:
    if status is None:
        return "no answer"
    return (f"ready={status.get('wsrep_ready', '?')} "
            f"state={status.get('wsrep_local_state_comment', '?')} "
            f"size={status.get('wsrep_cluster_size', '?')}")


# ---------------------------------------------------------------- reference
@dataclass
class RefNode:
    """One node of the hand-made cluster: its directory, ports and process."""

    index: int
    home: str
    lease: PortLease
    proc: subprocess.Popen[bytes] | None = None

    @property
    def data(self) -> str:
        """The datadir."""
        return os.path.join(self.home, "data")

    @property
    def socket(self) -> str:
        """The unix socket."""
        return os.path.join(self.home, "mysql.sock")

    @property
    def error_log(self) -> str:
        """The server's error log."""
        return os.path.join(self.home, "error.log")

    @property
    def cnf(self) -> str:
        """The node's own option file."""
        return os.path.join(self.home, "my.cnf")

    @property
    def gmcast_address(self) -> str:
        """``127.0.0.1:<group communication port>``."""
        return f"{HOST}:{self.lease.port(1)}"

    def render_cnf(self, peers: list[str]) -> str:
        """The node's my.cnf text."""
        home = self.home
        provider = (f"gmcast.listen_addr=tcp://{self.gmcast_address};"
                    f"ist.recv_addr={HOST}:{self.lease.port(2)};gcache.size=10M")
        return "\n".join([
            "# Written by bench/cluster_startup.py (hand-made reference node).",
            "[mysqld]",
            f"datadir={self.data}",
            f"port={self.lease.port(0)}",
            f"bind-address={HOST}",
            f"socket={self.socket}",
            f"pid-file={os.path.join(home, 'mariadbd.pid')}",
            f"log-error={self.error_log}",
            "innodb-log-file-size=16M",
            "innodb-buffer-pool-size=128M",
            "binlog_format=ROW",
            "innodb_autoinc_lock_mode=2",
            "wsrep_on=ON",
            f"wsrep_provider={GALERA_PROVIDER}",
            f"wsrep_cluster_address=gcomm://{','.join(peers)}",
            f"wsrep_node_address={HOST}",
            f"wsrep_node_name=node{self.index}",
            f'wsrep_provider_options="{provider}"',
            f"wsrep_sst_receive_address={HOST}:{self.lease.port(3)}",
            "wsrep_sst_method=rsync",
            "",
            "[sst]",
            f"tmpdir={os.path.join(home, 'tmp')}",
            f"sst-log-archive-dir={os.path.join(home, 'sstlog')}",
            "",
        ])

    def start(self, user: str | None, new_cluster: bool) -> None:
        """Launch mariadbd on the node's my.cnf (as user, in a session of its own)."""
        argv = [MARIADBD, f"--defaults-file={self.cnf}"]
        if new_cluster:
            argv.append("--wsrep-new-cluster")
        extra: dict[str, str] = {"user": user, "group": user} if user else {}
        with open(os.path.join(self.home, "stdout.log"), "ab") as out:
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out,
                                         stderr=subprocess.STDOUT, cwd=self.home,
                                         start_new_session=True, **extra)

    def kill(self) -> None:
        """SIGKILL the server and everything left in its process group; reap it."""
        proc = self.proc
        if proc is None:
            return
        for _ in range(2):   # again after the wait: anything forked meanwhile
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            if proc.poll() is None:
                proc.kill()
            proc.wait()


def _make_dir(path: str, user: str | None) -> None:
    os.makedirs(path, mode=0o755)
    if user:
        shutil.chown(path, user, user)


def wait_synced(nodes: list[RefNode], timeout: float) -> None:
    """Poll every node (every 20 ms) until all are Synced, ready, in a cluster of len(nodes)."""
    deadline = time.monotonic() + timeout
    size = len(nodes)
    while True:
        statuses = [wsrep_status(n.socket) for n in nodes]
        if all(is_synced(s, size) for s in statuses):
            return
        for node in nodes:
            if node.proc is not None and node.proc.poll() is not None:
                raise BenchError(f"reference node{node.index} exited with {node.proc.returncode}; "
                                 f"{node.error_log} ends with:\n{tail_file(node.error_log)}")
        if time.monotonic() > deadline:
            states = "; ".join(f"node{n.index}: {_brief(s)}" for n, s in zip(nodes, statuses))
            last = nodes[-1]
            raise BenchError(f"reference cluster of {size} not Synced within {timeout:.0f}s "
                             f"({states}); {last.error_log} ends with:\n{tail_file(last.error_log)}")
        time.sleep(POLL_INTERVAL)


def install_node0(node: RefNode, user: str | None) -> None:
    """mariadb-install-db into node 0's datadir."""
    argv = [INSTALL_DB, "--no-defaults", f"--datadir={node.data}",
            "--auth-root-authentication-method=normal", "--skip-test-db"]
    if user:
        argv.insert(3, f"--user={user}")
    log = os.path.join(node.home, "install-db.log")
    with open(log, "wb") as out:
        try:
            rc = subprocess.run(argv, stdout=out, stderr=out, stdin=subprocess.DEVNULL,
                                cwd=node.home, timeout=INSTALL_DB_TIMEOUT).returncode
        except subprocess.TimeoutExpired as exc:
            raise BenchError(f"{' '.join(argv)} took over {INSTALL_DB_TIMEOUT:.0f}s") from exc
    if rc != 0:
        raise BenchError(f"{' '.join(argv)} failed (exit {rc}):\n{tail_file(log)}")


def reference_run(base_port: int, user: str | None) -> float:
    """Build the 3-node cluster by hand once; return ms from install-db to all Synced.

    Every server is SIGKILLed and every directory removed before it returns.
    """
    leaser = PortLeaser(default_lock_dir(), base_port=base_port)
    leases: list[PortLease] = []
    nodes: list[RefNode] = []
    base = tempfile.mkdtemp(prefix="kewpie-bench-galera-ref-", dir="/dev/shm")
    try:
        os.chmod(base, 0o755)
        for i in range(NODES):
            leases.append(leaser.lease())
            home = os.path.join(base, f"node{i}")
            _make_dir(home, user)
            for sub in ("data", "tmp", "sstlog"):
                _make_dir(os.path.join(home, sub), user)
            nodes.append(RefNode(i, home, leases[-1]))
        peers = [n.gmcast_address for n in nodes]
        for node in nodes:
            with open(node.cnf, "w") as fh:
                fh.write(node.render_cnf(peers))
            os.chmod(node.cnf, 0o644)

        start = time.monotonic()
        install_node0(nodes[0], user)
        nodes[0].start(user, new_cluster=True)
        wait_synced(nodes[:1], NODE_SYNC_TIMEOUT)
        for i in range(1, NODES):
            nodes[i].start(user, new_cluster=False)
            wait_synced(nodes[:i + 1], NODE_SYNC_TIMEOUT)
        return (time.monotonic() - start) * 1000.0
    except (OSError, PortLeaseError) as exc:
        raise BenchError(f"reference: {exc}") from exc
    finally:
        for node in nodes:
            node.kill()
        for lease in leases:
            lease.release()
        shutil.rmtree(base, ignore_errors=True)


# ---------------------------------------------------------------- kewpie runs
def cache_root(workdir: str) -> str:
    """The real directory behind ``<workdir>/cache`` (a link into /dev/shm)."""
    return os.path.realpath(os.path.join(workdir, "cache"))


def clear_caches(workdir: str) -> None:
    """Delete the contents of the workdir's bootstrap and galera caches."""
    root = cache_root(workdir)
    for sub in ("bootstrap", "galera"):
        real = os.path.join(root, sub)
        if not os.path.isdir(real):
            continue
        for name in os.listdir(real):
            path = os.path.join(real, name)
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path)
            else:
                os.unlink(path)


def has_snapshot(workdir: str) -> bool:
    """True when cache/galera holds a finished cluster snapshot."""
    return bool(glob.glob(os.path.join(cache_root(workdir), "galera", "*", "meta.json")))


def _run_logged(argv: list[str], timeout: float) -> tuple[int, float, str]:
    """Run argv from ROOT with its output in a temporary file; (rc, ms, output).

    The output goes to a file rather than a pipe so that servers left running
    by --start-and-exit cannot hold the timing open.
    """
    with tempfile.TemporaryFile(prefix="kewpie-bench-out-") as out:
        start = time.monotonic()
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, cwd=ROOT)
        try:
            rc = proc.wait(timeout=timeout)
            ms = (time.monotonic() - start) * 1000.0
        except subprocess.TimeoutExpired:
            rc, ms = -1, (time.monotonic() - start) * 1000.0
            out.write(f"\n[bench] killed after {timeout:.0f}s\n".encode())
        finally:
            if proc.poll() is None:   # timed out or interrupted: let kewpie stop its servers
                proc.terminate()
                try:
                    proc.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        out.seek(0)
        text = out.read().decode(errors="replace")
    return rc, ms, text


def _last_lines(text: str, count: int = 20) -> str:
    return "\n".join(text.splitlines()[-count:])


def kewpie_start(workdir: str, base_port: int, verbose: bool) -> tuple[float, str]:
    """``kewpie.py --start-and-exit`` a 3-node cluster; return (ms to exit, output).

    Raises BenchError (with kewpie's last lines) unless kewpie exits 0.
    """
    # Launched exactly as a user does: ./kewpie.py (shebang, then its venv re-exec).
    argv = [KEWPIE, "--default-server-type=galera", f"--suite={SUITE}", "--start-and-exit",
            f"--workdir={workdir}", f"--base-port={base_port}"]
    rc, ms, text = _run_logged(argv, KEWPIE_RUN_TIMEOUT)
    if verbose:
        sys.stdout.write("".join(f"    | {line}\n" for line in text.splitlines()))
    if rc != 0:
        raise BenchError(f"kewpie --start-and-exit: exit status {rc} after {ms:.0f} ms; "
                         f"last lines:\n{_last_lines(text)}")
    return ms, text


def kewpie_cleanup(workdir: str) -> None:
    """``kewpie.py --mode=cleanup`` (untimed); log an error if it fails.

    Nothing is run on a directory kewpie has not used yet (no marker).
    """
    if not os.path.exists(os.path.join(workdir, MARKER)):
        return
    rc, _, text = _run_logged([KEWPIE, "--mode=cleanup", f"--workdir={workdir}"],
                              CLEANUP_TIMEOUT)
    if rc != 0:
        get_logger().error(f"kewpie --mode=cleanup --workdir={workdir} exited {rc}; "
                           f"last lines:\n{_last_lines(text)}")


def verify_cluster(workdir: str) -> None:
    """Check every node of cluster.json says Synced with cluster size 3 (BenchError if not)."""
    path = Workdir(workdir).description_file
    try:
        with open(path) as fh:
            servers = json.load(fh)["servers"]
    except (OSError, ValueError, KeyError) as exc:
        raise BenchError(f"cannot read the servers of {path}: {exc}") from exc
    if len(servers) != NODES:
        raise BenchError(f"{path} lists {len(servers)} server(s), not {NODES}")
    bad = []
    for entry in servers:
        status = wsrep_status(entry["socket"])
        if not is_synced(status, NODES, need_ready=False):
            bad.append(f"port {entry['port']}: {_brief(status)}")
    if bad:
        raise BenchError("not every node is Synced in a cluster of 3: " + "; ".join(bad))


def cold_run(workdir: str, base_port: int, verbose: bool) -> float:
    """Delete the caches, time one kewpie start, clean up; return ms."""
    clear_caches(workdir)
    try:
        ms, text = kewpie_start(workdir, base_port, verbose)
        if NO_SNAPSHOT_MARK in text:
            get_logger().warning("cold run left no cluster snapshot; the next warm run "
                                 "will not be warm")
        return ms
    finally:
        kewpie_cleanup(workdir)


def warm_run(workdir: str, base_port: int, verbose: bool) -> float:
    """Time one kewpie start from the snapshot, check the cluster, clean up; return ms."""
    if not has_snapshot(workdir):
        raise BenchError("skipped: no cluster snapshot in cache/galera "
                         "(the cold run before did not leave one)")
    try:
        ms, text = kewpie_start(workdir, base_port, verbose)
        if WARM_FALLBACK_MARK in text:
            line = next(ln for ln in text.splitlines() if WARM_FALLBACK_MARK in ln)
            raise BenchError(f"not warm: the snapshot start failed and kewpie formed the "
                             f"cluster by SST ({ms:.0f} ms): {line}")
        verify_cluster(workdir)
        return ms
    finally:
        kewpie_cleanup(workdir)


def remove_workdir(path: str) -> None:
    """Remove a bench workdir and the /dev/shm directories its links point to."""
    if not os.path.isdir(path):
        return
    for name in os.listdir(path):
        entry = os.path.join(path, name)
        if os.path.islink(entry):
            shutil.rmtree(os.path.realpath(entry), ignore_errors=True)
    shutil.rmtree(path, ignore_errors=True)
    shm = Workdir(path).shm_path
    if os.path.isdir(shm):
        shutil.rmtree(shm, ignore_errors=True)


# ---------------------------------------------------------------- report
def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


def judge_below(name: str, value: float | None, target: float) -> dict[str, object]:
    """A ms target line: PASS when value < target, MISS otherwise (or when unmeasured)."""
    verdict = "PASS" if value is not None and value < target else "MISS"
    shown = "n/a" if value is None else f"{value:.0f} ms"
    return {"name": name, "value": value, "unit": "ms", "target": target,
            "shown": shown, "target_text": f"target < {target:.0f} ms", "verdict": verdict}


def judge_ratio(name: str, value: float | None, target: float) -> dict[str, object]:
    """A ratio target line: PASS when value <= target, MISS otherwise (or when unmeasured)."""
    verdict = "PASS" if value is not None and value <= target else "MISS"
    shown = "n/a" if value is None else f"{value:.2f}"
    return {"name": name, "value": value, "unit": "ratio", "target": target,
            "shown": shown, "target_text": f"target <= {target:.2f}", "verdict": verdict}


def render_report(info: dict[str, str], runs: int, series: list[Series],
                  targets: list[dict[str, object]]) -> str:
    """The final header, table and target lines as text."""
    width = max(len(s.label) for s in series)
    out = [
        "",
        "kewpie Galera cluster startup benchmark (3 nodes, all Synced)",
        f"date:      {info['date']}",
        f"machine:   nproc {info['nproc']}, kernel {info['kernel']}, python {info['python']}",
        f"server:    {info['mariadbd']}",
        f"provider:  {info['galera']}",
        f"runs:      {runs} per configuration, interleaved (reference, cold, warm, reference, ...)",
        f"scale:     {SCALE_NOTE}",
        "",
    ]
    header = f"{'configuration':<{width}}  {'ok':>5}  {'min ms':>8}  {'median ms':>9}  {'max ms':>8}"
    out += [header, "-" * len(header)]
    for s in series:
        st = s.stats()
        ok = f"{len(s.samples_ms)}/{len(s.samples_ms) + len(s.errors)}"
        out.append(f"{s.label:<{width}}  {ok:>5}  {_fmt(st['min']):>8}  {_fmt(st['median']):>9}  "
                   f"{_fmt(st['max']):>8}")
    out.append("")
    for t in targets:
        out.append(f"{t['name']:<18} {t['shown']:>8}   {t['target_text']:<16}   {t['verdict']}")
    return "\n".join(out)


# ---------------------------------------------------------------- main
def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command-line options."""
    p = argparse.ArgumentParser(prog="bench/cluster_startup.py",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=3, metavar="N",
                   help="runs per configuration (default: 3)")
    p.add_argument("--json", metavar="PATH", help="also write the figures to PATH as JSON")
    p.add_argument("--workdir", metavar="DIR",
                   help="kewpie workdir to use and keep (default: a fresh one under /tmp, "
                        "removed at the end)")
    p.add_argument("--base-port", type=int, default=9600, metavar="PORT",
                   help="where kewpie's port leases start (default: 9600)")
    p.add_argument("--ref-base-port", type=int, default=9700, metavar="PORT",
                   help="where the reference cluster's port leases start (default: 9700)")
    p.add_argument("--verbose", action="store_true", help="echo kewpie's own output")
    args = p.parse_args(argv)
    if args.runs < 1:
        p.error("--runs must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark, print the report; return the exit status."""
    args = parse_args(argv)
    log = configure(verbose=False)
    own_workdir = args.workdir is None
    workdir = os.path.abspath(args.workdir) if args.workdir else \
        tempfile.mkdtemp(prefix="kewpie-bench-galera-", dir="/tmp")
    os.makedirs(workdir, mode=0o755, exist_ok=True)
    os.chmod(workdir, 0o755)
    results: dict[str, Series] = {c.key: Series(c.label) for c in CONFIGS}
    try:
        info = machine_info()
        user = default_server_user()
        log.info(f"bench: {args.runs} run(s) per configuration, workdir {workdir}, "
                 f"kewpie ports from {args.base_port}, reference ports from {args.ref_base_port}")
        steps = (
            (REFERENCE, lambda: reference_run(args.ref_base_port, user)),
            (COLD, lambda: cold_run(workdir, args.base_port, args.verbose)),
            (WARM, lambda: warm_run(workdir, args.base_port, args.verbose)),
        )
        for i in range(args.runs):
            for config, step in steps:
                series = results[config.key]
                try:
                    ms = step()
                except BenchError as exc:
                    series.errors.append(str(exc))
                    log.error(f"{config.label}: run {i + 1}/{args.runs} failed: {exc}")
                    continue
                series.samples_ms.append(ms)
                log.info(f"{config.label}: run {i + 1}/{args.runs}: {ms:.0f} ms")
    except BenchError as exc:
        log.error(f"the benchmark cannot run: {exc}")
        return 2
    except KeyboardInterrupt:
        log.error("interrupted")
        return 130
    finally:
        kewpie_cleanup(workdir)
        if own_workdir:
            remove_workdir(workdir)

    warm_med = results[WARM.key].stats()["median"]
    cold_med = results[COLD.key].stats()["median"]
    ref_med = results[REFERENCE.key].stats()["median"]
    ratio = None if cold_med is None or not ref_med else cold_med / ref_med
    targets = [judge_below("warm start", warm_med, TARGET_WARM_MS),
               judge_ratio("cold / reference", ratio, TARGET_COLD_RATIO)]
    series = [results[c.key] for c in CONFIGS]
    print(render_report(info, args.runs, series, targets), flush=True)

    if args.json:
        doc = {"machine": info, "runs": args.runs, "scale_note": SCALE_NOTE,
               "series": {k: {**asdict(s), **s.stats()} for k, s in results.items()},
               "targets": targets}
        with open(args.json, "w") as fh:
            json.dump(doc, fh, indent=2)
            fh.write("\n")
        log.info(f"figures written to {args.json}")
    failed = [s.label for s in series if not s.ok]
    if failed:
        log.error(f"no successful run for: {', '.join(failed)}")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
