"""``./kewpie.py --mode=replay CORPUS...``: a corpus of reproducers replayed on every code
tree, each reproducer's outcome classified, the bugs x trees matrix written.

Before any server starts the corpus is read (:func:`lib.replay.corpus.discover`:
bad input is one ERROR line and exit 2; a file of a folder that cannot be used is
a counted skip) and the known-bugs files (``--known-bugs``: kewpie's format or
MariaDB QA's ``known_bugs.strings``).  The code trees are every ``--basedir``
and, with one ``--basedir``, ``trees/`` (``scripts/get-tree``).  Every
(reproducer, tree) is a job; jobs go tree by tree to one bot in this process
or to ``--parallel`` forked bots, each with a server manager per tree
(:class:`lib.replay.execute.ReplayBot`: a server is reused while the reuse rule
keeps it, fresh after a crash); a free bot takes a job its server already serves
first (:mod:`lib.replay.schedule`).  ``--parallel N`` is N replays at work at
once: with N of 2 or more, a bot whose reproducer only waits -- a ``SLEEP``, a
lock wait (:mod:`lib.replay.waits`) -- lends its lane to one of N more bots
until it works again, so a 50 s lock wait no longer holds a lane of the
machine's CPUs.  Each result is recorded in the results history (test
``replay.<reproducer>``, the tree's version as its combination; ``fail`` when it
reproduced, ``pass`` when not, ``timeout``, ``skipped``).

The output folder (``--replay-out``, default ``workdir/replay/<time>-<run>/``; made
fresh or one kewpie made before, written without following links:
lib/platform/safewrite.py) gets ``replay.json``, ``known_bugs.txt`` (the crashes, for hunts), the evidence
of each reproduction, and ``--junit-xml`` if asked.  Exit status: 1 when a
reproducer reproduced on the tree under test (the first), else 0; 2 for bad
input.
"""
from __future__ import annotations

import functools
import os
import time
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Callable

from ...errors import EXIT_OK, EXIT_TEST_FAILED, KewpieError
from ...hunt.knownbugs import KnownBugs
from ...platform.safewrite import OutputDir
from ...platform.workers import Connection, Worker, ready, start_worker
from ...replay.corpus import Corpus, Reproducer, discover
from ...replay.defaults import default_options
from ...replay.execute import SKIPPED, ReplayBot, ReplayResult, ReplaySettings
from ...replay.matrix import Matrix
from ...replay.report import history_text, junit, known_bugs_file, table, write_json
from ...replay.schedule import Lanes
from ...run.environment import RunEnvironment
from ...run.forkedbot import Send, receive, serve_bot, stop_bots
from ...run.recording import RunHistory, open_history
from .options import ReplayOptions

if TYPE_CHECKING:
    from ...servers.codetree import CodeTree
    from ...servers.manager import ServerManager

STOP_GRACE = 30.0
FLUSH = ("flush",)          # the run's message at its end: a bot's held results, final
FLUSH_DONE = "flushed"
Job = tuple[Reproducer, "CodeTree"]  # a reproducer on a code tree
HISTORY_STATUS = MappingProxyType({"crash": "fail", "hang": "fail", "errorlog": "fail",
                                   "none": "pass", "timeout": "timeout", "skipped": "skipped"})


def _bot(env: RunEnvironment, settings: ReplaySettings, trees: list["CodeTree"],
         bot: str) -> ReplayBot:
    """A bot whose manager of each tree is one of the run's (``bot`` + ``t<index>``)."""
    def make(tree: "CodeTree") -> "ServerManager":
        """bot's manager of tree."""
        return env.make_manager(bot, tree=tree, lane=f"t{trees.index(tree)}")
    return ReplayBot(settings, make, bot)


class _ForkedReplays:
    """A forked bot's work (lib/run/forkedbot.py): the jobs the run sends, each answered
    with ``(index, result, server starts)``; a job its servers could not serve is skipped.
    While a reproducer waits or works again the run is told (``("idle", bool)``)."""

    def __init__(self, replayer: ReplayBot, jobs: list[Job], send: Send) -> None:
        self.replayer = replayer
        self.jobs = jobs
        replayer.on_idle = lambda idle: send(("idle", idle))

    def answer(self, message: tuple[Any, ...]) -> tuple[Any, list[ReplayResult], int]:
        """The job ``("job", index)`` done: ``(index, the results now final, server
        starts)``; ``("flush",)``: ``("flushed", the held results made final, starts)``."""
        replayer = self.replayer
        if message[0] == FLUSH[0]:
            return FLUSH_DONE, replayer.flush(), replayer.server_starts
        reproducer, tree = self.jobs[message[1]]
        try:
            results = replayer.replay(reproducer, tree)
        except KewpieError as exc:
            results = [ReplayResult(reproducer.name, reproducer.bug, reproducer.path,
                                    tree.label, tree.basedir, SKIPPED,
                                    detail=str(exc).splitlines()[0], bot=replayer.bot)]
        return message[1], results, replayer.server_starts

    def close(self) -> None:
        """Every server of the bot's managers stopped (lib/replay/execute.py)."""
        self.replayer.close()


def _worker(env: RunEnvironment, settings: ReplaySettings, jobs: list[Job],
            trees: list["CodeTree"], bot: str, conn: Connection) -> None:
    """A forked bot: replay the jobs the run sends until told to stop."""
    serve_bot(env, bot, conn,
              lambda send: _ForkedReplays(_bot(env, settings, trees, bot), jobs, send))


def _in_process(env: RunEnvironment, settings: ReplaySettings,
                jobs: list[Job], trees: list["CodeTree"],
                done: Callable[[ReplayResult], None]) -> int:
    """Every job on one bot in this process; the server sets it started."""
    replayer = _bot(env, settings, trees, "bot0")
    try:
        for reproducer, tree in jobs:
            for result in replayer.replay(reproducer, tree):
                done(result)
        for result in replayer.flush():
            done(result)
        return replayer.server_starts
    finally:
        replayer.close()


def _with_bots(env: RunEnvironment, settings: ReplaySettings,
               jobs: list[Job], trees: list["CodeTree"], bots: int,
               done: Callable[[ReplayResult], None]) -> int:
    """Every job on forked bots, ``bots`` of them at work at once (a bot whose reproducer
    waits lends its lane to one of ``bots`` more: :class:`lib.replay.schedule.Lanes`),
    each handed to a free bot (a job its server already serves first); the server sets
    started."""
    workers: dict[str, Worker] = {}
    for i in range(min(len(jobs), 2 * bots)):
        name = f"bot{i}"
        workers[name] = start_worker(f"kewpie-replay-{name}", functools.partial(
            _worker, env, settings, jobs, trees, name))
    starts: dict[str, int] = {}
    lanes = Lanes({i: (tree.basedir, tuple(o.as_arg() for o in reproducer.options))
                   for i, (reproducer, tree) in enumerate(jobs)}, bots)
    try:
        while lanes.queue or lanes.busy:
            for name, index in lanes.assign(list(workers)):
                workers[name].conn.send(("job", index))
            for conn in ready([workers[b].conn for b in lanes.busy]):
                name = next(b for b in lanes.busy if workers[b].conn is conn)
                message = receive(env, name, workers[name],
                                  f"replaying {jobs[lanes.busy[name]][0].path}")
                if message[0] == "idle":
                    lanes.waits(name, bool(message[1]))
                    env.log.debug(f"{name}: its reproducer "
                                  f"{'waits' if message[1] else 'works'}")
                    continue
                lanes.finished(name)
                _, results, starts[name] = message
                for result in results:
                    done(result)
        _flush(env, workers, starts, done)
    finally:
        stop_bots(workers.values(), STOP_GRACE)
    env.log.debug(f"replay: at most {lanes.most_at_once} bot(s) busy at once, "
                  f"{len(workers)} started")
    return sum(starts.values())


def _flush(env: RunEnvironment, workers: dict[str, Worker], starts: dict[str, int],
           done: Callable[[ReplayResult], None]) -> None:
    """Every bot's held results, made final at the run's end (lib/replay/late.py)."""
    for worker in workers.values():
        worker.conn.send(FLUSH)
    for name, worker in workers.items():
        while True:
            message = receive(env, name, worker, "making its held results final")
            if message[0] == FLUSH_DONE:
                break
        _, results, starts[name] = message
        for result in results:
            done(result)


def _record(history: RunHistory, result: ReplayResult) -> None:
    """One result in the results history."""
    status = HISTORY_STATUS.get(result.outcome, "skipped")
    failure = history_text(result) if result.present else result.detail
    history.record_result(f"replay.{result.name}", status, int(result.seconds * 1000),
                          combination=result.tree, failure=failure,
                          signature=result.signature_id, evidence=result.evidence,
                          bot=result.bot)


def _jobs(corpus: Corpus, trees: list["CodeTree"]) -> list[Job]:
    """Every (reproducer, tree): tree by tree; within a tree, reproducers of the same
    server options together (a change of options is a fresh server), in name order."""
    ordered = sorted(corpus.reproducers,
                     key=lambda r: (len(r.options), [o.as_arg() for o in r.options], r.name))
    return [(r, t) for t in trees for r in ordered]


def _announce(env: RunEnvironment, own: ReplayOptions, corpus: Corpus, trees: list["CodeTree"],
              bots: int, known: KnownBugs | None, out: OutputDir) -> None:
    """The replay's first lines: what runs where, what was skipped, the output folder."""
    log = env.log
    log.info(f"Replaying {len(corpus.reproducers)} reproducer(s) on {len(trees)} code tree(s) "
             f"({', '.join(f'{t.label} {t.basedir}' for t in trees)}), {bots} bot(s), "
             f"{own.timeout:g} s each"
             + (f"; {len(corpus.skipped)} file(s) skipped" if corpus.skipped else "")
             + (f"; known bugs: {known.count} entr(ies)" if known else ""))
    for skip in corpus.skipped:
        log.warning(f"skipped {skip.path}: {skip.reason}")
    log.info(f"Output: {out.path}")


def _recorder(env: RunEnvironment, history: RunHistory,
              results: list[ReplayResult]) -> Callable[[ReplayResult], None]:
    """What each result goes through: kept, recorded in the history, logged."""
    log = env.log

    def done(result: ReplayResult) -> None:
        """Record one result."""
        results.append(result)
        _record(history, result)
        if result.present or result.outcome != "none":
            log.info(f"{result.name} on {result.tree}: {result.outcome}"
                     + (f" {result.signature_id}" if result.signature_id else "")
                     + (f" {result.unique_text}" if result.unique_text else "")
                     + (f" ({result.detail[:120]})" if result.detail and not result.present
                        else ""))
        else:
            log.debug(f"{result.name} on {result.tree}: none ({result.seconds:.2f}s)")
    return done


def _report(env: RunEnvironment, own: ReplayOptions, out: OutputDir, corpus: Corpus,
            matrix: Matrix, trees: list["CodeTree"], counts: tuple[int, int, int],
            seconds: float) -> None:
    """replay.json, the known-bugs file, the table and JUnit (counts: the jobs, the bots,
    the server starts)."""
    log, config = env.log, env.config
    jobs, bots, starts = counts
    command = " ".join(["kewpie.py", "--mode=replay", *config.selection.tests])
    summary = {"command": command, "trees": [{"label": t.label, "path": t.basedir}
                                             for t in trees],
               "timeout": own.timeout, "parallel": bots,
               "server_defaults": [o.as_arg() for o in default_options()],
               "known_bugs": list(config.reporting.known_bugs), "seconds": round(seconds, 3),
               "server_starts": starts, "jobs": jobs}
    matrix_path = write_json(out, "replay.json", matrix, corpus, summary)
    known_path = known_bugs_file(out, "known_bugs.txt", matrix, command)
    log.info("=" * 100)
    log.info(f"Replay complete: {jobs} replays in {seconds:.0f} s "
             f"({jobs / seconds * 60 if seconds else 0:.0f} a minute), {starts} server start(s)")
    for line in table(matrix, corpus):
        log.info(line)
    log.info(f"Matrix: {matrix_path}")
    log.info(f"Known bugs of the crashes: {known_path}")
    if config.reporting.junit_xml:
        log.info(f"JUnit report: {junit(matrix, config.reporting.junit_xml, env.trust)}")


def run_replay(env: RunEnvironment) -> int:
    """The replay over env (see the module docstring); the exit status."""
    own = env.config.section(ReplayOptions)
    corpus: Corpus = discover(list(own.corpus))
    known_files = list(env.config.reporting.known_bugs)
    known = KnownBugs.load(known_files) if known_files else None
    trees = env.trees.all()
    default_out = os.path.join(env.workdir.path, "replay",
                               f"{time.strftime('%Y%m%d-%H%M%S')}-{env.run_id[:6]}")
    out = OutputDir.create(own.out or default_out, "--replay-out" if own.out
                           else "the replay's output folder", env.trust, reuse=True)
    try:
        jobs = _jobs(corpus, trees)
        bots = max(1, min(env.config.reporting.parallel, len(jobs)))
        _announce(env, own, corpus, trees, bots, known, out)
        settings = ReplaySettings(out, timeout=own.timeout, known_bugs=known,
                                  scratch=env.workdir.path)
        return _replay(env, own, corpus, trees, jobs, bots, settings, out)
    finally:
        out.close()


def _replay(env: RunEnvironment, own: ReplayOptions, corpus: Corpus, trees: list["CodeTree"],
            jobs: list[Job], bots: int, settings: ReplaySettings, out: OutputDir) -> int:
    """The jobs on the bots, each result recorded, then the reports; the exit status."""
    history = open_history(env, mode="replay")
    results: list[ReplayResult] = []
    done = _recorder(env, history, results)
    started = time.monotonic()
    exit_code: int | None = None
    try:
        if bots == 1:
            starts = _in_process(env, settings, jobs, trees, done)
        else:
            starts = _with_bots(env, settings, jobs, trees, bots, done)
        labels = [t.label for t in trees]
        _report(env, own, out, corpus, Matrix(results, labels), trees,
                (len(jobs), bots, starts), time.monotonic() - started)
        exit_code = EXIT_TEST_FAILED if any(r.tree == labels[0] and r.present
                                            for r in results) else EXIT_OK
        return exit_code
    finally:
        history.close(exit_code)
