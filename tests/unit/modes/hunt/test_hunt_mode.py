"""--mode=hunt's command line and run-level pieces without servers: option checks, the
oracle list, the trial budget.

Covers: lib/modes/hunt/run.py, lib/cli.py, lib/config/
"""
import pytest

from lib.cli import config_from_args
from lib.errors import KewpieError
from lib.hunt.errors import HuntError
from lib.modes.hunt.run import Budget, parse_oracles


def test_hunt_options_become_the_config(tmp_path):
    grammar = tmp_path / "g.yy"
    grammar.write_text("query: SELECT 1 ;\n")
    cfg = config_from_args(["--mode=hunt", f"--grammar={grammar}", "--grammar=conf/x.yy:conf/x.zz",
                            "--trials=3", "--duration=60", "--threads=2", "--oracles=hang,norec",
                            "--oracles=errorlog", "--topology=replication:2", "--allow-known",
                            "--known-bugs=kb.txt", "--hang-timeout=5"])
    assert cfg.mode == "hunt" and cfg.mode_section.grammars == (str(grammar), "conf/x.yy:conf/x.zz")
    assert (cfg.mode_section.trials, cfg.mode_section.duration, cfg.mode_section.threads) == (3, 60.0, 2)
    assert cfg.mode_section.oracles.names == ("hang", "norec", "errorlog") and cfg.reporting.allow_known
    assert cfg.mode_section.topology == "replication:2" and cfg.reporting.known_bugs[0].endswith("/kb.txt")


@pytest.mark.parametrize("argv,words", [
    (["--mode=hunt"], "needs --grammar"),
    (["--grammar=x.yy"], "only with --mode=hunt"),
    (["--mode=hunt", "--grammar=x.yy", "--threads=0"], "--threads"),
    (["--mode=hunt", "--grammar=x.yy", "--trials=-1"], "--trials"),
    (["--mode=hunt", "--grammar=x.yy", "--trial-duration=0"], "--trial-duration"),
    (["--mode=hunt", "--grammar=x.yy", "--hang-timeout=nan"], "--hang-timeout"),
])
def test_bad_hunt_options(argv, words):
    with pytest.raises(KewpieError, match=words):
        config_from_args(argv)


def test_oracles():
    assert parse_oracles(()) == ("crash",)
    assert parse_oracles(("hang", "errorlog", "hang")) == ("crash", "hang", "errorlog")
    with pytest.raises(HuntError, match="unknown oracle"):
        parse_oracles(("crash", "bogus"))


def test_budget_by_trials_and_default():
    budget = Budget(3, 0.0, 60.0)
    assert [budget.next() for _ in range(4)] == [(1, 60.0), (2, 60.0), (3, 60.0), None]
    one = Budget(0, 0.0, 10.0)
    assert one.next() == (1, 10.0) and one.next() is None


def test_budget_by_duration_caps_the_last_trial():
    import time
    budget = Budget(0, 100.0, 60.0)
    assert budget.next() == (1, 60.0)
    budget.deadline = time.monotonic() + 30.0  # 30 s left: the next trial gets at most that
    number, duration = budget.next()
    assert number == 2 and 25.0 < duration <= 30.0
    budget.deadline = time.monotonic() + 2.0   # too little left for a trial
    assert budget.next() is None
