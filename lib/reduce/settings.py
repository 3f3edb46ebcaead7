"""The server settings a reduced case pins: what mysql-test's config changes that the
reduction's servers did not have.

Both tools that run a case -- mysql-test-run.pl and ``kewpie --mode=mtr`` -- start its
servers from ``include/default_my.cnf``, whose ``default_mysqld.cnf`` sets server variables
the hunt's and the reduction's servers (kewpie's, the server's own defaults and the finding's
options) do not have; some change results or estimates, and a case run under them may pass
where the reduction's replay failed (CERT's estimate differences were hidden by
``histogram_type=JSON_HB`` against the server's ``DOUBLE_PREC_HB``).  :data:`PINNED` are
those, read from 10.11's ``default_mysqld.cnf`` (and mtr's bootstrap, which makes schema
``test`` latin1):

- ``character-set-server=latin1`` (and so ``collation_server``): what a ``CREATE
  DATABASE`` and a column of no character set take;
- ``default-storage-engine=myisam``: a ``CREATE TABLE`` without ``ENGINE`` is MyISAM, not
  the server's InnoDB (and mysql-test starts InnoDB only for a case that sources
  ``include/have_innodb.inc``: a case pinned to InnoDB sources it, lib/reduce/mtrcase.py);
- ``use_stat_tables=preferably``, ``histogram_type=json_hb``: what ``ANALYZE TABLE``
  collects and the optimizer reads (estimates, and the plans a wrong result needs);
- ``max_heap_table_size=1M``: when an internal temporary table goes to disk (Aria);
- ``sort_buffer_size=256K``: how a filesort runs (and so the order of ties).

Left out, as changing neither results nor estimates: ``key_buffer_size``, InnoDB's and
Aria's buffer sizes, logs, timeouts, performance_schema sizes, ``secure-file-priv`` (the
cases read and write no server-side file), ``local-infile``,
``log-bin-trust-function-creators`` (the cases run without a binary log).

The reduction reads the values its servers had (:func:`read_settings`, before each try's
replay: the trace's own ``SET GLOBAL`` stays a statement of the case) and the case carries
them as server options in its ``.opt`` (:func:`pinned_options`): every connection then has
them -- the case's own, the oracle's, and the mysql client's of a comparison
(lib/hunt/wrongresult/rowsform.py) --, which session ``SET`` lines at the case's top would
not give; a finding's own option for one of them stays as it is.  Schema ``test`` (made
latin1 by mtr's bootstrap; on kewpie's servers it takes the server's character set) is
altered at the case's top to the character set and collation the reduction's had, and
made again as mysql-test had it at the end (:func:`schema_lines`, :func:`recreate_lines`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

PINNED: tuple[str, ...] = ("character_set_server", "collation_server", "default_storage_engine",
                           "use_stat_tables", "histogram_type", "max_heap_table_size",
                           "sort_buffer_size")
SCHEMA = "test"


@dataclass(frozen=True)
class Settings:
    """What a server had: the pinned variables' global values, in :data:`PINNED`'s order,
    and schema ``test``'s character set and collation ('' when not read)."""

    values: tuple[tuple[str, str], ...] = ()
    charset: str = ""
    collation: str = ""


def read_settings(conn: Any) -> Settings:
    """The pinned variables' global values and schema ``test``'s character set and
    collation, read on conn (a DB-API connection; its errors are the caller's)."""
    names = ", ".join(f"@@GLOBAL.{n}" for n in PINNED)
    with conn.cursor() as cur:
        cur.execute(f"SELECT {names}")
        row = cur.fetchone() or ()
        cur.execute("SELECT DEFAULT_CHARACTER_SET_NAME, DEFAULT_COLLATION_NAME FROM "
                    f"information_schema.SCHEMATA WHERE SCHEMA_NAME = '{SCHEMA}'")
        schema = cur.fetchone() or ("", "")
    values = tuple((n, _text(v)) for n, v in zip(PINNED, row) if v is not None)
    return Settings(values, _text(schema[0]), _text(schema[1]))


def value_of(settings: Settings, name: str) -> str:
    """The value settings hold for the variable name ('' when none)."""
    return next((v for n, v in settings.values if n == name), "")


def _text(value: Any) -> str:
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", "replace")
    return "" if value is None else str(value)


def _option_name(option: str) -> str:
    """An option's variable name: ``--loose-sort-buffer-size=1`` -> ``sort_buffer_size``."""
    name = option.partition("=")[0].lstrip("-").replace("-", "_")
    return name.removeprefix("loose_")


def pinned_options(settings: Settings, options: Sequence[str]) -> list[str]:
    """The settings as server options for the case's ``.opt`` (``--histogram-type=...``),
    without those options already sets (the finding's own)."""
    given = {_option_name(o) for o in options}
    return [f"--{name.replace('_', '-')}={value}" for name, value in settings.values
            if name not in given and value != ""]


def schema_lines(settings: Settings, delim: str) -> list[str]:
    """The case's first lines: schema ``test``'s character set and collation noted (for
    :func:`restore_lines`) and made the reduction's ([] when they were not read)."""
    if not settings.charset or not settings.collation:
        return []
    query = (f"information_schema.SCHEMATA WHERE SCHEMA_NAME = '{SCHEMA}'")
    return ["# schema test as the reduction's servers had it (put back at the end)",
            f"let $kw_test_charset= `SELECT DEFAULT_CHARACTER_SET_NAME FROM {query}`{delim}",
            f"let $kw_test_collation= `SELECT DEFAULT_COLLATION_NAME FROM {query}`{delim}",
            f"ALTER DATABASE {SCHEMA} CHARACTER SET {settings.charset} COLLATE "
            f"{settings.collation}{delim}"]


def recreate_lines(settings: Settings, delim: str, restore: bool = False) -> list[str]:
    """Schema ``test`` emptied: dropped and made again -- as the reduction's servers had it
    (between a concurrent case's rounds), or with restore as it was before the case
    (:func:`schema_lines` noted it); plain ``CREATE DATABASE`` when the settings hold no
    schema."""
    if not settings.charset or not settings.collation:
        spec = ""
    elif restore:
        spec = " CHARACTER SET $kw_test_charset COLLATE $kw_test_collation"
    else:
        spec = f" CHARACTER SET {settings.charset} COLLATE {settings.collation}"
    make = "eval " if restore and spec else ""     # mysqltest expands variables under eval
    return [f"DROP DATABASE {SCHEMA}{delim}", f"{make}CREATE DATABASE {SCHEMA}{spec}{delim}",
            f"USE {SCHEMA}{delim}"]
