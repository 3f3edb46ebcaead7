"""A recorded bank and insert-only workload on the primary while a replica is killed
and restarted: the checkers find every acknowledged write, and replicas agree."""
from lib import Append, Bank, Schedule, Step


def test_replica_killed_under_load(kewpie_replication):
    primary, r1, r2 = kewpie_replication.servers
    replicas = [r1, r2]
    k = kewpie_replication
    run = k.run_workloads(
        [Bank([primary], clients=2, observers=replicas),
         Append([primary], clients=2, observers=replicas)],
        duration=3,
        faults=Schedule([Step(k.kill(r1), after=0.5, hold=0.5),
                         Step(k.restart(r2), after=0.5, hold=0.5)]))
    k.assertValid(run, k.check_tables(primary, replicas, ["bank", "append"]))
    k.assertReplicasInSync(["bank", "append"])
