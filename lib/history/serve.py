"""``kewpie history serve``: the page on 127.0.0.1 through waitress (a WSGI server).

The port is leased as kewpie leases its servers' (lib/platform/ports.py: a lock file
per port block, held while serving) unless ``--port`` names one.  Only the loopback
address is ever bound.
"""
from __future__ import annotations

from typing import TextIO

from waitress.server import create_server

from ..platform.ports import PortLeaser, default_lock_dir
from .errors import HistoryUsageError
from .store import open_engine
from .target import StoreTarget
from .web import create_app

HOST = "127.0.0.1"
THREADS = 4


def serve(target: StoreTarget, port: int, lock_dir: str, base_port: int, out: TextIO) -> int:
    """Serve the store's page until interrupted; the exit status."""
    if port and not 1024 <= port <= 65535:
        raise HistoryUsageError(f"--port {port}: expected 1024-65535")
    engine = open_engine(target)
    lease = None
    try:
        if not port:
            lease = PortLeaser(lock_dir or default_lock_dir(), base_port).lease()
            port = lease.first
        # bound (and listening) before the line that says so: a reader of that line may
        # connect at once
        server = create_server(create_app(engine), host=HOST, port=port,
                               threads=THREADS, ident="kewpie-history")
        out.write(f"kewpie history: serving {target.display} on http://{HOST}:{port}/ "
                  f"(Ctrl-C stops it)\n")
        out.flush()
        try:
            server.run()
        except KeyboardInterrupt:
            pass
        finally:
            server.close()
        return 0
    finally:
        if lease is not None:
            lease.release()
        engine.dispose()
