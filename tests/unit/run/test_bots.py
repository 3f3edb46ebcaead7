"""The bot pool over callables and a stand-in environment: every test run once, each
bot closed through the one forked bot's loop (lib/run/forkedbot.py), the test announced
to a bot is the one it runs next, and a bot that dies is its test's failure with the
tail of its log while the other bots go on (worker processes, no server).

Covers: lib/run/bots.py, lib/run/forkedbot.py, lib/platform/workers.py
"""
import os
import time
import types


from lib.run.bots import BotPool
from lib.run.report import Outcome
from lib.suites.status import TestStatus


def _env(tmp_path, close_bot=lambda bot, fast: None):
    """What the bots read of a RunEnvironment: verbosity, their logs, close."""
    return types.SimpleNamespace(
        config=types.SimpleNamespace(reporting=types.SimpleNamespace(verbose=False)),
        workdir=types.SimpleNamespace(bot_log_file=lambda bot: str(tmp_path / f"{bot}.log")),
        close=lambda fast, bot: close_bot(bot, fast))


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

    pool = BotPool(2, _env(tmp_path, close_bot), make_runner=_FakeRunner)
    got = []
    stopped = pool.run(queue, lambda s: 1.0, got.append, stop_on_failure=False, retries=0,
                       retry_max=0)
    assert not stopped
    assert sorted(o.name for o in got) == ["s.a", "s.bad", "s.c"]
    assert [o.failed for o in got if o.name == "s.bad"] == [True]
    assert sorted(p.name for p in closed.iterdir()) == ["bot0", "bot1"]
    assert {p.read_text() for p in closed.iterdir()} == {"False"}  # told to stop: not fast


class _DyingRunner(_FakeRunner):
    """Ends its process in the middle of a test named 'die' (a bot that dies)."""

    def run_with_retries(self, spec, retries, may_retry):
        if "die" in spec.full_name:
            os._exit(3)
        return super().run_with_retries(spec, retries, may_retry)


class _BrokenRunner(_FakeRunner):
    """Raises in the middle of a test named 'broken' (a harness bug)."""

    def run_with_retries(self, spec, retries, may_retry):
        if "broken" in spec.full_name:
            raise RuntimeError("planted harness bug")
        return super().run_with_retries(spec, retries, may_retry)


def test_a_dead_bot_is_its_tests_failure_and_a_harness_error_a_failed_test(tmp_path):
    spec = lambda name: types.SimpleNamespace(full_name=name, requirements=name)  # noqa: E731
    queue = [spec("s.a"), spec("s.die"), spec("s.c"), spec("s.d")]
    got = []
    pool = BotPool(2, _env(tmp_path), make_runner=_DyingRunner)
    pool.run(queue, lambda s: 1.0, got.append, stop_on_failure=False, retries=0, retry_max=0)
    by_name = {o.name: o for o in got}
    assert sorted(by_name) == ["s.a", "s.c", "s.d", "s.die"]   # the other bot went on
    assert by_name["s.die"].failed and "died while running s.die (exit code 3)" in \
        by_name["s.die"].message
    assert not any(by_name[n].failed for n in ("s.a", "s.c", "s.d"))
    got = []
    pool = BotPool(2, _env(tmp_path), make_runner=_BrokenRunner)
    pool.run([spec("s.broken"), spec("s.e")], lambda s: 1.0, got.append,
             stop_on_failure=False, retries=0, retry_max=0)
    broken = next(o for o in got if o.name == "s.broken")
    assert broken.failed and "kewpie internal error: RuntimeError: planted harness bug" in \
        broken.message
    assert [o.failed for o in got if o.name == "s.e"] == [False]


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


def _run_all(tmp_path, queue, runner_class):
    """Run queue on two bots of runner_class (each writes its rows under the returned
    directory); every test must have run once."""
    logs = tmp_path / "ran"
    logs.mkdir()
    pool = BotPool(2, _env(tmp_path), make_runner=lambda bot: runner_class(bot, str(logs)))
    got = []
    pool.run(queue, lambda s: 1.0, got.append, stop_on_failure=False, retries=0, retry_max=0)
    assert sorted(o.name for o in got) == sorted(s.full_name for s in queue)
    return logs


def test_bot_pool_announces_each_bots_next_test(tmp_path):
    # the test announced with one test is the one that bot runs next (a runner prepares
    # its servers meanwhile); only the last test left may go to the bot that is free
    spec = lambda name, key: types.SimpleNamespace(full_name=name, requirements=key)  # noqa: E731
    queue = [spec(f"s.t{i:02d}{'x' * (i % 3)}", f"k{i // 3}") for i in range(18)]
    logs = _run_all(tmp_path, queue, _AnnouncedRunner)
    announced_any = False
    announced_to = {}
    for path in logs.iterdir():
        rows = [line.split() for line in path.read_text().splitlines()]
        for (_, announced), (ran_next, _) in zip(rows, rows[1:]):
            if announced == "-":   # the last tests left, announced to the other bot
                assert ran_next in {r[0] for r in rows[-2:]}, rows
                continue
            assert announced == ran_next, rows
            announced_any = True
        for _, announced in rows:
            if announced != "-":   # never to two bots (both would prepare its servers)
                assert announced_to.setdefault(announced, path.name) == path.name
    assert announced_any


class _LaterRunner(_AnnouncedRunner):
    """Also writes the test announced to come after the next one (Runner.expect_later)."""

    def __init__(self, bot, log_dir):
        super().__init__(bot, log_dir)
        self.later = None

    def expect_later(self, spec):
        self.later = spec

    def run_with_retries(self, spec, retries, may_retry):
        with open(self.log + ".later", "a") as fh:
            fh.write(f"{spec.full_name} {self.later.full_name if self.later else '-'}\n")
        return super().run_with_retries(spec, retries, may_retry)


def test_bot_pool_announces_the_test_after_the_last_on_the_same_servers(tmp_path):
    # k0 k0 k0 | k1 k1 | k2...: when the next test is the last its servers serve, the one
    # after it (other servers) is announced too, so that they can start a test earlier
    spec = lambda name, key: types.SimpleNamespace(full_name=name, requirements=key)  # noqa: E731
    queue = [spec(f"s.t{i:02d}", f"k{i // 3}") for i in range(12)]
    key = {s.full_name: s.requirements for s in queue}
    logs = _run_all(tmp_path, queue, _LaterRunner)
    seen_later = 0
    for path in logs.glob("*.later"):
        rows = [line.split() for line in path.read_text().splitlines()]
        for i, (ran, later) in enumerate(rows):
            if later == "-":
                continue
            seen_later += 1
            assert key[later] != key[ran], rows
            ran_after = [r[0] for r in rows[i + 1:i + 3]]
            assert ran_after and key[ran_after[0]] == key[ran], rows
            if len(ran_after) == 2:   # (the last test left may go to the other bot)
                assert ran_after[1] == later, rows
    assert seen_later
