"""kill -9 during write loads, restart, and every acknowledged write is there."""
import os

from lib import Append, Bank, KewpieTestCase, Schedule


class Kill9Test(KewpieTestCase):

    def test_acknowledged_writes_survive_kill9(self):
        server = self.servers[0]
        self.assertFalse(os.path.realpath(server.paths.datadir).startswith("/dev/shm/"),
                         "crash_recovery needs its datadir on disk (storage = 'disk')")
        run = self.run_workloads(
            [Bank([server], clients=3), Append([server], clients=4)], duration=4,
            faults=Schedule.cycle([self.kill(server)], every=0.8, hold=0.2, rounds=3))
        self.assertValid(run)
        self.assertTablesCheck(server, ["bank", "append"])
        self.assertEqual(server.variable("innodb_flush_log_at_trx_commit"), "1")
