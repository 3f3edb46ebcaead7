"""A pquery-style load's statements: mined from a mysql-test tree or read from an SQL
file, filtered, deduplicated, and cached in the workdir.

A **source** is what the user gives ``--sql-file``:

- ``mysql-test``: the code tree's own mysql-test folder (``share/mysql/mysql-test``
  or ``mysql-test`` under its base directory; the installed
  ``/usr/share/mysql/mysql-test`` when the tree has none), mined as a folder;
- a folder: every ``.test`` and ``.inc`` file below it, in path order;
- a file: one mysqltest script or SQL file (statements end with ``;`` or the
  delimiter ``DELIMITER`` sets; one statement a line, as pquery's files are,
  reads the same).

:func:`build_corpus` reads each file with :mod:`lib.hunt.pquery.mysqltest`,
drops what :func:`lib.hunt.pquery.filters.refusal` refuses, and keeps the
first of statements that differ only in spacing.  The result is written once to
``WORKDIR/pquery/<name>-<key>.jsonl`` (the key: a digest of the miner's version
and every file's path, size and modification time, so a changed tree is mined
again) and read from there by every trial: the first line is the corpus's
statistics (:class:`CorpusStats`), each further line one statement and where it
came from, ``["SQL", "suite/json/t/json_table.test:120"]``.  The statements stay
in corpus order: neighbours mostly come from one test, which the replay's runs
of consecutive statements use.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass, field
from typing import Iterator, Sequence

from ..errors import HuntError
from .filters import refusal
from .mysqltest import statements

MINER_VERSION = 2          # bump when mining or filtering changes what a corpus holds
FORMAT = "kewpie-pquery-corpus/1"
MYSQL_TEST = "mysql-test"
SYSTEM_MYSQL_TEST = "/usr/share/mysql/mysql-test"
SCRIPT_SUFFIXES = (".test", ".inc")
CACHE_DIR = "pquery"


class CorpusError(HuntError):
    """A source cannot be read (the message says which and why): bad input, exit 2."""


@dataclass
class CorpusStats:
    """What mining a source gave."""

    source: str                    # as the user gave it
    path: str                      # the file or folder read
    files: int = 0
    statements: int = 0            # every statement read
    duplicates: int = 0            # the same as an earlier one, spacing aside
    refused: dict[str, int] = field(default_factory=dict)   # per filter rule
    kept: int = 0
    unreadable: int = 0            # files that could not be read
    undecodable: int = 0           # statements that are not UTF-8 (sent as text, they cannot be)

    def to_json(self) -> dict[str, object]:
        """For the cache file's first line and the hunt's log."""
        return {"format": FORMAT, **asdict(self)}

    def describe(self) -> str:
        """One line for the log."""
        refused = ", ".join(f"{k} {v}" for k, v in sorted(self.refused.items())) or "none"
        return (f"{self.kept} statements from {self.files} file(s) of {self.path} "
                f"({self.statements} read, {self.duplicates} duplicates, refused: {refused})")


@dataclass(frozen=True)
class Corpus:
    """A mined source: its statistics, and the cache file that holds its statements."""

    stats: CorpusStats
    cache: str
    mined: bool = False            # mined now (else read from the cache)

    def read(self) -> list[str]:
        """The statements, in corpus order."""
        return [sql for sql, _ in read_cache(self.cache)]


def mysql_test_dir(basedir: str) -> str:
    """The mysql-test folder of a code tree (its own, else the installed one), or ''."""
    for candidate in (os.path.join(basedir, "share", "mysql", "mysql-test"),
                      os.path.join(basedir, "mysql-test"), SYSTEM_MYSQL_TEST):
        if os.path.isdir(candidate):
            return candidate
    return ""


def source_path(source: str, basedir: str) -> str:
    """The file or folder a source names (CorpusError when there is none)."""
    if source == MYSQL_TEST:
        found = mysql_test_dir(basedir)
        if not found:
            raise CorpusError(f"--sql-file {source}: no mysql-test folder under {basedir} "
                              f"nor {SYSTEM_MYSQL_TEST} (install mariadb-test)")
        return found
    if not os.path.exists(source):
        raise CorpusError(f"--sql-file {source}: no such file or folder")
    return os.path.abspath(source)


def script_files(path: str) -> list[str]:
    """The files a source reads: the file itself, or a folder's .test/.inc files in path
    order."""
    if os.path.isfile(path):
        return [path]
    found: list[str] = []
    for root, dirs, files in os.walk(path):
        dirs.sort()
        found += [os.path.join(root, f) for f in sorted(files) if f.endswith(SCRIPT_SUFFIXES)]
    return found


def _key(files: Sequence[str]) -> str:
    digest = hashlib.sha1(f"{MINER_VERSION}".encode())
    for path in files:
        try:
            st = os.stat(path)
        except OSError:
            continue
        digest.update(f"\0{path}\0{st.st_size}\0{st.st_mtime_ns}".encode("utf-8", "replace"))
    return digest.hexdigest()[:12]


def _read_text(path: str) -> str:
    with open(path, "rb") as fh:
        return fh.read().decode("utf-8", "surrogateescape")


def mine(source: str, path: str, files: Sequence[str]) -> tuple[CorpusStats,
                                                                list[tuple[str, str]]]:
    """Read, filter and deduplicate the statements of files: (stats, [(sql, origin)])."""
    stats = CorpusStats(source, path, files=len(files))
    seen: set[str] = set()
    kept: list[tuple[str, str]] = []
    base = path if os.path.isdir(path) else os.path.dirname(path)
    for name in files:
        try:
            text = _read_text(name)
        except OSError:
            stats.unreadable += 1
            continue
        where = os.path.relpath(name, base)
        for statement in statements(text):
            stats.statements += 1
            sql = statement.sql
            key = " ".join(sql.split())
            if key in seen:
                stats.duplicates += 1
                continue
            seen.add(key)
            try:
                sql.encode("utf-8")
            except UnicodeEncodeError:
                stats.undecodable += 1
                continue
            rule = refusal(sql)
            if rule:
                stats.refused[rule] = stats.refused.get(rule, 0) + 1
                continue
            kept.append((sql, f"{where}:{statement.line}"))
    stats.kept = len(kept)
    return stats, kept


def read_cache(path: str) -> Iterator[tuple[str, str]]:
    """The (sql, origin) pairs of a cache file (after its statistics line)."""
    with open(path, encoding="utf-8") as fh:
        fh.readline()
        for line in fh:
            sql, origin = json.loads(line)
            yield str(sql), str(origin)


def _read_stats(path: str) -> CorpusStats | None:
    try:
        with open(path, encoding="utf-8") as fh:
            head = json.loads(fh.readline())
    except (OSError, ValueError):
        return None
    if not isinstance(head, dict) or head.pop("format", None) != FORMAT:
        return None
    try:
        return CorpusStats(**head)
    except TypeError:
        return None


def build_corpus(source: str, basedir: str, workdir: str) -> Corpus:
    """The corpus of a source (see the module docstring), mined now or read from the
    workdir's cache; CorpusError when the source cannot be read or holds no statement."""
    path = source_path(source, basedir)
    files = script_files(path)
    if not files:
        raise CorpusError(f"--sql-file {source}: {path} holds no .test or .inc file")
    name = "mysql-test" if source == MYSQL_TEST else \
        os.path.basename(path.rstrip("/")).replace(".", "_") or "sql"
    cache_dir = os.path.join(workdir, CACHE_DIR)
    cache = os.path.join(cache_dir, f"{name}-{_key(files)}.jsonl")
    stats = _read_stats(cache) if os.path.isfile(cache) else None
    if stats is None:
        stats, kept = mine(source, path, files)
        if not kept:
            raise CorpusError(f"--sql-file {source}: no statement to send in {path} "
                              f"({stats.describe()})")
        os.makedirs(cache_dir, exist_ok=True)
        partial = f"{cache}.{os.getpid()}.part"
        with open(partial, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(stats.to_json()) + "\n")
            for pair in kept:
                fh.write(json.dumps(list(pair), ensure_ascii=False) + "\n")
        os.replace(partial, cache)
        return Corpus(stats, cache, mined=True)
    return Corpus(stats, cache)
