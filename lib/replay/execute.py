"""One reproducer replayed on one code tree's server, and what came of it.

:class:`ReplayBot` holds a bot's server managers, one per code tree.  Each
reproducer gets a server of its tree with its options (after the replay's
defaults, :mod:`.defaults`: shorter lock waits) -- the previous
reproducer's when kewpie's reuse rule keeps it (it left the server as it found
it, the ``test`` schema emptied), a fresh one from a spare copy of the pristine
datadir otherwise (lib/servers/manager.py), after what the previous one added
was undone where it could be (:mod:`.restore`) -- and is sent to it: a ``.sql`` file
through the tree's ``mariadb`` client (``--force --binary-mode``: every
statement, errors or not, as mariadb-qa's tools do), a ``.test`` file through
``mariadb-test``; both under ``--replay-timeout`` seconds.  Then the outcome:

- **crash**: the server died.  Its crash report is signed as a hunt finding
  (:func:`lib.hunt.crash.crash_finding`: kewpie's signature); gdb reads its
  core when it can name more than the report (the report stopped short, or
  the binary's debug symbols are installed: :mod:`lib.hunt.symbols`), and
  MariaDB QA's UniqueID is taken from the report or gdb's frames, whichever
  names more (:func:`lib.hunt.crashreport.crash_unique_id`); the report, the
  backtrace and the client's output are kept; the server is thrown away;
- **hang**: the server no longer answers SQL, 10 s of patience after the
  reproducer's end or its time, and its error log has no crash report (one
  with a report is dying: it is given up to two minutes to end while its core
  or error log grows, :mod:`lib.hunt.dying`); killed and thrown away;
- **timeout**: it ran past its time and the server still answers (a slow
  reproducer, not a bug; the server is thrown away);
- **errorlog**: the server lived, and its error log gained ``[ERROR]`` or
  corruption lines (the hunt's error-log oracle, :mod:`lib.hunt.logcheck`);
- **none**: no reproduction;
- **skipped**: the server did not start with the reproducer's options, or
  they are unsafe (kewpie's option-safety rules), or the reproducer's tool is
  missing.
"""
from __future__ import annotations

import os
import shutil
import time
import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Sequence

from ..checks.backtrace import GDB_TIMEOUT, find_core
from ..errors import KewpieError
from ..hunt.crash import crash_finding
from ..hunt.dying import UNANSWERED_GRACE, crash_reported, settle
from ..hunt.logcheck import error_log_findings, suppressions
from ..hunt.crashreport import (crash_unique_id, parse_crash_report, report_unique_id,
                                since_last_start)
from ..hunt.signature import crash_signature
from ..hunt.symbols import DEBUG_ROOTS, debug_file, report_complete
from ..platform.logsetup import get_logger
from ..platform.safewrite import OutputDir
from ..platform.tools import run_tool
from ..servers.health import Health, HealthState
from ..servers.option_catalog import load_catalog
from ..servers.option_safety import check_server_options
from ..servers.requirements import Requirements
from .corpus import MYSQLTEST, Reproducer
from .defaults import server_options
from .late import LATE_WINDOW, HeldResults
from .restore import State, restore, snapshot
from .waits import WaitWatch
from ..servers.sql import error_code

if TYPE_CHECKING:
    from ..hunt.knownbugs import KnownBugs
    from ..hunt.signature import Signature
    from ..servers.codetree import CodeTree
    from ..servers.manager import ServerManager
    from ..servers.server import Server

CRASH, HANG, TIMEOUT, ERRORLOG, NONE, SKIPPED = ("crash", "hang", "timeout", "errorlog", "none",
                                                 "skipped")
OUTCOMES = (CRASH, HANG, ERRORLOG, TIMEOUT, NONE, SKIPPED)
PRESENT = (CRASH, HANG, ERRORLOG)         # the reproducer reproduced something
HEALTH_WAIT = 5.0                          # a crashing server's time to finish dying (its core)
START_LOG_LINES = 400                      # a server that did not start: its log's last lines
MYSQL_TEST_DIRS = ("share/mysql/mysql-test", "share/mariadb/mysql-test", "mysql-test")


@dataclass
class ReplayResult:
    """One reproducer on one code tree."""

    name: str
    bug: str
    path: str
    tree: str                     # the tree's label (its version)
    tree_path: str
    outcome: str                  # one of OUTCOMES
    seconds: float = 0.0
    detail: str = ""              # a sentence: what happened (or why it was skipped)
    signature: dict[str, Any] | None = None     # kewpie's (Signature.to_json())
    unique_id: dict[str, Any] | None = None     # MariaDB QA's (UniqueId.to_json())
    known: dict[str, Any] | None = None         # the known-bugs files' say (tag, bug, match)
    evidence: str = ""            # the folder with the report, backtrace and client output
    fresh: bool = False           # the reproducer got a freshly started server
    reset: str = ""               # why the next one gets a fresh server ('' = reused)
    bot: str = ""
    phases: dict[str, float] = field(default_factory=dict)   # seconds: start, run, check...

    @property
    def present(self) -> bool:
        """Did the reproducer reproduce something (a crash, a hang, error-log lines)?"""
        return self.outcome in PRESENT

    @property
    def signature_id(self) -> str:
        """kewpie's signature id ('' when there is none)."""
        return str(self.signature["id"]) if self.signature else ""

    @property
    def unique_text(self) -> str:
        """The UniqueID ('' when there is none)."""
        return str(self.unique_id["text"]) if self.unique_id else ""

    def to_json(self) -> dict[str, Any]:
        """The result as plain data."""
        return {"name": self.name, "bug": self.bug, "path": self.path, "tree": self.tree,
                "tree_path": self.tree_path, "outcome": self.outcome,
                "seconds": round(self.seconds, 3), "detail": self.detail,
                "signature": self.signature, "unique_id": self.unique_id,
                "known": self.known, "evidence": self.evidence, "fresh": self.fresh,
                "reset": self.reset, "bot": self.bot,
                "phases": {k: round(v, 3) for k, v in self.phases.items()}}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "ReplayResult":
        """A result as :meth:`to_json` wrote it."""
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in known})


@dataclass
class ReplaySettings:
    """What every bot of a replay shares."""

    out: OutputDir                 # the output folder, held open (lib/platform/safewrite.py):
                                   # evidence goes to OUT/evidence/<tree>/<name>/
    timeout: float = 60.0          # --replay-timeout: one reproducer's time
    known_bugs: "KnownBugs | None" = None
    suppressions: tuple[str, ...] = ()
    scratch: str = ""              # the workdir (option catalogs' cache)


def find_mysqltest(tree: CodeTree) -> tuple[str, str]:
    """(mariadb-test, the mysql-test directory for its ``--source include/...``): the
    tree's, else the installed ones; ('', '') when there is none."""
    binary = ""
    for name in ("mariadb-test", "mysqltest"):
        for sub in ("bin", "client"):
            path = os.path.join(tree.basedir, sub, name)
            if os.access(path, os.X_OK):
                binary = binary or path
        binary = binary or (shutil.which(name) or "")
    root = ""
    for base in (tree.basedir, "/usr"):
        for sub in MYSQL_TEST_DIRS:
            path = os.path.join(base, sub)
            if os.path.isdir(os.path.join(path, "include")):
                root = root or path
    return binary, root


def _safe_name(name: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in name)[:120] or "reproducer"


class ReplayBot:
    """One bot: its managers (one per code tree) and the reproducers it replays."""

    def __init__(self, settings: ReplaySettings, make_manager: Callable[["CodeTree"], "ServerManager"],
                 bot: str = "bot0") -> None:
        self.settings = settings
        self.make_manager = make_manager
        self.bot = bot
        self.managers: dict[str, "ServerManager"] = {}
        self._catalogs: dict[str, Any] = {}
        self._states: dict[str, State | None] = {}   # tree -> its fresh server's state
        # tree -> the error log's size when its kept server was last found sound
        self._sound_at: dict[str, int] = {}
        self._life_mark: dict[str, int] = {}        # tree -> its kept server's log at its start
        self._kept: dict[str, "Server"] = {}        # tree -> its kept server
        self._trees: dict[str, "CodeTree"] = {}
        self.late = HeldResults()   # results a late crash could still be (lib/replay/late.py)
        self._probing = False       # replaying a result's reproducer again on a fresh server
        # told True while the running reproducer only waits (SLEEP, a lock), False when
        # it works again (lib/replay/waits.py): the run lends its lane meanwhile
        self.on_idle: Callable[[bool], None] | None = None

    def manager(self, tree: CodeTree) -> "ServerManager":
        """This bot's manager of tree (made on first use)."""
        if tree.basedir not in self.managers:
            self.managers[tree.basedir] = self.make_manager(tree)
        return self.managers[tree.basedir]

    @property
    def server_starts(self) -> int:
        """Server sets started by this bot's managers."""
        return sum(m.restarts for m in self.managers.values())

    def close(self) -> None:
        """Stop every server of this bot."""
        for manager in self.managers.values():
            manager.shutdown(fast=True, discard=True)

    def _check_options(self, reproducer: Reproducer, tree: CodeTree) -> str:
        """Why the reproducer's options may not be used ('' when they may)."""
        if not reproducer.options:
            return ""
        catalog = self._catalogs.get(tree.server)
        if catalog is None:
            catalog = self._catalogs[tree.server] = load_catalog(tree.server,
                                                                 self.settings.scratch or None)
        try:
            check_server_options(reproducer.options, catalog, where="its server options")
        except KewpieError as exc:
            return str(exc).splitlines()[0]
        return ""

    def replay(self, reproducer: Reproducer, tree: CodeTree) -> list[ReplayResult]:
        """Replay reproducer on tree (see the module docstring); the results now final:
        this one's, and earlier ones' held while a late crash could still be theirs
        (lib/replay/late.py).  A crash of a kept server while results are held is this
        reproducer's only if it crashes a fresh server too."""
        self._trees[tree.basedir] = tree
        result = self._replay_one(reproducer, tree)
        if result.outcome == CRASH and not result.fresh and self.late.candidates(tree.basedir):
            again = self._probe(reproducer, tree)
            if again.outcome != CRASH and self._blame(tree):
                result = again
        if result.outcome in (NONE, ERRORLOG) and not result.reset:
            self.late.hold(tree.basedir, reproducer, result)
        else:
            self.late.release(tree.basedir)     # its server is gone: nothing more to see
            self.late.done(result)
        return self.late.take()

    def flush(self) -> list[ReplayResult]:
        """The held results made final at the run's end: every tree's kept server watched
        at once until its results' window has passed, a crash searched for among them."""
        now = time.monotonic()
        deadlines = {basedir: now + self.late.remaining(basedir) for basedir in self.late.held}
        while deadlines:
            for basedir, deadline in list(deadlines.items()):
                tree, server = self._trees[basedir], self._kept.get(basedir)
                if server is not None and self.late.held[basedir]:
                    if self._crashed_since_kept(server, tree):
                        self.manager(tree).teardown(fast=True, discard=True)
                        self._blame(tree)
                    elif time.monotonic() < deadline:
                        continue
                self.late.release(basedir)
                del deadlines[basedir]
            if deadlines:
                time.sleep(0.1)
        return self.late.take()

    def _probe(self, reproducer: Reproducer, tree: CodeTree) -> ReplayResult:
        """reproducer replayed again on a fresh server and watched for LATE_WINDOW seconds
        after its end; the server thrown away after."""
        manager = self.manager(tree)
        manager.teardown(fast=True, discard=True)
        self._probing = True
        try:
            result = self._replay_one(reproducer, tree)
        finally:
            self._probing = False
        manager.teardown(fast=True, discard=True)
        self._kept.pop(tree.basedir, None)
        result.reset = result.reset or "replayed again on a fresh server"
        return result

    def _blame(self, tree: CodeTree) -> bool:
        """A crash of tree's kept server after the held results' reproducers: the newest
        that crashes a fresh server within LATE_WINDOW s gets it as its result (True);
        the held results are final after."""
        try:
            for held in self.late.candidates(tree.basedir):
                probe = self._probe(held.reproducer, tree)
                if probe.outcome == CRASH:
                    probe.detail += " -- first seen on the server of the reproducers after it"
                    self.late.replace(tree.basedir, held.result, probe)
                    return True
            return False
        finally:
            self.late.release(tree.basedir)

    def _replay_one(self, reproducer: Reproducer, tree: CodeTree) -> ReplayResult:
        """Replay reproducer on tree: its result."""
        label = tree.label
        result = ReplayResult(reproducer.name, reproducer.bug, reproducer.path, label,
                              tree.basedir, SKIPPED, bot=self.bot)
        started = time.monotonic()
        try:
            problem = self._check_options(reproducer, tree)
            if problem:
                result.detail = problem
                return result
            self._replay(reproducer, tree, result)
            return result
        finally:
            result.seconds = time.monotonic() - started

    def _replay(self, reproducer: Reproducer, tree: CodeTree, result: ReplayResult) -> None:
        manager = self.manager(tree)
        clock = _Clock(result.phases)
        server = self._server(manager, reproducer, tree, result)
        if server is None:
            return
        clock.lap("start")
        if result.fresh or tree.basedir not in self._states:
            self._states[tree.basedir] = snapshot(server)
        mark = server.errlog.size()
        if result.fresh:
            self._life_mark[tree.basedir] = mark    # a kept server's crash: any report since
        evidence = os.path.join(self.settings.out.path, "evidence", _safe_name(result.tree),
                                _safe_name(reproducer.name))
        with self._out(os.path.join("bots", self.bot)) as scratch:
            client_log = os.path.join(scratch.path, "client.log")
        clock.lap("prepare")      # the fresh server's snapshot: kewpie's time, not the run's
        try:
            ran = self._send(reproducer, server, tree, client_log)
        except (OSError, KewpieError) as exc:
            manager.teardown(fast=True, discard=True)
            result.detail = f"could not run it: {exc}"
            return
        clock.lap("run")
        health, locked_out, note = self._health(server, mark)
        try:
            text = server.errlog.since(mark)
        except OSError:
            text = ""
        clock.lap("check")
        ended = self._ended(server, health, locked_out, text, (evidence, client_log),
                            ran.timed_out, result)
        if note and result.outcome == HANG:
            result.detail += f" ({note})"
        if ended is not None:
            manager.teardown(fast=True, discard=True)
            if ended:
                clock.lap(ended)
            return
        self._finish(server, text, evidence, tree, result)
        clock.lap("restore")
        if self._probing:
            self._watch_late(server, mark)
        if self._crashed_late(server, mark, (evidence, client_log), result):
            manager.teardown(fast=True, discard=True)
            clock.lap("crash")
            return
        result.reset = "; ".join(manager.after_test(True))
        clock.lap("reuse")
        if result.reset and crash_reported(server, mark):
            # the crash landed while the reuse rule read the server, which threw it away
            self._crashed_late(server, mark, (evidence, client_log), result)
            return
        if not result.reset:
            self._sound_at[tree.basedir] = server.errlog.size()
            self._kept[tree.basedir] = server

    def _server(self, manager: ServerManager, reproducer: Reproducer, tree: CodeTree,
                result: ReplayResult) -> Server | None:
        """The reproducer's server (:meth:`_start`); a kept one that crashed since it was
        found sound replaced by a fresh one, after its late crash was searched for among
        the held results; the held results whose window has passed (all of them, when the
        kept server is gone) made final."""
        server = self._start(manager, reproducer, tree, result)
        if server is not None and not result.fresh and self._crashed_since_kept(server, tree):
            manager.teardown(fast=True, discard=True)   # not this reproducer's server any more
            self._blame(tree)
            server = self._start(manager, reproducer, tree, result)
        elif server is not None and not self._probing:
            self.late.release(tree.basedir, settled_only=not result.fresh)
        return server

    @staticmethod
    def _watch_late(server: Server, mark: int) -> None:
        """Wait up to LATE_WINDOW seconds for a crash of the server after the reproducer."""
        deadline = time.monotonic() + LATE_WINDOW
        while time.monotonic() < deadline and server.is_alive() and \
                not crash_reported(server, mark):
            time.sleep(0.1)

    def _crashed_late(self, server: Server, mark: int, files: tuple[str, str],
                      result: ReplayResult) -> bool:
        """A server that died after the reproducer's last statement (on its own a moment
        later, or at the restore's statements) died of the reproducer all the same: its
        crash, signed as any; True when so (the caller tears the server down).  Missed
        here, the next reproducer would get a server stuck in its crash handler and be
        called hung for it."""
        if server.is_alive() and not crash_reported(server, mark):
            return False
        health, _, _ = self._health(server, mark)
        try:
            text = server.errlog.since(mark)
        except OSError:
            text = ""
        self._crash(server, text, health.message, *files, result)
        result.detail += " (after its last statement)"
        result.reset = "it crashed after its last statement"
        return True

    def _crashed_since_kept(self, server: Server, tree: CodeTree) -> bool:
        """Whether the kept server, once found sound, has died or reported a crash since
        its first reproducer (a late crash of a reproducer before: logged, searched for
        among the held results; the next one gets a fresh server).  A report begun
        before the server was last found sound counts: a kept server never crashed."""
        since = self._sound_at.get(tree.basedir)
        if since is None or (server.is_alive() and not crash_reported(
                server, self._life_mark.get(tree.basedir, since))):
            return False
        get_logger().warning(f"replay: the kept {tree.label} server crashed after the "
                             f"reproducer before this one had been judged (its error log: "
                             f"{server.errlog.path}); the reproducers it served last are "
                             f"replayed again to find whose crash it is, and the next gets "
                             f"a fresh server")
        return True

    def _start(self, manager: ServerManager, reproducer: Reproducer, tree: CodeTree,
               result: ReplayResult) -> Server | None:
        """The tree's server with the replay's defaults and the reproducer's options
        (:mod:`.defaults`; result.fresh: started now);
        None when it did not start (result says why: a crash as it started is the
        reproduction)."""
        before = manager.restarts
        try:
            servers = manager.get_servers(Requirements.declared(
                "mysql", [server_options(reproducer.options)]))
        except KewpieError as exc:
            tail = ""
            for failed in manager.last_servers[:1]:
                try:
                    tail = failed.errlog.tail(START_LOG_LINES)
                except OSError:
                    pass
            manager.teardown(fast=True, discard=True)
            result.reset = "the server did not start"
            if not self._start_crash(tail or getattr(exc, "log_tail", ""), tree, result):
                result.detail = (f"the server did not start with its options: "
                                 f"{str(exc).splitlines()[0]}")
            return None
        result.fresh = manager.restarts != before
        return servers[0]

    def _health(self, server: Server, mark: int) -> tuple[Health, bool, str]:
        """The server's health after the reproducer (a late answer waited for, a dying
        server's core given time: :mod:`lib.hunt.dying`), whether it refuses kewpie's login, and
        a note when the dying server's wait was cut short."""
        health = server.health(exit_wait=HEALTH_WAIT)
        locked_out = health.state is HealthState.HUNG and _refuses_login(server)
        if health.state is not HealthState.HUNG:
            return health, locked_out, ""
        # a loaded machine answers late (no grace for a server that answers but refuses
        # kewpie's login); one with a crash report is dying, its core still being written
        settled = settle(server, mark, HEALTH_WAIT, grace=0.0 if locked_out else UNANSWERED_GRACE,
                         first=health)
        return settled.health, locked_out, settled.note

    def _ended(self, server: Server, health: Health, locked_out: bool, text: str,
               files: tuple[str, str], timed_out: bool, result: ReplayResult) -> str | None:
        """Classify a server the reproducer ended (shut down, crashed, locked out, hung) or
        outran: None when it still serves; else the phase to time ('' for none), and the
        caller tears the server down.  files: the evidence folder and the client's log."""
        evidence, client_log = files
        stopped = health.state in (HealthState.CRASHED, HealthState.STOPPED)
        if stopped and not server.stop_requested and parse_crash_report(text) is None and \
                server.executor is not None and server.executor.returncode() == 0:
            result.outcome = NONE           # SHUTDOWN: the server ended cleanly
            result.detail = result.reset = "the server shut down (exit status 0)"
            return ""
        if health.state is HealthState.CRASHED or (health.state is HealthState.STOPPED
                                                   and not server.stop_requested):
            self._crash(server, text, health.message, evidence, client_log, result)
            result.reset = "it crashed"
            return "crash"
        if health.state is HealthState.HUNG and locked_out:
            result.outcome = NONE          # its users are gone: the server runs, kewpie is out
            result.detail = "the server refuses kewpie's login (the reproducer changed its users)"
            result.reset = result.detail
            return ""
        if health.state is HealthState.HUNG:
            result.outcome, result.reset = HANG, "it hung"
            result.detail = health.message + (f" (the reproducer ran past its "
                                              f"{self.settings.timeout:g} s)" if timed_out
                                              else "")
            self._keep(evidence, {"client.log": client_log})
            result.evidence = evidence
            return ""
        if timed_out:
            result.outcome = TIMEOUT
            result.detail = f"still running after {self.settings.timeout:g} s (the server answers)"
            result.reset = "it timed out"
            return ""
        return None

    def _finish(self, server: Server, text: str, evidence: str, tree: CodeTree,
                result: ReplayResult) -> None:
        """A server that still serves: its new error-log lines judged, what the reproducer
        added undone (so the reuse rule may keep it)."""
        findings = error_log_findings(server.name, text, suppressions(self.settings.suppressions))
        if findings:
            first = findings[0]
            result.outcome = ERRORLOG
            result.signature = first.signature.to_json()
            result.detail = first.summary
            self._tag(result, first.signature, tree)
            with self._out(evidence) as folder:
                folder.write_bytes("errorlog.txt", text.encode("utf-8", errors="replace"))
            result.evidence = evidence
        else:
            result.outcome = NONE
        state = self._states.get(tree.basedir)
        if state is not None:
            restore(server, state)

    def _start_crash(self, log_text: str, tree: CodeTree, result: ReplayResult) -> bool:
        """A server that crashed as it started with the reproducer's options: that is the
        reproduction (signed from the crash report in its error log)."""
        report = parse_crash_report(since_last_start(log_text))
        if report is None:
            return False
        uid = report_unique_id(report)
        sig = crash_signature(report.signal, report.assertion, report.fatal,
                              report.bug_frames(), unique_id=uid)
        result.outcome = CRASH
        result.signature = sig.to_json()
        result.unique_id = uid.to_json() if uid is not None else None
        result.detail = f"the server crashed as it started: {sig.parts[0]}"
        self._tag(result, sig, tree)
        return True

    def _send(self, reproducer: Reproducer, server: "Server", tree: CodeTree,
              log_path: str) -> Any:
        """Run the reproducer's tool against server (watched for waits when on_idle is
        set: :mod:`.waits`); its ToolResult."""
        watch = WaitWatch(server, self.on_idle).start() if self.on_idle else None
        try:
            return self._run_tool(reproducer, server, tree, log_path)
        finally:
            if watch is not None:
                watch.stop()

    def _run_tool(self, reproducer: Reproducer, server: "Server", tree: CodeTree,
                  log_path: str) -> Any:
        """Run the reproducer's tool against server; its ToolResult."""
        socket = server.paths.socket_file
        if reproducer.kind == MYSQLTEST:
            binary, root = find_mysqltest(tree)
            if not binary:
                raise KewpieError("no mariadb-test (or mysqltest) in the tree or on PATH")
            with self._out(os.path.join("bots", self.bot, "mysqltest")) as made:
                tmp = made.path
            argv = [binary, "--no-defaults", f"--socket={socket}", "--user=root",
                    "--database=test", "--silent", f"--tmpdir={tmp}", f"--logdir={tmp}",
                    f"--test-file={reproducer.path}"] + ([f"--basedir={root}"] if root else [])
            return run_tool(argv, timeout=self.settings.timeout, log_path=log_path,
                            cwd=root or None)
        argv = [tree.tool("client"), "--no-defaults", f"--socket={socket}", "--user=root",
                "--force", "--binary-mode", "--skip-reconnect", "test"]
        return run_tool(argv, timeout=self.settings.timeout, log_path=log_path,
                        stdin_path=reproducer.path)

    def _crash(self, server: "Server", text: str, how: str, evidence: str, client_log: str,
               result: ReplayResult) -> None:
        """Sign the crash (kewpie's signature, the UniqueID), keep its evidence."""
        with self._out(os.path.join(evidence, "gdb")) as made:
            work = made.path
        finding = crash_finding(server, text, how, work)
        gdb_text = ""
        core = finding.core or find_core(server.paths.datadir) or ""
        backtrace_path = os.path.join(evidence, f"backtrace-{server.name}.txt")
        report = parse_crash_report(text)
        roots = debug_roots(server.tree)
        symbols = debug_file(server.tree.server, roots)
        if core and (report is None or not report_complete(report.frames) or symbols):
            began = time.monotonic()
            gdb_text = crashing_backtrace(server.tree.server, core, "", roots)
            with self._out(evidence) as folder:
                folder.write_bytes(os.path.basename(backtrace_path),
                                   gdb_text.encode("utf-8", errors="replace"))
            result.phases["gdb"] = time.monotonic() - began
        elif finding.copies:
            with self._out(evidence) as folder:
                for name, source in finding.copies.items():
                    gdb_text = _read(source)
                    folder.copy_file(source, name)
        shutil.rmtree(work, ignore_errors=True)
        uid = crash_unique_id(text, gdb_text)
        sig = dataclasses.replace(finding.signature, unique_id=uid)
        result.outcome = CRASH
        result.signature = sig.to_json()
        result.unique_id = uid.to_json() if uid is not None else None
        result.detail = finding.summary
        with self._out(evidence) as folder:
            for name, body in finding.texts.items():
                folder.write_bytes(name, body.encode("utf-8", errors="replace"))
        self._keep(evidence, {"client.log": client_log})
        result.evidence = evidence
        self._tag(result, sig, server.tree)

    def _out(self, path: str) -> OutputDir:
        """The folder path (absolute, or relative to the output folder) in the replay's
        output folder, made when missing, never reached through a link
        (lib/platform/safewrite.py); the caller closes it."""
        out = self.settings.out
        return out.folder(os.path.relpath(os.path.join(out.path, path), out.path))

    def _keep(self, evidence: str, files: dict[str, str]) -> None:
        """Copy files (name -> source) into the evidence folder (a source that cannot be
        read is left out)."""
        with self._out(evidence) as folder:
            for name, source in files.items():
                try:
                    folder.copy_file(source, name)
                except OSError:
                    pass

    def _tag(self, result: ReplayResult, sig: "Signature", tree: CodeTree) -> None:
        """What the known-bugs files say of this signature (:func:`known_verdict`)."""
        if self.settings.known_bugs is not None:
            version = tree.version.version if tree.version else ""
            result.known = known_verdict(self.settings.known_bugs, sig, version, result.bug)


def known_verdict(known: "KnownBugs", sig: "Signature", version: str,
                  bug: str) -> dict[str, Any]:
    """The known-bugs files' tag of a reproducer's signature, as JSON.  When they name
    another bug than the reproducer's own (bug), and list that one too, the two pieces
    of evidence disagree: no bug is named (``conflict``), the match is kept."""
    tagged = known.tag(sig, version)
    verdict = tagged.to_json()
    named = tagged.match.bug_ids if tagged.match is not None and tagged.bug is not None else ()
    if named and bug and bug not in named and known.lists(bug):
        match = dict(verdict["match"] or {})
        match.update(quality="ambiguous", detail=f"{match.get('detail', '')}; the reproducer "
                                                 f"is {bug}'s, listed for another crash")
        verdict = {"tag": "new", "bug": None, "match": match, "conflict": bug}
    return verdict


ACCESS_DENIED = (1044, 1045, 1698)
LOGIN_SECONDS = 10         # a hung server may hold a login's handshake forever


class _Clock:
    """Laps of one replay into a phases dict (seconds by name)."""

    def __init__(self, phases: dict[str, float]) -> None:
        self.phases = phases
        self.last = time.monotonic()

    def lap(self, name: str) -> None:
        """The time since the last lap, as phase name."""
        now = time.monotonic()
        self.phases[name] = self.phases.get(name, 0.0) + now - self.last
        self.last = now


def _refuses_login(server: "Server") -> bool:
    """Does the server answer, but refuse kewpie's login (access denied)?"""
    import pymysql
    try:
        server.connect(connect_timeout=LOGIN_SECONDS, read_timeout=LOGIN_SECONDS).close()
    except pymysql.MySQLError as exc:
        code = error_code(exc)
        return code in ACCESS_DENIED
    return False




def debug_roots(tree: CodeTree) -> tuple[str, ...]:
    """Where a tree's separate debug symbols may be: its own ``lib/debug`` (an unpacked
    package tree), then the system's."""
    own = os.path.join(tree.basedir, "lib", "debug")
    return tuple(dict.fromkeys([own, *DEBUG_ROOTS]))


def crashing_backtrace(binary: str, core: str, out_path: str,
                       roots: Sequence[str] = DEBUG_ROOTS) -> str:
    """gdb's backtrace of the crashing thread of core (``bt 40``: the UniqueID's frames;
    every thread's would cost seconds more a crash), with debug symbols looked up under
    roots, written to out_path ('' for none); its text."""
    gdb = shutil.which("gdb")
    if not gdb:
        return ""
    argv = [gdb, "-batch", "-nx", "-iex", "set debuginfod enabled off",
            "-iex", f"set debug-file-directory {':'.join(roots)}", "-ex", "bt 40",
            binary, core]
    try:
        proc = run_tool(argv, timeout=GDB_TIMEOUT)
    except OSError:
        return ""
    text = proc.stdout + proc.stderr
    if out_path:
        with open(out_path, "w", encoding="utf-8", errors="replace") as fh:
            fh.write(text)
    return text


def _read(path: str) -> str:
    """A text file's content ('' when it cannot be read)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return ""


def count_outcomes(results: Sequence[ReplayResult]) -> dict[str, dict[str, int]]:
    """tree -> outcome -> how many reproducers."""
    counts: dict[str, dict[str, int]] = {}
    for r in results:
        per = counts.setdefault(r.tree, {o: 0 for o in OUTCOMES})
        per[r.outcome] = per.get(r.outcome, 0) + 1
    return counts

