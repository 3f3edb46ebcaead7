"""The wrong-result oracles (NoREC, TLP, differential) on real servers.

One fixture suite (tests/fixtures/suites/wrongresult): two servers that differ
by div_precision_increment.  NoREC and TLP find nothing on the default one
(a few hundred generated SELECTs over gendata tables of many types); the
differential oracle finds the planted difference between the two, and nothing
between two connections to one server.

Covers: lib/hunt/wrongresult/ (the oracles, generator and gendata loader on real servers)
"""
import os
import re

from tests.conftest import FIXTURE_SUITES


def test_oracles_on_real_servers(kewpie):
    proc = kewpie.run(f"--suitepath={FIXTURE_SUITES}", "--suite=wrongresult", "--verbose",
                      timeout=600)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-6000:]
    assert re.search(r"wrongresult\.oracles_test\s+\[ pass \]", out), out[-3000:]
    assert not os.path.exists(os.path.join(kewpie.workdir, "failed")) or not os.listdir(
        os.path.join(kewpie.workdir, "failed"))
