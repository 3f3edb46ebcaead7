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
first (:mod:`lib.replay.schedule`).  Each result is recorded in the results
history (test ``replay.<reproducer>``, the tree's version as its combination;
``fail`` when it reproduced, ``pass`` when not, ``timeout``, ``skipped``).

The output folder (``--replay-out``, default ``workdir/replay/<time>-<run>/``)
gets ``replay.json``, ``known_bugs.txt`` (the crashes, for hunts), the evidence
of each reproduction, and ``--junit-xml`` if asked.  Exit status: 1 when a
reproducer reproduced on the tree under test (the first), else 0; 2 for bad
input.
"""
from __future__ import annotations

import functools
import os
import time
from types import MappingProxyType
from typing import TYPE_CHECKING, Callable

from ..errors import EXIT_OK, EXIT_TEST_FAILED, Interrupted, KewpieError
from ..hunt.knownbugs import KnownBugs
from ..platform.interrupts import interrupt_on_stop_signals
from ..platform.logsetup import configure, get_logger
from ..platform.workers import Connection, Worker, ready, start_worker, stop_workers
from ..replay.corpus import Corpus, Reproducer, discover
from ..replay.execute import SKIPPED, ReplayBot, ReplayResult, ReplaySettings
from ..replay.matrix import Matrix
from ..replay.report import history_text, junit, known_bugs_file, table, write_json
from ..replay.schedule import next_job
from .environment import RunEnvironment
from .history import RunHistory, open_history

if TYPE_CHECKING:
    from ..servers.codetree import CodeTree
    from ..servers.manager import ServerManager

STOP_GRACE = 30.0
HISTORY_STATUS = MappingProxyType({"crash": "fail", "hang": "fail", "errorlog": "fail",
                                   "none": "pass", "timeout": "timeout", "skipped": "skipped"})


def _bot(env: RunEnvironment, settings: ReplaySettings, trees: list["CodeTree"],
         bot: str) -> ReplayBot:
    """A bot whose manager of each tree is one of the run's (``bot`` + ``t<index>``)."""
    def make(tree: "CodeTree") -> "ServerManager":
        """bot's manager of tree."""
        return env.make_manager(bot, tree=tree, lane=f"t{trees.index(tree)}")
    return ReplayBot(settings, make, bot)


def _worker(env: RunEnvironment, settings: ReplaySettings, jobs: list[tuple[Reproducer, "CodeTree"]],
            trees: list["CodeTree"], bot: str, conn: Connection) -> None:
    """A forked bot: replay the jobs the run sends until told to stop."""
    interrupt_on_stop_signals()
    configure(env.config.verbose, logfile=env.workdir.bot_log_file(bot), console=False)
    replayer = _bot(env, settings, trees, bot)
    fast = False
    try:
        while True:
            message = conn.recv()
            if message[0] == "stop":
                break
            reproducer, tree = jobs[message[1]]
            try:
                result = replayer.replay(reproducer, tree)
            except KewpieError as exc:
                result = ReplayResult(reproducer.name, reproducer.bug, reproducer.path,
                                      tree.label, tree.basedir, SKIPPED,
                                      detail=str(exc).splitlines()[0], bot=bot)
            conn.send((message[1], result, replayer.server_starts))
    except (Interrupted, EOFError):
        fast = True
    finally:
        replayer.close()
        env.close(fast=fast, bot=bot)
        conn.close()


def _in_process(env: RunEnvironment, settings: ReplaySettings,
                jobs: list[tuple[Reproducer, "CodeTree"]], trees: list["CodeTree"],
                done: Callable[[ReplayResult], None]) -> int:
    """Every job on one bot in this process; the server sets it started."""
    replayer = _bot(env, settings, trees, "bot0")
    try:
        for reproducer, tree in jobs:
            done(replayer.replay(reproducer, tree))
        return replayer.server_starts
    finally:
        replayer.close()


def _with_bots(env: RunEnvironment, settings: ReplaySettings,
               jobs: list[tuple[Reproducer, "CodeTree"]], trees: list["CodeTree"], bots: int,
               done: Callable[[ReplayResult], None]) -> int:
    """Every job on forked bots, handed to whichever is free (a job its server already
    serves first: :func:`lib.replay.schedule.next_job`); the server sets started."""
    workers: dict[str, Worker] = {}
    for i in range(bots):
        name = f"bot{i}"
        workers[name] = start_worker(f"kewpie-replay-{name}", functools.partial(
            _worker, env, settings, jobs, trees, name))
    busy: dict[str, int] = {}
    starts: dict[str, int] = {}
    queue = list(range(len(jobs)))
    group_of = {i: (tree.basedir, tuple(o.as_arg() for o in reproducer.options))
                for i, (reproducer, tree) in enumerate(jobs)}
    last: dict[str, tuple[str, tuple[str, ...]]] = {}   # bot -> its last job's group
    try:
        while queue or busy:
            for name, worker in workers.items():
                if name not in busy and queue:
                    others = {group_of[i] for b, i in busy.items()}
                    index = queue.pop(next_job(queue, group_of, last.get(name), others))
                    worker.conn.send(("job", index))
                    busy[name] = index
                    last[name] = group_of[index]
            for conn in ready([workers[b].conn for b in busy]):
                name = next(b for b in busy if workers[b].conn is conn)
                index = busy.pop(name)
                try:
                    _, result, starts[name] = conn.recv()
                except (EOFError, OSError):
                    workers[name].join(5)
                    raise KewpieError(f"bot {name} died replaying {jobs[index][0].path} (exit "
                                      f"code {workers[name].exitcode}); see "
                                      f"{env.workdir.bot_log_file(name)}") from None
                done(result)
    finally:
        for worker in workers.values():
            try:
                worker.conn.send(("stop",))
            except (OSError, ValueError):
                pass
        stop_workers(workers.values(), STOP_GRACE)
    return sum(starts.values())


def _record(history: RunHistory, result: ReplayResult) -> None:
    """One result in the results history."""
    status = HISTORY_STATUS.get(result.outcome, "skipped")
    failure = history_text(result) if result.present else result.detail
    history.record_result(f"replay.{result.name}", status, int(result.seconds * 1000),
                          combination=result.tree, failure=failure,
                          signature=result.signature_id, evidence=result.evidence,
                          bot=result.bot)


def run_replay(env: RunEnvironment) -> int:
    """The replay over env (see the module docstring); the exit status."""
    config, log = env.config, env.log
    corpus: Corpus = discover(list(config.tests))
    known = KnownBugs.load(list(config.known_bugs)) if config.known_bugs else None
    trees = env.trees.all()
    stamp = time.strftime("%Y%m%d-%H%M%S")
    out_dir = config.replay_out or os.path.join(env.workdir.path, "replay",
                                                f"{stamp}-{env.run_id[:6]}")
    os.makedirs(out_dir, exist_ok=True)
    settings = ReplaySettings(out_dir, timeout=config.replay_timeout, known_bugs=known,
                              scratch=env.workdir.path)
    # tree by tree; within a tree, reproducers of the same server options together (a
    # change of options is a fresh server), in name order
    ordered = sorted(corpus.reproducers,
                     key=lambda r: (len(r.options), [o.as_arg() for o in r.options], r.name))
    jobs = [(r, t) for t in trees for r in ordered]
    bots = max(1, min(config.parallel, len(jobs)))
    labels = [t.label for t in trees]
    log.info(f"Replaying {len(corpus.reproducers)} reproducer(s) on {len(trees)} code tree(s) "
             f"({', '.join(f'{t.label} {t.basedir}' for t in trees)}), {bots} bot(s), "
             f"{config.replay_timeout:g} s each"
             + (f"; {len(corpus.skipped)} file(s) skipped" if corpus.skipped else "")
             + (f"; known bugs: {known.count} entr(ies)" if known else ""))
    for skip in corpus.skipped:
        log.warning(f"skipped {skip.path}: {skip.reason}")
    log.info(f"Output: {out_dir}")
    history = open_history(env, mode="replay")
    results: list[ReplayResult] = []

    def done(result: ReplayResult) -> None:
        """Record one result."""
        results.append(result)
        _record(history, result)
        if result.present or result.outcome != "none":
            log.info(f"{result.name} on {result.tree}: {result.outcome}"
                     + (f" {result.signature_id}" if result.signature_id else "")
                     + (f" {result.unique_text}" if result.unique_text else "")
                     + (f" ({result.detail[:120]})" if result.detail and not result.present else ""))
        else:
            log.debug(f"{result.name} on {result.tree}: none ({result.seconds:.2f}s)")

    started = time.monotonic()
    exit_code: int | None = None
    try:
        if bots == 1:
            starts = _in_process(env, settings, jobs, trees, done)
        else:
            starts = _with_bots(env, settings, jobs, trees, bots, done)
        seconds = time.monotonic() - started
        matrix = Matrix(results, labels)
        command = " ".join(["kewpie.py", "--mode=replay", *config.tests])
        summary = {"command": command, "trees": [{"label": t.label, "path": t.basedir}
                                                 for t in trees],
                   "timeout": config.replay_timeout, "parallel": bots,
                   "known_bugs": list(config.known_bugs), "seconds": round(seconds, 3),
                   "server_starts": starts, "jobs": len(jobs)}
        write_json(os.path.join(out_dir, "replay.json"), matrix, corpus, summary)
        known_bugs_file(os.path.join(out_dir, "known_bugs.txt"), matrix, command)
        log.info("=" * 100)
        log.info(f"Replay complete: {len(jobs)} replays in {seconds:.0f} s "
                 f"({len(jobs) / seconds * 60 if seconds else 0:.0f} a minute), "
                 f"{starts} server start(s)")
        for line in table(matrix, corpus):
            log.info(line)
        log.info(f"Matrix: {os.path.join(out_dir, 'replay.json')}")
        log.info(f"Known bugs of the crashes: {os.path.join(out_dir, 'known_bugs.txt')}")
        if config.junit_xml:
            log.info(f"JUnit report: {junit(matrix, config.junit_xml)}")
        first = labels[0]
        exit_code = EXIT_TEST_FAILED if any(r.tree == first and r.present for r in results) \
            else EXIT_OK
        return exit_code
    finally:
        history.close(exit_code)
