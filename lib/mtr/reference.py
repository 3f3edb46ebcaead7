"""MariaDB's own mysql-test-run.pl run beside kewpie (the parity bench's reference tool,
a reduced case's confirmation) without writing to /tmp or taking unleased ports.

Left alone, mtr picks its ports through ``/tmp/mysql-unique-ids`` (lib/mtr_unique.pm,
a folder it creates as whoever runs it) and the Galera SST scripts it starts make
``/tmp/tmp.*`` folders with ``mktemp``.  Here its ports come from kewpie's lock directory
(a span of leased blocks, handed over as ``MTR_BUILD_THREAD``: mtr's ports for build
thread b are ``b * MTR_PORT_GROUP_SIZE + 10000`` onwards, one group per parallel worker)
and its temporary files go to a folder the caller names (``TMPDIR``).
"""
from __future__ import annotations

import os
from typing import Mapping

from ..platform.ports import PortLeaser, PortSpan

MTR_PORT_GROUP = 30       # mtr's default MTR_PORT_GROUP_SIZE (ports per worker)
MTR_PORT_ORIGIN = 10000   # mtr's port of build thread 0
MTR_FIRST_PORT = 19000    # where mtr's own search starts (build thread 300)
MTR_MAX_PORT = 32767      # mtr refuses ports from here on
SPAN_ALIGN = 60           # a span's first port: a group boundary and a lease-block boundary


def lease_reference_ports(lock_dir: str, parallel: int = 1) -> PortSpan:
    """Lease one port group per mtr worker from kewpie's lock directory."""
    leaser = PortLeaser(lock_dir, base_port=MTR_FIRST_PORT, max_port=MTR_MAX_PORT)
    return leaser.lease_span(MTR_PORT_GROUP * max(1, parallel), origin=MTR_PORT_ORIGIN,
                             align=SPAN_ALIGN)


def reference_mtr_env(span: PortSpan, tmpdir: str,
                      base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for mtr: base (default os.environ) with the span's build thread, the
    group size, and TMPDIR set to tmpdir (which the caller creates, writable by mtr's user)."""
    if (span.first - MTR_PORT_ORIGIN) % MTR_PORT_GROUP:
        raise ValueError(f"port {span.first} does not start one of mtr's port groups")
    env = dict(os.environ if base is None else base)
    env.pop("MTR_PORT_BASE", None)   # it would override the build thread
    env["MTR_BUILD_THREAD"] = str((span.first - MTR_PORT_ORIGIN) // MTR_PORT_GROUP)
    env["MTR_PORT_GROUP_SIZE"] = str(MTR_PORT_GROUP)
    env["TMPDIR"] = tmpdir
    return env
