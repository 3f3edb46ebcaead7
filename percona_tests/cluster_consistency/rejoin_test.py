"""Nodes rejoining by SST and IST, and a partitioned node, while clients write."""
from lib import Append, Bank, ClusterTestCase, Schedule, Step


class RejoinTest(ClusterTestCase):

    def test_rejoin_by_sst_and_partition(self):
        n0, n1, n2 = self.servers
        run = self.run_workloads(
            [Bank(self.servers, clients=3), Append(self.servers, clients=3)], duration=4,
            faults=Schedule([Step(self.rejoin(n2, sst=True), after=1, hold=0.5),
                             Step(self.isolate(n1), after=0.5, hold=1.5)]))
        self.assertValid(run, self.check_tables(n0, [n1, n2], ["bank", "append"]))
