"""Benchmark only: the cheapest passing test on one server."""
from lib.testcase import KewpieTestCase


class PingTest(KewpieTestCase):
    """One server answers SELECT 1."""

    def test_select_one(self) -> None:
        self.assertEqual(self.servers[0].execute("SELECT 1")[0][0], 1)
