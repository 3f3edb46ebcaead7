# Benchmark only (bench/startup.py): one plain server.
server_requirements = [[]]
server_requests = {}
