"""A rolling upgrade: each node of an old-version cluster is stopped and started on the
new tree in turn (catching up by IST) while the Bank and Append workloads run on all
nodes; every verdict valid, the tables equal, every node on the new version."""
from lib import Append, Bank, ClusterTestCase, Schedule, Step, Upgrade, get_logger, resolve_tree


class RollingUpgradeTest(ClusterTestCase):

    def test_rolling_upgrade_under_load(self):
        nodes = list(self.servers)
        old = {n.variable("version") for n in nodes}
        self.assertEqual(len(old), 1, old)
        new_tree = resolve_tree(nodes[0], "new")
        self.assertNotEqual(new_tree.basedir, nodes[0].tree.basedir)
        steps = [Upgrade([node], nodes, new_tree) for node in reversed(nodes)]
        run = self.run_workloads(
            [Bank(nodes, clients=3), Append(nodes, clients=3)], duration=3,
            faults=Schedule([Step(step, after=1, hold=0.5) for step in steps]))
        self.assertValid(run, self.check_tables(nodes[0], nodes[1:], ["bank", "append"]))

        transfers = {name: how for step in steps for name, how in step.transfers.items()}
        self.assertEqual(sorted(transfers), ["s0", "s1", "s2"], transfers)
        self.assertNotIn("SST", transfers.values(), transfers)
        new = {n.name: n.variable("version") for n in nodes}
        self.assertEqual(set(new.values()), {new_tree.version.version + new_tree.version.suffix},
                         new)
        self.assertTrue(all(n.is_synced(3) for n in nodes), self.wsrep_report())
        for node in nodes:
            self.assertEqual(node.tree.basedir, new_tree.basedir)
        get_logger().info(f"rolling upgrade {old.pop()} -> {new['s0']}: nodes rejoined by "
                          + ", ".join(f"{k} {v}" for k, v in sorted(transfers.items())))
