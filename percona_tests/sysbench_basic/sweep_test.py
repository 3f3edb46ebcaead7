"""A short sysbench sweep completes with sane numbers that match sysbench's own output."""
import os
import re

from lib import KewpieTestCase, SweepSpec, run_sweep, sweep_table, write_sweep_files


class SweepTest(KewpieTestCase):

    def _sweep(self, spec):
        server = self.servers[0]

        def server_for(_basedir, options):
            if server.user_options != self.options(*options):
                server.restart(options)
            return server

        out = os.path.join(self.context.log_dir, spec.name)
        return run_sweep(spec, server_for, os.path.join(out, "logs"), {}), out

    def test_point_select_and_read_only_sweeps(self):
        for workload in ("oltp_point_select", "oltp_read_only"):
            spec = SweepSpec.from_dict({"name": f"basic-{workload}", "workload": workload,
                                        "tables": 2, "table_size": 2000, "duration": 2,
                                        "warmup": 1, "threads": [1, 2],
                                        "variable": {"name": "innodb_spin_wait_delay",
                                                     "values": [0, 4]},
                                        "server_options": [o.as_arg() for o in
                                                           self.servers[0].user_options]})
            sweep, out = self._sweep(spec)
            self.assertEqual(len(sweep.runs), 4)
            for run in sweep.runs:
                self.assertGreater(run.result.tps, 0, run)
                self.assertEqual(run.result.errors, 0, run)
                self.assertGreaterEqual(len(run.result.intervals), 1)
                # the parsed figure is sysbench's own
                log = open(os.path.join(out, "logs", run.log)).read()
                own = float(re.search(r"transactions:\s+\d+\s+\(([\d.]+) per sec", log).group(1))
                self.assertAlmostEqual(run.result.tps, own)
            self.assertEqual(self.servers[0].variable("innodb_spin_wait_delay"), "4")
            paths = write_sweep_files(sweep, out)
            for key in ("csv", "json", "plot_threads", "plot_time", "table"):
                self.assertGreater(os.path.getsize(paths[key]), 0, key)
            self.assertIn("threads", sweep_table(sweep))
