"""Port leases: a file lock per port block plus a bind probe.

A lease is a block of ``BLOCK_SIZE`` consecutive ports starting at a multiple
of ``BLOCK_SIZE`` (so runs with different ``--base-port`` values still agree
on block boundaries).  Holding a lease means holding an exclusive ``flock``
on ``<lockdir>/port-<first>.lock``.  The lock's file descriptor is also handed
to the server processes that use the ports, so:

- two kewpie runs on one host never get the same block (the lock);
- a port some foreign process listens on is skipped (the bind probe);
- a crashed run's leases free themselves when the last holder exits
  (the kernel drops ``flock`` locks with the last open descriptor), while
  servers left running by ``--start-and-exit`` keep their ports leased.
"""
from __future__ import annotations

import errno
import fcntl
import os
import socket
from dataclasses import dataclass

from ..errors import PortLeaseError
from .logsetup import get_logger
from .portbase import DEFAULT_BASE_PORT
from .safedirs import UnsafeLockDirError, make_dir

BLOCK_SIZE = 4
MAX_PORT = 65000
LOCK_DIR_MODE = 0o711


def default_lock_dir() -> str:
    """The shared, per-user lock directory for port leases."""
    return f"/tmp/kewpie-locks-{os.getuid()}"


def ensure_lock_dir(path: str) -> str:
    """Create the lock directory (mode 0711, ours) or check the existing one is safe.

    An existing one must be a real directory (not a link) of ours that
    neither group nor others may write (a planted lock file could be a link
    root would write through); otherwise one error line says what to do.
    """
    path = os.path.abspath(path)
    os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)  # --lock-dir's parents
    return make_dir(path, LOCK_DIR_MODE, error=UnsafeLockDirError,
                    remedy="remove it (as its owner: rm -rf " + path + ") or use --lock-dir "
                           "to choose another")


def port_is_free(port: int, host: str = "127.0.0.1") -> bool:
    """True when nothing listens on host:port (we can bind it ourselves)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        return True
    except OSError as exc:
        if exc.errno in (errno.EADDRINUSE, errno.EACCES, errno.EADDRNOTAVAIL):
            return False
        raise
    finally:
        sock.close()


def align_up(port: int, block: int = BLOCK_SIZE) -> int:
    """Round a port up to the next block boundary."""
    return ((port + block - 1) // block) * block


@dataclass
class PortLease:
    """A leased block of ports; ``fd`` holds the flock."""

    first: int
    size: int
    lock_path: str
    fd: int

    @property
    def ports(self) -> list[int]:
        """All ports of the block."""
        return list(range(self.first, self.first + self.size))

    def port(self, index: int) -> int:
        """The index-th port of the block (0 = client port)."""
        if not 0 <= index < self.size:
            raise IndexError(f"port index {index} outside a block of {self.size}")
        return self.first + index

    @property
    def held(self) -> bool:
        """True while this process still holds the lock descriptor."""
        return self.fd >= 0

    def release(self) -> None:
        """Drop our hold on the lease (servers that inherited it may still hold it)."""
        if self.fd >= 0:
            try:
                os.close(self.fd)
            finally:
                self.fd = -1

    def __enter__(self) -> "PortLease":
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


@dataclass
class PortSpan:
    """Several consecutive leased blocks: one range of ports for a tool that needs more
    than a block (MariaDB's own mysql-test-run.pl); each block keeps its own lock, so
    kewpie's one-block leases never overlap it."""

    first: int
    size: int
    blocks: list[PortLease]

    def release(self) -> None:
        """Drop every block of the span."""
        for block in self.blocks:
            block.release()

    def __enter__(self) -> "PortSpan":
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


class PortLeaser:
    """Hands out port blocks from a shared lock directory."""

    def __init__(self, lock_dir: str, base_port: int = DEFAULT_BASE_PORT,
                 block_size: int = BLOCK_SIZE, max_port: int = MAX_PORT) -> None:
        self.lock_dir = ensure_lock_dir(lock_dir)
        self.base_port = base_port
        self.block_size = block_size
        self.max_port = max_port
        self._next = align_up(base_port, block_size)

    def _try_block(self, first: int) -> PortLease | None:
        path = os.path.join(self.lock_dir, f"port-{first}.lock")
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return None
        if not all(port_is_free(p) for p in range(first, first + self.block_size)):
            os.close(fd)
            return None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        return PortLease(first=first, size=self.block_size, lock_path=path, fd=fd)

    def lease(self) -> PortLease:
        """Lease the next free block at or above the base port."""
        first = self._next
        while first + self.block_size <= self.max_port:
            lease = self._try_block(first)
            first += self.block_size
            if lease:
                self._next = first
                get_logger().debug("leased ports %d-%d (%s)", lease.first,
                                   lease.first + lease.size - 1, lease.lock_path)
                return lease
        raise PortLeaseError(f"no free block of {self.block_size} ports between "
                             f"{self.base_port} and {self.max_port}; try another --base-port")

    def lease_span(self, count: int, origin: int = 0, align: int = BLOCK_SIZE) -> PortSpan:
        """Lease count consecutive ports (whole blocks) starting at a port p >= the base
        port with p = origin (mod align); origin and align are multiples of the block."""
        if self.block_size != BLOCK_SIZE or origin % BLOCK_SIZE or align % BLOCK_SIZE:
            raise ValueError("a span is made of whole blocks of the lock directory's size")
        size = align_up(count)
        first = self.base_port + (origin - self.base_port) % align
        while first + size <= self.max_port:
            blocks: list[PortLease] = []
            for start in range(first, first + size, BLOCK_SIZE):
                block = self._try_block(start)
                if block is None:
                    break
                blocks.append(block)
            if len(blocks) * BLOCK_SIZE == size:
                get_logger().debug("leased ports %d-%d (%d blocks)", first, first + size - 1,
                                   len(blocks))
                return PortSpan(first=first, size=size, blocks=blocks)
            for block in blocks:
                block.release()
            first += align
        raise PortLeaseError(f"no free span of {size} ports between {self.base_port} and "
                             f"{self.max_port}; try another --base-port")
