"""More network trouble between Galera nodes: each node in the minority in turn, one-way
links, a bridge, flapping links, packet loss."""
from lib import Append, Bank, ClusterTestCase, Schedule, Step, check_minority_refused


class ShapesTest(ClusterTestCase):

    def test_each_node_in_the_minority_in_turn(self):
        """{s1} | {s0, s2}, then {s2} | {s0, s1}: each lone node refuses, nothing is lost."""
        n0, n1, n2 = self.servers
        cuts = [self.isolate_one(n1), self.isolate_one(n2)]
        bank, append = Bank(self.servers, clients=3), Append(self.servers, clients=3)
        run = self.run_workloads([bank, append], duration=3,
                                 faults=Schedule([Step(c, after=0.5, hold=1.5) for c in cuts]))
        refused = [check_minority_refused(w.history, c) for w in (bank, append) for c in cuts]
        self.assertValid(run, *refused, self.check_tables(n0, [n1, n2], ["bank", "append"]))

    def test_one_way_ring_flaky_and_loss(self):
        """s0 deaf to s1 and s2; the bridge (s0 and s2 cut, s1 hears both); links
        flapping every 0.4 s; 30% loss on every node."""
        n0, n1, n2 = self.servers
        faults = Schedule([Step(self.one_way([n1, n2], [n0]), after=0.5, hold=1.5),
                           Step(self.majority_ring(), after=0.5, hold=1.5),
                           Step(self.flaky(self.partition_halves(), period=0.4), after=0.5,
                                hold=2),
                           Step(self.loss(30), after=0.5, hold=1.5)])
        run = self.run_workloads([Bank(self.servers, clients=3), Append(self.servers, clients=3)],
                                 duration=3, faults=faults)
        self.assertValid(run, self.check_tables(n0, [n1, n2], ["bank", "append"]))
