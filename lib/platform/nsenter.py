"""Entering a named network namespace for one fork (``setns`` on the calling thread).

``setns(CLONE_NEWNET)`` moves only the calling thread; a child forked
meanwhile is born in the namespace, and the thread then goes back.  So a
server keeps everything :func:`lib.platform.process.spawn` gives it (its own
session, the user switch, the parent-death signal tied to the launcher
thread, the environment tags) and simply lives on another network.
"""
from __future__ import annotations

import ctypes
import os
from contextlib import contextmanager
from typing import Iterator

from ..errors import NetworkError

NETNS_DIR = "/run/netns"
CLONE_NEWNET = 0x40000000


@contextmanager
def entered(name: str) -> Iterator[None]:
    """Move the calling thread into namespace name for the block (children forked in
    it are born there); the thread goes back to its own namespace afterwards."""
    libc = ctypes.CDLL(None, use_errno=True)
    own = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    try:
        try:
            target = os.open(os.path.join(NETNS_DIR, name), os.O_RDONLY)
        except OSError as exc:
            raise NetworkError(f"network namespace {name} is gone: {exc}") from None
        try:
            if libc.setns(target, CLONE_NEWNET) != 0:
                err = ctypes.get_errno()
                raise NetworkError(f"cannot enter network namespace {name}: {os.strerror(err)}")
        finally:
            os.close(target)
        try:
            yield
        finally:
            if libc.setns(own, CLONE_NEWNET) != 0:  # pragma: no cover - the kernel refusing
                raise NetworkError("cannot return to the harness's own network namespace")
    finally:
        os.close(own)


__all__ = ("NETNS_DIR", "entered")
