"""The results history through the real CLI: two runs with a planted flaky test fill the
store and ``kewpie history`` finds the flake's rate and its failure by text; a
MariaDB store (a server kewpie starts) takes two concurrent runs whole; a store that
is down costs one warning, never the run's exit code.

Covers: lib/history/, lib/run/recording.py, lib/run/native.py, lib/cli.py (kewpie history)
"""
import glob
import json
import os
import re
import subprocess
import sys

import pymysql

from tests.conftest import FIXTURE_SUITES, KEWPIE, KewpieRunner, make_workdir

SUITE = ("--suitepath=" + FIXTURE_SUITES, "--suite=history_flaky", "--force")


def history(*args: str) -> subprocess.CompletedProcess:
    """``kewpie.py history ...``."""
    return subprocess.run([sys.executable, KEWPIE, "history", *args], capture_output=True,
                          text=True, timeout=120, env=dict(os.environ, KEWPIE_NO_VENV="1"),
                          stdin=subprocess.DEVNULL)


def _warnings(text: str) -> list[str]:
    return [line for line in text.splitlines() if re.match(r"^\d{8}-\d{6} WARNING ", line)]


def in_process(capsys, *args: str) -> tuple[int, str]:
    """``kewpie history ...`` in this process (lib.cli.main): status, output."""
    from lib.cli import main
    capsys.readouterr()
    status = main(["history", *args])
    captured = capsys.readouterr()
    return status, captured.out + captured.err


def test_two_runs_with_a_planted_flaky_test_fill_the_store(kewpie, capsys):
    first = kewpie.run(*SUITE, "--label=branch=feature-x")
    assert first.returncode == 1, first.stdout[-3000:]  # the planted test fails first
    second = kewpie.run(*SUITE, "--label=branch=feature-x")
    assert second.returncode == 0, second.stdout[-3000:]
    assert "Results history: 2 result(s) in" in second.stdout

    flaky = history("flaky", f"--workdir={kewpie.workdir}")
    assert flaky.returncode == 0, flaky.stdout + flaky.stderr
    rows = [line for line in flaky.stdout.splitlines() if line.startswith("history_flaky.")]
    assert len(rows) == 1, flaky.stdout  # the steady test is not flaky
    assert re.match(r"history_flaky\.alternate_test\s+2\s+1/2 \(50\.0%\)\s+0/1 \(0\.0%\)",
                    rows[0]), rows[0]
    assert "AssertionError: timeout waiting for the replica" in rows[0]

    found = history("failures", f"--workdir={kewpie.workdir}", "--failure=*timeout*replica*",
                    "--branch=feature-*")
    assert found.returncode == 0, found.stderr
    hits = [line for line in found.stdout.splitlines() if re.match(r"^\d{4}-\d\d-\d\d ", line)]
    assert len(hits) == 1 and "alternate_test" in hits[0] and " fail " in hits[0], found.stdout
    assert "evidence " + os.path.join(kewpie.workdir, "failed") in found.stdout
    status, none = in_process(capsys, "failures", f"--workdir={kewpie.workdir}",
                              "--failure=*no such text*")
    assert status == 0 and "no result matches" in none

    status, timeline = in_process(capsys, "test", "history_flaky.alternate_test",
                                  f"--workdir={kewpie.workdir}")
    assert status == 0 and "oldest to newest: F." in timeline, timeline
    status, unstable = in_process(capsys, "unstable", "--min-rate=0.5", f"--workdir={kewpie.workdir}")
    assert re.search(r"^history_flaky\.alternate_test : failed 1/2 \(50\.0%\)", unstable,
                     re.M), unstable
    status, bad = in_process(capsys, "failures", f"--workdir={kewpie.workdir}", "--since=yesterday")
    assert status == 2 and bad.count(" ERROR ") == 1, bad


def test_a_store_that_is_down_is_one_warning_and_the_exit_code_stays(kewpie):
    from lib.platform.ports import PortLeaser, default_lock_dir
    with PortLeaser(default_lock_dir(), 23500).lease() as lease:  # leased, nobody listens
        dsn = f"mysql://root@127.0.0.1:{lease.first}/kewpie_history"
        proc = kewpie.run(*SUITE, f"--history-dsn={dsn}")
    assert proc.returncode == 1, proc.stdout[-3000:]  # the planted failure, as without history
    warnings = _warnings(proc.stdout + proc.stderr)
    assert len(warnings) == 1, warnings
    assert "results history mysql://root@127.0.0.1" in warnings[0] and "unreachable" in warnings[0]
    assert "ERROR" not in proc.stderr
    spooled = glob.glob(os.path.join(kewpie.workdir, "history-spool", "*", "*.jsonl"))
    assert len(spooled) == 1, spooled
    kinds = [json.loads(line)["kind"] for line in open(spooled[0])]
    assert kinds[0] == "run" and kinds.count("result") == 2 and kinds[-1] == "end", kinds


def test_a_mariadb_store_takes_two_concurrent_runs_whole(kewpie, tmp_path_factory):
    started = kewpie.run("--suitepath=" + FIXTURE_SUITES, "--suite=history_flaky",
                         "--start-and-exit")
    assert started.returncode == 0, started.stdout[-3000:]
    port = int(re.findall(r"INFO MASTER_PORT: (\d+)", started.stdout)[0])
    dsn = f"mysql://root@127.0.0.1:{port}/kewpie_history"
    try:
        runners = [KewpieRunner(make_workdir(tmp_path_factory, f"agent{i}")) for i in (1, 2)]
        procs = [r.popen(*SUITE, "--repeat=3", f"--history-dsn={dsn}", f"--label=agent=a{i}")
                 for i, r in enumerate(runners, start=1)]
        outputs = [p.communicate(timeout=300)[0] for p in procs]
        for proc, out in zip(procs, outputs):
            assert proc.returncode == 1, out[-3000:]  # each agent's planted test failed first
            assert not _warnings(out), _warnings(out)
            assert "Results history: 6 result(s) in mysql://root@127.0.0.1" in out, out[-2000:]
        conn = pymysql.connect(host="127.0.0.1", port=port, user="root",
                               database="kewpie_history")
        with conn.cursor() as cur:
            cur.execute("SELECT r.labels, COUNT(*), MIN(x.seq), MAX(x.seq), COUNT(DISTINCT x.seq)"
                        " FROM history_results x JOIN history_runs r ON r.id = x.run_id"
                        " GROUP BY r.id ORDER BY r.labels")
            rows = cur.fetchall()
        conn.close()
        assert [(json.loads(labels)["agent"], n, lo, hi, distinct)
                for labels, n, lo, hi, distinct in rows] == [("a1", 6, 1, 6, 6), ("a2", 6, 1, 6, 6)]
        listed = history("runs", f"--history-dsn={dsn}")
        assert listed.returncode == 0 and listed.stdout.count(" native ") == 2, listed.stdout
    finally:
        clean = kewpie.run("--mode=cleanup")
        assert clean.returncode == 0, clean.stdout
