"""The surface generator as a hunt load (``--sql-file=surface``), on randgen's engine.

A trial of this load (:class:`SurfaceRun`) builds the schema of its seed on its
own connection first -- drops, CREATE statements, rows: traced as thread 0, as a
grammar's gendata is -- then runs ``--threads`` connections, each with its own
:class:`~lib.hunt.surface.statements.StatementGenerator` (the seed and the thread),
sending its units of statements until ``--queries`` (statements per thread) or the
trial's time.  Everything else is the engine's: the trace, reconnects, KILL QUERY
of a statement that runs too long, the Deadlock reporter.  The tables stay in
schema ``test`` after the load, so the wrong-result oracles run over them.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import pymysql

from ...randgen.connection import LOST_CONNECTION_CODES, error_message
from ...randgen.errors import RandgenEnvironmentError
from ...randgen.executor import RandgenRun
from ...randgen.generator import GenContext, Generator
from ...randgen.grammar import Grammar
from ...randgen.metadata import Metadata
from . import Surface
from .statements import StatementGenerator
from ...servers.sql import error_code

if TYPE_CHECKING:
    from ...randgen.cmdline import RandgenOptions
    from ...randgen.connection import ConnectionSpec
    from ...randgen.trace import StatementTrace
    from ...servers.server import Server

SOURCE = "surface"
_GRAMMAR = "query:\n\t;\n"


class SurfaceThread(Generator):
    """One thread's statements, from its StatementGenerator."""

    def __init__(self, stream: StatementGenerator, thread_id: int, seed: int,
                 context: GenContext) -> None:
        super().__init__(Grammar.from_string(_GRAMMAR, SOURCE), thread_id, seed, context)
        self.stream = stream

    def next_statements(self) -> list[str]:
        """The next unit's statements."""
        self.sentences += 1
        return [s.sql for s in self.stream.unit()]

    def next_sentence(self) -> str | None:
        """The next unit, joined (the engine asks for statements)."""
        return "; ".join(self.next_statements())


class SurfaceRun(RandgenRun):
    """A randgen run whose threads send the surface generator's statements."""

    def __init__(self, options: RandgenOptions, conn: ConnectionSpec,
                 log_path: str | None = None, alive: Callable[[], bool] | None = None,
                 server: Server | None = None, trace: StatementTrace | None = None) -> None:
        super().__init__(options, conn, log_path, alive, server=server, trace=trace)
        self.surface = Surface(options.seed)

    def _load_grammar(self) -> Grammar:
        return Grammar.from_string(_GRAMMAR, SOURCE)

    def _load(self, grammar: Grammar, admin: pymysql.connections.Connection) -> list[Generator]:
        self._setup(admin)
        context = GenContext(Metadata.from_tables([], self.conn.database or "test"),
                             self.opts.threads)
        self.result.threads = self.opts.threads
        schema = self.surface.schema
        self.log.write(f"surface: seed {self.opts.seed}: {len(schema.tables)} table(s) "
                       f"({', '.join(f'{t.name} {t.engine}' for t in schema.tables)}), "
                       f"{len(schema.sequences)} sequence(s), {len(schema.views)} view(s)")
        return [SurfaceThread(self.surface.stream(t), t, self.opts.seed, context)
                for t in self._local_threads()]

    def _setup(self, admin: pymysql.connections.Connection) -> None:
        """The schema's statements on the run's connection, traced as thread 0."""
        trace = self.trace
        conn_id = int(admin.thread_id())
        errors: dict[int, int] = {}
        with admin.cursor() as cur:
            for sql in self.surface.setup():
                self.result.gendata_statements += 1
                seq, sent = trace.begin() if trace is not None else (0, 0.0)
                try:
                    affected = cur.execute(sql)
                    rows = len(cur.fetchall()) if cur.description else None
                    if trace is not None:
                        trace.done(seq, sent, 0, conn_id, sql, rows, int(affected or 0))
                except pymysql.MySQLError as exc:
                    code = error_code(exc)
                    if trace is not None:
                        trace.done(seq, sent, 0, conn_id, sql, error=code,
                                   message=error_message(exc))
                    errors[code] = errors.get(code, 0) + 1
                    if code in LOST_CONNECTION_CODES or isinstance(exc, pymysql.err.InterfaceError):
                        raise RandgenEnvironmentError(f"the server went away during the "
                                                      f"surface's setup: {exc}") from exc
        self.result.gendata_errors.update(errors)
        self.log.write(f"surface: {self.result.gendata_statements} setup statements, errors: "
                       f"{', '.join(f'{c} x{n}' for c, n in sorted(errors.items())) or 'none'}")


def surface_run(options: RandgenOptions, conn: ConnectionSpec, log_path: str | None = None,
                alive: Callable[[], bool] | None = None, server: Server | None = None,
                trace: StatementTrace | None = None) -> SurfaceRun:
    """A run of the surface load (the options' seed picks the schema and the streams)."""
    return SurfaceRun(options, conn, log_path, alive, server, trace)
