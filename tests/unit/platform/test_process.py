"""The process layer: run_tool / run_pipeline (capture, logs, timeouts, users, TMPDIR) and the stop policy.

Covers: lib/platform/process.py, lib/platform/tools.py, lib/platform/lifecycle.py
"""
import os
import pwd
import shutil
import signal
import subprocess
import time

import psutil
import pytest

from lib.platform.lifecycle import ReadyWait, StopResult
from lib.platform.process import (ProcessExecutor, process_create_time, spawn, stop_child,
                                  stop_foreign)
from lib.platform.tools import run_pipeline, run_tool

SH = shutil.which("sh")


def test_output_captured_separately():
    res = run_tool([SH, "-c", "echo out; echo err >&2; exit 3"])
    assert res.stdout == "out\n" and res.stderr == "err\n" and res.output == "out\nerr\n"
    assert res.returncode == 3 and not res.ok and not res.timed_out and res.seconds >= 0


def test_input_and_cwd(tmp_path):
    res = run_tool([SH, "-c", "cat; pwd"], input="hello\n", cwd=str(tmp_path))
    assert res.ok and res.stdout == f"hello\n{tmp_path}\n"


def test_log_file_gets_both_streams(tmp_path):
    log = tmp_path / "t.log"
    log.write_text("old\n")
    res = run_tool([SH, "-c", "echo out; echo err >&2"], log_path=str(log))
    assert res.ok and res.stdout == "" and res.log_path == str(log)
    assert log.read_text() == "out\nerr\n" == res.output


def test_tmpdir_and_env(tmp_path):
    res = run_tool([SH, "-c", 'echo "$TMPDIR $KEWPIE_TEST"'], tmpdir=str(tmp_path),
                   env={"KEWPIE_TEST": "tagged", "PATH": os.environ["PATH"]})
    assert res.stdout == f"{tmp_path} tagged\n"
    inherited = run_tool([SH, "-c", 'echo "$HOME"'])
    assert inherited.stdout == os.environ.get("HOME", "") + "\n"


def test_child_in_its_own_process_group_in_our_session():
    """One kill stops a child and what it started (its own process group); it stays in
    our session, whose scheduling group (autogroup) its peers share: a client and a
    server in different sessions wait for each other on a loaded machine."""
    res = run_tool([SH, "-c", "ps -o pgid=,sid= -p $$"])
    pgid, sid = (int(x) for x in res.stdout.split())
    assert pgid != os.getpgid(0)
    assert sid == os.getsid(0)


def _sleeper_group_gone(marker: str) -> bool:
    for proc in psutil.process_iter(["cmdline"]):
        if marker in " ".join(proc.info["cmdline"] or []):
            try:
                if proc.status() != psutil.STATUS_ZOMBIE:
                    return False
            except psutil.Error:
                pass
    return True


@pytest.mark.parametrize("mode", ["capture", "log", "lines"])
def test_timeout_stops_the_whole_group(tmp_path, mode):
    marker = f"kewpie-grandchild-{mode}-{os.getpid()}"
    # the grandchild ignores SIGTERM and outlives its parent's exit: only a group SIGKILL ends it
    script = f"(trap '' TERM; exec -a {marker} sleep 60) & echo started; wait"
    kwargs = {"log": dict(log_path=str(tmp_path / "t.log")),
              "lines": dict(on_line=lambda line: None), "capture": {}}[mode]
    t0 = time.monotonic()
    # 2 s: bash must have started the grandchild and printed "started" before the timeout
    # fires (with 0.5 s, a machine under load 20 once timed bash out before its echo)
    res = run_tool(["bash", "-c", script], timeout=2, **kwargs)
    assert res.timed_out and not res.ok and res.returncode < 0
    assert time.monotonic() - t0 < 30      # the group was killed: the sleep (60 s) did not end it
    deadline = time.monotonic() + 5
    while not _sleeper_group_gone(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _sleeper_group_gone(marker)
    if mode == "capture":
        assert res.stdout == "started\n"
    if mode == "lines":
        assert res.lines == ["started"]


def test_lines_are_streamed():
    seen = []
    res = run_tool([SH, "-c", "echo a; echo b >&2; echo c"], on_line=seen.append)
    assert res.ok and seen == res.lines and sorted(seen) == ["a", "b", "c"]


def test_cannot_start_raises_oserror(tmp_path):
    with pytest.raises(OSError):
        run_tool([str(tmp_path / "missing")])


@pytest.mark.skipif(os.geteuid() != 0, reason="switching users needs root")
def test_runs_as_user(tmp_path):
    user = "nobody"
    try:
        entry = pwd.getpwnam(user)
    except KeyError:
        pytest.skip("no user nobody")
    os.chmod(tmp_path, 0o777)
    res = run_tool([SH, "-c", "id -u; id -G; touch f"], user=user, cwd=str(tmp_path))
    uid, groups = res.stdout.split("\n")[:2]
    assert res.ok and int(uid) == entry.pw_uid
    assert groups.split() == [str(entry.pw_gid)]  # no supplementary groups
    assert os.stat(tmp_path / "f").st_uid == entry.pw_uid


def test_pipeline(tmp_path):
    produced, consumed = run_pipeline([SH, "-c", "echo data; echo said >&2"],
                                      [SH, "-c", f"cat > {tmp_path}/got; echo x-said"],
                                      log_path=str(tmp_path / "p.log"),
                                      consumer_log=str(tmp_path / "c.log"))
    assert produced.ok and consumed.ok
    assert (tmp_path / "got").read_text() == "data\n"
    assert produced.output == "said\n" and consumed.output == "x-said\n"


def test_pipeline_timeout_stops_both(tmp_path):
    produced, consumed = run_pipeline([SH, "-c", "sleep 30"], [SH, "-c", "cat; sleep 30"],
                                      log_path=str(tmp_path / "p.log"),
                                      consumer_log=str(tmp_path / "c.log"), timeout=0.3)
    assert produced.timed_out and consumed.timed_out
    assert produced.returncode < 0 and consumed.returncode < 0


def test_stop_policy_term_then_kill(tmp_path):
    polite = spawn([SH, "-c", "sleep 30"])
    assert stop_child(polite, 5.0) == StopResult.TERMINATED == "terminated"
    stubborn = spawn(["bash", "-c", "trap '' TERM; sleep 30 & wait; sleep 30"])
    deadline = time.monotonic() + 30  # the trap is set once bash has started its sleep
    while not psutil.Process(stubborn.pid).children() and time.monotonic() < deadline:
        time.sleep(0.01)
    t0 = time.monotonic()
    assert stop_child(stubborn, 0.3) == StopResult.KILLED
    assert stubborn.returncode == -signal.SIGKILL and time.monotonic() - t0 < 5
    assert stop_child(stubborn, 1.0) == StopResult.GONE


def test_stop_foreign_uses_the_same_policy():
    proc = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        assert stop_foreign(proc.pid, None, term_timeout=5) == StopResult.TERMINATED
    finally:
        proc.kill()
        proc.wait()


def test_executor_ready_wait_and_stop(tmp_path):
    ex = ProcessExecutor([SH, "-c", "sleep 30"], dict(os.environ), str(tmp_path / "d.log"),
                         die_with_parent=False)
    ex.start()
    assert ex.wait_ready(lambda: True, 1) == (True, ReadyWait.READY)
    assert ex.wait_ready(lambda: False, 0.1) == (False, "timeout")
    assert ex.stop(2.0) == StopResult.TERMINATED and not ex.running()
    assert ex.stop() == StopResult.GONE
    dead = ProcessExecutor([SH, "-c", "exit 4"], dict(os.environ), str(tmp_path / "e.log"))
    dead.start()
    assert dead.wait_ready(lambda: False, 5) == (False, ReadyWait.EXITED)
    assert dead.returncode() == 4


def test_process_create_time_is_psutils_without_psutil():
    proc = subprocess.Popen(["sleep", "5"])
    try:
        assert process_create_time(proc.pid) == pytest.approx(
            psutil.Process(proc.pid).create_time(), abs=0.02)
        assert process_create_time(os.getpid()) == pytest.approx(
            psutil.Process().create_time(), abs=0.02)
    finally:
        proc.kill()
        proc.wait()
    assert process_create_time(2 ** 23) is None   # above any pid_max: no such process
