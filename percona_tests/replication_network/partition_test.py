"""Replicas cut off from their primary while it takes writes: they catch up after the heal."""
from lib import Append, Bank, KewpieTestCase, Schedule, Step


class PartitionTest(KewpieTestCase):

    def test_replicas_partitioned_catch_up(self):
        """{primary} | {r1, r2} for 1.5 s under Bank and Append: nothing lost, tables equal."""
        primary, r1, r2 = self.servers
        replicas = [r1, r2]
        run = self.run_workloads(
            [Bank([primary], clients=3, observers=replicas),
             Append([primary], clients=3, observers=replicas)], duration=2,
            faults=Schedule([Step(self.partition([primary], replicas), after=0.3, hold=1.5)]))
        self.assertValid(run, self.check_tables(primary, replicas, ["bank", "append"]))
        self.assertReplicasInSync(["bank", "append"])
