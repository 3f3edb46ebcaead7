# Three Galera nodes (node 0 bootstraps, 1 and 2 join): randgen loads on the
# nodes, then every node must hold the same data.
server_type = 'galera'
server_requirements = [[], [], []]
server_requests = {'join_cluster': [(0, 1), (0, 2)]}
servers = []
# The ddl_dml grammar's statements that fail on the node that runs them (table
# exists / does not exist, duplicate column or index: its expected errors) are
# still replicated by TOI and fail the same way on the other nodes, which log
# them and go on (wsrep_ignore_apply_errors).  Other codes still fail the test.
_DDL_CODES = r"(1050|1060|1061|1091|1146)"
suppressions = [
    r"\[ERROR\] Slave SQL: Error '.*' on query\. Default database: 'test'\. .*"
    r"Internal MariaDB error code: " + _DDL_CODES + "$",
    r"\[Warning\] WSREP: Ignoring error '.*' on query\. Default database: 'test'\. .*"
    r"Error_code: " + _DDL_CODES + "$",
]
