"""The plan and rewrite oracles (DQP, EET, CODDTest, Pinolo, DQE, Radar, the TLP
variants, CERT) on a real server: nothing on a healthy one, and each finds the planted
difference built for it -- a UDF compiled with gcc now (tests/fixtures/hunt/planted_wrong.c)
that answers wrongly under that oracle's rewrite, a plan option that changes a result, a
setting that changes an estimate.  The fixture suite is tests/fixtures/suites/planted_oracles.

Covers: lib/hunt/wrongresult/ (dqp, eet, coddtest, pinolo, dqe, radar, tlpvariants, cert, copies, queries, rewrite), tests/fixtures/hunt/planted_wrong.c
"""
import re

import pytest

from tests.conftest import FIXTURE_SUITES
from tests.fixtures.hunt.planted import build_plugin_dir, remove_plugin_dir


@pytest.fixture(scope="module")
def plugin_dir():
    """A plugin directory holding kw_wrong.so (built with gcc now), removed after."""
    path = build_plugin_dir()
    yield path
    remove_plugin_dir(path)


def test_new_oracles_on_a_healthy_and_a_planted_server(kewpie, plugin_dir):
    proc = kewpie.run(f"--suitepath={FIXTURE_SUITES}", "--suite=planted_oracles", "--verbose",
                      f"--mysqld=--plugin-dir={plugin_dir}", timeout=900)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-8000:]
    assert re.search(r"planted_oracles\.oracles_test\s+\[ pass \]", out), out[-3000:]
