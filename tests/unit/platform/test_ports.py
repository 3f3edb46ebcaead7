"""Unit tests for lib/platform/ports.py: port block leases via flock plus a bind probe.

Covers: lib/platform/ports.py
"""
import fcntl
import os
import random
import signal
import socket
import stat
import subprocess
import sys

import pytest

from lib.config import ROOT
from lib.errors import UsageError, PortLeaseError
from lib.platform.ports import (
    BLOCK_SIZE, PortLease, PortLeaser, align_up, ensure_lock_dir, port_is_free,
)


def lease_is_held(lock_path: str) -> bool:
    """True when some process (a run or a server) holds the lease file's lock."""
    try:
        fd = os.open(lock_path, os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False

LOW, HIGH = 47000, 49000  # below the usual ephemeral range on most hosts; checked by port_is_free


@pytest.fixture
def lock_dir(tmp_path):
    return str(tmp_path / "locks")


@pytest.fixture
def base_port():
    """A block-aligned base port with a few free blocks above it."""
    rng = random.Random()
    for _ in range(50):
        base = align_up(rng.randrange(LOW, HIGH), BLOCK_SIZE)
        if all(port_is_free(p) for p in range(base, base + 4 * BLOCK_SIZE)):
            return base
    pytest.skip("no free port range found between 47000 and 49000")


@pytest.fixture
def leases():
    """Leases taken by a test; released afterwards."""
    taken = []
    yield taken
    for lease in taken:
        lease.release()


# ---------------------------------------------------------------- align_up

@pytest.mark.parametrize("port, block, expected", [
    (9300, 4, 9300), (9301, 4, 9304), (9303, 4, 9304), (9304, 4, 9304),
    (0, 4, 0), (1, 4, 4), (5, 8, 8), (16, 8, 16), (7, 1, 7),
])
def test_align_up(port, block, expected):
    assert align_up(port, block) == expected


def test_align_up_default_block():
    assert align_up(47001) == 47004
    assert align_up(47001) % BLOCK_SIZE == 0


# ---------------------------------------------------------------- leasing

def test_lease_block_shape(lock_dir, base_port, leases):
    leaser = PortLeaser(lock_dir, base_port=base_port)
    lease = leaser.lease()
    leases.append(lease)
    assert lease.first % BLOCK_SIZE == 0
    assert lease.first >= base_port
    assert lease.size == BLOCK_SIZE
    assert lease.ports == list(range(lease.first, lease.first + BLOCK_SIZE))
    assert lease.port(0) == lease.first
    assert lease.port(BLOCK_SIZE - 1) == lease.first + BLOCK_SIZE - 1
    assert lease.held
    assert lease.lock_path == os.path.join(lock_dir, f"port-{lease.first}.lock")
    assert lease_is_held(lease.lock_path)
    with open(lease.lock_path) as fh:
        assert fh.read().strip() == str(os.getpid())


@pytest.mark.parametrize("index", [-1, BLOCK_SIZE, 100])
def test_lease_port_index_out_of_range(index):
    lease = PortLease(first=47000, size=BLOCK_SIZE, lock_path="/nonexistent", fd=-1)
    with pytest.raises(IndexError):
        lease.port(index)


def test_unaligned_base_port_is_rounded_up(lock_dir, base_port, leases):
    leaser = PortLeaser(lock_dir, base_port=base_port - 3)
    lease = leaser.lease()
    leases.append(lease)
    assert lease.first % BLOCK_SIZE == 0
    assert lease.first >= base_port


def test_one_leaser_gives_distinct_blocks(lock_dir, base_port, leases):
    leaser = PortLeaser(lock_dir, base_port=base_port)
    for _ in range(3):
        leases.append(leaser.lease())
    firsts = [lease.first for lease in leases]
    assert len(set(firsts)) == 3
    assert firsts == sorted(firsts)


def test_two_leasers_on_one_lock_dir_never_share_a_block(lock_dir, base_port, leases):
    a = PortLeaser(lock_dir, base_port=base_port)
    b = PortLeaser(lock_dir, base_port=base_port)
    for _ in range(3):
        leases.append(a.lease())
        leases.append(b.lease())
    firsts = [lease.first for lease in leases]
    assert len(set(firsts)) == len(firsts)
    for x in leases:
        for y in leases:
            if x is not y:
                assert not set(x.ports) & set(y.ports)


def test_block_with_a_foreign_listener_is_skipped(lock_dir, base_port, leases):
    foreign = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        foreign.bind(("127.0.0.1", base_port + 2))
        foreign.listen(1)
        assert not port_is_free(base_port + 2)
        lease = PortLeaser(lock_dir, base_port=base_port).lease()
        leases.append(lease)
        assert base_port + 2 not in lease.ports
        assert lease.first >= base_port + BLOCK_SIZE
    finally:
        foreign.close()


def test_skipped_block_lock_is_not_left_held(lock_dir, base_port, leases):
    foreign = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        foreign.bind(("127.0.0.1", base_port))
        foreign.listen(1)
        leases.append(PortLeaser(lock_dir, base_port=base_port).lease())
        assert not lease_is_held(os.path.join(lock_dir, f"port-{base_port}.lock"))
    finally:
        foreign.close()


def test_release_frees_the_block(lock_dir, base_port, leases):
    lease = PortLeaser(lock_dir, base_port=base_port).lease()
    first, path = lease.first, lease.lock_path
    lease.release()
    assert not lease.held
    assert lease.fd == -1
    assert not lease_is_held(path)
    lease.release()  # idempotent
    again = PortLeaser(lock_dir, base_port=first).lease()
    leases.append(again)
    assert again.first == first


def test_lease_is_held_missing_file(tmp_path):
    assert not lease_is_held(str(tmp_path / "port-1.lock"))


def test_lease_is_held_probe_does_not_take_the_lock(lock_dir, base_port, leases):
    lease = PortLeaser(lock_dir, base_port=base_port).lease()
    path = lease.lock_path
    lease.release()
    assert not lease_is_held(path)
    assert not lease_is_held(path)  # the probe dropped its own lock
    leases.append(PortLeaser(lock_dir, base_port=lease.first).lease())
    assert leases[-1].first == lease.first


CHILD = """
import sys, time
sys.path.insert(0, {root!r})
from lib.platform.ports import PortLeaser
lease = PortLeaser({lock_dir!r}, base_port={base}).lease()
print(lease.first, lease.lock_path, flush=True)
time.sleep(120)
"""


def test_lease_of_a_killed_process_frees_itself(lock_dir, base_port, leases):
    code = CHILD.format(root=ROOT, lock_dir=lock_dir, base=base_port)
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    try:
        line = child.stdout.readline()
        assert line, f"child printed nothing: {child.stderr.read() if child.poll() is not None else ''}"
        first_text, path = line.split()
        first = int(first_text)
        assert first >= base_port
        assert lease_is_held(path)
        with open(path) as fh:
            assert fh.read().strip() == str(child.pid)
        # While the child lives, its block is not handed out here.
        mine = PortLeaser(lock_dir, base_port=first).lease()
        leases.append(mine)
        assert mine.first != first
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        assert child.returncode == -signal.SIGKILL
        assert not lease_is_held(path)
        taken = PortLeaser(lock_dir, base_port=first).lease()
        leases.append(taken)
        assert taken.first == first
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(timeout=30)
        child.stdout.close()
        child.stderr.close()


# ---------------------------------------------------------------- limits

def test_max_port_too_small_raises(lock_dir, base_port):
    with pytest.raises(PortLeaseError, match=str(base_port)):
        PortLeaser(lock_dir, base_port=base_port, max_port=base_port + BLOCK_SIZE - 1).lease()


def test_exhausted_range_raises(lock_dir, base_port, leases):
    leaser = PortLeaser(lock_dir, base_port=base_port, max_port=base_port + BLOCK_SIZE)
    leases.append(leaser.lease())
    assert leases[0].first == base_port
    with pytest.raises(PortLeaseError, match="no free block"):
        leaser.lease()
    other = PortLeaser(lock_dir, base_port=base_port, max_port=base_port + BLOCK_SIZE)
    with pytest.raises(PortLeaseError):
        other.lease()


# ---------------------------------------------------------------- lock directory

def test_new_lock_dir_is_not_world_writable(lock_dir):
    PortLeaser(lock_dir)
    mode = stat.S_IMODE(os.stat(lock_dir).st_mode)
    assert not mode & 0o002
    assert mode & 0o700 == 0o700


def test_world_writable_lock_dir_is_refused(tmp_path):
    """Anyone may have planted links in a world-writable lock dir: refuse, never reuse."""
    path = tmp_path / "open"
    path.mkdir()
    os.chmod(path, 0o777)
    with pytest.raises(UsageError) as info:
        ensure_lock_dir(str(path))
    assert str(path) in str(info.value)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o777  # left as found


def test_lock_files_are_private(lock_dir, base_port, leases):
    lease = PortLeaser(lock_dir, base_port=base_port).lease()
    leases.append(lease)
    assert not stat.S_IMODE(os.stat(lease.lock_path).st_mode) & 0o077


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to chown the directory")
def test_lock_dir_owned_by_someone_else_is_refused(tmp_path):
    path = tmp_path / "foreign"
    path.mkdir()
    os.chown(path, 65534, 65534)
    with pytest.raises(PortLeaseError, match="--lock-dir"):
        ensure_lock_dir(str(path))


# ---------------------------------------------------------------- spans

def test_span_holds_every_block_so_a_block_lease_skips_it(lock_dir, base_port, leases):
    span = PortLeaser(lock_dir, base_port=base_port).lease_span(2 * BLOCK_SIZE + 1)
    leases.append(span)
    assert span.first == base_port and span.size == 3 * BLOCK_SIZE
    assert [b.first for b in span.blocks] == [base_port + i * BLOCK_SIZE for i in range(3)]
    block = PortLeaser(lock_dir, base_port=base_port).lease()
    leases.append(block)
    assert block.first >= span.first + span.size
    span.release()
    assert not any(lease_is_held(b.lock_path) for b in span.blocks)


def test_span_starts_on_its_origin_and_alignment(lock_dir, base_port, leases):
    leaser = PortLeaser(lock_dir, base_port=base_port)
    origin = base_port + 2 * BLOCK_SIZE
    span = leaser.lease_span(BLOCK_SIZE, origin=origin, align=5 * BLOCK_SIZE)
    leases.append(span)
    assert (span.first - origin) % (5 * BLOCK_SIZE) == 0 and span.first >= base_port


def test_span_moves_past_a_held_block(lock_dir, base_port, leases):
    held = PortLeaser(lock_dir, base_port=base_port + BLOCK_SIZE).lease()
    leases.append(held)
    span = PortLeaser(lock_dir, base_port=base_port).lease_span(2 * BLOCK_SIZE,
                                                                 align=2 * BLOCK_SIZE)
    leases.append(span)
    assert span.first >= held.first + BLOCK_SIZE
    assert not lease_is_held(os.path.join(lock_dir, f"port-{base_port}.lock"))


def test_span_of_unaligned_blocks_is_refused(lock_dir, base_port):
    with pytest.raises(ValueError):
        PortLeaser(lock_dir, base_port=base_port).lease_span(8, align=6)
