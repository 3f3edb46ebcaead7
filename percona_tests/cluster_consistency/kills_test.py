"""Bank and insert-only workloads on all three nodes while nodes are killed and restarted."""
from lib import Append, Bank, ClusterTestCase, Schedule, Step


class KillsTest(ClusterTestCase):

    def test_one_node_at_a_time(self):
        n0, n1, n2 = self.servers
        run = self.run_workloads(
            [Bank(self.servers, clients=3), Append(self.servers, clients=3)], duration=4,
            faults=Schedule([Step(self.kill(n2), after=1, hold=1),
                             Step(self.restart(n1), after=1, hold=0.5),
                             Step(self.pause(n0), after=0.5, hold=1)]))
        self.assertValid(run, self.check_tables(n0, [n1, n2], ["bank", "append"]))

    def test_two_nodes_in_quick_succession(self):
        n0, n1, n2 = self.servers
        run = self.run_workloads(
            [Bank(self.servers, clients=3), Append(self.servers, clients=3)], duration=3,
            faults=Schedule([Step(self.kill(n1, n2, spacing=0.2), after=1, hold=1)]))
        self.assertValid(run, self.check_tables(n0, [n1, n2], ["bank", "append"]))

    def test_whole_cluster(self):
        n0, n1, n2 = self.servers
        run = self.run_workloads(
            [Bank(self.servers, clients=3), Append(self.servers, clients=3)], duration=3,
            faults=Schedule([Step(self.kill(n0, n1, n2, spacing=0.1), after=1, hold=0.5)]))
        self.assertValid(run, self.check_tables(n0, [n1, n2], ["bank", "append"]))
