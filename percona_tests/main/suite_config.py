# Server sanity: one plain server.
server_requirements = [[]]
server_requests = {}
