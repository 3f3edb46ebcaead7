"""A crash after a reproducer's last statement is not the next reproducer's: the kept
server is checked for a crash report (or its exit) since it was last found sound before
the next reproducer gets it, and a server that died is replaced by a fresh one.

Covers: lib/replay/execute.py (ReplayBot._crashed_since_kept)
"""
from __future__ import annotations

import os

from lib.replay.execute import ReplayBot, ReplaySettings
from lib.servers.logs import ErrorLog
from lib.servers.codetree import CodeTree

FIXTURE = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "hunt",
                       "crash_signal11.log")


class _Server:
    """A kept server as the check sees it: alive or not, its error log."""

    def __init__(self, path: str, alive: bool = True) -> None:
        self.errlog = ErrorLog(path)
        self.alive = alive

    def is_alive(self) -> bool:
        return self.alive


def _bot() -> ReplayBot:
    return ReplayBot(ReplaySettings(out=None), lambda tree: None)  # type: ignore[arg-type]


def test_a_kept_servers_late_crash_gives_the_next_reproducer_a_fresh_server(tmp_path):
    log = tmp_path / "mysqld.1.err"
    log.write_text("2025-11-25 18:44:23 0 [Note] /usr/sbin/mariadbd: ready for connections.\n")
    tree = CodeTree(basedir="/usr", tools={"server": "/usr/sbin/mariadbd"})
    bot, server = _bot(), _Server(str(log))
    assert not bot._crashed_since_kept(server, tree)      # never judged sound: nothing to say
    bot._sound_at[tree.basedir] = server.errlog.size()
    assert not bot._crashed_since_kept(server, tree)      # sound, nothing new
    with open(log, "a") as fh:                            # the late crash's report
        fh.write(open(FIXTURE).read())
    assert bot._crashed_since_kept(server, tree)
    bot._sound_at[tree.basedir] = server.errlog.size()
    server.alive = False                                  # gone without a report
    assert bot._crashed_since_kept(server, tree)
