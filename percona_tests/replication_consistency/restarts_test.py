"""Bank and insert-only loads on the primary while replicas are restarted and killed."""
from lib import Append, Bank, KewpieTestCase, Schedule, Step


class RestartsTest(KewpieTestCase):

    def test_replicas_restarted_and_killed_under_load(self):
        primary, r1, r2 = self.servers
        replicas = [r1, r2]
        run = self.run_workloads(
            [Bank([primary], clients=3, observers=replicas),
             Append([primary], clients=3, observers=replicas)], duration=4,
            faults=Schedule([Step(self.restart(r1), after=1, hold=0.5),
                             Step(self.kill(r2), after=0.5, hold=0.5),
                             Step(self.kill(r1, r2, spacing=0.1), after=0.5, hold=0.5)]))
        self.assertValid(run, self.check_tables(primary, replicas, ["bank", "append"]),
                         self.pt_table_checksum(["bank", "append"]))
        self.assertReplicasInSync(["bank", "append"])
