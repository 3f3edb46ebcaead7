"""Forked worker processes: the pipe both ways, a worker that fails, and the bounded stop.

Covers: lib/platform/workers.py
"""
import signal
import time

from lib.platform.workers import ready, start_worker, stop_workers


def _echo(conn):
    while True:
        message = conn.recv()
        if message == "stop":
            return
        conn.send(message * 2)


def test_a_worker_answers_over_its_pipe_and_ends_when_told():
    worker = start_worker("kewpie-test-echo", _echo)
    worker.conn.send(21)
    assert ready([worker.conn]) == [worker.conn]
    assert worker.conn.recv() == 42
    worker.conn.send("stop")
    stop_workers([worker], grace=10)
    assert not worker.is_alive() and worker.exitcode == 0


def _fail(conn):
    raise RuntimeError("planted")


def test_a_failing_worker_closes_its_pipe_and_exits_1():
    worker = start_worker("kewpie-test-fail", _fail)
    assert ready([worker.conn]) == [worker.conn]
    try:
        worker.conn.recv()
        raise AssertionError("the pipe should be closed")
    except EOFError:
        pass
    worker.join(timeout=10)
    assert worker.exitcode == 1


def _stubborn(conn):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    conn.send("ignoring SIGTERM")
    while True:
        time.sleep(1)


def test_stop_kills_a_worker_that_ignores_sigterm():
    worker = start_worker("kewpie-test-stubborn", _stubborn)
    assert worker.conn.recv() == "ignoring SIGTERM"
    stop_workers([worker], grace=0.3)
    assert not worker.is_alive() and worker.exitcode == -signal.SIGKILL
