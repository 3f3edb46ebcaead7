"""Server wrappers: the command lines of valgrind, rr, gdb, gdbserver, eatmydata and
--server-wrapper, and the checks of a wrapper template.

Covers: lib/servers/wrappers.py
"""
import os
from types import SimpleNamespace

import pytest

from lib.errors import UsageError
from lib.servers.wrappers import ServerWrapper, make_wrapper


def _server(tmp_path):
    paths = SimpleNamespace(vardir=str(tmp_path), logdir=str(tmp_path / "log"),
                            rundir=str(tmp_path / "run"))
    return SimpleNamespace(name="s0", paths=paths, start_count=0, server_type="mysql",
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
