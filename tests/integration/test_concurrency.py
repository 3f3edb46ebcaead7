"""Two kewpie runs started at the same moment with different workdirs both pass.

Covers: lib/platform/ports.py, lib/platform/workdir.py
"""
import os

from tests.conftest import KewpieRunner


def test_two_runs_at_once(kewpie, tmp_path_factory):
    other_dir = tmp_path_factory.mktemp("second")
    os.chmod(other_dir, 0o755)
    other = KewpieRunner(os.path.join(str(other_dir), "wd"))
    first = kewpie.popen("--suite=main")
    second = other.popen("--suite=main")
    out1, _ = first.communicate(timeout=300)
    out2, _ = second.communicate(timeout=300)
    assert first.returncode == 0, out1
    assert second.returncode == 0, out2
    assert "STATUS: PASS, 4/4" in out1 and "STATUS: PASS, 4/4" in out2


def test_same_workdir_twice_is_refused(kewpie):
    first = kewpie.popen("--suitepath=" + os.path.join(os.path.dirname(__file__), "..", "fixtures", "suites"),
                         "--suite=slow")
    try:
        for line in first.stdout:
            if "SLEEPING" in line:
                break
        second = kewpie.run("--suite=main")
        assert second.returncode == 2
        assert "in use by another kewpie run" in second.stdout
    finally:
        first.terminate()
        first.communicate(timeout=30)
