"""Running a grammar against a server: gendata, N threads, statistics, a status.

:class:`RandgenRun` does one run of the built-in engine:

1. read the grammar (and ``--redefine`` files) and decide how its Perl blocks
   run (natively, or in a ``perl`` coprocess per thread);
2. connect, and build the gendata tables (a ``.zz`` file or the simple set);
3. read the table/column metadata from ``information_schema``;
4. start N threads, each with its own connection and generator; each runs
   its init rule once, then sentences until ``--queries`` per thread or
   ``--duration`` seconds; a sentence's statements run one by one;
5. watch: statements running longer than ``--querytimeout`` and threads
   still busy after the deadline get ``KILL QUERY``; DDL triggers a metadata
   refresh (at most every ``metadata_refresh`` seconds, in the background);
6. report: statements, errors by MySQL error code, duration, statements/s,
   and a status (see :mod:`lib.randgen.result`).

Statement errors are counted, never fatal.  A lost connection is re-made;
when that fails (or the ``alive`` callback says the server process is gone)
the run stops with ``server_lost``.  A grammar or Perl-block failure stops
it with ``grammar_error``; a missing file or an unreachable server with
``environment_error``.
"""
from __future__ import annotations

import os
import re
import threading
import time
from typing import TYPE_CHECKING, Any, Callable, TextIO

import pymysql
import pymysql.cursors

from ..home import data_path
from ..platform.logsetup import get_logger
from .builtins import Prng
from .cmdline import RandgenOptions
from .channel import Channel, StatementError, load_mysqlclient, open_channel
from .colocate import colocate, is_local, server_thread
from .connection import LOST_CONNECTION_CODES, ConnectionSpec, error_message
from .errors import (GendataError, GrammarError, PerlBlockError,
                     RandgenEnvironmentError, RandgenError)
from .generator import (BlockFactory, GenContext, Generator, NativeBlocks,
                        compile_blocks, derive_seed, pid_for_thread)
from .grammar import Grammar
from .metadata import MetadataCache, load_metadata
from .result import (EXIT_CODES, STATUS_ENVIRONMENT_ERROR, STATUS_FAILURE,
                     STATUS_GRAMMAR_ERROR,
                     STATUS_OK, STATUS_SERVER_LOST, RandgenResult, ThreadStats)
from ..servers.sql import error_code

if TYPE_CHECKING:  # imported when a run needs them (plain runs load less)
    from ..servers.server import Server
    from .gendata import GendataPlan
    from .gendata_simple import SimpleGendata
    from .reporters import DeadlockWatch
    from .trace import StatementTrace
    from .validators import Difference, Validators
    from .workers import Worker

RANDGEN_HOME = data_path("randgen")
LOST_CHECK_GRACE = 2.0  # seconds to let a killed server be seen as gone
RECONNECT_TIMEOUT = 10.0     # seconds a thread tries to re-make a lost connection
STOP_GRACE = 5.0             # seconds after the deadline before KILL QUERY
START_WAIT = 60.0            # seconds a connected thread waits for the others to connect
MAX_SAMPLE = 300
_DDL_RE = re.compile(r"^\s*(?:/\*.*?\*/\s*)*(CREATE|DROP|ALTER|RENAME|TRUNCATE)\b", re.I | re.S)


class RunLog:
    """Kewpie-style lines (``20261122-151640 INFO ...``) to a file, also kept in memory."""

    def __init__(self, path: str | None, echo: bool = False) -> None:
        self.path = path
        self.echo = echo
        self.lines: list[str] = []
        self._lock = threading.Lock()
        self._fh: TextIO | None = None
        if path:
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
            self._fh = open(path, "w", buffering=1)

    def write(self, text: str, level: str = "INFO", keep: bool = True) -> None:
        """One line; keep=False writes it to the file only (statement traces)."""
        line = f"{time.strftime('%Y%m%d-%H%M%S')} {level} {text}"
        with self._lock:
            if keep:
                self.lines.append(line)
            if self._fh is not None:
                self._fh.write(line + "\n")
        if self.echo and keep:
            get_logger().info(text)

    def text(self) -> str:
        """The kept lines."""
        with self._lock:
            return "\n".join(self.lines) + ("\n" if self.lines else "")

    def close(self) -> None:
        """Close the file."""
        if self._fh is not None:
            self._fh.close()
            self._fh = None


class _ServerLost(Exception):
    pass


class _Link:
    """A thread's connection and the undoing of its colocation (None: none to undo)."""

    def __init__(self, conn: Channel, unpin: Callable[[], None] | None) -> None:
        self.conn = conn
        self.unpin = unpin

    def close(self) -> None:
        """Undo the colocation (once), close the connection."""
        if self.unpin is not None:
            self.unpin()
            self.unpin = None
        self.conn.close()


class RandgenRun:
    """One run of the built-in engine against one server."""

    def __init__(self, options: RandgenOptions, conn: ConnectionSpec, log_path: str | None = None,
                 alive: Callable[[], bool] | None = None, base_dir: str = RANDGEN_HOME,
                 echo: bool = False, server: Server | None = None,
                 compare: list[ConnectionSpec] | None = None,
                 thread_ids: list[int] | None = None, deadline_wall: float | None = None,
                 trace: StatementTrace | None = None) -> None:
        self.opts = options
        self.trace = trace            # every statement sent, with its connection and result
        self.trace_names: dict[str, str] = {}  # a compared server's describe() -> its name
        self.thread_ids = thread_ids      # a worker process: only these threads
        self.deadline_wall = deadline_wall
        self._workers: list[Worker] = []
        self.conn = conn
        self.server = server          # a kewpie server (reporters: error log, restarts)
        self.compare = list(compare or [])
        self.validators: list[str] = []
        self.reporters: list[str] = []
        self._exit_override: int | None = None
        self._diff_lock = threading.Lock()
        self._generators: list[Generator] = []
        self._deadlock: DeadlockWatch | None = None
        self._log_mark = 0
        self.alive = alive
        self.base_dir = base_dir
        self.log = RunLog(log_path, echo)
        self.result = RandgenResult(engine="builtin", grammar=options.grammar or "",
                                    gendata=options.gendata or ("simple" if options.gendata_simple else ""),
                                    seed=options.seed, log_path=log_path or "")
        self._stop = threading.Event()
        self._fatal_lock = threading.Lock()
        self._first_statement = threading.Event()
        self._start_line: threading.Barrier | None = None
        self._deadline = float("inf")
        self._current: dict[int, tuple[float, int] | None] = {}
        self._killed: set[tuple[int, float]] = set()
        self._cache: MetadataCache | None = None
        self._refresh_wanted = threading.Event()
        self._refresher: threading.Thread | None = None
        self._version = ""

    # ------------------------------------------------------------ public
    def run(self) -> RandgenResult:
        """Do the run and return its result (never raises for run problems)."""
        res = self.result
        res.started_at = time.time()
        opts = self.opts
        self.log.write(f"randgen (kewpie built-in engine): {opts.tool} grammar={opts.grammar or '-'} "
                       f"gendata={res.gendata or '-'} threads={opts.threads} queries={opts.queries} "
                       f"duration={opts.duration:g} seed={opts.seed} server={self.conn.describe()}")
        for note in opts.ignored:
            self.log.write(f"option ignored by the built-in engine: {note}")
        admin, generators = self._set_up()
        try:
            if res.status == STATUS_OK and generators:
                self._run_threads(generators)
        finally:  # also on an interrupt (--test-timeout): stop threads, end coprocesses
            self._stop.set()
            for gen in generators:
                gen.close()
        self._finish(admin)
        return res

    def _set_up(self) -> tuple[pymysql.connections.Connection | None, list[Generator]]:
        """Steps 1-3 (see the module): (the admin connection, the threads' generators);
        a problem sets the run's status (no generators then)."""
        opts = self.opts
        admin = None
        generators: list[Generator] = []
        try:
            self._plugins()
            grammar = self._load_grammar() if opts.tool == "gentest" else None
            admin = self.conn.connect(database="")
            self._use_schema(admin)
            if (opts.gendata or opts.gendata_simple) and not opts.start_dirty:
                self._gendata(admin)
                for other in self.compare:
                    other_admin = other.connect(database="")
                    try:
                        self._use_schema(other_admin, other)
                        self._gendata(other_admin, other)
                    finally:
                        _close_quietly(other_admin)
            if grammar is not None:
                generators = self._load(grammar, admin)
                self._generators = generators
        except GrammarError as exc:
            self._fail(STATUS_GRAMMAR_ERROR, str(exc))
        except (RandgenEnvironmentError, GendataError) as exc:
            gone = self.alive is not None and not self.alive()
            self._fail(STATUS_SERVER_LOST if gone else STATUS_ENVIRONMENT_ERROR,
                       f"the server process is gone: {exc}" if gone else str(exc))
        except _ServerLost as exc:
            self._fail(STATUS_SERVER_LOST, str(exc))
        except (pymysql.MySQLError, OSError) as exc:
            self._fail(STATUS_ENVIRONMENT_ERROR,
                       f"setting up the run failed: {error_message(exc)}")
        except Exception as exc:  # an engine bug must not end the run without a reason
            self._fail(STATUS_GRAMMAR_ERROR, engine_fault([opts.grammar or opts.gendata or ""], exc))
        return admin, generators

    def _finish(self, admin: pymysql.connections.Connection | None) -> None:
        """Step 6 (see the module), after the threads: the server still answers, the
        after-run checks, the exit code, the report, the log closed into the result."""
        res = self.result
        if self._refresher is not None:
            self._refresher.join(timeout=5)
        if res.status == STATUS_OK and not self._server_answers():
            self._fail(STATUS_SERVER_LOST, "the server does not answer after the run")
        if admin is not None:
            try:
                admin.close()
            except pymysql.MySQLError:
                pass
        self._after_run()
        res.exit_code = self._exit_override if res.status == STATUS_FAILURE and \
            self._exit_override else EXIT_CODES[res.status]
        if self._cache is not None:
            res.metadata_refreshes = self._cache.refreshes
        self._report()
        self.log.close()
        res.output = self.log.text()

    # ------------------------------------------------------------ validators, reporters
    def _plugins(self) -> None:
        opts = self.opts
        if not (opts.validators or opts.reporters or opts.compare_dsns or self.compare):
            return  # nothing to import: keeps the launch cost of plain runs
        from . import run_checks
        run_checks.plugins(self)

    def _record_difference(self, diff: Difference, stop: bool) -> None:
        from . import run_checks
        run_checks.record_difference(self, diff, stop)

    def _after_run(self) -> None:
        if not (self.validators or self.reporters):
            return
        from . import run_checks
        run_checks.after_run(self)

    # ------------------------------------------------------------ setup
    def _load_grammar(self) -> Grammar:
        opts = self.opts
        if not opts.grammar:
            raise RandgenEnvironmentError("no --grammar given")
        grammar = Grammar.from_files([opts.grammar, *opts.redefine], [self.base_dir])
        for w in grammar.warnings:
            self.log.write(f"grammar: {w}", "WARNING")
            self.result.warnings.append(w)
        return grammar

    def _use_schema(self, admin: pymysql.connections.Connection,
                    conn: ConnectionSpec | None = None) -> None:
        db = (conn or self.conn).database
        if not db:
            return
        try:
            with admin.cursor() as cur:
                cur.execute(f"USE `{db}`")
        except pymysql.MySQLError as exc:
            raise RandgenEnvironmentError(f"cannot use schema {db!r}: {exc}") from exc

    def _gendata(self, admin: pymysql.connections.Connection,
                 target: ConnectionSpec | None = None) -> None:
        from .gendata import GendataOptions, GendataPlan, read_spec
        from .gendata_simple import SimpleGendata
        opts = self.opts
        res = self.result
        t0 = time.monotonic()
        plan: GendataPlan | SimpleGendata
        if opts.gendata:
            spec = read_spec(opts.gendata)
            plan = GendataPlan(spec, GendataOptions(
                rows=opts.rows, engines=opts.engine.split(",") if opts.engine else None,
                views=opts.views, notnull=opts.notnull,
                short_column_names=opts.short_column_names, strict_fields=opts.strict_fields,
                varchar_length=opts.varchar_length, max_rows=opts.max_rows), self.conn.database)
            self.log.write(f"gendata{' on ' + target.describe() if target else ''}: "
                           f"{opts.gendata}: {len(plan.tables)} table(s) x "
                           f"{len(plan.schemas)} schema(s), {len(plan.fields)} field(s)")
        else:
            plan = SimpleGendata(opts.rows, opts.engine or "", opts.views, opts.notnull,
                                 opts.varchar_length, opts.max_rows)
            self.log.write(f"gendata: simple data set, tables {', '.join(plan.table_names())}")
        prng = Prng(derive_seed(opts.seed, "gendata"), opts.varchar_length)
        trace = self.trace
        where = self.trace_names.get(target.describe(), target.describe()) if target else ""
        conn_id = int(admin.thread_id()) if trace is not None else None
        with admin.cursor() as cur:
            for sql in plan.statements(prng):
                res.gendata_statements += 1
                if opts.sqltrace:
                    self.log.write(f"[gendata] {sql};", "INFO", keep=False)
                seq, sent = trace.begin() if trace is not None else (0, 0.0)
                try:
                    affected = cur.execute(sql)
                    rows = len(cur.fetchall()) if cur.description else None
                    if trace is not None:
                        trace.done(seq, sent, 0, conn_id, sql, rows, int(affected or 0),
                                   server=where)
                except pymysql.MySQLError as exc:
                    code = error_code(exc)
                    if trace is not None:
                        trace.done(seq, sent, 0, conn_id, sql, error=code,
                                   message=error_message(exc), server=where)
                    if code in LOST_CONNECTION_CODES or isinstance(exc, pymysql.err.InterfaceError):
                        raise _ServerLost(f"the server went away during gendata: {exc}") from exc
                    res.gendata_errors[code] = res.gendata_errors.get(code, 0) + 1
                    if res.gendata_errors[code] == 1:
                        self.log.write(f"gendata: error {code} ({error_message(exc)}) in: "
                                       f"{sql[:MAX_SAMPLE]}",
                                       "WARNING")
        self._use_schema(admin, target)
        if target is not None:
            return
        res.gendata_seconds = time.monotonic() - t0
        self.log.write(f"gendata: {res.gendata_statements} statements in "
                       f"{res.gendata_seconds:.2f}s, errors: "
                       f"{_profile(res.gendata_errors)}")

    def _load(self, grammar: Grammar, admin: pymysql.connections.Connection) -> list[Generator]:
        opts = self.opts
        coprocess = bool(grammar.perl_blocks()) and (opts.perl_blocks == "perl" or
                                                      bool(compile_blocks(grammar)[1]))
        md = load_metadata(admin, self.conn.database or "test",
                           grammar.uses("_collation", "_collation_name", "_charset",
                                        "_charset_name"), with_rows=coprocess)
        self._cache = MetadataCache(md, opts.metadata_refresh, with_rows=coprocess)
        user, tmpdir = "root@localhost", "/tmp"
        with admin.cursor() as cur:
            cur.execute("SELECT CURRENT_USER(), @@secure_file_priv, @@tmpdir, VERSION()")
            row = cur.fetchone()
            if row:
                user, tmpdir = row[0], (row[1] or row[2] or "/tmp").rstrip("/") or "/"
                self._version = str(row[3] or "")
        ctx = GenContext(self._cache, opts.threads, self.base_dir, tmpdir, user, opts.varchar_length)
        factory = self._block_factory(grammar)
        self.result.threads = opts.threads
        self.log.write(f"metadata: {md.table_count()} table(s) in {len(md.schemas())} schema(s); "
                       f"default schema {md.default_schema}")
        return [Generator(grammar, t, opts.seed, ctx, factory) for t in self._local_threads()]

    def _local_threads(self) -> list[int]:
        """The threads this process runs (the others go to worker processes)."""
        if self.thread_ids is not None:
            return list(self.thread_ids)
        if self.opts.threads <= 1 or self.opts.processes == 1 or self.trace is not None:
            return list(range(1, self.opts.threads + 1))  # a traced run: one process
        from .workers import process_count, thread_groups
        return thread_groups(self.opts.threads,
                             process_count(self.opts.threads, self.opts.processes))[0]

    def stop(self) -> None:
        """Stop the run's threads (a worker told to stop by its main process)."""
        self._stop.set()

    def _start_workers(self) -> None:
        from .workers import Worker, process_count, thread_groups
        opts = self.opts
        groups = thread_groups(opts.threads, process_count(opts.threads, opts.processes))[1:]
        if not groups:
            return
        deadline = time.time() + opts.duration
        for n, ids in enumerate(groups, start=1):
            log = f"{self.log.path}.worker{n}" if self.log.path else None
            self._workers.append(Worker(opts, self.conn, self.compare, self.base_dir, ids,
                                        deadline, log, []))
        self.log.write(f"threads {', '.join(str(g) for g in groups)} run in "
                       f"{len(groups)} worker process(es)"
                       + (f"; their logs: {self.log.path}.workerN" if self.log.path else ""))

    def _block_factory(self, grammar: Grammar) -> BlockFactory | None:
        blocks = grammar.perl_blocks()
        if not blocks:
            return None
        mode = self.opts.perl_blocks
        compiled, unsupported = compile_blocks(grammar)
        if mode != "perl" and not unsupported:
            self.log.write(f"perl blocks: {len(compiled)} block(s), all run natively")
            return lambda tid, prng: NativeBlocks(compiled, prng, tid)
        first, why = unsupported[0] if unsupported else (blocks[0], "--perl-blocks=perl")
        if mode == "native":
            raise PerlBlockError(f"outside the native Perl subset ({why})", first.path,
                                 first.line, first.text)
        from .perl_coprocess import PerlCoprocess, find_perl, perl_dsn
        perl = find_perl()
        if perl is None:
            raise PerlBlockError(f"outside the native Perl subset ({why}) and no perl (with "
                                 f"JSON::PP) to run it", first.path, first.line, first.text)
        self.log.write(f"perl blocks: {len(unsupported)} block(s) outside the native subset "
                       f"(first: {first.path}:{first.line}: {why}); all blocks run in a perl "
                       f"coprocess per thread")
        cache = self._cache
        assert cache is not None
        seed = self.opts.seed
        vlen = self.opts.varchar_length
        dsn, version = perl_dsn(self.conn), self._version
        return lambda tid, prng: PerlCoprocess(perl, derive_seed(seed, "perl", tid), tid,
                                               pid_for_thread(tid), cache.current, vlen,
                                               dsn=dsn, version=version)

    # ------------------------------------------------------------ threads
    def _run_threads(self, generators: list[Generator]) -> None:
        res = self.result
        stats = [ThreadStats(g.thread_id) for g in generators]
        res.per_thread = stats
        t0 = time.monotonic()
        self._deadline = t0 + self.opts.duration
        if self.deadline_wall is not None:
            self._deadline = t0 + max(0.0, self.deadline_wall - time.time())
        if self._cache is not None:
            self._start_refresher()
        if self.thread_ids is None:
            driver = "PyMySQL" if self.validators or load_mysqlclient() is None else "mysqlclient"
            self.log.write(f"client library for the statements: {driver}")
        if self.thread_ids is None and self.opts.threads > len(generators):
            self._start_workers()
        threads = [threading.Thread(target=self._worker, args=(g, st), daemon=True,
                                    name=f"randgen-{g.thread_id}")
                   for g, st in zip(generators, stats)]
        # every thread connects first, then all start together: one thread's first
        # statements do not run alone while another still connects (a planted crash of a
        # 2-thread replay came before the second thread had connected)
        self._start_line = threading.Barrier(len(threads)) if len(threads) > 1 else None
        for t in threads:
            t.start()
        self._watch(threads)
        self._collect_workers()
        res.duration = time.monotonic() - t0
        for g, st in zip(generators, stats):
            st.runaways = g.runaways
            res.warnings.extend(w for w in g.warnings if w not in res.warnings)
        stats = res.per_thread = sorted(res.per_thread, key=lambda st: st.thread_id)
        res.sentences = sum(s.sentences for s in stats)
        res.statements = sum(s.statements for s in stats)
        res.ok_statements = sum(s.ok for s in stats)
        res.runaways = sum(s.runaways for s in stats)
        res.reconnects = sum(s.reconnects for s in stats)
        for s in stats:
            for code, n in s.errors.items():
                res.errors[code] = res.errors.get(code, 0) + n

    def _collect_workers(self) -> None:
        if not self._workers:
            return
        from .workers import merge
        for worker in self._workers:
            why = merge(self.result, worker.finish(STOP_GRACE + 40), worker.thread_ids)
            if why:
                status = why.split(":", 1)[0]
                self._fail(status if status in EXIT_CODES else STATUS_ENVIRONMENT_ERROR,
                           f"threads {worker.thread_ids}: {why}")

    def _watch(self, threads: list[threading.Thread]) -> None:
        timeout = self.opts.querytimeout
        kill_at: float | None = None
        stopped_workers = False
        while any(t.is_alive() for t in threads) or any(w.alive() for w in self._workers):
            if self._stop.is_set() and not stopped_workers:
                stopped_workers = True
                for w in self._workers:
                    w.stop()
            if not any(t.is_alive() for t in threads):
                time.sleep(0.05)
            for t in threads:
                t.join(timeout=0.05)
            now = time.monotonic()
            if now >= self._deadline and not self._stop.is_set():
                self._stop.set()
            if self._stop.is_set() and kill_at is None:
                kill_at = now + STOP_GRACE
            for tid, cur in list(self._current.items()):
                if cur is None:
                    continue
                started, conn_id = cur
                overdue = timeout > 0 and now - started > timeout
                if (overdue or (kill_at is not None and now >= kill_at)) and \
                        (conn_id, started) not in self._killed:
                    self._killed.add((conn_id, started))
                    self._kill_query(conn_id, f"thread {tid}: statement running "
                                              f"{now - started:.1f}s")
            if self._deadlock is not None and not self._stop.is_set():
                found = self._deadlock.check(
                    lambda: None if self._workers else {g.connection_id for g in self._generators})
                if found is not None:
                    self._deadlocked(*found)
            if kill_at is not None and now > kill_at + 30:
                self.log.write("threads still busy 30s after KILL QUERY; giving up on them",
                               "WARNING")
                break

    @staticmethod
    def _is_ddl(sql: str) -> bool:
        return bool(_DDL_RE.match(sql))

    def _deadlocked(self, evidence: str, stuck: list[int]) -> None:
        from . import run_checks
        run_checks.deadlocked(self, evidence, stuck)

    def _kill_query(self, conn_id: int, why: str) -> None:
        self.log.write(f"KILL QUERY {conn_id} ({why})", "WARNING")
        try:
            c = self.conn.connect(connect_timeout=3)
            try:
                with c.cursor() as cur:
                    cur.execute(f"KILL QUERY {int(conn_id)}")
            finally:
                c.close()
        except (RandgenEnvironmentError, pymysql.MySQLError):
            pass

    def _connect_thread(self, gen: Generator) -> Channel:
        chan = open_channel(self.conn, rows=bool(self.validators))
        gen.connection_id = chan.thread_id()
        return chan

    def _wait_start(self) -> None:
        """Wait (up to :data:`START_WAIT` s) until every thread of this process has
        connected, so that they start their statements together."""
        if self._start_line is None:
            return
        try:
            self._start_line.wait(START_WAIT)
        except threading.BrokenBarrierError:
            pass      # a thread could not connect, or took too long: start anyway

    def _worker(self, gen: Generator, st: ThreadStats) -> None:
        try:
            conn = self._connect_thread(gen)
        except BaseException as exc:
            if self._start_line is not None:
                self._start_line.abort()     # the others start without this one
            if not isinstance(exc, RandgenEnvironmentError):
                raise
            self._lost(gen, st, f"thread {gen.thread_id} cannot connect: {exc}")
            return
        self._wait_start()
        opts = self.opts
        init = gen.grammar.has_init(gen.thread_id)
        link = _Link(conn, self._colocate(conn))
        others: list[pymysql.connections.Connection] = []
        checker: Validators | None = None
        if self.validators:
            compared = self._compared(gen)
            if compared is None:
                conn.close()
                return
            others, checker = compared
        try:
            while not self._stop.is_set():
                if st.sentences >= opts.queries or time.monotonic() >= self._deadline:
                    break
                if not init and not gen.grammar.runs_thread(gen.thread_id):
                    self._idle_thread(gen)
                    break
                statements = self._next_statements(gen)
                if statements is None:
                    break
                if init:
                    init = False
                else:
                    st.sentences += 1
                if not self._run_sentence(gen, st, link, statements, checker):
                    return
                if gen.runaways > 100 and st.statements == 0:
                    self._fail(STATUS_GRAMMAR_ERROR, f"every sentence ran away: {gen.warnings[0]}")
                    break
        finally:
            link.close()
            for other in others:
                _close_quietly(other)
            note = checker.transform_note() if checker is not None else ""
            if note:
                with self._fatal_lock:
                    self.result.notes.append(note)

    def _compared(self, gen: Generator) -> tuple[list[pymysql.connections.Connection],
                                                 Validators] | None:
        """The thread's connections to the servers it compares with, and the validators
        over them; None (the run failed) when one cannot connect."""
        from .validators import Validators
        try:
            others = [c.connect() for c in self.compare]
        except RandgenEnvironmentError as exc:
            self._fail(STATUS_ENVIRONMENT_ERROR, f"thread {gen.thread_id} cannot connect to "
                                                 f"a server to compare with: {exc}")
            return None
        checker = Validators(self.validators, self.opts.transformers,
                             [(c.describe(), o.cursor()) for c, o in zip(self.compare, others)],
                             gen.thread_id, self._record_difference)
        return others, checker

    def _next_statements(self, gen: Generator) -> list[str] | None:
        """The thread's next sentence; None (the run failed) when the grammar fails."""
        try:
            return gen.next_statements()
        except GrammarError as exc:
            self._fail(STATUS_GRAMMAR_ERROR, str(exc))
        except RandgenError as exc:
            self._fail(STATUS_ENVIRONMENT_ERROR, str(exc))
        except Exception as exc:  # an engine bug must not end the run without a reason
            self._fail(STATUS_GRAMMAR_ERROR, engine_fault(gen.grammar.files, exc))
        return None

    def _run_sentence(self, gen: Generator, st: ThreadStats, link: _Link,
                      statements: list[str], checker: Validators | None) -> bool:
        """A sentence's statements, one by one, until one loses the connection (re-made:
        the sentence ends there); False when it cannot be re-made (the run stops)."""
        for sql in statements:
            if self._stop.is_set():
                break
            if self._execute(gen, st, link.conn, sql, checker) == "lost":
                link.close()
                again = self._reconnect(gen, st)
                if again is None:
                    return False
                link.conn, link.unpin = again, self._colocate(again)
                break
        return True

    def _colocate(self, chan: Channel) -> Callable[[], None] | None:
        """A one-thread run on a local server: its thread and the connection's server
        thread on one CPU (lib.randgen.colocate); the function that undoes it."""
        if self.opts.threads != 1 or self.validators or not is_local(self.conn):
            return None
        return colocate(server_thread(chan.value))

    def _idle_thread(self, gen: Generator) -> None:
        note = (f"thread {gen.thread_id} has no rule to run (no thread{gen.thread_id} and no "
                f"query rule in the grammar): it stays idle")
        self.log.write(note, "WARNING")
        with self._fatal_lock:
            if note not in self.result.warnings:
                self.result.warnings.append(note)

    def _execute(self, gen: Generator, st: ThreadStats, chan: Channel, sql: str,
                 checker: Validators | None = None) -> str:
        tid = gen.thread_id
        started = time.monotonic()
        self._current[tid] = (started, gen.connection_id)
        if not self._first_statement.is_set():
            self._first_statement.set()
            self.result.first_statement_at = time.time()
        st.statements += 1
        if checker is not None:
            return self._execute_checked(gen, st, chan.cursor(), sql, checker)
        trace = self.trace
        seq, sent = trace.begin() if trace is not None else (0, 0.0)
        try:
            rows, affected = chan.run(sql)
            st.ok += 1
            if trace is not None:
                trace.done(seq, sent, tid, gen.connection_id, sql, rows, affected)
            if self.opts.sqltrace:
                self.log.write(f"[{tid}] {sql};", keep=False)
            if self._cache is not None and _DDL_RE.match(sql):
                self._refresh_wanted.set()
            return "ok"
        except StatementError as exc:
            code = exc.code
            if trace is not None:
                trace.done(seq, sent, tid, gen.connection_id, sql, error=code, message=exc.message)
            st.errors[code] = st.errors.get(code, 0) + 1
            if code not in self.result.error_samples:
                self.result.error_samples[code] = f"{exc.message} [sql: {sql[:MAX_SAMPLE]}]"
            if self.opts.sqltrace:
                self.log.write(f"[{tid}] /* error {code}: {exc.message} */ {sql};", keep=False)
            return "lost" if exc.lost else "error"
        finally:
            self._current[tid] = None

    def _execute_checked(self, gen: Generator, st: ThreadStats, cur: pymysql.cursors.Cursor,
                         sql: str, checker: Validators) -> str:
        from . import run_checks
        return run_checks.execute_checked(self, gen, st, cur, sql, checker)

    def _reconnect(self, gen: Generator, st: ThreadStats) -> Channel | None:
        deadline = time.monotonic() + RECONNECT_TIMEOUT
        last = ""
        while time.monotonic() < deadline and not self._stop.is_set():
            if self.alive is not None and not self.alive():
                last = "the server process is gone"
                break
            try:
                conn = self._connect_thread(gen)
                st.reconnects += 1
                return conn
            except RandgenEnvironmentError as exc:
                last = str(exc)
                time.sleep(0.2)
        if self._stop.is_set() and not last:
            return None
        self._lost(gen, st, f"thread {gen.thread_id} lost its connection and could not "
                            f"reconnect: {last or 'timed out'}")
        return None

    def _lost(self, gen: Generator, st: ThreadStats, why: str) -> None:
        if self.alive is not None and "process is gone" not in why:
            # A kill -9 is seen a moment later: the process may still be being reaped
            # (another thread inside Popen.wait makes poll() report it running).
            deadline = time.monotonic() + LOST_CHECK_GRACE
            while self.alive() and time.monotonic() < deadline:
                time.sleep(0.05)
            if not self.alive():
                why = f"the server process is gone ({why})"
        self._fail(STATUS_SERVER_LOST, why)

    def _fail(self, status: str, reason: str) -> None:
        with self._fatal_lock:
            if self.result.status == STATUS_OK:
                self.result.status = status
                self.result.reason = reason
                self.log.write(f"{status}: {reason}", "ERROR")
        self._stop.set()

    # ------------------------------------------------------------ metadata refresh
    def _start_refresher(self) -> None:
        def _loop() -> None:
            conn = None
            try:
                conn = self.conn.connect()
                while not self._stop.is_set():
                    if self._refresh_wanted.wait(0.1) and self._cache is not None:
                        self._stop.wait(self._cache.seconds_to_next())
                        self._refresh_wanted.clear()
                        if self._cache is not None and not self._stop.is_set():
                            self._cache.refresh(conn, force=True)
            except (RandgenEnvironmentError, pymysql.MySQLError) as exc:
                self.log.write(f"metadata refresh stopped: {exc}", "WARNING")
            finally:
                _close_quietly(conn)
        self._refresher = threading.Thread(target=_loop, daemon=True, name="randgen-metadata")
        self._refresher.start()

    # ------------------------------------------------------------ end
    def _server_answers(self) -> bool:
        if self.alive is not None and not self.alive():
            return False
        for _ in range(3):
            try:
                c = self.conn.connect(connect_timeout=5)
                try:
                    with c.cursor() as cur:
                        cur.execute("SELECT 1")
                        return True
                finally:
                    c.close()
            except (RandgenEnvironmentError, pymysql.MySQLError):
                time.sleep(0.5)
        return False

    def _report(self) -> None:
        res = self.result
        for st in res.per_thread:
            self.log.write(f"thread {st.thread_id}: {st.sentences} sentences, {st.statements} "
                           f"statements, {st.ok} ok, errors: {_profile(st.errors)}"
                           + (f", {st.reconnects} reconnect(s)" if st.reconnects else "")
                           + (f", {st.runaways} runaway sentence(s)" if st.runaways else ""))
        for code, sample in sorted(res.error_samples.items()):
            self.log.write(f"error {code} x{res.errors.get(code, 0)}: {sample}")
        for w in res.warnings[:5]:
            self.log.write(f"warning: {w}", "WARNING")
        self.log.write(f"{res.sentences} sentences, {res.statements} statements in "
                       f"{res.duration:.2f}s ({res.statements_per_second:.0f} statements/s), "
                       f"errors: {res.error_profile()}")
        self.log.write(f"status: {res.status}" + (f" ({res.reason})" if res.reason else "")
                       + f", exit code {res.exit_code}")


def engine_fault(files: list[str], exc: BaseException) -> str:
    """``file: ...`` for an unexpected exception of the engine (with where it was raised)."""
    import traceback
    frames = traceback.extract_tb(exc.__traceback__)
    at = f" at {os.path.basename(frames[-1].filename)}:{frames[-1].lineno}" if frames else ""
    where = ", ".join(f for f in files if f) or "<grammar>"
    return (f"{where}: the randgen engine failed ({type(exc).__name__}: {exc}{at}); "
            f"please report it with this grammar")



def _profile(errors: dict[int, int]) -> str:
    return ", ".join(f"{c} x{n}" for c, n in sorted(errors.items())) or "none"


def _close_quietly(conn: pymysql.connections.Connection | None) -> None:
    """Close a connection that may already be broken."""
    if conn is None:
        return
    try:
        conn.close()
    except pymysql.MySQLError:
        pass
