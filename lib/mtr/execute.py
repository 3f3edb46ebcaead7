"""Running one mysql-test case on servers kewpie started: mysql-test-run's run_testcase.

Before the test, ``include/check-testcase.test`` records each server's state
(skipped when the previous test on the same servers already proved it
unchanged).  ``mariadb-test`` then runs the test as the server user, from the
mtr tree, with the test's environment.  While it runs, a server that exits is
handled by the restart protocol tests use (``$MYSQLTEST_VARDIR/tmp/mysqld.N.expect``:
``wait`` keeps it down, ``restart`` or ``restart:<options>`` starts it again);
a server that exits with no expect file crashed.  Exit 0 passes, 62 is a skip
(``reason: ...``), anything else fails, with the unified diff of the result
and the ``.reject`` when the output differed (the servers that crashed are named
in the verdict: the run layer's pipeline reports them, :mod:`lib.run.attempt`).  A passing test is then checked
as mtr checks it: ``check-testcase.test`` again (state left behind fails the
test) and the error-log warnings check (:mod:`lib.mtr.warnings`).
"""
from __future__ import annotations

import difflib
import os
import shutil
import threading
import time
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Callable, Iterable, Sequence

from ..errors import QueryError, ServerError, UnsafeOptionError
from .cases import MtrCase
from .galera import REUSE_WAIT, cluster_sizes, reuse_problem
from .server import is_wsrep
from .vardir import MtrVardir
from .warnings import WarningScanner, log_size, read_since
from ..platform.logsetup import get_logger
from ..platform.logtail import tail_file
from ..platform.process import TAG_TEST, stop_foreign, tagged_processes
from ..platform.tools import ToolResult, run_tool
from ..servers.options import Option
from ..servers.server import Server

class MtrStatus(StrEnum):
    """How a case ended (the same words as kewpie's MtrStatus)."""

    PASS = "pass"
    FAIL = "fail"
    SKIPPED = "skipped"
    TIMEOUT = "timeout"


SKIP_EXIT = 62
POLL_SECONDS = 0.02
EXPECT_WAIT_SECONDS = 5.0   # mtr waits this long for an empty or partial expect file
CHECK_TIMEOUT = 120.0
TAIL_LINES = 20
DEFAULT_TIMEOUT = 900.0     # mtr's --testcase-timeout (15 minutes)
OPEN_FILES = 1024           # mtr's default --open-files-limit for mysqltest


@dataclass
class MtrVerdict:
    """How one case ended, and what its servers need before the next one."""

    status: MtrStatus
    message: str = ""

    @property
    def failed(self) -> bool:
        """A failure or a timeout."""
        return self.status in (MtrStatus.FAIL, MtrStatus.TIMEOUT)
    needs_restart: bool = False        # restarted with other options, or crashed
    restart_reason: str = ""           # why, when it is not a failure or a restart
    reject: str = ""
    refused: str = ""                  # a restart's options broke kewpie's option rules
    # the servers that exited with no expect file, and how (a failed restart too): the
    # run layer reports each one's death (its crash signature, its log's tail)
    crashed: list[tuple[Server, str]] = field(default_factory=list)


@dataclass
class MtrSettings:
    """What every case of a bot runs with."""

    mysqltest: str
    mtr_root: str
    vardir: MtrVardir
    user: str | None
    scanner: WarningScanner
    record: bool = False
    timeout: float = 0.0
    verbose: bool = False
    protocols: tuple[str, ...] = ()  # --ps-protocol etc., given to every mariadb-test run
    timeout_factor: float = 1.0       # a debugger's (valgrind, rr, gdb) slowdown


@dataclass
class ServerWatch:
    """One server of the set as mtr's mysqld.N, with its restart state."""

    number: int
    server: Server
    options: list[Option] = field(default_factory=list)
    restarted_with_options: bool = False
    crashed: str = ""
    refused: str = ""   # the test's restart options were refused (lib/mtr/option_check.py)
    log_mark: int = 0


class MtrExecutor:
    """Runs cases on one bot's servers; keeps which servers' recorded state is current."""

    def __init__(self, settings: MtrSettings,
                 restart: Callable[[Server, list[str] | None], None]) -> None:
        self.settings = settings
        self.restart = restart
        self.recorded: set[int] = set()   # servers whose check-testcase 'before' result is current
        # {server index: wsrep_cluster_size} of the set's Galera nodes as it was handed over
        self.cluster_sizes: dict[int, int] | None = None
        self.log = get_logger()

    # ------------------------------------------------------------------ helpers
    def _mysqltest(self, args: Sequence[str], env: dict[str, str], log_path: str,
                   timeout: float, append: bool = False) -> ToolResult:
        # mtr's my_safe_process gives mysqltest (and what it execs) 1024 open files
        limit = ["prlimit", f"--nofile={OPEN_FILES}:{OPEN_FILES}", "--"] \
            if shutil.which("prlimit") else []
        argv = [*limit, self.settings.mysqltest, f"--defaults-file={self.settings.vardir.cnf}",
                *args]
        return run_tool(argv, user=self.settings.user, env=env, tmpdir=self.settings.vardir.tmp,
                        cwd=self.settings.mtr_root, log_path=log_path, timeout=timeout,
                        append=append)

    def forget(self) -> None:
        """The servers are new (or were reset): record their state again before the next test."""
        self.recorded.clear()
        self.cluster_sizes = None

    def check_testcase(self, number: int, env: dict[str, str], record: bool) -> tuple[int, str]:
        """check-testcase.test against mysqld.N (record: the 'before' state)."""
        vardir = self.settings.vardir
        name = f"check-mysqld_{number}"
        err = os.path.join(vardir.tmp, f"{name}.err")
        args = [f"--defaults-group-suffix=.{number}", f"--result-file={vardir.tmp}/{name}.result",
                "--test-file=include/check-testcase.test", "--verbose"]
        if record:
            args.append("--record")
        ran = self._mysqltest(args, env, err, CHECK_TIMEOUT)
        text = "\n".join(line for line in tail_file(err, 200).splitlines()
                         if not line.startswith("mysqltest: "))
        return (ran.returncode if not ran.timed_out else -1), text

    def _checks(self, numbers: list[int], env: dict[str, str],
                record: bool) -> list[tuple[int, str]]:
        """check-testcase on several servers at once (as mtr starts them in parallel)."""
        if len(numbers) <= 1:
            return [self.check_testcase(n, env, record) for n in numbers]
        results: dict[int, tuple[int, str]] = {}

        def one(number: int) -> None:
            """One server's check, into results."""
            results[number] = self.check_testcase(number, env, record)
        threads = [threading.Thread(target=one, args=(n,), daemon=True) for n in numbers]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return [results.get(n, (-1, "check did not finish")) for n in numbers]

    def record_before(self, count: int, env: dict[str, str]) -> str:
        """check-testcase's 'before' state of mysqld.1..count, where not yet recorded
        (several at once); '' when recorded, else why it could not be."""
        todo = [n for n in range(1, count + 1) if n not in self.recorded]
        for number, (rc, text) in zip(todo, self._checks(todo, env, record=True)):
            if rc != 0:
                self.recorded.clear()
                return (f"could not execute check-testcase before the test on mysqld.{number} "
                        f"(exit {rc}):\n{text}")
            self.recorded.add(number)
        return ""

    # ------------------------------------------------------------------ one case
    def run(self, case: MtrCase, servers: Sequence[Server], env: dict[str, str],
            fresh: bool = False) -> MtrVerdict:
        """Run case on servers (mysqld.1 is servers[0]) with env; see the module doc.
        fresh: the servers were started for this case (their logs have its marker)."""
        begun = time.monotonic()
        watches = [ServerWatch(i + 1, s, list(s.user_options)) for i, s in enumerate(servers)]
        problem = self.record_before(len(servers), env)
        if problem:
            return MtrVerdict(MtrStatus.FAIL, problem, needs_restart=True)
        if self.cluster_sizes is None:  # a new set: its Galera clusters as formed
            self.cluster_sizes = cluster_sizes(list(servers))
        result_file = self._prepare_result(case, env)
        base = os.path.join(self.settings.vardir.log, case.name)
        self._before_case(case, watches, base, fresh)
        args, record_to = self._arguments(case, env, result_file)
        log_path = self._current_test_log(case)
        started = time.monotonic()
        ran = self._run_watched(args, env, log_path, watches)
        test_done = time.monotonic()
        try:
            shutil.copyfile(log_path, base + ".out")  # kept for the evidence
            log_path = base + ".out"
        except OSError:
            pass
        refused = next((w.refused for w in watches if w.refused), "")
        verdict = MtrVerdict(MtrStatus.SKIPPED, f"not run by kewpie: {refused}",
                             needs_restart=True, refused=refused) if refused else \
            self._judge(case, ran, log_path, result_file, base + ".reject", watches)
        if verdict.status == MtrStatus.PASS and self.settings.record and record_to:
            target = case.result_file if case.result_file and case.result_file.endswith(".result") \
                else case.record_file
            shutil.copyfile(record_to, target)
        if verdict.status == MtrStatus.PASS:
            verdict = self._after_checks(case, watches, env, verdict)
        self.log.debug("mtr %s: before-checks and setup %.0f ms, mariadb-test %.0f ms, "
                       "after-checks %.0f ms", case.full_name, (started - begun) * 1000,
                       (test_done - started) * 1000, (time.monotonic() - test_done) * 1000)
        if verdict.status != MtrStatus.PASS or verdict.needs_restart:
            self.recorded.clear()  # a skipped test may have changed something before skipping
            self.cluster_sizes = None
        return verdict

    def _before_case(self, case: MtrCase, watches: list[ServerWatch], base: str,
                     fresh: bool) -> None:
        """The case's old output files and the servers' expect files removed; each error
        log marked where the case begins."""
        for suffix in (".reject", ".log", ".out", ".warnings", ".progress"):
            if os.path.exists(base + suffix):
                os.unlink(base + suffix)
        for w in watches:
            # mtr's mark_log: include/search_pattern_in_file.inc searches from the last one
            if not fresh:
                try:
                    with open(w.server.paths.error_log, "a") as fh:
                        fh.write(f"CURRENT_TEST: {case.suite}.{case.name}\n")
                except OSError:
                    pass
            w.log_mark = log_size(w.server.paths.error_log)
        for number in (w.number for w in watches):
            expect = self.settings.vardir.expect_file(number)
            if os.path.exists(expect):
                os.unlink(expect)

    def _arguments(self, case: MtrCase, env: dict[str, str],
                   result_file: str | None) -> tuple[list[str], str]:
        """mariadb-test's arguments for case, and where --record writes ('' without it)."""
        settings = self.settings
        args = ["--silent", f"--tmpdir={settings.vardir.tmp}",
                f"--character-sets-dir={env.get('MYSQL_CHARSETSDIR', '')}",
                f"--logdir={settings.vardir.log}", "--database=test",
                f"--timer-file={settings.vardir.log}/timer",
                *([f"--overlay-dir={case.overlay_dir}/"] if case.overlay_dir else []),
                f"--suite-dir={case.suite_dir}/", f"--test-file={case.path}",
                f"--tail-lines={TAIL_LINES}", "--wait-for-pos-timeout=300",
                *settings.protocols]
        if result_file:
            args.append(f"--result-file={result_file}")
        record_to = ""
        if settings.record:
            record_to = os.path.join(settings.vardir.log, f"{case.name}.result")
            if result_file:
                shutil.copyfile(result_file, record_to)
            args += ["--record", f"--result-file={record_to}"]
        return args, record_to

    def _current_test_log(self, case: MtrCase) -> str:
        """mtr's log/current_test: "CURRENT_TEST: name", then mysqltest's output (tests
        search it for what their exec'd commands printed)."""
        log_path = os.path.join(self.settings.vardir.log, "current_test")
        with open(log_path, "w") as fh:
            fh.write(f"CURRENT_TEST: {case.suite}.{case.name}\n")
        if self.settings.user:
            shutil.chown(log_path, self.settings.user, self.settings.user)
        return log_path

    def _run_watched(self, args: list[str], env: dict[str, str], log_path: str,
                     watches: list[ServerWatch]) -> ToolResult | None:
        """mariadb-test, while the servers are watched (the restart protocol); its
        result, None when it did not finish."""
        timeout = (self.settings.timeout or DEFAULT_TIMEOUT) * self.settings.timeout_factor
        outcome: list[ToolResult] = []
        runner = threading.Thread(target=lambda: outcome.append(
            self._mysqltest(args, env, log_path, timeout, append=True)), daemon=True)
        runner.start()
        while runner.is_alive():
            runner.join(POLL_SECONDS)
            self._watch(watches)
            if any(w.refused for w in watches):
                stop_tagged(env)  # the test cannot go on: mtr skips what it cannot run here
        runner.join()
        self._watch(watches)  # a server that died as mariadb-test ended
        return outcome[0] if outcome else None

    def _prepare_result(self, case: MtrCase, env: dict[str, str]) -> str | None:
        """The result file to compare with (an .rdiff applied to its base into tmp/)."""
        if not case.result_file or not case.result_file.endswith(".rdiff"):
            return case.result_file
        dest = os.path.join(self.settings.vardir.tmp,
                            os.path.basename(case.result_file)[:-6] + ".result~")
        run_tool(["patch", "-r", "-", "-f", "-s", "-o", dest, str(case.base_result),
                  case.result_file], timeout=30)
        if self.settings.user:
            shutil.chown(dest, self.settings.user, self.settings.user)
        return dest

    def _watch(self, watches: list[ServerWatch]) -> None:
        """The servers that exited since the last look go through the restart protocol."""
        for w in watches:
            if not w.crashed and w.server.executor is not None and not w.server.is_alive():
                self._server_exited(w)

    def _server_exited(self, w: ServerWatch) -> None:
        """The restart protocol: wait while the expect file says wait, restart on restart."""
        expect = self.settings.vardir.expect_file(w.number)
        deadline = time.monotonic() + EXPECT_WAIT_SECONDS
        while True:
            try:
                with open(expect, errors="replace") as fh:
                    lines = [line.strip() for line in fh.read().splitlines() if line.strip()]
            except FileNotFoundError:
                rc = w.server.executor.returncode() if w.server.executor else None
                w.crashed = (f"mysqld.{w.number} ({w.server.name}) exited (status {rc}) with no "
                             f"expect file: the server crashed")
                return
            last = lines[-1] if lines else ""
            if last.startswith("wait") or (not last and time.monotonic() < deadline):
                return  # looked at again on the next poll
            if not last.startswith("restart"):
                if time.monotonic() < deadline:
                    return
                last = "restart"
            extra: list[str] | None = None
            if last.startswith("restart:"):
                extra = last[len("restart:"):].split()
            os.unlink(expect)
            self.log.debug("restart protocol: mysqld.%d %s", w.number, last)
            try:
                self.restart(w.server, extra if extra else None)
                if extra:
                    w.restarted_with_options = True
                elif w.restarted_with_options:
                    w.restarted_with_options = False
            except UnsafeOptionError as exc:  # the server stays down; the case is skipped
                w.crashed = w.refused = f"mysqld.{w.number}'s {exc}"
            except Exception as exc:  # noqa: BLE001 - a failed restart is the test's failure
                w.crashed = f"mysqld.{w.number} did not restart: {exc}"
            return

    def _judge(self, case: MtrCase, ran: ToolResult | None, log_path: str,
               result_file: str | None, reject: str, watches: list[ServerWatch]) -> MtrVerdict:
        output = "\n".join(line for line in tail_file(log_path, 400).splitlines()
                           if not line.startswith("CURRENT_TEST: "))
        crashed = [w.crashed for w in watches if w.crashed]
        if ran is None or ran.timed_out:
            return MtrVerdict(MtrStatus.TIMEOUT, f"mariadb-test did not finish within "
                              f"{self.settings.timeout or DEFAULT_TIMEOUT:g}s\n"
                              + _tail(output), needs_restart=True)
        if ran.returncode == 0 and not crashed:
            return MtrVerdict(MtrStatus.PASS)
        if ran.returncode == SKIP_EXIT and not crashed:
            reason = ""
            for line in output.splitlines():
                if "reason: " in line:
                    reason = line.split("reason: ", 1)[1]
            # as mtr: a test that skips itself after force_restart_if_skipped restarts them
            return MtrVerdict(MtrStatus.SKIPPED, reason or "skipped by the test (reason unknown)",
                              needs_restart=restart_forced((w.server for w in watches),
                                                           "force_restart_if_skipped"))
        parts = [f"mariadb-test exited with status {ran.returncode}"]
        body = _tail(output)
        if body:
            parts.append(body)
        found_reject = reject if os.path.exists(reject) else ""
        if found_reject and result_file and "@@" not in output:
            parts.append(unified_diff(result_file, found_reject))
        return MtrVerdict(MtrStatus.FAIL, "\n".join(parts), needs_restart=bool(crashed),
                          reject=found_reject,
                          crashed=[(w.server, w.crashed) for w in watches if w.crashed])

    def _after_checks(self, case: MtrCase, watches: list[ServerWatch], env: dict[str, str],
                      verdict: MtrVerdict) -> MtrVerdict:
        problems: list[str] = []
        checked = []
        forced = restart_forced(w.server for w in watches)
        for w in watches:
            if w.restarted_with_options or not w.server.is_alive():
                verdict.needs_restart = True
                self.recorded.discard(w.number)
            elif not forced:
                checked.append(w)
        if forced:  # as mtr: no check-testcase after the test, the servers are restarted
            verdict.needs_restart = True
            verdict.restart_reason = "the test asked for a restart (include/force_restart.inc)"
        results = self._checks([w.number for w in checked], env, record=False)
        for w, (rc, text) in zip(checked, results):
            if rc == 1:
                problems.append(
                    f"MTR's internal check of the test case '{case.full_name}' failed on "
                    f"mysqld.{w.number}: the test did not restore the state it found "
                    f"(check-testcase):\n{text}")
            elif rc != 0:
                problems.append(f"could not execute check-testcase after the test on "
                                f"mysqld.{w.number} (exit {rc}):\n{text}")
        problems += self._warnings(watches, env, case.suite_dir)
        if problems:
            return MtrVerdict(MtrStatus.FAIL, "\n".join(problems), needs_restart=True)
        if self.cluster_sizes and not verdict.needs_restart:
            # mtr's check-testcase says nothing of wsrep: a node left Desynced, out of
            # its cluster or in a non-Primary component gets the next case a fresh set
            unsettled = reuse_problem([w.server for w in watches], self.cluster_sizes,
                                      REUSE_WAIT * self.settings.timeout_factor)
            if unsettled:
                verdict.needs_restart = True
                verdict.restart_reason = f"the Galera cluster is not as it was: {unsettled}"
        if len(checked) == 1 and len(watches) == 1 and replica_configured(checked[0].server):
            # left a stopped source behind (main.mysqldump-nl): a later test's restart
            # would start its replica threads, so the next case gets a fresh datadir
            verdict.needs_restart = True
            verdict.restart_reason = "the test left a replication source configured"
        return verdict

    def _warnings(self, watches: list[ServerWatch], env: dict[str, str],
                  suite_dir: str = "") -> list[str]:
        """mtr's check-warnings for each running server whose log gained suspicious lines."""
        problems = []
        for w in watches:
            lines, _ = read_since(w.server.paths.error_log, w.log_mark)
            bad = self.settings.scanner.suspicious(lines, suite_dir)
            log_error = os.path.join(self.settings.vardir.log, f"mysqld.{w.number}.err")
            if not bad or not w.server.is_alive():
                if w.server.is_alive():
                    _clear_suppressions(w.server)
                continue
            warnings_file = log_error + ".warnings"
            with open(warnings_file, "w") as fh:
                fh.write(f"Suspicious lines from {log_error}\n")
                fh.writelines(line + "\n" for line in bad)
            if self.settings.user:
                shutil.chown(warnings_file, self.settings.user, self.settings.user)
            err = os.path.join(self.settings.vardir.tmp, f"warnings-mysqld.{w.number}.err")
            check_env = dict(env, MTR_LOG_ERROR=log_error)
            ran = self._mysqltest([f"--defaults-group-suffix=.{w.number}",
                                   "--test-file=include/check-warnings.test"],
                                  check_env, err, CHECK_TIMEOUT)
            if ran.returncode == 0:
                problems.append(f"Found warnings/errors in server log file {log_error} "
                                f"(mysqld.{w.number}):\n{tail_file(err, 60)}")
            elif ran.returncode != SKIP_EXIT:
                problems.append(f"could not execute check-warnings on mysqld.{w.number} "
                                f"(exit {ran.returncode}):\n{tail_file(err, 30)}")
        return problems


def restart_forced(servers: Iterable[Server], name: str = "force_restart") -> bool:
    """Whether a test left ``<datadir>/mtr/force_restart`` on one of its servers
    (``include/force_restart.inc``): mtr then skips check-testcase after the test and
    restarts every server (mtr's restart_forced_by_test)."""
    return any(os.path.isfile(os.path.join(s.paths.datadir, "mtr", name)) for s in servers)


def stop_tagged(env: dict[str, str]) -> None:
    """Stop, by pid, mariadb-test and what it started for the case (its test tag)."""
    value = env.get(TAG_TEST)
    if not value:
        return
    for proc in tagged_processes(TAG_TEST, value):
        try:
            stop_foreign(proc.pid, proc.create_time(), term_timeout=5.0)
        except Exception:  # noqa: BLE001 - gone meanwhile
            continue


def _clear_suppressions(server: Server) -> None:
    """What check_warnings does at its end when there was nothing to check: the test's
    suppressions go (unlogged and, as check-warnings.test sets ``WSREP_ON=0``, not
    replicated, so replicas and the other Galera nodes keep theirs until their own
    check: galera_3nodes.MDEV-40179 suppresses on node 3 only)."""
    try:
        conn = server.connect()
    except Exception:  # noqa: BLE001 - a server that does not answer is judged elsewhere
        return
    try:
        with conn.cursor() as cur:
            cur.execute("SET SESSION sql_log_bin=0")
            if is_wsrep(server):
                cur.execute("SET SESSION wsrep_on=0")
            cur.execute("SELECT COUNT(*) FROM mtr.test_suppressions")
            row = cur.fetchone()
            if row and row[0]:
                cur.execute("TRUNCATE mtr.test_suppressions")
    except Exception:  # noqa: BLE001 - a test may have dropped the mtr schema: check-testcase says so
        pass
    finally:
        conn.close()


def replica_configured(server: Server) -> bool:
    """Whether the server has a replication source configured (SHOW ALL SLAVES STATUS has
    a row).  check-testcase prints a stopped ``127.0.0.1``/``root`` source as it prints
    none, but its master.info makes the next restart start the replica."""
    try:
        return bool(server.sql.execute("SHOW ALL SLAVES STATUS"))
    except (QueryError, ServerError):  # not answering (judged elsewhere); MySQL lacks it
        return False
    finally:
        server.sql.close()  # no kewpie connection may show in the next test's processlist


def _tail(text: str, lines: int = 40) -> str:
    rows = text.rstrip().splitlines()
    return "\n".join(rows[-lines:])


def unified_diff(expected_path: str, got_path: str, limit: int = 200) -> str:
    """``diff -u`` of the expected result and the .reject (cut to limit lines)."""
    try:
        with open(expected_path, errors="replace") as fh:
            expected = fh.read().splitlines()
        with open(got_path, errors="replace") as fh:
            got = fh.read().splitlines()
    except OSError as exc:
        return f"(no diff: {exc})"
    rows = list(difflib.unified_diff(expected, got, expected_path, got_path, lineterm=""))
    if len(rows) > limit:
        rows = rows[:limit] + [f"... ({len(rows) - limit} more diff lines)"]
    return "\n".join(rows)
