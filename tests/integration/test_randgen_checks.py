"""randgen's validators and reporters in the built-in engine, on real servers.

One fixture suite (tests/fixtures/suites/randgen_checks): two servers that
differ in div_precision_increment; ResultsetComparator finds the planted
difference and none on option-independent queries; transformers; the
Deadlock reporter catches a lock the test holds; the Recovery reporter
kills, restarts and checks the server.

Covers: lib/randgen/validators.py, lib/randgen/reporters.py, lib/randgen/run_checks.py
"""
import re

from tests.conftest import FIXTURE_SUITES


def test_validators_and_reporters(kewpie):
    proc = kewpie.run(f"--suitepath={FIXTURE_SUITES}", "--suite=randgen_checks",
                      "--test-timeout=120", timeout=300)
    out = proc.stdout
    assert proc.returncode == 0, out[-6000:] + proc.stderr[-2000:]
    assert re.search(r"randgen_checks\.validators_test\s+\[ pass \]", out), out[-3000:]
