"""A slow, lossy link between the primary and its replicas."""
from lib import Append, Bank, KewpieTestCase, Latency, ReadYourWrites, Schedule, Step, get_logger


class SlowLinkTest(KewpieTestCase):

    def test_loss_between_primary_and_replicas(self):
        """30% of the packets the primary sends are dropped for 2 s, then a one-way cut
        (the primary deaf to the replicas): replicas catch up, GTID reads not stale."""
        primary, r1, r2 = self.servers
        replicas = [r1, r2]
        run = self.run_workloads(
            [Append([primary], clients=3, observers=replicas),
             ReadYourWrites([primary], clients=2, readers=replicas, sync="gtid")], duration=4,
            faults=Schedule([Step(self.loss(30, primary), after=0.5, hold=2),
                             Step(self.one_way(replicas, [primary]), after=0.5, hold=1.5)]))
        self.assertValid(run, self.check_tables(primary, replicas, ["append"]))

    def test_latency_between_primary_and_replicas(self):
        """+50 ms (10 ms jitter) on every packet the primary sends, under Bank and GTID reads."""
        why = Latency.unsupported()
        if why:
            get_logger().warning(f"replication_network: latency test skipped: {why}")
            self.skipTest(why)
        primary, r1, r2 = self.servers
        replicas = [r1, r2]
        run = self.run_workloads(
            [Bank([primary], clients=3, observers=replicas),
             ReadYourWrites([primary], clients=2, readers=replicas, sync="gtid")], duration=3,
            faults=Schedule([Step(self.latency(50, primary, jitter=10), after=0.5, hold=2)]))
        self.assertValid(run, self.check_tables(primary, replicas, ["bank"]))
