"""The run's side of the results history (lib/history/, docs/history.md): what a run
records and the durations it reads back.

Every way in records through :func:`open_history`: ``lib/run/native.py`` (native and
``--mode=mtr`` runs) records each :class:`Outcome` as it finishes, the sweep mode its
sweep, the pytest plugin each kewpie test, ``--mode=hunt`` its findings
(``history.record_result(..., signature=...)``).  A history that is off
(``--no-history``) records nothing; one that cannot be reached costs the run one
warning (lib/history/writer.py).

:func:`history_weights` gives ``--shard`` and longest-first scheduling the tests'
durations when no ``--timings-file`` is given.  Every shard of one build must weigh
tests alike, so a shard reads the store as it was when the build's first shard read
it: a CI build (Jenkins' ``JOB_NAME`` and ``BUILD_NUMBER``, or ``--label job=``/
``build=``) records that point in the store (``history_shard_cuts``) and weighs its
tests by the job's earlier builds; without a build, shards weigh tests by runs that
ended before today (UTC).
"""
from __future__ import annotations

import json
import os
import platform as pyplatform
from dataclasses import asdict
from datetime import datetime, time as dtime
from typing import TYPE_CHECKING, Any, Mapping

from ..errors import KewpieError
from ..history.errors import HistoryError
from ..history.records import RunInfo, ci_context, evidence_link, new_run_uuid, split_name
from ..history.spool import spool_dir
from ..history.target import StoreTarget
from ..history.writer import HistoryWriter
from ..platform.logsetup import get_logger
from ..config import RunConfig
from ..platform.secrets import redact
from .environment import RunEnvironment
from .report import Outcome

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine


def kewpie_version() -> str:
    """The installed kewpie's version ('' when unknown)."""
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("kewpie")
    except PackageNotFoundError:
        return ""


def add_version(run: RunInfo) -> None:
    """Fill in kewpie's installed version (importlib.metadata: ~40 ms, so the history
    writer's thread learns it, not the run's start)."""
    run.kewpie_version = kewpie_version()


def history_target(config: RunConfig) -> StoreTarget:
    """The run's store: --history-dsn, --history PATH or WORKDIR/history.sqlite."""
    return StoreTarget.choose(config.history.path, config.history.dsn, config.workdir)


def labels_of(config: RunConfig) -> dict[str, str]:
    """The run's --label KEY=VALUE pairs."""
    return dict(config.history.labels)


def _flat(values: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """A section's fields (nested sections' too) as {"section.field": value}."""
    flat: dict[str, Any] = {}
    for name, value in values.items():
        if isinstance(value, dict):
            flat.update(_flat(value, f"{prefix}{name}."))
        else:
            flat[prefix + name] = value
    return flat


def changed_options(config: RunConfig) -> dict[str, Any]:
    """The settings that differ from their defaults (what a run was asked), as
    ``section.field`` (the mode's own section under the mode's name, e.g. ``hunt.trials``),
    their secrets as ``***`` (a DSN's password, ``--mysqld=--wsrep-sst-auth=...``)."""
    base = RunConfig(mode_section=type(config.mode_section)())
    now = _flat({**asdict(config), config.mode: asdict(config.mode_section)})
    before = _flat({**asdict(base), config.mode: asdict(base.mode_section)})
    skip = {"root", "history.labels", "mode_section"}
    changed = {key: value for key, value in now.items()
               if key.split(".")[0] not in skip and key not in skip
               and value != before.get(key)}
    redacted: dict[str, Any] = redact(changed)
    return redacted


def run_info(env: RunEnvironment, mode: str = "", run_key: str = "",
             environ: Mapping[str, str] | None = None, version: bool = True) -> RunInfo:
    """The history's record of this run (its CI context from environ, os.environ by
    default); run_key: the id shared by the processes of one session; version: with
    kewpie's installed version (else :func:`add_version` adds it later)."""
    config = env.config
    environ = os.environ if environ is None else environ
    ci = ci_context(environ, labels_of(config))
    tree = env.tree
    trees = [{"version": t.label, "path": t.basedir}
             for t in ([tree] if tree else []) + [env.trees.tree(b) for b in config.servers.extra_basedirs]]
    selection = " ".join([f"--suite={','.join(config.selection.suites)}" if config.selection.suites else "",
                          *config.selection.tests]).strip()
    return RunInfo(uuid=new_run_uuid(run_key), host=pyplatform.node(),
                   kewpie_version=kewpie_version() if version else "", mode=mode or config.mode,
                   selection=selection, shard=config.selection.shard,
                   options=json.loads(json.dumps(changed_options(config), default=str)),
                   tree_version=tree.label if tree else "",
                   tree_path=tree.basedir if tree else config.servers.basedir, trees=trees, **ci)


class RunHistory:
    """The history writer of one run (or a stand-in that records nothing)."""

    def __init__(self, writer: HistoryWriter | None, environ: Mapping[str, str]) -> None:
        self.writer = writer
        self.environ = environ

    @property
    def enabled(self) -> bool:
        """False with --no-history."""
        return self.writer is not None

    def record(self, outcome: Outcome, signature: str = "") -> None:
        """Record one finished test."""
        if self.writer is None:
            return
        test, combination = split_name(outcome.name)
        failure = outcome.message if outcome.status != "pass" else ""
        if not failure and outcome.earlier_failures:
            failure = outcome.earlier_failures[0]
        self.writer.record_result(test, str(outcome.status), outcome.time_ms, combination,
                                  outcome.attempts, failure, signature,
                                  evidence_link(outcome.evidence, self.environ), outcome.bot)

    def record_result(self, test: str, status: str, duration_ms: int = 0, combination: str = "",
                      attempts: int = 1, failure: str = "", signature: str = "",
                      evidence: str = "", bot: str = "") -> None:
        """Record a result by its fields (``--mode=hunt``: a finding with its signature)."""
        if self.writer is not None:
            self.writer.record_result(test, status, duration_ms, combination, attempts, failure,
                                      signature, evidence_link(evidence, self.environ), bot)

    def store(self) -> tuple["Engine | None", int | None]:
        """(the store's engine, this run's id) for a writer made with background=False
        (a sweep stores its rows through it); (None, None) when the history is off or
        cannot be reached."""
        if self.writer is None:
            return None, None
        return self.writer.engine(), self.writer.run_id

    def close(self, exit_code: int | None) -> None:
        """Record the run's end; wait (bounded) for its results to be stored or spooled."""
        if self.writer is None:
            return
        writer, self.writer = self.writer, None
        writer.close(exit_code)
        if writer.sent and not writer.warned:
            get_logger().info(f"Results history: {writer.sent} result(s) in "
                              f"{writer.target.display}")


def open_history(env: RunEnvironment, mode: str = "", run_key: str = "",
                 background: bool = True) -> RunHistory:
    """The run's history writer (nothing is opened until the first result); a stand-in
    that records nothing with --no-history."""
    config = env.config
    if not config.history.record:
        return RunHistory(None, os.environ)
    target = history_target(config)
    writer = HistoryWriter(target, run_info(env, mode, run_key, version=False),
                           spool_dir(env.workdir.path, target), get_logger(), background,
                           fill_run=add_version)
    return RunHistory(writer, os.environ)


# ---------------------------------------------------------------- durations
def _cut_key(config: RunConfig, environ: Mapping[str, str]) -> tuple[str, str, int | None]:
    """(build key, job, build number) of a CI build ('' key outside one)."""
    ci = ci_context(environ, labels_of(config))
    if not ci["job"] or ci["build"] is None:
        return "", ci["job"], None
    _, n = config.selection.shard.split("/") if config.selection.shard else ("", "1")
    return f"{ci['job']}#{ci['build']}#{n}", ci["job"], ci["build"]


def history_weights(config: RunConfig, for_shard: bool,
                    environ: Mapping[str, str] | None = None) -> dict[str, float] | None:
    """Test name -> mean duration (ms) from the history, for --shard (for_shard: the
    build's agreed cut, see the module docstring) or for ordering a run's tests (the
    latest runs); None when the history is off, empty or cannot be read (a warning for
    --shard: the shards then balance by count)."""
    if not config.history.record:
        return None
    environ = os.environ if environ is None else environ
    target = history_target(config)
    if not target.exists():  # no run wrote one yet: nothing to read (nor to import)
        return None
    from ..history.weights import read_durations
    key, job, build = _cut_key(config, environ) if for_shard else ("", "", None)
    before = None
    if for_shard and not key:
        before = datetime.combine(datetime.utcnow().date(), dtime())
    try:
        found = read_durations(target, cut_key=key, job=job, before_build=build,
                               ended_before=before, create_cut=for_shard)
    except (HistoryError, KewpieError) as exc:
        if for_shard and target.exists():
            get_logger().warning(f"--shard: results history unreachable ({exc}); balancing by "
                                 f"count (every shard must weigh tests alike)")
        return None
    except Exception as exc:  # noqa: BLE001 - weights are an optimisation, never a failure
        get_logger().debug(f"history durations: {type(exc).__name__}: {exc}")
        return None
    return found or None
