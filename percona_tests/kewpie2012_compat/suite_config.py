# kewpie 2012 compatibility: tests written the way kewpie 2012 (dbqp) tests were
# (module globals, execute_query tuples, skip_checks, innobackupex_* helpers,
# get_randgen_process, --opt-matrix, --randgen-seed), one per group of the 2012 API.
# A primary and a replica; backup_test declares its own single server.
server_requirements = [[], []]
server_requests = {'join_cluster': [(0, 1)]}
