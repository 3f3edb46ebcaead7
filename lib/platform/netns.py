"""Servers as hosts: one network namespace per server, joined by a bridge kewpie owns.

A suite with ``network = 'namespaces'`` gets, per bot, a *hub* namespace
holding a bridge (``br0``) and one namespace per server, linked to the
bridge by a veth pair (``eth0`` in the server's namespace, ``s<i>`` in the
hub).  Nothing of it is in the machine's own namespace: the host's
``ip link`` shows no new interface, the bridge has no uplink, the
namespaces have no route but their /24, so nothing outside kewpie's
namespaces can reach a server's address.  The harness still talks SQL over
each server's unix socket (a socket file works across network namespaces).

Names start with a prefix derived from the workdir (``kw<sha1[:8]>-``), so
:func:`sweep` removes what a SIGKILLed run left, and never what another
workdir made.  Every name made is also recorded in ``workdir/netns.json``.

Processes enter a namespace with :func:`lib.platform.nsenter.entered` (``setns`` on the forking
thread: the child inherits the namespace, the thread goes back), so a server
keeps the parent-death signal and tags :func:`lib.platform.process.spawn`
gives it.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import threading
from dataclasses import dataclass
from typing import Callable, Sequence

from ..errors import NetworkError
from .logsetup import get_logger
from .nsenter import NETNS_DIR
from .safedirs import read_small_file

SUBNET = "10.77.0"          # private /24; every hub is its own island, so runs may share it
FIRST_HOST = 11             # s0 is 10.77.0.11
BRIDGE = "br0"
NODE_IF = "eth0"
TIMEOUT = 20.0


def prefix_for(workdir: str) -> str:
    """``kw<8 hex>``: the name prefix of everything a workdir's runs make."""
    return "kw" + hashlib.sha1(os.path.realpath(workdir).encode()).hexdigest()[:8]


def address_of(index: int) -> str:
    """The address of server index inside its namespace."""
    return f"{SUBNET}.{FIRST_HOST + index}"


def run_ip(args: Sequence[str], input: str | None = None, check: bool = True) -> str:
    """Run ``ip`` (or, with args starting ``netns exec``, a command in a namespace)."""
    from .tools import run_tool
    try:
        result = run_tool(["ip", *args], timeout=TIMEOUT, input=input)
    except OSError as exc:
        raise NetworkError(f"cannot run ip: {exc} (install iproute2: scripts/setup.sh)") from None
    if check and not result.ok:
        raise NetworkError(f"ip {' '.join(args)} failed ({result.returncode}): "
                           f"{result.output.strip()[:300]}")
    return result.stdout


def in_ns(name: str, argv: Sequence[str], input: str | None = None, check: bool = True) -> str:
    """Run argv inside namespace name (``ip netns exec``)."""
    return run_ip(["netns", "exec", name, *argv], input=input, check=check)


def list_namespaces() -> list[str]:
    """Names of every named network namespace of the machine: the entries of
    NETNS_DIR, which is what ``ip netns list`` prints, without its ~5 ms of fork and
    exec at every run's start and end."""
    try:
        return sorted(os.listdir(NETNS_DIR))
    except (FileNotFoundError, NotADirectoryError):
        return []


def _probe(name: str, argv: Sequence[str], failed: Callable[[NetworkError], str]) -> str:
    """Run argv in a scratch namespace (made and removed here): '' if it worked, else why
    (failed(error) says it when argv fails)."""
    probe = f"kwprobe-{os.getpid()}-{name}"
    try:
        run_ip(["netns", "add", probe])
    except NetworkError as exc:
        return f"cannot create a network namespace: {exc}"
    try:
        in_ns(probe, list(argv))
        return ""
    except NetworkError as exc:
        return failed(exc)
    finally:
        run_ip(["netns", "delete", probe], check=False)


def unavailable_reason() -> str:
    """Why this machine cannot make kewpie's namespaces ('' when it can)."""
    if os.geteuid() != 0:
        return "network namespaces need root (kewpie runs as uid %d)" % os.geteuid()
    for tool, package in (("ip", "iproute2"), ("nft", "nftables")):
        if shutil.which(tool) is None:
            return f"no `{tool}` command: install {package} (scripts/setup.sh does)"
    return _probe(str(threading.get_ident() % 10000), ["nft", "add", "table", "inet", "kewpie"],
                  lambda exc: f"nftables does not work in a namespace: {exc}")


def netem_reason() -> str:
    """Why latency cannot be added here ('' when tc netem works)."""
    def no_netem(exc: NetworkError) -> str:
        """What tc's failure means."""
        said = str(exc).rsplit(": ", 1)[-1].strip()
        return ("this kernel has no netem queueing discipline (CONFIG_NET_SCH_NETEM), so tc "
                f"cannot delay packets (tc: {said})")
    return _probe("netem", ["tc", "qdisc", "add", "dev", "lo", "root", "netem", "delay", "1ms"],
                  no_netem)


@dataclass(frozen=True)
class NetHost:
    """One server's place on the network: its namespace and address."""

    namespace: str
    address: str
    index: int


class Record:
    """``workdir/netns.json``: the namespaces a workdir's runs made and not yet removed."""

    def __init__(self, path: str | None) -> None:
        self.path = path
        self._lock = threading.Lock()

    def _read(self) -> list[str]:
        if not self.path:
            return []
        text = read_small_file(self.path, limit=1 << 20)  # never through a link
        try:
            names = json.loads(text or "").get("namespaces", [])
        except (ValueError, AttributeError):
            return []
        return [n for n in names if isinstance(n, str)] if isinstance(names, list) else []

    def names(self) -> list[str]:
        """Recorded names."""
        with self._lock:
            return self._read()

    def update(self, add: Sequence[str] = (), remove: Sequence[str] = ()) -> None:
        """Add and remove names (written atomically, mode 0600; nothing is written when
        nothing changes)."""
        if not self.path:
            return
        with self._lock:
            before = self._read()
            names = [n for n in before if n not in remove]
            names += [n for n in add if n not in names]
            if names == before:
                return
            tmp = f"{self.path}.tmp-{os.getpid()}-{threading.get_ident()}"
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            try:
                fd = os.open(tmp, flags, 0o600)
            except FileExistsError:  # left by a killed writer of the same pid and thread
                os.unlink(tmp)
                fd = os.open(tmp, flags, 0o600)
            with os.fdopen(fd, "w") as fh:
                json.dump({"namespaces": names}, fh, indent=2)
            os.replace(tmp, self.path)


class HostNetwork:
    """One bot's hub and server namespaces (``<prefix>-hub``, ``<prefix>-s<i>``)."""

    def __init__(self, prefix: str, record: Record | None = None) -> None:
        self.prefix = prefix
        self.record = record or Record(None)
        self.hub = f"{prefix}-hub"
        self.hosts: list[NetHost] = []

    def namespace_of(self, index: int) -> str:
        """Server index's namespace name."""
        return f"{self.prefix}-s{index}"

    def create(self, count: int) -> list[NetHost]:
        """Make the hub, its bridge and count server namespaces linked to it."""
        log = get_logger()
        self.destroy()  # leftovers of an earlier set of this bot
        names = [self.hub] + [self.namespace_of(i) for i in range(count)]
        self.record.update(add=names)
        try:
            run_ip(["netns", "add", self.hub])
            hub_batch = [f"link add {BRIDGE} type bridge", f"link set {BRIDGE} up",
                         "link set lo up"]
            run_ip(["-n", self.hub, "-batch", "-"], input="\n".join(hub_batch) + "\n")
            hosts = []
            for i in range(count):
                ns, addr = self.namespace_of(i), address_of(i)
                run_ip(["netns", "add", ns])
                run_ip(["-n", self.hub, "link", "add", f"s{i}", "type", "veth", "peer", "name",
                        NODE_IF, "netns", ns])
                run_ip(["-n", self.hub, "link", "set", f"s{i}", "master", BRIDGE, "up"])
                run_ip(["-n", ns, "-batch", "-"], input=(
                    f"link set lo up\naddr add {addr}/24 dev {NODE_IF}\n"
                    f"link set {NODE_IF} up\n"))
                hosts.append(NetHost(ns, addr, i))
            self.hosts = hosts
        except BaseException:
            self.destroy()
            raise
        log.debug(f"network namespaces {', '.join(names)} ready ({SUBNET}.0/24 on {self.hub})")
        return list(self.hosts)

    def destroy(self) -> list[str]:
        """Remove the hub and every server namespace of this prefix (links go with them)."""
        gone = remove_namespaces(self.prefix + "-")
        self.record.update(remove=gone + [self.hub] + [h.namespace for h in self.hosts])
        self.hosts = []
        return gone


def remove_namespaces(prefix: str) -> list[str]:
    """Delete every namespace whose name starts with prefix; returns the names deleted."""
    if shutil.which("ip") is None:
        return []
    doomed = sorted(n for n in list_namespaces() if n.startswith(prefix))
    problems = []
    for name in doomed:
        try:
            run_ip(["netns", "delete", name])
        except NetworkError as exc:
            problems.append(str(exc))
    if problems:
        raise NetworkError(f"could not remove {len(problems)} namespace(s): {problems[0]}")
    return doomed


def sweep(workdir: str, record_path: str | None) -> list[str]:
    """Remove every namespace a run of workdir left behind (by prefix and record)."""
    if not os.path.isdir(NETNS_DIR) or shutil.which("ip") is None:
        return []
    record = Record(record_path)
    gone = remove_namespaces(prefix_for(workdir) + "-")
    record.update(remove=gone + record.names())
    if gone:
        get_logger().info(f"removed network namespaces left by an earlier run: {', '.join(gone)}")
    return gone
