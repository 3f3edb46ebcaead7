"""The pytest plugin: kewpie's servers as fixtures (docs/pytest.md).

Loaded by the ``pytest11`` entry point ``kewpie`` (``pip install -e .``) or
with ``-p lib.pytest_plugin.plugin``.  It does nothing until a collected test
uses one of its fixtures: only then is kewpie imported, the workdir opened
and a server started.

Fixtures: ``kewpie`` (a :class:`~lib.pytest_plugin.helper.KewpieServers`:
servers and every KewpieTestCase helper), ``kewpie_server`` (the first
server), ``kewpie_replication`` (a primary and 2 replicas), ``kewpie_cluster``
(3 Galera nodes), ``kewpie_session`` (the process's bot).  The ``kewpie``
marker (or an indirect parameter) says which servers, as suite_config.py does.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generator, Iterator

import pytest

from .collection import (FIXTURES, declared_values, is_kewpie_testcase,
                         module_values, scope_unit, uses_ours)
from .options import (SCOPE_CHOICES, add_options, check_path_options, configured_dsn,
                      run_config, setting)

if TYPE_CHECKING:
    from .helper import KewpieServers
    from .marker import Declared
    from .session import KewpieSession, TestRun
    from ..servers.server import Server

MARKER_HELP = ("kewpie(server_requirements=[[...], ...], server_requests={'join_cluster': [...]}, "
               "server_type='mysql'|'galera', storage='disk', replicas=N, nodes=N, options=[...], "
               "scope='function'|'class'|'module'|'package'|'session'): the servers a test "
               "gets from kewpie's fixtures, as suite_config.py declares them (docs/pytest.md)")


class PluginState:
    """What the plugin knows in one pytest process (kept in ``config.stash``)."""

    def __init__(self) -> None:
        self.session: KewpieSession | None = None
        self.declared: list[tuple[str, Any]] = []
        self.xdist_session = ""  # set in pytest-xdist's controller
        self.saved: list[tuple[str, str]] = []  # (test, evidence) from workers
        self.kept: list[str] = []  # lines about kept servers, from workers
        self.known: list[tuple[str, str]] = []  # (test, known bugs) from workers
        self.problems: list[str] = []
        self.interrupted = False

    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        """Ctrl-C (or pytest.exit): no reuse rule, no evidence; every server is stopped
        at the session's end, and a second Ctrl-C cannot stop that."""
        import signal
        import threading
        self.interrupted = True
        if self.session is not None:
            self.session.interrupted = True
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, signal.SIG_IGN)


STATE = pytest.StashKey[PluginState]()
DECLARED = pytest.StashKey["Declared"]()
RUN = pytest.StashKey["TestRun | None"]()
NEXT = pytest.StashKey["pytest.Item | None"]()
NODEID = pytest.StashKey[str]()  # as collected (pytest-xdist's loadgroup appends @group)
PHASES = pytest.StashKey["list[pytest.TestReport]"]()  # a kewpie test's reports, for the history


# ---------------------------------------------------------------- configure
def pytest_addoption(parser: pytest.Parser) -> None:
    """kewpie's options (each also an ini setting ``kewpie_<name>``): see options.py."""
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    """Register the marker; nothing of kewpie is imported yet."""
    config.addinivalue_line("markers", MARKER_HELP)
    config.stash[STATE] = PluginState()
    config.pluginmanager.register(config.stash[STATE], "kewpie-state")
    scope = setting(config, "scope")
    if scope is not None and scope not in SCOPE_CHOICES:
        raise pytest.UsageError(f"kewpie_scope must be one of {', '.join(SCOPE_CHOICES)}")


def pytest_report_header(config: pytest.Config) -> list[str]:
    """Where the results history goes, when it is a server (its password as ``***``)."""
    dsn, where = configured_dsn(config)
    if not dsn:
        return []
    from ..history.dsn import redact
    return [f"kewpie: results history {redact(dsn)} (from {where})"]


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """pytest-xdist's controller: remember the run id its workers share."""
    state = node.config.stash[STATE]
    state.xdist_session = node.workerinput.get("testrunuid", "")


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the xdist_group marks
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> None:
    """Read each kewpie test's marker into Requirements now: a bad one is a usage error
    before anything starts.  Tests sharing servers for a scope wider than a function
    are one ``xdist_group`` (``--dist loadgroup`` keeps them on one worker)."""
    state = config.stash[STATE]
    default_scope = setting(config, "scope") or "function"
    for item in items:
        names = [n for n in getattr(item, "fixturenames", ()) if n in FIXTURES and uses_ours(item, n, __name__)]
        unittest_style = not names and is_kewpie_testcase(item)
        if not names and not unittest_style:
            continue
        from ..errors import SuiteError
        from .marker import SINGLE, declare, shape_of
        try:
            if unittest_style:
                values = (declared_values(item) if item.get_closest_marker("kewpie")
                          else module_values(item))
                if values is None:
                    continue  # declares no servers: not a test kewpie runs
                shape = SINGLE
            else:
                values = declared_values(item)
                shape = shape_of(names, item.nodeid) or SINGLE
            declared = declare(shape, values, default_scope, item.nodeid)
        except SuiteError as exc:
            raise pytest.UsageError(str(exc)) from None
        item.stash[DECLARED] = declared
        item.stash[NODEID] = item.nodeid
        state.declared.append((item.nodeid, declared.requirements))
        if declared.scope != "function" and hasattr(config, "workerinput"):  # an xdist worker
            item.add_marker(pytest.mark.xdist_group(
                f"kewpie-{declared.scope}:{scope_unit(item, declared.scope, item.stash.get(NODEID, item.nodeid))}"))


# ---------------------------------------------------------------- the session
@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> None:
    """Before the first test, when any test of this process needs servers: open the
    workdir and check every test's servers (as kewpie does before any server starts)."""
    if session.config.option.collectonly:
        return
    if any(item.stash.get(DECLARED, None) is not None for item in session.items):
        _open_session(session.config)


def _open_session(config: pytest.Config) -> "KewpieSession":
    """The process's KewpieSession, opened before the first test that needs servers; bad
    input or environment ends the whole run with exit status 2, nothing left running."""
    from ..errors import KewpieError
    from .session import KewpieSession, bot_name
    state = config.stash[STATE]
    if state.session is not None and state.session.is_open:
        return state.session
    if state.session is not None:  # opening failed before: the run is ending
        pytest.exit("kewpie could not start (see above)", returncode=2)
    workerinput = getattr(config, "workerinput", None)
    session = KewpieSession(run_config(config), bot_name(workerinput and workerinput["workerid"]),
                            workerinput["testrunuid"] if workerinput else None,
                            keep_failed=bool(setting(config, "keep_failed")))
    session.declared = list(state.declared)
    state.session = session
    try:
        check_path_options(session.config)
        session.open()
    except KewpieError as exc:
        pytest.exit(f"kewpie: {str(exc).splitlines()[0]}", returncode=2)
    except OSError as exc:
        pytest.exit(f"kewpie: cannot use {exc.filename or ''}: {exc.strerror or exc}",
                    returncode=2)
    return session


def _continues(item: pytest.Item, run: "TestRun") -> bool:
    """True when the next test is of the same unit and asks for the same servers."""
    nextitem = item.stash.get(NEXT, None)
    if nextitem is None or run.scope_unit == item.stash.get(NODEID, item.nodeid):
        return False
    declared = nextitem.stash.get(DECLARED, None)
    return (declared is not None
            and declared.requirements == run.context.spec.requirements
            and scope_unit(nextitem, declared.scope, nextitem.stash.get(NODEID, nextitem.nodeid)) == run.scope_unit)


@pytest.fixture
def _kewpie_run(request: pytest.FixtureRequest) -> Iterator["KewpieServers"]:
    """The test's servers and helper; the reuse rule and evidence when it ends."""
    from .session import ServersNotStarted
    item: pytest.Item = request.node
    declared = item.stash.get(DECLARED, None)
    if declared is None:
        pytest.fail(f"{item.nodeid}: kewpie did not see this test's fixtures at collection")
    state = request.config.stash[STATE]
    session = _open_session(request.config)
    if session.kept:
        pytest.skip(f"kewpie keeps the servers of the failed test {session.kept_test} "
                    f"(--kewpie-keep-failed): no further test runs")
    from ..errors import KewpieError
    try:
        run = session.begin(item.stash.get(NODEID, item.nodeid), str(item.path),
                            getattr(item, "module", None), declared, scope_unit(item, declared.scope, item.stash.get(NODEID, item.nodeid)))
    except ServersNotStarted as exc:
        _publish(request.config, session)
        pytest.fail(str(exc), pytrace=False)
    except KewpieError as exc:
        pytest.exit(f"kewpie: {str(exc).splitlines()[0]}", returncode=2)
    item.stash[RUN] = run
    try:
        yield run.helper
    finally:
        item.stash[RUN] = None
        if not state.interrupted:
            problem = session.end(run, _continues(item, run))
            _publish(request.config, session)
            if session.kept:
                request.session.shouldfail = (f"kewpie keeps the servers of the failed test "
                                              f"{session.kept_test} (--kewpie-keep-failed)")
            if problem:  # the post-checks failed a test that had passed
                pytest.fail(problem, pytrace=False)


@pytest.fixture
def kewpie(_kewpie_run: "KewpieServers") -> "KewpieServers":
    """The test's servers (``kewpie.servers``) with every KewpieTestCase helper:
    ``assertReplicasInSync``, ``checksums``, ``backups``, ``randgen``, ``run_workloads``...
    One plain server unless the ``kewpie`` marker says otherwise."""
    return _kewpie_run


@pytest.fixture
def kewpie_server(_kewpie_run: "KewpieServers") -> "Server":
    """One server (the first of the set the marker declares): ``execute``, ``connect``,
    ``restart``, ``kill``..."""
    return _kewpie_run.primary


@pytest.fixture
def kewpie_replication(_kewpie_run: "KewpieServers") -> "KewpieServers":
    """A primary and replicas (2 unless ``replicas=N`` or ``server_requirements``), wired
    with GTID replication: ``.primary``, ``.replicas``, ``assertReplicasInSync()``."""
    return _kewpie_run


@pytest.fixture
def kewpie_cluster(_kewpie_run: "KewpieServers") -> "KewpieServers":
    """A Galera cluster (3 nodes unless ``nodes=N``), Synced: ``.servers``, ``wait_synced``,
    ``kill_node``, ``restart_node``, ``assertClusterConsistent``..."""
    return _kewpie_run


@pytest.fixture(autouse=True)
def _kewpie_unittest(request: pytest.FixtureRequest) -> None:
    """Hands a KewpieTestCase (unittest style) collected by pytest its test context."""
    if request.node.stash.get(DECLARED, None) is None or "_kewpie_run" in request.fixturenames:
        return
    instance = getattr(request, "instance", None)
    if instance is None or not hasattr(instance, "use_context"):
        return
    helper = request.getfixturevalue("_kewpie_run")
    instance.use_context(helper.context)


@pytest.fixture(scope="session")
def kewpie_session(request: pytest.FixtureRequest) -> "KewpieSession":
    """This process's bot: ``.env`` (the RunEnvironment), ``.manager``, ``.config``."""
    return _open_session(request.config)


# ---------------------------------------------------------------- reports
@pytest.hookimpl(tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """Remember the next test: it decides whether the servers stay for it."""
    item.stash[NEXT] = nextitem


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    """A kewpie test's call under the watchdog (``--kewpie-test-timeout``: when time is
    up its servers are killed, and the test fails as timed out), with its tag in the
    environment: what the call starts carries it (a process left running is stopped
    and fails the test).  Fixtures are not tagged: a wider fixture may outlive the test."""
    run = item.stash.get(RUN, None)
    if run is None:
        return (yield)
    with run.attempt.environ(), run.attempt.watching():
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]
                              ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A test whose servers crashed or hung fails, with the error-log tail and the known
    bug they died of (an expected failure with ``--kewpie-allow-known``); a failing
    test's report gets its servers' status and log tails."""
    report = yield
    state = item.config.stash[STATE]
    if item.stash.get(DECLARED, None) is not None and not state.interrupted:
        _remember(item, report, state)
    run = item.stash.get(RUN, None)
    if run is None or state.session is None or state.interrupted:
        return report
    if report.when == "call":
        _judge(report, run, state.session)
    if report.failed:
        run.failures.append(f"{report.when}: {report.longreprtext}")
    elif report.skipped and hasattr(report, "wasxfail"):
        run.xfailed = True
    return report


def _judge(report: pytest.TestReport, run: "TestRun", session: "KewpieSession") -> None:
    """The call's report after the attempt's judge."""
    from ..suites.status import TestStatus
    status = (TestStatus.FAIL if report.failed else
              TestStatus.SKIPPED if report.skipped else TestStatus.PASS)
    verdict = session.judge(run, status)
    if verdict.status.failed and verdict.known.known and session.config.reporting.allow_known:
        report.outcome = "skipped"  # as pytest reports an expected failure
        report.wasxfail = f"known bug {verdict.known.known}"  # pytest's xfail attribute
        report.sections.append(("kewpie servers", verdict.message))
    elif verdict.status.failed and not report.failed:
        report.outcome = "failed"
        report.longrepr = verdict.message
    elif verdict.message:
        report.sections.append(("kewpie servers", verdict.message))


def _remember(item: pytest.Item, report: pytest.TestReport, state: PluginState) -> None:
    """Keep a kewpie test's phase reports; after its teardown, record it in the results
    history: failed (any phase failed), skipped (or an expected failure), else passed."""
    phases = item.stash.setdefault(PHASES, [])
    phases.append(report)
    if report.when != "teardown" or state.session is None:
        return
    failed = [r for r in phases if r.failed]
    if failed:
        status, text = "fail", f"{failed[0].when}: {failed[0].longreprtext}"
    elif any(r.skipped for r in phases):
        status, text = "skipped", next(r.longreprtext for r in phases if r.skipped)
    else:
        status, text = "pass", ""
    ms = int(sum(r.duration for r in phases) * 1000)
    state.session.record(item.stash.get(NODEID, item.nodeid), status, ms, text)
    item.stash[PHASES] = []


def _publish(config: pytest.Config, session: "KewpieSession") -> None:
    """Evidence and kept servers, for the terminal summary (pytest-xdist: the
    controller's, through the worker's output)."""
    state = config.stash[STATE]
    state.saved = [(s.test, s.path) for s in session.saved]
    state.known = list(session.known)
    state.kept = ([f"kewpie kept the servers of {session.kept_test} running:"]
                  + [f"  {line}" for line in session.describe_kept()]) if session.kept else []
    workeroutput = getattr(config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["kewpie"] = {"saved": state.saved, "kept": state.kept,
                                  "known": state.known, "problems": state.problems}


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """pytest-xdist's controller: gather a worker's evidence and kept servers."""
    state = node.config.stash[STATE]
    output = getattr(node, "workeroutput", {}).get("kewpie")
    if output:
        state.saved.extend(tuple(s) for s in output["saved"])
        state.kept.extend(output["kept"])
        state.known.extend(tuple(k) for k in output["known"])
        state.problems.extend(output["problems"])


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Stop every server this process started (fast after Ctrl-C); pytest-xdist's
    controller then sweeps what killed workers may have left."""
    from ..errors import KewpieError
    state = session.config.stash[STATE]
    interrupted = state.interrupted  # Ctrl-C, SIGTERM, pytest.exit (not -x or maxfail)
    kewpie_session = state.session
    if kewpie_session is not None:
        from .session import ignoring_sigint
        try:
            code = None if state.xdist_session or hasattr(session.config, "workerinput") \
                else int(exitstatus)
            ignoring_sigint(lambda: kewpie_session.close(interrupted, code))
        except KewpieError as exc:
            state.problems.append(f"kewpie cleanup: {exc} (servers were stopped; "
                                  f"./kewpie.py --mode=cleanup --workdir=... if in doubt)")
        _publish(session.config, kewpie_session)
    if state.xdist_session and (interrupted or not setting(session.config, "keep_failed")):
        from .session import ignoring_sigint, sweep_after_workers
        config = run_config(session.config)
        stopped: list[int] = []
        ignoring_sigint(lambda: stopped.append(sweep_after_workers(config, state.xdist_session)))
        if stopped and stopped[0]:
            state.problems.append(f"kewpie cleaned up after pytest-xdist workers that ended "
                                  f"without stopping their servers ({stopped[0]} recorded in "
                                  f"{config.workdir})")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, exitstatus: int,
                            config: pytest.Config) -> None:
    """Where the evidence of failed tests is, the known bugs failures died of, and which
    servers were kept."""
    state = config.stash[STATE]
    if not (state.saved or state.kept or state.known or state.problems):
        return
    terminalreporter.write_sep("-", "kewpie")
    for test, path in state.saved:
        terminalreporter.write_line(f"evidence of {test}: {path}")
    if state.known:
        terminalreporter.write_line("failed on known bugs: " + "; ".join(
            f"{test} ({known})" for test, known in state.known))
    for line in state.kept:
        terminalreporter.write_line(line)
    if state.kept:
        workdir = run_config(config).workdir
        terminalreporter.write_line(f"stop them with: ./kewpie.py --mode=cleanup --workdir={workdir}")
    for line in state.problems:
        terminalreporter.write_line(line)
