"""A majority and a minority: Galera nodes in their own namespaces cut apart under Bank and Append."""
from lib import Append, Bank, ClusterTestCase, Schedule, Step, check_minority_refused


class PartitionsTest(ClusterTestCase):

    def test_minority_refuses_majority_carries_on(self):
        """{s0} | {s1, s2}: the lone node refuses, nothing acknowledged is lost, and the
        nodes agree once healed."""
        n0, n1, n2 = self.servers
        split = self.partition_halves()
        bank, append = Bank(self.servers, clients=3), Append(self.servers, clients=3)
        run = self.run_workloads([bank, append], duration=2,
                                 faults=Schedule([Step(split, after=0.3, hold=1)]))
        refused = [check_minority_refused(w.history, split) for w in (bank, append)]
        self.assertValid(run, *refused, self.check_tables(n0, [n1, n2], ["bank", "append"]))
