# One plain server; each test loads it with one of the grammars kewpie ships
# (randgen/conf/kewpie/) through the built-in randgen engine.
server_requirements = [[]]
server_requests = {}
servers = []
