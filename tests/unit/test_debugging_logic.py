"""Unit tests of issue 17's pure logic: selection patterns, disabled.txt, combinations,
the error-log warnings check, valgrind summaries, wrapper command lines, CLI options."""
import os
import re
from types import SimpleNamespace

import pytest

from lib.checks import errorlog, valgrind
from lib.cli import build_parser, config_from_args
from lib.errors import KewpieError, SuiteError, UsageError
from lib.run.config import RunConfig
from lib.run.filters import matches, narrow
from lib.servers.options import parse_options
from lib.servers.requirements import Requirements
from lib.servers.wrappers import ServerWrapper, make_wrapper
from lib.suites.combinations import parse_combinations
from lib.suites.disabled import read_disabled
from lib.suites.loader import SuiteConfig, with_combination
from lib.suites.loader import TestSpec as Spec


def _spec(suite, name, combination="", disabled=""):
    return Spec(suite=SuiteConfig(suite, "/nowhere"), name=name, path="", module=None,
                    requirements=Requirements.declared("mysql", [[]]),
                    combination=combination, disabled=disabled)


SPECS = [_spec("main", "basic_test"), _spec("main", "crash_test"),
         _spec("rpl", "events_test", "row"), _spec("rpl", "events_test", "statement"),
         _spec("rpl", "slow_test", "row", disabled="bug 12"),
         _spec("rpl", "slow_test", "statement", disabled="bug 12")]


def _names(specs):
    return [s.full_name for s in specs]


# ---------------------------------------------------------------- selection
def test_matches_prefix_or_regex():
    assert matches("main.ba", "main.basic_test", "basic_test")
    assert matches("basic", "main.basic_test", "basic_test")
    assert matches(r"^main\.(basic|crash)", "main.crash_test", "crash_test")
    assert matches("'row'", "rpl.events_test 'row'", "events_test")
    assert not matches("crash", "main.basic_test", "basic_test")


def test_do_skip_combination_start_from():
    cfg = RunConfig(do_test=["main", "rpl.events"], skip_test=["crash"])
    assert _names(narrow(cfg, list(SPECS))) == [
        "main.basic_test", "rpl.events_test 'row'", "rpl.events_test 'statement'"]
    cfg = RunConfig(combinations=["statement"])
    assert _names(narrow(cfg, list(SPECS))) == [
        "main.basic_test", "main.crash_test", "rpl.events_test 'statement'",
        "rpl.slow_test 'statement'"]
    cfg = RunConfig(start_from="rpl.events")
    assert _names(narrow(cfg, list(SPECS)))[0] == "rpl.events_test 'row'"
    with pytest.raises(UsageError, match="--start-from 'nope'"):
        narrow(RunConfig(start_from="nope"), list(SPECS))
    with pytest.raises(UsageError, match="--combination mixed"):
        narrow(RunConfig(combinations=["mixed"]), list(SPECS))


def test_disabled_stay_listed_and_enable_disabled_clears_them():
    specs = [_spec("rpl", "slow_test", disabled="bug 12")]
    assert narrow(RunConfig(), specs)[0].disabled == "bug 12"
    assert narrow(RunConfig(enable_disabled=True), specs)[0].disabled == ""


def test_read_disabled(tmp_path):
    (tmp_path / "disabled.txt").write_text("# why each is off\nslow : bug 12, times out\n"
                                           "crash_test: MDEV-1 # upstream\n\n")
    assert read_disabled(str(tmp_path)) == {"slow_test": "bug 12, times out",
                                            "crash_test": "MDEV-1"}
    (tmp_path / "disabled.txt").write_text("slow without a reason\n")
    with pytest.raises(SuiteError, match="disabled.txt:1: expected 'test_name : reason'"):
        read_disabled(str(tmp_path))
    assert read_disabled(str(tmp_path / "none")) == {}


# ---------------------------------------------------------------- combinations
def test_combinations_apply_after_the_suite_options():
    combos = parse_combinations({
        "row": {"options": ["--binlog-format=ROW"]},
        "mb": {"wsrep_sst_method": "mariabackup", "server_options": [[], ["--max-connections=9"]]},
    }, 2, "suite_config.py")
    assert [c.name for c in combos] == ["row", "mb"]
    reqs = Requirements.declared("mysql", [parse_options(["--binlog-format=MIXED"]), []])
    row = with_combination(reqs, combos[0])
    assert [o.as_arg() for o in row.servers[0]] == ["--binlog-format=ROW"]
    mb = with_combination(reqs, combos[1])
    assert "--wsrep-sst-method=mariabackup" in [o.as_arg() for o in mb.servers[0]]
    assert "--max-connections=9" in [o.as_arg() for o in mb.servers[1]]


@pytest.mark.parametrize("value, message", [
    (["row"], "must be a dict"),
    ({"bad name": {"options": []}}, "must be a word"),
    ({"x": {"flavour": 1}}, "must be a dict with some of"),
    ({"x": {"options": ["--port=1"]}}, "set by kewpie"),
    ({"x": {"server_options": [[], [], []]}}, "at most 2 option lists"),
])
def test_bad_combinations(value, message):
    with pytest.raises(SuiteError, match=re.escape(message)):
        parse_combinations(value, 2, "suite_config.py")


def test_full_name_shows_the_combination():
    assert _spec("rpl", "events_test", "row").full_name == "rpl.events_test 'row'"
    assert _spec("main", "basic_test").full_name == "main.basic_test"


# ---------------------------------------------------------------- warnings check
class _Log:
    def __init__(self, text):
        self.name, self.error_log, self.text = "s0", "/x/error.log", text

    def error_log_size(self):
        return len(self.text.encode())

    def error_log_since(self, mark):
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


# ---------------------------------------------------------------- wrappers
def _server(tmp_path):
    return SimpleNamespace(name="s0", vardir=str(tmp_path), logdir=str(tmp_path / "log"),
                           rundir=str(tmp_path / "run"),
                           start_count=0, server_type="mysql",
                           settings=SimpleNamespace(user=None),
                           lease=SimpleNamespace(port=lambda i: 9300 + i))


def test_wrapper_command_lines(tmp_path):
    argv = ["/usr/sbin/mariadbd", "--defaults-file=/v/my.cnf"]
    server = _server(tmp_path)
    vg = ServerWrapper("valgrind", programs={"valgrind": "/usr/bin/valgrind"},
                       suppressions=("/k.supp",), valgrind_options=("--track-origins=yes",))
    cmd = vg.wrap(server, argv)
    assert cmd[0] == "/usr/bin/valgrind" and "--suppressions=/k.supp" in cmd
    assert cmd.index("--track-origins=yes") < cmd.index(argv[0])
    assert "--loose-innodb-use-native-aio=0" in cmd[cmd.index(argv[0]):]
    assert vg.timeout_factor == 10 and vg.stop_after_test
    gdb = ServerWrapper("gdb", programs={"gdb": "/usr/bin/gdb"}).wrap(server, argv)
    assert gdb[0] == "/usr/bin/gdb" and gdb[-3:] == ["--args", *argv]
    rr = ServerWrapper("rr", programs={"rr": "/usr/bin/rr"}).wrap(server, argv)
    assert rr[:3] == ["/usr/bin/rr", "record", "--output-trace-dir"]
    os.makedirs(tmp_path / "run")
    manual = ServerWrapper("manual-gdb", programs={"gdbserver": "/usr/bin/gdbserver",
                                                   "socat": "/usr/bin/socat"})
    cmd = manual.wrap(server, argv)
    assert cmd == ["/usr/bin/socat", f"UNIX-LISTEN:{tmp_path}/run/gdb.sock,unlink-early,mode=0700",
                   f"EXEC:{tmp_path}/run/manual-gdb.sh"]
    script = (tmp_path / "run" / "manual-gdb.sh").read_text()
    assert "exec /usr/bin/gdbserver - /usr/sbin/mariadbd --defaults-file=/v/my.cnf" in script
    assert manual.start_timeout == 3600
    custom = ServerWrapper("custom", eatmydata=True, template="strace -f -o {vardir}/s.txt {args}",
                           programs={"eatmydata": "/usr/bin/eatmydata"}).wrap(server, argv)
    assert custom == ["/usr/bin/eatmydata", "strace", "-f", "-o", f"{tmp_path}/s.txt", *argv]
    appended = ServerWrapper("custom", template="nice -n 5").wrap(server, argv)
    assert appended == ["nice", "-n", "5", *argv]


def test_make_wrapper_checks_the_template():
    base = dict(valgrind=False, rr=False, gdb=False, manual_gdb=False, libeatmydata=False,
                valgrind_options=[])
    assert make_wrapper(SimpleNamespace(server_wrapper="", **base)) is None
    with pytest.raises(UsageError, match="not a program on PATH"):
        make_wrapper(SimpleNamespace(server_wrapper="no-such-tool-x {args}", **base))
    with pytest.raises(UsageError, match="--server-wrapper"):
        make_wrapper(SimpleNamespace(server_wrapper="strace {nope}", **base))


# ---------------------------------------------------------------- command line
def test_debugging_options_reach_the_config():
    cfg = config_from_args(["--valgrind", "--valgrind-option=--track-origins=yes",
                            "--keep-failed", "--do-test=main", "--skip-test", "crash",
                            "--combination=row,mixed", "--start-from=main.basic",
                            "--mysqld=--max-connections=77", "--mysqld=--sql-mode=",
                            "--no-check-warnings", "--enable-disabled", "--test-debug",
                            "--start-dirty", "--libeatmydata"])
    assert cfg.valgrind and cfg.valgrind_options == ["--track-origins=yes"]
    assert cfg.keep_failed and cfg.do_test == ["main"] and cfg.skip_test == ["crash"]
    assert cfg.combinations == ["row", "mixed"] and cfg.start_from == "main.basic"
    assert cfg.mysqld_options == ["--max-connections=77", "--sql-mode="]
    assert not cfg.check_warnings and cfg.enable_disabled and cfg.test_debug
    assert cfg.start_dirty and cfg.libeatmydata


@pytest.mark.parametrize("argv, message", [
    (["--valgrind", "--gdb"], "choose one of --valgrind, --gdb"),
    (["--keep-failed", "--parallel=2"], "--keep-failed needs --parallel 1"),
    (["--do-test=("], "--do-test='(' is not a regular expression"),
])
def test_bad_debugging_options(argv, message):
    with pytest.raises(KewpieError, match=re.escape(message)):
        config_from_args(argv)


def test_help_documents_every_debugging_option():
    text = build_parser().format_help()
    for option in ("--valgrind", "--valgrind-option", "--rr", "--gdb", "--manual-gdb",
                   "--server-wrapper", "--libeatmydata", "--keep-failed", "--no-check-warnings",
                   "--do-test", "--skip-test", "--enable-disabled", "--start-from",
                   "--combination", "--test-debug", "--gendata", "--start-dirty", "--mysqld"):
        assert option in text
    for action in build_parser()._actions:
        assert action.help, f"{action.option_strings} has no help"
