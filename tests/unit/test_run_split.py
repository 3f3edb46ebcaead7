"""Unit tests for the harness split (issue 13): the test watchdog, the bot pool over
callables, the header's shm line, and argparse defaults taken from RunConfig."""
import os
import threading
import time
import types
from dataclasses import fields, MISSING

import pytest

from lib.cli import build_parser, config_from_args
from lib.errors import TestTimeoutError as TimeoutRaised
from lib.run.bots import BotPool
from lib.run.config import ROOT, RunConfig
from lib.run.report import Outcome
from lib.run.setup import shm_line
from lib.run.watchdog import TestWatchdog
from lib.suites.status import TestStatus


def test_root_is_the_checkout():
    assert os.path.isfile(os.path.join(ROOT, "kewpie.py"))
    assert os.path.isdir(RunConfig().suitepaths[0])


def test_argparse_defaults_are_runconfig_defaults():
    cfg = config_from_args([])
    for f in fields(RunConfig):
        if f.default is not MISSING and f.name not in ("root",):
            assert getattr(cfg, f.name) == f.default, f.name


def test_help_shows_the_config_defaults():
    text = " ".join(build_parser().format_help().split())
    for shown in ("(default: 9300)", "(default: 10)", "(default: 60)", "(default: /usr)"):
        assert shown in text


def test_watchdog_quiet_when_in_time():
    fired = []
    dog = TestWatchdog(5, lambda: fired.append(1))
    dog.run(lambda: None)
    assert not dog.timed_out and not fired


def test_watchdog_off_with_zero():
    dog = TestWatchdog(0, lambda: pytest.fail("no watchdog with 0"))
    dog.run(lambda: time.sleep(0.05))
    assert not dog.timed_out


def test_watchdog_ends_a_blocked_wait_through_on_timeout():
    released = threading.Event()
    dog = TestWatchdog(0.2, released.set, grace=30)
    start = time.monotonic()
    dog.run(lambda: released.wait(10))  # like a query that fails when its server dies
    assert dog.timed_out and time.monotonic() - start < 5


def test_watchdog_last_resort_interrupts_pure_python():
    dog = TestWatchdog(0.1, lambda: None, grace=0.2)
    start = time.monotonic()
    dog.run(lambda: time.sleep(10))
    assert dog.timed_out and time.monotonic() - start < 5


def test_watchdog_restores_sigalrm_handler():
    import signal
    before = signal.getsignal(signal.SIGALRM)
    TestWatchdog(0.1, lambda: None, grace=0.1).run(lambda: time.sleep(1))
    assert signal.getsignal(signal.SIGALRM) is before


def test_watchdog_other_errors_pass_through():
    with pytest.raises(TimeoutRaised):
        def body():
            raise TimeoutRaised("not the watchdog's")
        TestWatchdog(5, lambda: None).run(body)


def test_shm_line_says_who_chose_disk():
    wd = types.SimpleNamespace(use_shm=False, path="/w", shm_path="/dev/shm/x")
    assert "--no-shm" in shm_line(RunConfig(use_shm=False), wd)
    low = shm_line(RunConfig(use_shm=True), wd)
    assert "--no-shm" not in low and "space" in low
    wd.use_shm = True
    assert shm_line(RunConfig(), wd) == "Linking workdir /w to /dev/shm/x"


class _FakeRunner:
    def __init__(self, bot):
        self.bot = bot
        self.manager = types.SimpleNamespace(servers=[], current=None, teardown=lambda fast: None)

    def run_with_retries(self, spec, retries, may_retry):
        status = TestStatus.FAIL if "bad" in spec.full_name else TestStatus.PASS
        return Outcome(spec.full_name, status, 1, self.bot)


def test_bot_pool_needs_only_callables(tmp_path):
    spec = lambda name: types.SimpleNamespace(full_name=name, requirements=name)  # noqa: E731
    queue = [spec("s.a"), spec("s.bad"), spec("s.c")]
    closed = tmp_path / "closed"
    closed.mkdir()

    def close_bot(bot, fast):
        (closed / bot).write_text(str(fast))

    pool = BotPool(2, make_runner=_FakeRunner, close_bot=close_bot,
                   log_path=lambda bot: str(tmp_path / f"{bot}.log"))
    got = []
    stopped = pool.run(queue, lambda s: 1.0, got.append, stop_on_failure=False, retries=0,
                       retry_max=0)
    assert not stopped
    assert sorted(o.name for o in got) == ["s.a", "s.bad", "s.c"]
    assert [o.failed for o in got if o.name == "s.bad"] == [True]
    assert sorted(p.name for p in closed.iterdir()) == ["bot0", "bot1"]


class _AnnouncedRunner(_FakeRunner):
    """Writes, for each test it runs, the test announced to come after it."""

    def __init__(self, bot, log_dir):
        super().__init__(bot)
        self.log = os.path.join(log_dir, bot)
        self.upcoming = None

    def expect_next(self, spec):
        self.upcoming = spec

    def run_with_retries(self, spec, retries, may_retry):
        with open(self.log, "a") as fh:
            fh.write(f"{spec.full_name} {self.upcoming.full_name if self.upcoming else '-'}\n")
        time.sleep(0.01 * (len(spec.full_name) % 3))  # the bots finish in a mixed order
        return super().run_with_retries(spec, retries, may_retry)


def test_bot_pool_announces_each_bots_next_test(tmp_path):
    # the test announced with one test is the one that bot runs next (a runner prepares
    # its servers meanwhile); only the last test left may go to the bot that is free
    spec = lambda name, key: types.SimpleNamespace(full_name=name, requirements=key)  # noqa: E731
    queue = [spec(f"s.t{i:02d}{'x' * (i % 3)}", f"k{i // 3}") for i in range(18)]
    logs = tmp_path / "ran"
    logs.mkdir()
    pool = BotPool(2, make_runner=lambda bot: _AnnouncedRunner(bot, str(logs)),
                   close_bot=lambda bot, fast: None,
                   log_path=lambda bot: str(tmp_path / f"{bot}.log"))
    got = []
    pool.run(queue, lambda s: 1.0, got.append, stop_on_failure=False, retries=0, retry_max=0)
    assert sorted(o.name for o in got) == sorted(s.full_name for s in queue)
    announced_any = False
    for path in logs.iterdir():
        rows = [line.split() for line in path.read_text().splitlines()]
        for (_, announced), (ran_next, _) in zip(rows, rows[1:]):
            assert announced == ran_next, rows
            announced_any = True
    assert announced_any
