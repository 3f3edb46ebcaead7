"""sysbench through the CLI: a regression check against a stored baseline (the
sysbench_basic suite is test_sysbench_suite.py's: it compares no throughput).

Covers: lib/sysbench/, lib/modes/sweep/run.py
"""
import json
import os
import re
import shutil
import sqlite3
import tempfile

from tests.conftest import KewpieRunner

WRITE_SWEEP = {"workload": "oltp_write_only", "tables": 2, "table_size": 2000, "duration": 3,
               "warmup": 1, "repeats": 2, "threads": [1, 2]}
RELAXED = ["--log-bin=mysql-bin", "--innodb-flush-log-at-trx-commit=0", "--sync-binlog=0"]


def test_regression_check_flags_slowed_config_and_passes_baseline_repeat():
    # fsync costs nothing in /dev/shm: the datadir must be on disk for this check.
    base = tempfile.mkdtemp(prefix="kewpie-sweep-", dir="/tmp")
    os.chmod(base, 0o755)
    try:
        runner = KewpieRunner(os.path.join(base, "wd"))

        def sweep(name, options, *args):
            path = os.path.join(base, f"{name}.json")
            with open(path, "w") as fh:
                json.dump({"name": name, **WRITE_SWEEP, "server_options": options}, fh)
            out = os.path.join(base, f"out-{name}-{len(args)}")
            return runner.run("--mode=sweep", f"--sweep-file={path}", "--no-shm",
                              f"--sweep-out={out}", *args), out

        first, out = sweep("relaxed", RELAXED, "--label=relaxed")
        assert first.returncode == 0, first.stdout[-3000:]
        for name in ("results.csv", "results.json", "tps_vs_threads.png", "tps_over_time.png"):
            assert os.path.getsize(os.path.join(out, name)) > 0
        repeat, _ = sweep("relaxed-again", RELAXED, "--baseline=relaxed", "--tolerance=0.3")
        assert repeat.returncode == 0, repeat.stdout[-3000:]
        assert "no regression" in repeat.stdout
        # A regression, made certain: the stored baseline becomes 1000x faster than what
        # this machine can do (timing a real slowdown on a shared disk is too noisy for a test).
        with sqlite3.connect(os.path.join(base, "wd", "history.sqlite")) as db:  # the history
            rows = db.execute("SELECT id, result FROM kewpie_runs WHERE sweep_id = "
                              "(SELECT id FROM kewpie_sweeps WHERE label = 'relaxed')").fetchall()
            assert rows
            for run_id, result in rows:
                raw = json.loads(result)
                raw["tps"] *= 1000
                db.execute("UPDATE kewpie_runs SET result = ?, tps = ? WHERE id = ?",
                           (json.dumps(raw), raw["tps"], run_id))
        slowed, _ = sweep("slowed", RELAXED, "--baseline=relaxed", "--tolerance=0")
        assert slowed.returncode == 1, slowed.stdout[-3000:]
        assert re.search(r"ERROR REGRESSION threads=\d+: [\d.]+ tps vs baseline [\d.]+ \(-\d", slowed.stdout)
    finally:
        shutil.rmtree(base, ignore_errors=True)
