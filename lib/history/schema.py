"""The history's tables (SQLAlchemy Core, one definition for SQLite and MariaDB/MySQL).

``history_runs``: one row per run (or pytest session).  ``history_results``: one
row per test result, with ``failing`` (the first attempt failed) and the run's time
copied in ``finished_at`` so that the page's search walks one index newest first.
``history_shard_cuts``: the results every shard of one CI build balances on.
``kewpie_sweeps`` and ``kewpie_runs`` are the sweeps' tables, kept as the sweeps'
results database had them (a ``results.sqlite`` of before is a store of schema
version 0) plus ``run_id``, the run that measured the sweep; their details
(:data:`SWEEP_DETAIL_TABLES`, schema version 3) are keyed by ``kewpie_runs.id`` or
``kewpie_sweeps.id``: a run's cell, latency percentiles and TPC-C-like figures
(``kewpie_run_details``), sysbench's latency histogram (``kewpie_run_histograms``),
the resource monitors' seconds (``kewpie_run_samples``), the TPC-C-like transactions
(``kewpie_run_txns``) and the sweep's consistency checks (``kewpie_sweep_checks``).
lib/sysbench/results.py writes and reads a sweep through these tables; nothing else
declares them.  ``history_meta`` holds the schema version (lib/history/migrations.py).

Findings (schema version 4): ``history_findings`` has one row per finding signature
across every run and machine (kind, oracle, UniqueID, tag and bug, first and last seen,
count, the reduction's state and its case and report); ``history_sightings`` one row per
finding folder a hunt wrote (run, bot, trial, seed, machine, tree, folder).  A hunt's
trials are results (``history_results``, test ``hunt.<grammar>``).
"""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import (BigInteger, Column, DateTime, Double, ForeignKey, Index, Integer,
                        MetaData, SmallInteger, String, Table, Text)
from sqlalchemy.dialects import mysql, sqlite
from sqlalchemy.types import TypeEngine

SCHEMA_VERSION = 4
metadata = MetaData()


def _id() -> TypeEngine[int]:
    """An auto-increment key: BIGINT on a server, the rowid on SQLite."""
    return BigInteger().with_variant(sqlite.INTEGER(), "sqlite")


def _time() -> TypeEngine[datetime]:
    """A UTC time with microseconds on both back ends."""
    return DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")


def _text() -> TypeEngine[str]:
    """Long text (MEDIUMTEXT on a server: a sweep's JSON can pass 64 KiB)."""
    return Text().with_variant(mysql.MEDIUMTEXT(), "mysql", "mariadb")


meta = Table(
    "history_meta", metadata,
    Column("name", String(64), primary_key=True),
    Column("value", String(255), nullable=False),
)

runs = Table(
    "history_runs", metadata,
    Column("id", _id(), primary_key=True, autoincrement=True),
    Column("uuid", String(40), nullable=False, unique=True),
    Column("started_at", _time(), nullable=False),
    Column("ended_at", _time()),
    Column("host", String(255), nullable=False, default=""),
    Column("platform", String(100), nullable=False, default=""),
    Column("kewpie_version", String(40), nullable=False, default=""),
    Column("mode", String(20), nullable=False, default=""),
    Column("selection", _text(), nullable=False, default=""),
    Column("shard", String(20), nullable=False, default=""),
    Column("options", _text(), nullable=False, default="{}"),
    Column("tree_version", String(100), nullable=False, default=""),
    Column("tree_path", _text(), nullable=False, default=""),
    Column("trees", _text(), nullable=False, default="[]"),
    Column("branch", String(255), nullable=False, default=""),
    Column("revision", String(64), nullable=False, default=""),
    Column("job", String(255), nullable=False, default=""),
    Column("build", Integer),
    Column("build_url", _text(), nullable=False, default=""),
    Column("labels", _text(), nullable=False, default="{}"),
    Column("exit_code", Integer),
    Index("ix_history_runs_started", "started_at"),
    Index("ix_history_runs_branch", "branch", "started_at"),
    Index("ix_history_runs_job", "job", "build"),
)

results = Table(
    "history_results", metadata,
    Column("id", _id(), primary_key=True, autoincrement=True),
    Column("run_id", _id(), ForeignKey("history_runs.id"), nullable=False),
    Column("bot", String(20), nullable=False, default=""),
    Column("seq", Integer, nullable=False),
    Column("test", String(255), nullable=False),
    Column("combination", String(255), nullable=False, default=""),
    Column("status", String(10), nullable=False),
    Column("failing", SmallInteger, nullable=False, default=0),
    Column("duration_ms", Integer, nullable=False, default=0),
    Column("attempts", SmallInteger, nullable=False, default=1),
    Column("finished_at", _time(), nullable=False),
    Column("failure", _text(), nullable=False, default=""),
    Column("signature", String(255), nullable=False, default=""),
    Column("evidence", _text(), nullable=False, default=""),
    # one row per (run, bot, seq): a spooled result sent twice is stored once
    Index("ux_history_results_seq", "run_id", "bot", "seq", unique=True),
    # the search: failures newest first (every status newest first); a test's timeline; a
    # finding's other sightings
    Index("ix_history_results_failing", "failing", "finished_at"),
    Index("ix_history_results_finished", "finished_at"),
    Index("ix_history_results_test", "test", "finished_at"),
    Index("ix_history_results_signature", "signature", "finished_at"),
)

shard_cuts = Table(
    "history_shard_cuts", metadata,
    Column("build_key", String(255), primary_key=True),
    Column("max_result_id", _id(), nullable=False),
    Column("created_at", _time(), nullable=False),
)

sweeps = Table(
    "kewpie_sweeps", metadata,
    Column("id", _id(), primary_key=True, autoincrement=True),
    Column("name", String(200)),
    Column("label", String(200)),
    Column("context_key", String(64)),
    Column("created", String(32)),
    Column("spec", _text()),
    Column("context", _text()),
    Column("run_id", _id()),
    Index("ix_kewpie_sweeps_label", "label"),
)

sweep_runs = Table(
    "kewpie_runs", metadata,
    Column("id", _id(), primary_key=True, autoincrement=True),
    Column("sweep_id", _id()),
    Column("basedir", Text),
    Column("version", String(100)),
    Column("value", String(100)),
    Column("threads", Integer),
    Column("rep", Integer),
    Column("tps", Double),
    Column("qps", Double),
    Column("lat_avg", Double),
    Column("lat_pct", Double),
    Column("errors", Integer),
    Column("reconnects", Integer),
    Column("result", _text()),
    Index("ix_kewpie_runs_sweep", "sweep_id"),
)

run_details = Table(
    "kewpie_run_details", metadata,
    Column("run_id", _id(), primary_key=True, autoincrement=False),  # kewpie_runs.id
    Column("cell", _text()),
    Column("lat_p50", Double),
    Column("lat_p95", Double),
    Column("lat_p99", Double),
    Column("lat_max", Double),
    Column("tpmc_like", Double),
    Column("planned_reconnects", Integer),
    Column("log", Text),
)

run_histograms = Table(
    "kewpie_run_histograms", metadata,
    Column("id", _id(), primary_key=True, autoincrement=True),
    Column("run_id", _id()),
    Column("value_ms", Double),
    Column("events", Integer),
    Index("ix_kewpie_run_histograms_run", "run_id"),
)

run_samples = Table(
    "kewpie_run_samples", metadata,
    Column("id", _id(), primary_key=True, autoincrement=True),
    Column("run_id", _id()),
    Column("t", Double),
    Column("source", String(64)),
    Column("metric", String(64)),
    Column("value", Double),
    Index("ix_kewpie_run_samples_run", "run_id"),
)

run_txns = Table(
    "kewpie_run_txns", metadata,
    Column("id", _id(), primary_key=True, autoincrement=True),
    Column("run_id", _id()),
    Column("txn", String(32)),
    Column("events", Integer),
    Column("rollbacks", Integer),
    Column("retries", Integer),
    Column("mix_pct", Double),
    Column("avg_ms", Double),
    Column("p50_ms", Double),
    Column("p95_ms", Double),
    Column("p99_ms", Double),
    Column("max_ms", Double),
    Index("ix_kewpie_run_txns_run", "run_id"),
)

sweep_checks = Table(
    "kewpie_sweep_checks", metadata,
    Column("id", _id(), primary_key=True, autoincrement=True),
    Column("sweep_id", _id()),
    Column("version", String(100)),
    Column("data_set", String(100)),
    Column("passed", Integer),
    Column("output", _text()),
    Index("ix_kewpie_sweep_checks_sweep", "sweep_id"),
)

findings = Table(
    "history_findings", metadata,
    Column("id", _id(), primary_key=True, autoincrement=True),
    Column("signature", String(64), nullable=False, unique=True),   # the signature's id
    Column("signature_text", _text(), nullable=False, default=""),
    Column("unique_id", String(1000), nullable=False, default=""),  # MariaDB QA's UniqueID
    Column("kind", String(20), nullable=False, default=""),
    Column("oracle", String(40), nullable=False, default=""),
    Column("title", String(255), nullable=False, default=""),
    Column("tag", String(20), nullable=False, default=""),           # new, known, known-fixed
    Column("bug_id", String(64), nullable=False, default=""),
    Column("first_seen", _time(), nullable=False),
    Column("last_seen", _time(), nullable=False),
    Column("count", Integer, nullable=False, default=0),
    Column("reduction", String(10), nullable=False, default=""),  # running, done, failed, no-repro
    Column("reduction_owner", String(255), nullable=False, default=""),
    Column("reduction_at", _time()),
    Column("reduced_case", _text(), nullable=False, default=""),
    Column("report", _text(), nullable=False, default=""),
    Index("ix_history_findings_last", "last_seen"),
    Index("ix_history_findings_kind", "kind", "last_seen"),
    Index("ix_history_findings_bug", "bug_id"),
)

sightings = Table(
    "history_sightings", metadata,
    Column("id", _id(), primary_key=True, autoincrement=True),
    Column("finding_id", _id(), ForeignKey("history_findings.id"), nullable=False),
    Column("run_id", _id(), ForeignKey("history_runs.id"), nullable=False),
    Column("bot", String(20), nullable=False, default=""),
    Column("seq", Integer, nullable=False),
    Column("trial", Integer, nullable=False, default=0),
    Column("seed", BigInteger, nullable=False, default=0),
    Column("machine", String(255), nullable=False, default=""),
    Column("tree", String(100), nullable=False, default=""),
    Column("tag", String(20), nullable=False, default=""),
    Column("bug_id", String(64), nullable=False, default=""),
    Column("folder", _text(), nullable=False, default=""),
    Column("summary", _text(), nullable=False, default=""),
    Column("found_at", _time(), nullable=False),
    # one row per (run, bot, seq): a spooled sighting sent twice is stored once
    Index("ux_history_sightings_seq", "run_id", "bot", "seq", unique=True),
    Index("ix_history_sightings_finding", "finding_id", "found_at"),
)

HISTORY_TABLES = (meta, runs, results, shard_cuts)
FINDING_TABLES = (findings, sightings)
SWEEP_TABLES = (sweeps, sweep_runs)
SWEEP_DETAIL_TABLES = (run_details, run_histograms, run_samples, run_txns, sweep_checks)
