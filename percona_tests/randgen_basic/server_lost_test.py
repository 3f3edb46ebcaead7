"""A server killed during a randgen run: the run stops with server_lost (exit code 101)."""
import threading
import time

from lib import KewpieTestCase, SHIPPED

GRAMMAR = SHIPPED["transactions"]


class ServerLostTest(KewpieTestCase):

    def test_kill_during_the_load(self):
        server = self.servers[0]
        setup = self.randgen(server, gendata=GRAMMAR.gendata)
        self.assertTrue(setup.ok, setup.summary())
        results = []
        # Status counters carry over from earlier tests on a reused server: wait for a rise.
        begins = int(server.status_var("Com_begin") or 0)
        load = threading.Thread(target=lambda: results.append(self.randgen(
            server, grammar=GRAMMAR.grammar, queries=10 ** 6, threads=2, duration=60)))
        load.start()
        self.wait_for(lambda: int(server.status_var("Com_begin") or 0) > begins, timeout=30,
                      msg="the load to commit something")
        started = time.monotonic()
        server.kill()
        load.join(timeout=60)
        self.assertFalse(load.is_alive())
        result = results[0]
        self.assertEqual((result.status, result.exit_code), ("server_lost", 101), result.summary())
        self.assertIn("server process is gone", result.reason)
        self.assertLess(time.monotonic() - started, 15)
        self.assertGreater(result.statements, 0)
        server.start()
