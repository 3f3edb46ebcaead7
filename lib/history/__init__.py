"""The results history: every run and result remembered, searched and served.

A tool package (docs/history.md): the run layer writes to it (lib/run/recording.py),
``kewpie history`` reads it (lib/cli.py dispatches to ``commands.py``).

- ``records.py``: a run (RunInfo) and a result (ResultRecord); names, failures, CI context.
- ``schema.py``: every table (SQLAlchemy Core), the sweeps' too, the same on SQLite and
  MariaDB/MySQL.
- ``migrations.py``: schema versions and the steps between them (Alembic operations).
- ``store.py``: where the store is (StoreTarget) and its engine (WAL, timeouts).
- ``writes.py``: inserting runs and results, once each.
- ``writer.py``: HistoryWriter, the API every way in records through.
- ``spool.py``: results kept in the workdir while the store is down.
- ``patterns.py``: ``*``/``?`` patterns as SQL.
- ``queries.py``: search, timelines, flaky, unstable, slowest, runs, durations.
- ``replays.py``: the replayed bugs (``--mode=replay``): status per tree and run, search.
- ``weights.py``: durations for --shard and longest-first scheduling.
- ``sweeps.py``: sweeps' rows read for the page, old sweeps' results databases copied in.
- ``svgplot.py``: plots and pass/fail strips as SVG geometry.
- ``web.py``: the page (Flask), ``templates/`` its Jinja2 templates.
- ``serve.py``: the page on 127.0.0.1 through waitress; ``export.py``: a static copy.
- ``commands.py``: ``kewpie history ...``.
- ``errors.py``: HistoryError, HistoryUsageError.
"""
