"""Which tests a run runs: suites loaded and checked before any server starts, then
this run's --shard slice."""
from __future__ import annotations

import logging
import os
from typing import Protocol, TypeVar

from ..errors import UsageError
from ..config import RunConfig
from .environment import SERVER_KINDS, RunEnvironment
from .filters import narrow
from .debugging import check_debugging
from .scheduling import parse_shard, shard
from .setup import check_galera
from .timings import Timings
from ..servers.option_safety import check_requirements
from ..servers.options import parse_options, reject_owned
from ..servers.requirements import Requirements
from ..suites.loader import TestSpec, declared_in, find_suite, select_tests, suite_requirements


class Named(Protocol):
    """A test to run, as sharding sees it (a TestSpec or a mysql-test case)."""

    @property
    def full_name(self) -> str:
        """The test's name across suites."""


NamedT = TypeVar("NamedT", bound=Named)


def select(env: RunEnvironment) -> list[TestSpec]:
    """Load suites and pick tests; refuse unknown server types, missing Galera pieces and
    unsafe server options (UsageError/SuiteError/CodeTreeError) before any server starts."""
    config, log = env.config, env.log
    log.info("Processing test suites...")
    chosen = config.selection
    specs = select_tests(chosen.suites, chosen.tests, chosen.suitepaths,
                         config.servers.default_server_type)
    report_shadowed(specs, log)
    specs = narrow(config, specs)  # --do-test, --skip-test, --combination, --start-from, disabled
    for spec in specs:
        if spec.requirements.server_type not in SERVER_KINDS:
            raise UsageError(f"{spec.full_name} needs server type "
                             f"{spec.requirements.server_type!r}, which kewpie does not "
                             f"know (known: {', '.join(SERVER_KINDS)})")
    assert env.tree is not None
    if any(spec.requirements.server_type == "galera" for spec in specs):
        check_galera(config, env.tree, log)
    declared = [(declared_in(spec), spec.requirements) for spec in specs]
    if not specs and config.start_and_exit:  # the first suite's servers would start
        suite = (config.selection.suites or ["main"])[0]
        declared.append((os.path.join(find_suite(suite, config.selection.suitepaths), "suite_config.py"),
                         suite_requirements(suite, config.selection.suitepaths,
                                            config.servers.default_server_type)))
    if config.servers.mysqld_options:  # --mysqld: options for every server, checked the same way
        declared.append(("--mysqld", mysqld_requirements(config)))
    check_requirements(declared, env.tree.server, env.workdir.path)  # before any start
    check_debugging(env, specs)  # --rr can record, wrappers installed, --gendata exists
    check_trees(env, [spec.requirements for spec in specs])
    log.info(f"Found {len(specs)} test(s) for execution")
    return specs


def report_shadowed(specs: list[TestSpec], log: logging.Logger) -> None:
    """One line per selected suite whose name other suite folders also hold: which
    folder the run uses, and how to choose another."""
    suites = {spec.suite.name: spec.suite for spec in specs}
    for name, suite in suites.items():
        if suite.shadows:
            log.info(f"suite {name}: using {suite.path}; also in {', '.join(suite.shadows)}, "
                     f"not used (suites are looked up in --suitepath order, kewpie's own "
                     f"last: put the folder you want first)")


def mysqld_requirements(config: RunConfig) -> Requirements:
    """--mysqld options as one server's requirements (for the unsafe-option check);
    SuiteError for an option kewpie sets itself."""
    options = parse_options(config.servers.mysqld_options)
    reject_owned(options, "--mysqld")
    return Requirements.declared("mysql", [options])
def check_trees(env: RunEnvironment, requirements: list[Requirements]) -> None:
    """Every code tree the tests name ('old', 'new', a version) exists, and the run says
    which versions they are (CodeTreeError, one line, before any server starts)."""
    labels = list(dict.fromkeys(label for reqs in requirements for label in reqs.basedirs))
    resolved = [(label, env.trees.resolve(label)) for label in labels]
    if resolved:
        env.log.info("code trees of the selected tests: " + ", ".join(
            f"{label or 'default'} = {tree.label} ({tree.basedir})" for label, tree in resolved))


def apply_shard(config: RunConfig, specs: list[NamedT],
                log: logging.Logger | None = None) -> list[NamedT]:
    """This run's slice of specs under --shard K/N (all of them without it), weighted by
    --timings-file when given, else by the results history's durations (the same for
    every shard of a build: lib/run/recording.py); logs the slice's size when log is given."""
    if not config.selection.shard:
        return specs
    k, n = parse_shard(config.selection.shard)
    weights, source = None, "by count"
    if config.selection.timings_file:
        weights, source = Timings(config.selection.timings_file), f"by {config.selection.timings_file}"
    else:  # the results history's durations, as every shard of the build reads them
        from .recording import history_weights
        known = history_weights(config, for_shard=True)
        if known:
            weights, source = Timings(None), f"by the results history ({len(known)} known)"
            weights.fill(known)
    chosen = shard(specs, k, n, lambda s: s.full_name,
                   (lambda s: weights.weight(s.full_name)) if weights else (lambda s: 1.0))
    if log is not None:
        log.info(f"Shard {k}/{n}: {len(chosen)} of {len(specs)} test(s), balanced {source}")
    return chosen


def require_tests(specs: list[TestSpec], config: RunConfig) -> None:
    """UsageError for an empty selection: a job that runs nothing must not pass."""
    if specs:
        return
    asked = ", ".join(config.selection.suites or ["main"])
    raise UsageError(f"no test selected (suites: {asked}"
                     + (f"; tests: {' '.join(config.selection.tests)}" if config.selection.tests else "")
                     + "): a suite needs at least one *_test.py")
