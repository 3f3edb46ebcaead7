"""The hang oracle: the randgen Deadlock reporter's rule, and servers that stop answering.

During the load the Deadlock reporter (:mod:`lib.randgen.reporters`) looks
at the processlist every second: when at least ``min(5, threads)`` of the
load's statements have been running for ``--hang-timeout`` seconds or more
(randgen's rule; its default there is 600 s), or the server accepts no
connection within 20 s, the server is deadlocked.  The load then stops and
the stuck statements are killed; the finding keeps the processlist and
``SHOW ENGINE INNODB STATUS``.  After the load, a server that still runs but
answers no SQL is a hang too.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from .finding import Finding
from .signature import fingerprint, hang_signature, unresponsive_signature

if TYPE_CHECKING:
    from ..randgen.result import RandgenResult


def deadlock_finding(result: RandgenResult, server: str) -> Finding | None:
    """The finding for a load the Deadlock reporter stopped (None when it did not)."""
    if not result.stalled and not any(r.startswith("Deadlock:") for r in result.reports):
        return None
    evidence = "\n\n".join(r for r in result.reports if r.startswith("Deadlock:"))
    sig = hang_signature(result.stalled)
    shapes = sorted({fingerprint(str(r.get("Info") or "")) for r in result.stalled})
    first = evidence.splitlines()[0] if evidence else "the server is deadlocked"
    summary = f"{server} hangs: {len(result.stalled)} statement(s) stuck" + (
        f" ({'; '.join(s[:80] for s in shapes[:3])})" if shapes else f": {first}")
    return Finding("hang", "hang", sig, summary, server,
                   {"stalled": result.stalled, "rule": first},
                   {f"hang-{server}.txt": evidence + "\n"})


def unresponsive_finding(server: str, role: str, how: str) -> Finding:
    """The finding for a server that runs but answers no SQL after the load."""
    return Finding("hang", "hang", unresponsive_signature(role), f"{server} ({role}): {how}",
                   server, {"health": how})
