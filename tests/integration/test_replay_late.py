"""--mode=replay of a reproducer whose crash comes late: the planted UDF kw_late (gcc-built
at test time, tests/fixtures/hunt/planted_late.c) returns its answer at once and crashes
the server from a detached thread 1.5 s later, after the reproducer's last statement has
returned (and the reproducer drops the function, so its server is kept for the next).
The replay must report it as that reproducer's crash (a signal 11 signed from the crash
report; "after its last statement" when it was found after the reproducer's checks) on
every tree -- not "passed" -- and the healthy
reproducer replayed after it on the same server must still pass, never blamed for the
crash, whether the crash lands before its start, while it runs or after it
(lib/replay/late.py: results held for a window, a crash searched for among them).

Covers: lib/replay/late.py, lib/replay/execute.py (a crash after the reproducer's last statement), lib/modes/replay/run.py, tests/fixtures/hunt/planted_late.c
"""
import json
import os

import pytest

from tests.conftest import OLD_VERSION, tagged
from tests.fixtures.hunt.planted import build_plugin_dir, remove_plugin_dir

LATE = "MDEV-91001"      # its name sorts first: replayed first on each tree, then HEALTHY
HEALTHY = "MDEV-91002"
DELAY_MS = 1500
NEW = "10.11.19"


@pytest.fixture(scope="module")
def plugin_dir():
    """A plugin directory holding kw_late.so (built with gcc now), removed after."""
    path = build_plugin_dir()
    yield path
    remove_plugin_dir(path)


def _corpus(folder, plugin_dir):
    """The late crash and a healthy reproducer, with the same server options (so that the
    healthy one would get the late one's kept server)."""
    os.makedirs(folder)
    head = f"# mysqld options required for replay: --plugin-dir={plugin_dir}\n"
    with open(os.path.join(folder, f"{LATE}.sql"), "w") as fh:
        fh.write(head + "CREATE FUNCTION kw_late RETURNS INTEGER SONAME 'kw_late.so';\n"
                 f"SELECT kw_late({DELAY_MS});\nDROP FUNCTION kw_late;\n")
    with open(os.path.join(folder, f"{HEALTHY}.sql"), "w") as fh:
        fh.write(head + "CREATE TABLE t1 (a INT);\nINSERT INTO t1 VALUES (1), (2);\n"
                 "SELECT SUM(a) FROM t1;\nDROP TABLE t1;\n")
    return folder


def test_a_late_crash_is_its_reproducers_and_the_next_one_passes(kewpie, tmp_path, plugin_dir,
                                                                 old_tree):
    corpus = _corpus(str(tmp_path / "corpus"), plugin_dir)
    out = str(tmp_path / "out")
    ran = kewpie.run("--mode=replay", corpus, "--replay-timeout=60", f"--replay-out={out}",
                     timeout=600)
    text = ran.stdout + ran.stderr
    assert ran.returncode == 1, text[-4000:]            # a reproducer crashes
    assert not tagged(kewpie.workdir), "servers left running"
    doc = json.load(open(os.path.join(out, "replay.json")))
    assert doc["trees"] == [NEW, OLD_VERSION], doc["trees"]
    rows = {r["name"]: r["trees"] for r in doc["rows"]}
    for tree in (NEW, OLD_VERSION):
        late = rows[LATE][tree]
        # reproduced on each tree ("changed" when the report's frames were read on one tree
        # and not on the other: a UDF's thread, not the replay's business)
        assert late["state"] in ("present", "changed") and late["outcome"] == "crash", \
            (tree, late, text[-4000:])
        assert late["signature"]["text"].startswith("crash | signal 11"), late["signature"]
        healthy = rows[HEALTHY][tree]
        assert healthy["state"] == "absent" and healthy["outcome"] == "none", (tree, healthy)
