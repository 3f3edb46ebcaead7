"""The sysbench_basic suite through the CLI: short sweeps complete with sane numbers that
match sysbench's own output.  It checks no throughput against a baseline, so it runs with
the other files (test_sysbench.py, which does, runs alone: scripts/run-tests).

Covers: lib/sysbench/, lib/kewpie2012/sysbench_methods.py
"""


def test_sysbench_basic_suite(kewpie):
    proc = kewpie.run("--suite=sysbench_basic")
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "STATUS: PASS, 1/1" in proc.stdout
