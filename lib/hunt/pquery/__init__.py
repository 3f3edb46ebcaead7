"""pquery-style loads: statements mined from mysql-test (or any SQL file) replayed on
several connections in random order (docs/hunting.md, "pquery-style loads").

Modules, by job:

- ``mysqltest``: the SQL of a mysqltest script or SQL file, its mysqltest
  commands left out;
- ``filters``: the statements a load never sends (they would stop the server,
  lock the harness out, write outside the workdir or reach other servers);
- ``corpus``: a source (``mysql-test``, a folder, a file) mined, filtered,
  deduplicated and cached in the workdir;
- ``replay``: the load itself, on randgen's engine (threads, trace, hang watch).

The hunt calls :func:`lib.hunt.pquery.corpus.build_corpus` for each
``--sql-file`` before any server starts, and a trial whose load has a corpus
runs :func:`replay_run`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from .corpus import Corpus, CorpusError, CorpusStats, build_corpus
from .replay import ReplayRun

if TYPE_CHECKING:
    from typing import Callable

    from ...randgen.cmdline import RandgenOptions
    from ...randgen.connection import ConnectionSpec
    from ...randgen.trace import StatementTrace
    from ...servers.server import Server

__all__ = ("Corpus", "CorpusError", "CorpusStats", "build_corpus", "ReplayRun", "replay_run")


def replay_run(corpus_file: str, options: RandgenOptions, conn: ConnectionSpec,
               log_path: str | None = None, alive: Callable[[], bool] | None = None,
               server: Server | None = None, trace: StatementTrace | None = None,
               statements: Sequence[str] | None = None) -> ReplayRun:
    """A run that replays a corpus cache file's statements (or the statements given)."""
    from .corpus import read_cache
    corpus = list(statements) if statements is not None else \
        [sql for sql, _ in read_cache(corpus_file)]
    return ReplayRun(corpus, options, conn, log_path, alive, server=server, trace=trace)
