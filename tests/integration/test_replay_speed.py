"""--mode=replay's savings on real servers: a prepared XA transaction a reproducer leaves is
rolled back by the restore, so the next reproducer gets the same server (not a fresh
one after the reuse rule's emptying of ``test`` waited on its locks); with
``--parallel 2`` two reproducers that only wait (``SELECT SLEEP``) lend their lanes to
two more bots, which replay the quick ones meanwhile; and a statement behind a prepared
XA transaction's row lock waits the replay's default 5 s, not InnoDB's 50 s, or what
the reproducer's own options say.

Covers: lib/replay/restore.py, lib/replay/waits.py, lib/replay/schedule.py,
lib/replay/execute.py, lib/replay/defaults.py, lib/modes/replay/run.py
"""
import json
import os
import re

from tests.conftest import KewpieRunner, make_workdir, tagged

XA_LEFT = ("CREATE TABLE t1 (a INT KEY) ENGINE=InnoDB;\nSET SESSION pseudo_slave_mode=1;\n"
           "XA START 'x';\nINSERT INTO t1 VALUES (1);\nXA END 'x';\nXA PREPARE 'x';\n")
NEXT = "CREATE TABLE t1 (a INT KEY) ENGINE=InnoDB;\nINSERT INTO t1 VALUES (1);\n"
# the UPDATE after the prepared transaction waits for its row lock until the timeout
# (error 1205), and the file goes on
LOCK_WAIT = ("CREATE TABLE t1 (a INT KEY) ENGINE=InnoDB;\nINSERT INTO t1 VALUES (1);\n"
             "SET SESSION pseudo_slave_mode=1;\nXA START 'w';\n"
             "UPDATE t1 SET a=2 WHERE a=1;\nXA END 'w';\nXA PREPARE 'w';\n"
             "UPDATE t1 SET a=3 WHERE a=1;\nSELECT 1;\n")


def _replay(tmp_path_factory, name, files, *args):
    """A replay of files (name -> SQL) on both trees: (its output, replay.json's results,
    its settings)."""
    base = tmp_path_factory.mktemp(name)
    corpus = base / "corpus"
    corpus.mkdir()
    for file, sql in files.items():
        (corpus / file).write_text(sql)
    runner = KewpieRunner(make_workdir(tmp_path_factory, f"{name}-wd"))
    out = str(base / "out")
    ran = runner.run("--mode=replay", str(corpus), "--replay-timeout=60", f"--replay-out={out}",
                     "--history=off", *args, timeout=300)
    leftovers = tagged(runner.workdir)
    for proc in leftovers:
        proc.kill()
    assert not leftovers, f"servers left running: {[p.pid for p in leftovers]}"
    text = ran.stdout + ran.stderr
    assert ran.returncode == 0, text[-4000:]
    doc = json.load(open(os.path.join(out, "replay.json")))
    return text, [cell for r in doc["rows"] for cell in r["trees"].values()], doc["settings"]


def test_a_prepared_xa_transaction_left_is_rolled_back_and_the_server_kept(tmp_path_factory):
    text, cells, _ = _replay(tmp_path_factory, "replay-xa", {"a_xa.sql": XA_LEFT,
                                                            "b_next.sql": NEXT},
                             "--basedir=/usr")
    rows = {c["name"]: c for c in cells if c["tree"] == "10.11.19"}     # one bot, in order
    assert rows["a_xa"]["outcome"] == "none", text[-4000:]
    assert rows["a_xa"]["reset"] == "", rows["a_xa"]       # kept for the next one
    assert rows["b_next"]["fresh"] is False, rows["b_next"]
    assert rows["b_next"]["outcome"] == "none"
    # its CREATE and INSERT met no lock of the rolled-back transaction
    assert rows["b_next"]["phases"]["run"] < 10, rows["b_next"]


def test_waiting_reproducers_lend_their_lanes(tmp_path_factory):
    files = {"a_sleep1.sql": "SELECT SLEEP(12);\n", "a_sleep2.sql": "SELECT SLEEP(12);\n"}
    files.update({f"b_quick{i}.sql": f"CREATE TABLE t{i} (a INT);\n" for i in range(4)})
    text, cells, _ = _replay(tmp_path_factory, "replay-lanes", files, "--basedir=/usr",
                             "--parallel=2", "--verbose")
    assert all(c["outcome"] == "none" for c in cells), cells
    assert all(c["phases"]["run"] >= 12 for c in cells if c["name"].startswith("a_sleep"))
    # the sleeping ones said so, and bots beyond the two lanes took jobs meanwhile
    assert re.search(r"DEBUG bot[01]: its reproducer waits", text), text[-4000:]
    assert {c["bot"] for c in cells} & {"bot2", "bot3"}, cells
    assert re.search(r"at most [34] bot\(s\) busy at once, 4 started", text), text[-4000:]


def test_a_row_lock_wait_ends_after_the_replays_default_or_the_reproducers_own(
        tmp_path_factory):
    own = "# mysqld options required for replay: --innodb-lock-wait-timeout=20\n" + LOCK_WAIT
    _, cells, settings = _replay(tmp_path_factory, "replay-lockwait",
                                 {"a_default.sql": LOCK_WAIT, "b_own.sql": own},
                                 "--basedir=/usr")
    rows = {c["name"]: c for c in cells if c["tree"] == "10.11.19"}
    assert all(r["outcome"] == "none" for r in rows.values()), rows
    # a lock wait never ends before its timeout (the lower bounds); InnoDB's is 50 s
    assert 5 <= rows["a_default"]["phases"]["run"] < 20, rows["a_default"]
    assert rows["b_own"]["phases"]["run"] >= 20, rows["b_own"]
    assert settings["server_defaults"] == ["--loose-innodb-lock-wait-timeout=5",
                                           "--lock-wait-timeout=10"], settings
