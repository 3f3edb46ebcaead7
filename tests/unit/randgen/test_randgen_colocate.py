"""One-thread randgen runs: the client thread and the server's connection thread on one CPU.

Covers: lib/randgen/colocate.py
"""
import os
import threading

import pytest

from lib.randgen.colocate import colocate, is_local, server_thread
from lib.randgen.connection import ConnectionSpec


def test_local_servers_only():
    assert is_local(ConnectionSpec(unix_socket="/tmp/x.sock"))
    assert is_local(ConnectionSpec(host="localhost")) and is_local(ConnectionSpec(host="::1"))
    assert not is_local(ConnectionSpec(host="10.1.2.3"))


def test_server_thread_from_the_processlist_or_none():
    assert server_thread(lambda sql: 4242) == 4242
    assert server_thread(lambda sql: None) is None

    def no_tid_column(sql):
        raise RuntimeError("Unknown column 'TID'")
    assert server_thread(no_tid_column) is None


def test_nothing_to_pin_without_a_thread():
    assert colocate(None) is None
    assert colocate(2 ** 30) is None  # no such thread: not pinned, no error


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs")
def test_pins_both_threads_to_one_cpu_and_gives_them_back():
    before = os.sched_getaffinity(0)
    ready, done = threading.Event(), threading.Event()
    other = threading.Thread(target=lambda: (ready.set(), done.wait(10)))
    other.start()
    ready.wait(5)
    try:
        restore = colocate(other.native_id)
        assert restore is not None
        pinned = os.sched_getaffinity(0)
        assert len(pinned) == 1 and os.sched_getaffinity(other.native_id) == pinned
        restore()
        assert os.sched_getaffinity(0) == before
        assert os.sched_getaffinity(other.native_id) == before
    finally:
        done.set()
        other.join()
