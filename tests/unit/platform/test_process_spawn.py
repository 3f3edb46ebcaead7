"""lib.platform.process.spawn for one-shot tools: setpriv does the user switch and the
parent-death signal, so that Popen can vfork instead of forking the harness.

Covers: lib/platform/process.py
"""
import os
import pwd
import shutil
import subprocess
import threading
import time

import pytest

from lib.platform.process import spawn, wait_exit
from lib.platform.tools import run_tool

def _mysql_user() -> str | None:
    try:
        pwd.getpwnam("mysql")
    except KeyError:
        return None
    return "mysql" if os.geteuid() == 0 else None


@pytest.mark.skipif(shutil.which("setpriv") is None, reason="util-linux setpriv missing")
def test_tool_goes_through_setpriv_with_the_death_signal():
    proc = spawn(["true"], stdout=subprocess.DEVNULL)
    assert wait_exit(proc, 5) and proc.returncode == 0
    assert os.path.basename(proc.args[0]) == "setpriv" and "--pdeathsig=KILL" in proc.args


@pytest.mark.skipif(_mysql_user() is None, reason="needs root and a mysql user")
def test_tool_runs_as_the_user_with_only_its_primary_group():
    entry = pwd.getpwnam("mysql")
    ran = run_tool(["id"], user="mysql", cwd="/")
    assert ran.ok, ran.output
    assert f"uid={entry.pw_uid}(" in ran.stdout and f"gid={entry.pw_gid}(" in ran.stdout
    groups = ran.stdout.split("groups=")[1].strip()
    assert groups.count("(") == 1  # the primary group only


def test_missing_program_raises_as_popen_would():
    with pytest.raises(FileNotFoundError):
        spawn(["/nonexistent/kewpie-tool"], stdout=subprocess.DEVNULL)
    with pytest.raises(FileNotFoundError):
        run_tool(["kewpie-no-such-tool"])


def _name(pid: int) -> str:
    """The program a process runs now ('' once it is gone)."""
    try:
        with open(f"/proc/{pid}/comm") as fh:
            return fh.read().strip()
    except OSError:
        return ""


def test_tool_dies_with_the_thread_that_started_it():
    started = {}

    def body():
        started["proc"] = spawn(["sleep", "30"], stdout=subprocess.DEVNULL)
        # setpriv sets the death signal, then becomes sleep: wait for that exec
        deadline = time.monotonic() + 30
        while _name(started["proc"].pid) != "sleep" and time.monotonic() < deadline:
            time.sleep(0.01)

    thread = threading.Thread(target=body)
    thread.start()
    thread.join()
    proc = started["proc"]
    assert wait_exit(proc, 5), "the tool outlived the thread that started it"
    assert proc.returncode == -9
