# A primary and one replica, once per binary log format (combinations): every
# test runs as 'replication_formats.<test> 'row'', ''statement'' and ''mixed''.
server_requirements = [[], []]
server_requests = {'join_cluster': [(0, 1)]}
combinations = {
    'row': {'options': ['--binlog-format=ROW']},
    'statement': {'options': ['--binlog-format=STATEMENT']},
    'mixed': {'options': ['--binlog-format=MIXED']},
}
servers = []
