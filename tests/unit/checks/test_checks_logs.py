"""The error-log warnings check (offsets, global, suite and test suppressions) and
valgrind's memcheck summaries, on canned logs.

Covers: lib/checks/errorlog.py, lib/checks/valgrind.py
"""
import re


from lib.checks import errorlog, valgrind


# ---------------------------------------------------------------- warnings check
class _Log:
    """A server whose error log (``errlog``) is text in memory."""

    def __init__(self, text):
        self.name, self.path, self.text = "s0", "/x/error.log", text
        self.errlog = self

    def size(self):
        return len(self.text.encode())

    def since(self, mark):
        return self.text.encode()[mark:].decode()


START = ("2026-11-23 22:54:01 0 [Note] Starting\n"
         "2026-11-23 22:54:01 0 [Warning] 'user' entry 'root@vm' ignored in "
         "--skip-name-resolve mode.\n"
         "2026-11-23 22:54:01 0 [Warning] 'proxies_priv' entry '@% root@vm' ignored in "
         "--skip-name-resolve mode.\n")


def test_global_suppressions_cover_a_normal_start_only():
    patterns = errorlog.compile_suppressions()
    assert errorlog.unsuppressed(START, patterns) == []
    bad = "2026-11-23 22:56:57 7 [ERROR] Got an error from thread_id=7, ha_myisam.cc:1132"
    assert errorlog.unsuppressed(START + bad + "\n", patterns) == [bad]
    reading = ("2026 5 [Warning] Aborted connection 5 to db: 'unconnected' user: 'root' "
               "host: '127.0.0.1' (Got an error reading communication packets)")
    assert errorlog.unsuppressed(reading, patterns) == [reading]
    other_user = "2026 0 [Warning] 'user' entry 'joe@vm' ignored in --skip-name-resolve mode."
    assert errorlog.unsuppressed(other_user, patterns) == [other_user]
    for regex, why in errorlog.GLOBAL_SUPPRESSIONS:
        assert why and re.compile(regex)


def test_suite_and_test_suppressions_and_marks():
    log = _Log(START + "2026 7 [ERROR] Got an error from thread_id=7, x\n")
    marks = errorlog.LogMarks()
    patterns = errorlog.compile_suppressions([r"Got an error from thread_id"])
    assert errorlog.unsuppressed(marks.new_text(log), patterns) == []
    assert marks.new_text(log) == ""  # already checked
    log.text += "2026 8 [Warning] something new\n"
    assert marks.new_text(log).strip() == "2026 8 [Warning] something new"
    text = errorlog.report({"s0": ("/x/error.log", ["line"] * 25)})
    assert "s0 (/x/error.log):" in text and "... and 5 more" in text


# ---------------------------------------------------------------- valgrind
def test_valgrind_summary(tmp_path):
    clean = tmp_path / "valgrind.1.log"
    clean.write_text("==1== ERROR SUMMARY: 0 errors from 0 contexts (suppressed: 3 from 2)\n")
    bad = tmp_path / "valgrind.2.log"
    bad.write_text("==2== Invalid read of size 4\n==2==    at 0x1: f (x.c:1)\n"
                   "==2== ERROR SUMMARY: 2 errors from 1 contexts (suppressed: 0 from 0)\n")
    running = tmp_path / "valgrind.3.log"
    running.write_text("==3== Memcheck, a memory error detector\n")
    assert valgrind.errors_in(str(clean)) == 0
    assert valgrind.errors_in(str(bad)) == 2
    assert valgrind.errors_in(str(running)) is None
    assert valgrind.report(str(bad)).startswith("Invalid read of size 4")
