"""A forked bot's loop over a stand-in environment and work (worker processes, no
server): each message answered in order, the work's own messages between, the end when
told to stop (not fast) or by a stop signal (fast), and the run's side stopping bots
whether they still listen or not; a bot that died is an error naming its log.

Covers: lib/run/forkedbot.py, lib/platform/workers.py
"""
import functools
import os
import re
import signal
import types

import pytest

from lib.errors import KewpieError
from lib.platform.workers import start_worker
from lib.run.forkedbot import STOP, receive, serve_bot, stop_bots


def _env(tmp_path):
    """What the loop reads of a RunEnvironment; its close says how it was called in a file."""
    def close(fast, bot):
        (tmp_path / f"{bot}.closed").write_text(f"fast={fast}")
    return types.SimpleNamespace(
        config=types.SimpleNamespace(reporting=types.SimpleNamespace(verbose=False)),
        workdir=types.SimpleNamespace(bot_log_file=lambda bot: str(tmp_path / f"{bot}.log")),
        close=close)


class _Doubler:
    """Work that answers ("n", x) with 2x, says ("note", x) first, and leaves a mark when
    closed (before the environment is)."""

    def __init__(self, send, mark):
        self.send = send
        self.mark = mark

    def answer(self, message):
        self.send(("note", message[1]))
        return 2 * message[1]

    def close(self):
        assert not os.path.exists(self.mark.replace(".work", ".closed"))
        open(self.mark, "w").close()


def _bot(tmp_path, bot, conn):
    serve_bot(_env(tmp_path), bot, conn,
              lambda send: _Doubler(send, str(tmp_path / f"{bot}.work")))


def test_a_bot_answers_each_message_and_ends_when_told(tmp_path):
    worker = start_worker("kewpie-test-bot", functools.partial(_bot, tmp_path, "bot0"))
    for x in (1, 5):
        worker.conn.send(("n", x))
        assert worker.conn.recv() == ("note", x)
        assert worker.conn.recv() == 2 * x
    stop_bots([worker], grace=10)
    assert not worker.is_alive() and worker.exitcode == 0
    assert (tmp_path / "bot0.work").exists()
    assert (tmp_path / "bot0.closed").read_text() == "fast=False"


def test_a_bot_interrupted_ends_fast(tmp_path):
    worker = start_worker("kewpie-test-bot", functools.partial(_bot, tmp_path, "bot1"))
    worker.conn.send(("n", 2))
    assert worker.conn.recv() == ("note", 2) and worker.conn.recv() == 4
    os.kill(worker.pid, signal.SIGTERM)   # a stop signal: Interrupted in the bot's loop
    worker.join(timeout=30)
    assert worker.exitcode == 0
    assert (tmp_path / "bot1.work").exists()
    assert (tmp_path / "bot1.closed").read_text() == "fast=True"


def test_stopping_bots_passes_over_one_already_gone(tmp_path):
    gone = start_worker("kewpie-test-bot", functools.partial(_bot, tmp_path, "bot2"))
    gone.conn.send(STOP)
    gone.join(timeout=30)
    gone.conn.close()    # sending to it now raises: passed over
    live = start_worker("kewpie-test-bot", functools.partial(_bot, tmp_path, "bot3"))
    stop_bots([gone, live], grace=10)
    assert not live.is_alive() and live.exitcode == 0
    assert (tmp_path / "bot3.closed").read_text() == "fast=False"


def _dies(conn):
    os._exit(3)


def test_a_bot_that_died_is_an_error_naming_its_log(tmp_path):
    worker = start_worker("kewpie-test-dead", _dies)
    log = re.escape(str(tmp_path / "bot4.log"))
    with pytest.raises(KewpieError, match=rf"^bot bot4 died during trial 7 \(exit code 3\); "
                                          rf"see {log}$"):
        receive(_env(tmp_path), "bot4", worker, "during trial 7")
    assert not worker.is_alive()
