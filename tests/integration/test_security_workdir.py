"""Security issue 27: what a local user plants as a workdir, or in one, never makes root
write, delete or kill anything; --mode=cleanup acts only on folders kewpie made, and
only on what it recorded making there.

The hostile user is `nobody` (setpriv). Root processes named in planted files are
`sleep` children of the test: each is checked alive afterwards, then stopped by its pid.

Covers: lib/platform/trustedpath.py, lib/platform/workdir.py, lib/run/cleanup.py,
lib/servers/state.py
"""
import json
import os
import shutil
import subprocess
import tempfile

import psutil
import pytest

from lib.platform.workdir import MARKER, Workdir
from tests.conftest import KewpieRunner, tagged
from tests.fixtures.security import refused, snapshot

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"),
                                reason="runs as root and acts as user nobody via setpriv")

AS_NOBODY = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]


def nobody(script: str) -> None:
    """Run a shell script as user nobody."""
    subprocess.run(AS_NOBODY + ["sh", "-ec", script], check=True)


@pytest.fixture
def public():
    """A private stand-in for /tmp: root's, mode 1777 (anyone may make entries, sticky)."""
    base = tempfile.mkdtemp(prefix="kewpie-it-pub-", dir="/tmp")
    os.chmod(base, 0o1777)
    yield base
    shutil.rmtree(base)


@pytest.fixture
def precious():
    """A root-owned file in a root-only directory: what the attacker points kewpie at."""
    base = tempfile.mkdtemp(prefix="kewpie-it-root-", dir="/tmp")
    path = os.path.join(base, "precious")
    with open(path, "w") as fh:
        fh.write("root's own content\n")
    yield path
    shutil.rmtree(base)


@pytest.fixture
def root_process():
    """A live process of root's that kewpie did not start (a child of the test)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KEWPIE_")}
    proc = subprocess.Popen(["sleep", "1000"], env=env)
    yield proc
    proc.kill()
    proc.wait()


def alive(proc: subprocess.Popen) -> bool:
    """The process runs, never signalled (a zombie would mean it was killed)."""
    return proc.poll() is None and psutil.Process(proc.pid).status() != psutil.STATUS_ZOMBIE


def servers_json(workdir: str, proc: subprocess.Popen) -> str:
    """A servers.json naming proc as a server of workdir."""
    return json.dumps({"run": {"pid": 1, "workdir": workdir},
                       "servers": [{"pid": proc.pid, "create_time": psutil.Process(proc.pid).create_time(),
                                    "pid_file": f"{workdir}/bot0/var_s0/run/my.pid",
                                    "vardir": f"{workdir}/bot0/var_s0"}]})


def write_as_nobody(path: str, text: str) -> None:
    subprocess.run(AS_NOBODY + ["sh", "-ec", f"cat > {path}"], input=text, text=True, check=True)


# ------------------------------------------------------------------ a workdir owned by nobody

@pytest.mark.parametrize("plant", ["plain", "lock_link", "servers_json"])
def test_workdir_owned_by_another_user_is_refused(public, precious, root_process, plant):
    workdir = os.path.join(public, "wd")
    nobody(f"mkdir -m 755 {workdir}")
    if plant != "plain":
        nobody(f"touch {workdir}/{MARKER}; ln -s {precious} {workdir}/kewpie.lock; "
               f"ln -s {precious} {workdir}/netns.json; ln -s {precious} {workdir}/kewpie.log")
    if plant == "servers_json":
        write_as_nobody(f"{workdir}/servers.json", servers_json(workdir, root_process))
    before = snapshot(workdir)
    runner = KewpieRunner(workdir)
    for args in (["--suite=main", "basic_test"], ["--start-and-exit"], ["--mode=cleanup"]):
        refused(runner.run(*args), f"refusing to use workdir {workdir}", "owned by neither",
                "owner uid 65534 (nobody)", "mode 0755", "choose another --workdir")
        assert snapshot(workdir) == before
    with open(precious) as fh:
        assert fh.read() == "root's own content\n"
    assert alive(root_process)
    assert tagged(workdir) == []


def test_workdir_under_a_folder_of_another_user_is_refused(public):
    """/tmp/pub/wd with /tmp/pub nobody's: nobody could swap wd for a link at any time."""
    pub = os.path.join(public, "pub")
    nobody(f"mkdir -m 755 {pub}")
    workdir = os.path.join(pub, "wd")
    for args in (["--suite=main", "basic_test"], ["--mode=cleanup"]):
        proc = KewpieRunner(workdir).run(*args)
        if args == ["--mode=cleanup"]:  # nothing there: nothing to do, nothing made
            assert proc.returncode == 0, proc.stdout
        else:
            refused(proc, f"{pub} (on its way) is owned by neither", "uid 65534 (nobody)",
                    "mode 0755", "--workdir reached only through")
        assert os.listdir(pub) == []


def test_workdir_reached_through_a_link_of_another_user_is_refused(public, precious):
    target = os.path.dirname(precious)  # root's directory
    link = os.path.join(public, "link")
    nobody(f"ln -s {target} {link}")
    before = snapshot(target)
    refused(KewpieRunner(os.path.join(link, "wd")).run("--suite=main", "basic_test"),
            f"{link} (on its way) is a symbolic link owned by neither", "uid 65534 (nobody)")
    refused(KewpieRunner(link).run("--mode=cleanup"), "symbolic link", "uid 65534 (nobody)")
    assert snapshot(target) == before


# ------------------------------------------------------------------ cleanup of a foreign folder

def foreign_folder(path: str, proc: subprocess.Popen, as_nobody: bool) -> None:
    """The folder of the issue: bot1/data.txt, cluster.json, notes.txt, a servers.json
    naming a live root process; made by nobody or by root."""
    script = (f"mkdir -m 755 {path} {path}/bot1; echo data > {path}/bot1/data.txt; "
              f"echo '{{\"run\": {{\"workdir\": \"{path}\"}}}}' > {path}/cluster.json; "
              f"echo notes > {path}/notes.txt")
    if as_nobody:
        nobody(script)
        write_as_nobody(f"{path}/servers.json", servers_json(path, proc))
    else:
        subprocess.run(["sh", "-ec", script], check=True)
        with open(f"{path}/servers.json", "w") as fh:
            fh.write(servers_json(path, proc))


@pytest.mark.parametrize("owner", ["root", "nobody"])
def test_cleanup_of_a_folder_kewpie_did_not_make_changes_nothing(public, root_process, owner):
    folder = os.path.join(public, "folder")
    foreign_folder(folder, root_process, as_nobody=owner == "nobody")
    before = snapshot(folder)
    proc = KewpieRunner(folder).run("--mode=cleanup")
    if owner == "root":
        refused(proc, f"refusing to clean up {folder}: kewpie did not make it", MARKER)
    else:
        refused(proc, "owner uid 65534 (nobody)", "mode 0755")
    assert snapshot(folder) == before  # nothing deleted, nothing written (no kewpie.lock...)
    assert not os.path.lexists(os.path.join(folder, "kewpie.lock"))
    assert not os.path.lexists(os.path.join(folder, "netns.json"))
    assert alive(root_process)


@pytest.mark.parametrize("marker", ["link", "nobody"])
def test_cleanup_refuses_a_marker_that_is_not_kewpies(public, precious, root_process, marker):
    folder = os.path.join(public, "folder")
    foreign_folder(folder, root_process, as_nobody=False)
    path = os.path.join(folder, MARKER)
    if marker == "link":
        os.symlink(precious, path)
    else:
        open(path, "w").close()
        os.chown(path, 65534, 65534)
    before = snapshot(folder)
    refused(KewpieRunner(folder).run("--mode=cleanup"), f"its {MARKER} is",
            "kewpie did not make this folder")
    assert snapshot(folder) == before
    with open(precious) as fh:
        assert fh.read() == "root's own content\n"
    assert alive(root_process)


def test_cleanup_of_a_system_like_folder_changes_nothing(root_process):
    """A stand-in for /etc: root's, 0755, full of files, no marker."""
    folder = tempfile.mkdtemp(prefix="kewpie-it-etc-", dir="/tmp")
    try:
        os.chmod(folder, 0o755)
        for name, text in (("passwd", "root:x:0:0::/root:/bin/sh\n"), ("hosts", "127.0.0.1\n")):
            with open(os.path.join(folder, name), "w") as fh:
                fh.write(text)
        os.mkdir(os.path.join(folder, "bot0"))
        with open(os.path.join(folder, "servers.json"), "w") as fh:
            fh.write(servers_json(folder, root_process))
        before = snapshot(folder)
        runner = KewpieRunner(folder)
        refused(runner.run("--mode=cleanup"), "kewpie did not make it")
        refused(runner.run("--suite=main", "basic_test"), "kewpie did not create")
        assert snapshot(folder) == before
        assert alive(root_process)
    finally:
        shutil.rmtree(folder)


def _can_make_read_only(path: str) -> bool:
    probe = subprocess.run(["unshare", "--mount", "sh", "-ec",
                            f"mount --bind {path} {path}; mount -o remount,bind,ro {path}"],
                           capture_output=True)
    return probe.returncode == 0


@pytest.mark.parametrize("system_dir", ["/etc", "/"])
def test_cleanup_of_etc_and_root_writes_nothing(system_dir):
    """The real /etc and /, in a private mount namespace where they are read-only: a
    write would fail there (and show as another error); none is attempted."""
    if not shutil.which("unshare") or not _can_make_read_only("/etc"):
        pytest.skip("cannot make a private read-only mount (unshare --mount)")
    written = [os.path.join(system_dir, n) for n in ("kewpie.lock", "netns.json", MARKER)]
    assert not any(os.path.lexists(p) for p in written), "left by something else: look first"
    # the bind mount of / onto itself would not be seen through /: make / itself read-only
    # (per mount, in this namespace only)
    remount = ("mount -o remount,bind,ro /" if system_dir == "/" else
               f"mount --bind {system_dir} {system_dir}; mount -o remount,bind,ro {system_dir}")
    runner = KewpieRunner(system_dir)
    for args in (["--mode=cleanup"], ["--suite=main", "basic_test"]):
        env = dict(os.environ, KEWPIE_NO_VENV="1")
        proc = subprocess.run(["unshare", "--mount", "sh", "-ec", f'{remount}; exec "$@"', "sh",
                               *runner.cmd(*args)], capture_output=True, text=True, env=env,
                              timeout=120, stdin=subprocess.DEVNULL)
        refused(proc, "kewpie did not" + (" make it" if args == ["--mode=cleanup"] else " create"))
        assert "Read-only" not in proc.stdout  # refused before any write was tried
    assert not any(os.path.lexists(p) for p in written)


# ------------------------------------------------------------------ pids named in state files

def test_a_recorded_pid_that_is_not_kewpies_is_left_alone(kewpie, root_process):
    """In kewpie's own workdir, a servers.json naming a process kewpie did not start (a
    pid reused, a file edited by hand): the run and cleanup warn and leave it alone."""
    w = Workdir(kewpie.workdir)
    w.create()
    for args in (["--mode=cleanup"], ["--suite=main", "basic_test"]):
        with open(w.state_file_for("bot0"), "w") as fh:
            fh.write(servers_json(w.path, root_process))
        proc = kewpie.run(*args)
        assert proc.returncode == 0, proc.stdout[-3000:]
        warnings = [line for line in proc.stdout.splitlines() if " WARNING " in line
                    and f"Left pid {root_process.pid} alone" in line]
        assert len(warnings) == 1, proc.stdout
        assert "not a process kewpie started" in warnings[0]
        assert "no KEWPIE_WORKDIR" in warnings[0]
        assert f"Killing pid {root_process.pid}" not in proc.stdout
        assert alive(root_process)


def test_cleanup_removes_only_what_kewpie_recorded_making(kewpie):
    proc = kewpie.run("--suite=main", "basic_test", "--start-and-exit")
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert tagged(kewpie.workdir)
    os.mkdir(os.path.join(kewpie.workdir, "bot7"))  # not kewpie's: the user's, say
    for name in ("bot7/data.txt", "notes.txt"):
        with open(os.path.join(kewpie.workdir, name), "w") as fh:
            fh.write("keep\n")
    proc = kewpie.run("--mode=cleanup")
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert tagged(kewpie.workdir) == []  # its servers (tagged for this workdir) are stopped
    left = set(os.listdir(kewpie.workdir))
    assert not {"bot0", "cluster.json", "servers.json"} & left, left
    assert {"bot7", "notes.txt", MARKER} <= left
    with open(os.path.join(kewpie.workdir, "bot7", "data.txt")) as fh:
        assert fh.read() == "keep\n"
