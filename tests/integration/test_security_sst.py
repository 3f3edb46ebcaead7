"""Security issue 12: SST listeners on loopback only, no temp files in /tmp, private option files.

Each test runs the real CLI under ``strace -f`` (bind and file-creating
syscalls only, filtered in the kernel with --seccomp-bpf), so every process
of the run is covered: kewpie, the nodes, the SST scripts, socat, rsync,
mariabackup, and helpers orphaned by a killed kewpie (strace follows them
until they exit).  Attributing syscalls to our own process tree keeps the
/tmp check exact while other tests create files in /tmp at the same time.

The fixture suite ``sst_pair`` is two Galera nodes; with
``--no-cluster-snapshot`` node 1 joins by exactly one full SST.

Covers: lib/servers/galera.py, lib/servers/galera_cluster.py, lib/servers/layout.py
"""
from __future__ import annotations

import grp
import contextlib
import os
import re
import shutil
import signal
import stat
import subprocess
import time
from dataclasses import dataclass
from typing import Callable

import psutil
import pytest

from tests.conftest import FIXTURE_SUITES, KewpieRunner, tagged

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="runs Galera nodes as the mysql user"),
    pytest.mark.skipif(not shutil.which("strace"), reason="strace is not installed"),
    pytest.mark.skipif(not os.path.exists("/usr/lib/galera/libgalera_smm.so"),
                       reason="galera-4 is not installed"),
]

SST_PAIR = (f"--suitepath={FIXTURE_SUITES}", "--suite=sst_pair", "--no-cluster-snapshot")
MARIABACKUP = "--wsrep-sst-method=mariabackup"
TRACED = "bind,mkdir,mkdirat,openat,open,creat"
BIND_RE = re.compile(r"^(\d+)\s+bind\(\d+, \{sa_family=(AF_INET6?),(.*)$")
CREATE_RE = re.compile(r'^(\d+)\s+(mkdir|mkdirat|openat|open|creat)\((?:AT_FDCWD, |\d+, )?"([^"]*)"(.*)$')


@dataclass
class Trace:
    """What strace saw: every AF_INET/AF_INET6 bind, and every creation attempt under /tmp."""

    binds: list[str]
    tmp_creates: list[str]

    def public_binds(self) -> list[str]:
        """Binds to anything but the loopback address."""
        bad = []
        for line in self.binds:
            family, rest = BIND_RE.match(line).group(2, 3)  # type: ignore[union-attr]
            ok = ('inet_addr("127.0.0.1")' in rest if family == "AF_INET"
                  else '"::1"' in rest)
            if not ok:
                bad.append(line)
        return bad


def read_trace(path: str, allowed: tuple[str, ...]) -> Trace:
    """Parse strace -f output; /tmp creations under an allowed prefix are kewpie's own."""
    binds, creates = [], []
    with open(path, errors="replace") as fh:
        for line in fh:
            if BIND_RE.match(line):
                binds.append(line.rstrip())
                continue
            m = CREATE_RE.match(line)
            if not m:
                continue
            call, target, rest = m.group(2, 3, 4)
            if target != "/tmp" and not target.startswith("/tmp/"):
                continue
            if re.search(r"= -1 E[A-Z]+", rest) or (call.startswith("mkdir") and target == "/tmp"):
                continue  # failed (makedirs walking up to /tmp gets EEXIST)
            creating = call in ("mkdir", "mkdirat", "creat") or "O_CREAT" in rest \
                or "O_TMPFILE" in rest
            if creating and not any(target == a or target.startswith(a + "/") for a in allowed):
                creates.append(line.rstrip())
    return Trace(binds, creates)


def allowed_tmp(kewpie: KewpieRunner) -> tuple[str, ...]:
    """Where kewpie may write under /tmp here: the test's workdir and the lock directory."""
    return (os.path.dirname(os.path.abspath(kewpie.workdir)), f"/tmp/kewpie-locks-{os.getuid()}")


def traced_popen(kewpie: KewpieRunner, trace_file: str, *args: str) -> subprocess.Popen:
    """Start kewpie under strace -f, output captured (-q, not -qq: the trace keeps how
    each process ended)."""
    argv = ["strace", "-f", "--seccomp-bpf", "-q", "-e", f"trace={TRACED}", "-o", trace_file,
            *kewpie.cmd(*args)]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=dict(os.environ, KEWPIE_NO_VENV="1"), stdin=subprocess.DEVNULL)


def kewpie_under(strace: subprocess.Popen, timeout: float = 30) -> psutil.Process:
    """The kewpie process strace runs: a child of strace that has executed kewpie.py
    (strace also forks short-lived children of its own, with its own command line --
    kewpie.py among its arguments -- to probe the kernel's seccomp filter before it
    starts the tracee: one taken for kewpie had ended before the test's signal)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            children = psutil.Process(strace.pid).children()
        except psutil.Error:  # strace has not forked yet, or already ended
            children = []
        for child in children:
            try:
                argv = child.cmdline()
                if argv and os.path.basename(argv[0]) != "strace" and \
                        any(a.endswith("kewpie.py") for a in argv):
                    return child
            except psutil.Error:
                pass
        time.sleep(0.05)
    raise AssertionError("kewpie did not start under strace")


def wait_for_sst_listener(kewpie: KewpieRunner, timeout: float = 180) -> psutil.Process:
    """The joiner's socat, once it listens (the mariabackup SST has begun)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for proc in tagged(kewpie.workdir):
            try:
                if proc.name() == "socat" and any(c.status == psutil.CONN_LISTEN
                                                  for c in proc.net_connections(kind="inet")):
                    return proc
            except psutil.Error:
                pass
        time.sleep(0.1)
    raise AssertionError("no SST listener appeared")


def wait_for_tagged(kewpie: KewpieRunner, match: Callable[[psutil.Process], bool], what: str,
                    gone: bool = False, timeout: float = 60) -> psutil.Process | None:
    """Wait until a process of the workdir matches, and return it (with gone: until none
    does; None)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = None
        for proc in tagged(kewpie.workdir):
            try:
                if found is None and match(proc):
                    found = proc
            except psutil.Error:
                pass
        if (found is not None) != gone:
            return found
        time.sleep(0.05)
    raise AssertionError(f"waited {timeout:.0f}s for {what}")


def signal_harness(proc: subprocess.Popen, harness: psutil.Process, trace_file: str,
                   sig: int) -> None:
    """Send sig to kewpie; if it has already ended, fail with what it printed and how
    strace saw it end (the signal and its sender's pid, or its exit status)."""
    try:
        harness.send_signal(sig)
        return
    except psutil.NoSuchProcess:
        pass
    try:
        out, _ = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        out = "(strace still running)"
    with open(trace_file, errors="replace") as fh:
        ends = [line.rstrip() for line in fh
                if line.startswith(f"{harness.pid} ") and ("+++" in line or "---" in line)]
    raise AssertionError(f"kewpie (pid {harness.pid}) ended before the test's signal; "
                         f"strace saw: {ends[-5:]}\nits output:\n{(out or '')[-3000:]}")


def assert_clean(trace: Trace) -> None:
    """At least one SST listener was seen; every bind is loopback; nothing created in /tmp."""
    assert any("htons(" in b for b in trace.binds), "strace saw no bind at all"
    assert trace.public_binds() == [], "binds off the loopback:\n" + "\n".join(trace.public_binds())
    assert trace.tmp_creates == [], "created under /tmp:\n" + "\n".join(trace.tmp_creates[:20])


@pytest.mark.parametrize("method", ["rsync", "mariabackup"])
def test_sst_binds_loopback_only_and_writes_nothing_to_tmp(kewpie, tmp_path, method):
    trace_file = str(tmp_path / "strace.out")
    proc = traced_popen(kewpie, trace_file, *SST_PAIR, f"--wsrep-sst-method={method}")
    out, _ = proc.communicate(timeout=400)
    assert proc.returncode == 0, out[-3000:]
    trace = read_trace(trace_file, allowed_tmp(kewpie))
    assert_clean(trace)
    sst_port_binds = [b for b in trace.binds if "htons(" in b]
    assert len(sst_port_binds) >= 6  # clients, gcomm, IST, SST of two nodes


def test_sigterm_mid_sst_leaves_nothing_in_tmp(kewpie, tmp_path):
    trace_file = str(tmp_path / "strace.out")
    proc = traced_popen(kewpie, trace_file, *SST_PAIR, MARIABACKUP)
    harness = kewpie_under(proc)
    wait_for_sst_listener(kewpie)
    donor = wait_for_tagged(kewpie, lambda p: "--role donor" in " ".join(p.cmdline()),
                            "the donor's SST script")  # the donor is streaming (or about to)
    assert donor is not None
    # held while kewpie is signalled: on a loaded machine the transfer, the join, the test
    # and kewpie's exit could all end before this process's signal (the SST is ~1 s)
    with contextlib.suppress(psutil.NoSuchProcess):
        donor.suspend()
    try:
        signal_harness(proc, harness, trace_file, signal.SIGTERM)
    finally:
        with contextlib.suppress(psutil.NoSuchProcess):
            donor.resume()
    out, _ = proc.communicate(timeout=120)  # strace ends when the last helper has gone
    assert proc.returncode == 143, out[-3000:]  # strace exits with kewpie's status
    assert tagged(kewpie.workdir) == []
    assert_clean(read_trace(trace_file, allowed_tmp(kewpie)))


def test_sigkill_mid_sst_leftovers_are_loopback_and_cleanup_ends_them(kewpie, tmp_path):
    trace_file = str(tmp_path / "strace.out")
    proc = traced_popen(kewpie, trace_file, *SST_PAIR, MARIABACKUP)
    harness = kewpie_under(proc)
    wait_for_sst_listener(kewpie)
    # at once: the joiner still waits for its donor's first byte
    signal_harness(proc, harness, trace_file, signal.SIGKILL)
    harness.wait(10)
    wait_for_tagged(kewpie, lambda p: p.name() == "mariadbd", "the nodes to die with kewpie "
                    "(parent-death signal)", gone=True)
    leftovers = tagged(kewpie.workdir)
    listening = []
    for p in leftovers:
        try:
            listening += [c.laddr.ip for c in p.net_connections(kind="inet")
                          if c.status == psutil.CONN_LISTEN]
        except psutil.Error:
            pass
    assert set(listening) <= {"127.0.0.1"}, listening
    # The vardirs are still there: the option files holding the SST password are private.
    check_cnf_modes(kewpie.workdir)
    cleanup = kewpie.run("--mode=cleanup", timeout=120)
    assert cleanup.returncode == 0, cleanup.stdout[-2000:]
    assert tagged(kewpie.workdir) == []
    proc.communicate(timeout=60)
    assert_clean(read_trace(trace_file, allowed_tmp(kewpie)))


def check_cnf_modes(workdir: str) -> list[str]:
    """Every vardir's my.cnf is 0640 root:mysql (kewpie runs as root); returns their paths."""
    mysql_gid = grp.getgrnam("mysql").gr_gid
    cnfs = []
    for dirpath, dirnames, files in os.walk(os.path.realpath(os.path.join(workdir, "bot0"))):
        if "my.cnf" in files:
            path = os.path.join(dirpath, "my.cnf")
            st = os.stat(path)
            assert (stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid) == (0o640, 0, mysql_gid), \
                f"{path}: mode {stat.S_IMODE(st.st_mode):04o} uid {st.st_uid} gid {st.st_gid}"
            assert "kewpie-sst-pw" in open(path).read()
            cnfs.append(path)
        dirnames[:] = [d for d in dirnames if d.startswith("var_")]
    assert cnfs, f"no my.cnf under {workdir}/bot0"
    return cnfs


def test_option_files_are_private_and_scripts_still_work(kewpie):
    proc = kewpie.run(*SST_PAIR, "--start-and-exit", timeout=300)
    try:
        assert proc.returncode == 0, proc.stdout[-3000:]
        cnfs = check_cnf_modes(kewpie.workdir)
        described = os.path.join(kewpie.workdir, "cluster.json")
        assert stat.S_IMODE(os.stat(described).st_mode) == 0o600
        for cnf in cnfs:
            vardir = os.path.dirname(cnf)
            # mariadbd and the SST scripts read it as mysql (group), the scripts as root
            assert subprocess.run(["runuser", "-u", "mysql", "--", "test", "-r", cnf]).returncode == 0
            use = subprocess.run([os.path.join(vardir, "use"), "-N", "-e", "SELECT 1"],
                                 capture_output=True, text=True, timeout=30)
            assert use.stdout.strip() == "1", use.stderr
            nobody = subprocess.run(["runuser", "-u", "nobody", "--", "cat", cnf],
                                    capture_output=True, text=True)
            assert nobody.returncode != 0
    finally:
        kewpie.run("--mode=cleanup", timeout=120)
