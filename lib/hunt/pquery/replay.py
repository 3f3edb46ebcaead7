"""Replaying a corpus's statements on several connections in random order: the load of
a pquery-style trial.

It runs on randgen's engine (:class:`lib.randgen.executor.RandgenRun`), so a
trial gets what a grammar's gets: one connection per thread, a reconnect
after a lost connection, ``KILL QUERY`` of statements that run too long, the
Deadlock reporter (the hang oracle), the per-connection trace that
``--mode=reduce`` replays, the error profile.  Only the statements differ:
instead of a grammar, each thread's :class:`ReplayGenerator` picks them from
the corpus with its own seeded PRNG (:func:`lib.randgen.generator.derive_seed`
of the trial's seed and the thread), so a trial repeats per thread.

A pick is one statement drawn uniformly from the corpus (pquery's way) or,
with probability :data:`RUN_SHARE`, a run of 2 to :data:`MAX_RUN` consecutive
statements from a random place: the corpus keeps each test's order, so a run
is a table created, filled and queried as its test does, which reaches deeper
than statements that mostly miss each other's tables.  No gendata: the corpus
builds its own tables (``t1``, ``t2``... are everywhere).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import pymysql

from ...randgen.builtins import Prng
from ...randgen.channel import Channel, StatementError
from ...randgen.executor import RandgenRun
from ...randgen.generator import GenContext, Generator, derive_seed
from ...randgen.grammar import Grammar
from ...randgen.metadata import Metadata

if TYPE_CHECKING:
    from ...randgen.cmdline import RandgenOptions
    from ...randgen.connection import ConnectionSpec
    from ...randgen.trace import StatementTrace
    from ...servers.server import Server
    from typing import Callable

RUN_SHARE = 0.5        # picks that are runs of consecutive statements
MAX_RUN = 20           # the longest run
# each connection's first statements (traced): lock waits end soon, so a LOCK TABLES or
# FLUSH TABLES WITH READ LOCK of one thread stalls the others for seconds, not a day
SESSION_SETUP = ("SET SESSION lock_wait_timeout = 5, innodb_lock_wait_timeout = 5",)
# every HOME_EVERY picks a thread goes back to schema test (a corpus's USE db1, DROP
# DATABASE test... would leave it failing every statement that follows)
HOME = ("CREATE DATABASE IF NOT EXISTS test", "USE test")
HOME_EVERY = 100
# the one rule each thread "expands": the statements come from the corpus, not from it
_GRAMMAR = "query:\n\t;\n"


class ReplayGenerator(Generator):
    """One thread's statements, picked from the corpus (see the module docstring)."""

    def __init__(self, corpus: Sequence[str], thread_id: int, seed: int,
                 context: GenContext, name: str = "<sql-file>") -> None:
        super().__init__(Grammar.from_string(_GRAMMAR, name), thread_id, seed, context)
        self.corpus = corpus
        self.picker = Prng(derive_seed(seed, "pquery", thread_id))
        self._next = 0          # the next statement of a run
        self._left = 0          # statements left in the run
        self._home = 0          # the pick that last went back to schema test

    def next_statements(self) -> list[str]:
        """The next statement (a list of one), or, between picks every :data:`HOME_EVERY`
        statements, the way back to schema ``test``."""
        self.sentences += 1
        size = len(self.corpus)
        if self._left <= 0 and self.sentences - self._home >= HOME_EVERY:
            self._home = self.sentences
            return list(HOME)
        if self._left <= 0:
            if self.picker.float() < RUN_SHARE:
                self._left = self.picker.int(2, MAX_RUN)
            else:
                self._left = 1
            self._next = self.picker.int(0, size - 1)
        sql = self.corpus[self._next % size]
        self._next += 1
        self._left -= 1
        return [sql]

    def next_sentence(self) -> str | None:
        """The next statement (the engine asks for statements, this is the same)."""
        return "; ".join(self.next_statements())


class ReplayRun(RandgenRun):
    """A randgen run whose threads replay a corpus instead of expanding a grammar.

    ``options`` are randgen options of a gentest run (threads, queries -- statements
    per thread --, duration, seed, reporters, querytimeout); its grammar is only a
    name (the SQL source, for the log); no gendata is built unless asked for.
    """

    def __init__(self, corpus: Sequence[str], options: RandgenOptions, conn: ConnectionSpec,
                 log_path: str | None = None, alive: Callable[[], bool] | None = None,
                 server: Server | None = None, trace: StatementTrace | None = None) -> None:
        super().__init__(options, conn, log_path, alive, server=server, trace=trace)
        if not corpus:
            raise ValueError("a replay needs at least one statement")
        self.corpus = corpus

    def _connect_thread(self, gen: Generator) -> Channel:
        chan = super()._connect_thread(gen)
        for sql in SESSION_SETUP:
            seq, sent = self.trace.begin() if self.trace is not None else (0, 0.0)
            try:
                rows, affected = chan.run(sql)
                if self.trace is not None:
                    self.trace.done(seq, sent, gen.thread_id, gen.connection_id, sql, rows,
                                    affected)
            except StatementError as exc:
                if self.trace is not None:
                    self.trace.done(seq, sent, gen.thread_id, gen.connection_id, sql,
                                    error=exc.code, message=exc.message)
        return chan

    def _load_grammar(self) -> Grammar:
        return Grammar.from_string(_GRAMMAR, self.opts.grammar or "<sql-file>")

    def _load(self, grammar: Grammar, admin: pymysql.connections.Connection) -> list[Generator]:
        context = GenContext(Metadata.from_tables([], self.conn.database or "test"),
                             self.opts.threads)
        self.result.threads = self.opts.threads
        self.log.write(f"replay: {len(self.corpus)} statement(s) from "
                       f"{self.opts.grammar or '<sql-file>'}, {self.opts.threads} thread(s), "
                       f"runs of up to {MAX_RUN} consecutive statements in {RUN_SHARE:.0%} "
                       f"of the picks")
        return [ReplayGenerator(self.corpus, t, self.opts.seed, context,
                                self.opts.grammar or "<sql-file>")
                for t in self._local_threads()]
