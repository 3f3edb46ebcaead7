"""Replaying a corpus of reproducers on every code tree (``--mode=replay``, docs/hunting.md).

The tool-layer parts of the replay (the mode itself is ``lib/modes/replay/``):

- ``corpus.py``: which files are reproducers (``.sql`` as MariaDB QA's ``BUGS/``,
  ``.test`` as mysql-test's and kewpie's reduced cases), their bug and server
  options, and the ones that cannot be used;
- ``defaults.py``: the server options every replay starts with (shorter lock waits),
  before a reproducer's own;
- ``execute.py``: one reproducer on one tree's server (reused when the reuse rule
  keeps it), classified: crash (kewpie's signature and MariaDB QA's UniqueID),
  hang, error-log lines, timeout, no reproduction, skipped;
- ``late.py``: the results a bot holds back while a late crash of their kept server
  could still be theirs;
- ``matrix.py``: the bugs x trees matrix (present / absent / changed signature);
- ``schedule.py``: which queued job a free bot takes (one its server serves);
- ``restore.py``: what a reproducer added undone, so the reuse rule keeps the server;
- ``report.py``: the table, ``replay.json``, JUnit, the known-bugs file of the
  crashes, the history's text;
- ``attribution.py``: how many crashes were attributed to their own bug.
"""
