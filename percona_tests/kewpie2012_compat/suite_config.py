# kewpie 2012 compatibility: tests written the way kewpie 2012 (dbqp) tests were
# (module globals, execute_query tuples, skip_checks, innobackupex_* helpers,
# get_randgen_process, --opt-matrix, --randgen-seed), one per group of the 2012 API.
# A primary and a replica; backup_test declares its own single server.
server_requirements = [[], []]
server_requests = {'join_cluster': [(0, 1)]}

# Error-log lines these tests cause on purpose (the warnings check fails a test on others):
suppressions = [
    # randgen_test runs a randgen process the 2012 way and ends it: its clients do not say QUIT
    r"Aborted connection .* \(Got an error reading communication packets\)",
    # server_api_test stops and restarts the primary (die(), restart) while the replica runs
    r"Error reading packet from server: Lost connection to server",
    r"Slave I/O: error reconnecting to master",
]
