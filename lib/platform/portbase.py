"""The port kewpie's leases start from by default (a module of its own, so that the run
configuration, which every command imports, need not import the port leaser and socket)."""
from __future__ import annotations

DEFAULT_BASE_PORT = 9300
"""Where port leases start unless ``--base-port`` says otherwise."""
