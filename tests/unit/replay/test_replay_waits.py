"""A running reproducer that only waits (SLEEP, a row lock, a metadata lock) told from one
that works, and the lanes that lend a waiting bot's place to another bot.

Covers: lib/replay/waits.py (waiting), lib/replay/schedule.py (Lanes)
"""
from lib.replay.schedule import Lanes
from lib.replay.waits import waiting

SYSTEM = [(1, "system user", "Daemon", "InnoDB purge coordinator"),
          (2, "event_scheduler", "Daemon", "Waiting on empty queue")]


def test_sleep_row_lock_and_metadata_lock_are_waits():
    assert waiting(SYSTEM + [(9, "root", "Query", "User sleep")], []) == "User sleep"
    assert waiting([(9, "root", "Query", "Searching rows for update")], [9]) == "a row lock"
    assert waiting([(9, "root", "Query", "Waiting for table metadata lock")], []) == \
        "Waiting for table metadata lock"
    assert waiting([(9, "root", "Query", "User lock")], [None]) == "User lock"


def test_work_is_no_wait():
    assert waiting([(9, "root", "Query", "Sending data")], []) == ""
    assert waiting([(9, "root", "Query", "Searching rows for update")], [8]) == ""
    assert waiting([(9, "root", "Query", "Waiting for something else")], []) == ""
    # a client between two statements works (its next statement is on its way)
    assert waiting([(9, "root", "Sleep", "")], []) == ""
    # two connections (a .test file's): both must wait
    assert waiting([(9, "root", "Query", "User sleep"), (10, "root", "Query", "Updating")],
                   []) == ""
    assert waiting([(9, "root", "Query", "User sleep"), (10, "root", "Query", "Updating")],
                   [10]) == "User sleep, a row lock"


def test_nothing_running_is_no_wait():
    assert waiting(SYSTEM, []) == ""
    assert waiting([], []) == ""


BOTS = ["bot0", "bot1", "bot2", "bot3"]


def test_lanes_without_waits_use_the_first_bots_only():
    lanes = Lanes({i: "g" for i in range(6)}, 2)
    assert lanes.assign(BOTS) == [("bot0", 0), ("bot1", 1)]
    assert lanes.assign(BOTS) == []
    assert lanes.finished("bot1") == 1
    assert lanes.assign(BOTS) == [("bot1", 2)]
    assert lanes.most_at_once == 2


def test_a_waiting_bot_lends_its_lane_until_it_works_again():
    lanes = Lanes({i: "g" for i in range(6)}, 2)
    lanes.assign(BOTS)
    lanes.waits("bot0", True)
    assert lanes.working() == 1
    assert lanes.assign(BOTS) == [("bot2", 2)]
    lanes.waits("bot1", True)
    assert lanes.assign(BOTS) == [("bot3", 3)]
    assert lanes.most_at_once == 4
    lanes.waits("bot0", False)                 # works again: three at work for a while
    assert lanes.working() == 3 and lanes.assign(BOTS) == []
    assert lanes.finished("bot2") == 2 and lanes.assign(BOTS) == []
    assert lanes.finished("bot3") == 3 and lanes.assign(BOTS) == [("bot2", 4)]
    # a bot that finished is not waiting any more; a free bot's wait is ignored
    assert lanes.finished("bot1") == 1 and "bot1" not in lanes.idle
    lanes.waits("bot1", True)
    assert "bot1" not in lanes.idle


def test_lanes_keep_a_bot_on_its_group():
    groups = {0: "a", 1: "a", 2: "b", 3: "b"}
    lanes = Lanes(groups, 2)
    assert lanes.assign(BOTS) == [("bot0", 0), ("bot1", 2)]
    lanes.finished("bot1")
    assert lanes.assign(BOTS) == [("bot1", 3)]     # its own group's, not the queue's first
