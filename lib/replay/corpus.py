"""A corpus of reproducers: which files, what each one is, and which ones cannot be used.

The corpus is the paths ``--mode=replay`` was given: files, or folders searched
through (sub-folders too, in name order).  A reproducer is

- a plain SQL file (``.sql``), as in MariaDB QA's ``BUGS/``: sent as it is to
  the ``mariadb`` client (``--force --binary-mode``, as mariadb-qa's
  ``bug_report.sh`` does), several test cases in one file included; server
  options come from its ``# mysqld options required for replay: --opt ...``
  lines (every such line, as bug_report.sh reads them); a file of options
  alone reproduces a bug of the server's start;
- a mysql-test file (``.test``), with its ``.opt`` beside it: run by
  ``mariadb-test``; kewpie's reduced cases (``--mode=reduce``'s
  ``mtr/kw_reduce/reduced.test``) are named for their finding's folder.

A reproducer's name is the file's name without its extension (``MDEV-12345``;
with its folder's name in front when two share it); its bug is the first
``MDEV-N`` (or other ``WORD-N``) in that name, or none.
In a folder, files of other extensions are left out (counted as ignored).  A
reproducer that cannot be used is a :class:`Skip` with its reason -- a file
that cannot be read, one with a NUL byte or no statement (not SQL), server
options that do not parse -- counted and listed, never replayed.  A file named
on the command line that is not a reproducer at all, a path that does not
exist, a folder that cannot be read or holds no reproducer are bad input:
:class:`ReplayError` (one ERROR line, exit 2, before any server starts).
"""
from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import dataclass, field
from types import MappingProxyType

from ..errors import KewpieError, UsageError
from ..servers.options import Option, parse_options

SQL, MYSQLTEST = "sql", "mysqltest"
KINDS = MappingProxyType({".sql": SQL, ".test": MYSQLTEST})
OPTIONS_RE = re.compile(r"mysqld options required for replay:(.*)", re.I)
BUG_RE = re.compile(r"\b([A-Z][A-Z0-9]*-\d+)\b")
REDUCED = os.path.join("mtr", "kw_reduce", "reduced.test")
MAX_BYTES = 64 << 20
# The first word of a line that begins a statement (MariaDB's), and mysql-test's own commands.
_STATEMENT_WORDS = frozenset("""
alter analyze backup begin binlog cache call change check checksum commit create deallocate
declare delete delimiter desc describe do drop execute explain flush get grant handler help
insert install kill load lock optimize prepare purge release rename repair replace reset
revoke rollback savepoint select set show shutdown signal start stop table truncate
uninstall unlock update use values with xa
""".split())
_MYSQLTEST_WORDS = frozenset("""
let eval echo source connect connection disconnect send reap error query sleep real_sleep
exec if while die skip inc dec enable_query_log disable_query_log enable_result_log
disable_result_log disable_warnings enable_warnings disable_abort_on_error
enable_abort_on_error replace_result replace_column replace_regex sorted_result
""".split())
_WORD_RE = re.compile(r"^\s*(?:--\s*)?\(*\s*([A-Za-z_]+)")


class ReplayError(UsageError):
    """The corpus (or a replay setting) cannot be used as given (what to change is said)."""


@dataclass(frozen=True)
class Reproducer:
    """One reproducer of the corpus."""

    path: str
    name: str                          # MDEV-12345; a reduced case: its finding's folder
    kind: str                          # sql or mysqltest
    bug: str = ""                      # MDEV-12345 ('' when its name names none)
    options: tuple[Option, ...] = ()   # the server options it needs
    size: int = 0

    def to_json(self) -> dict[str, object]:
        """What the replay's JSON says of it."""
        return {"name": self.name, "path": self.path, "kind": self.kind, "bug": self.bug,
                "options": [o.as_arg() for o in self.options], "bytes": self.size}


@dataclass(frozen=True)
class Skip:
    """A file of the corpus that is not replayed, and why."""

    path: str
    reason: str


@dataclass
class Corpus:
    """The reproducers of a corpus, the files left out and those that cannot be used."""

    reproducers: list[Reproducer] = field(default_factory=list)
    skipped: list[Skip] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)   # files of other extensions


def _name(path: str) -> str:
    """A reproducer's name: its file's name, or its finding's folder for a reduced case."""
    if path.endswith(os.sep + REDUCED):
        finding = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(path))))
        return os.path.basename(finding)
    return os.path.splitext(os.path.basename(path))[0]


def looks_like_sql(text: str, kind: str) -> bool:
    """Does some line begin with a statement (or, in a .test, a mysql-test command)?"""
    words = _STATEMENT_WORDS | (_MYSQLTEST_WORDS if kind == MYSQLTEST else frozenset())
    for line in text.splitlines():
        if line.lstrip().startswith("#"):
            continue
        m = _WORD_RE.match(line)
        if m and m.group(1).lower() in words:
            return True
    return False


def read_reproducer(path: str) -> Reproducer:
    """The reproducer at path; KewpieError saying why it cannot be used."""
    kind = KINDS.get(os.path.splitext(path)[1].lower())
    if kind is None:
        raise KewpieError(f"not a reproducer: its name ends in neither .sql nor .test")
    try:
        size = os.path.getsize(path)
        if size > MAX_BYTES:
            raise KewpieError(f"{size} bytes: more than a reproducer ({MAX_BYTES >> 20} MiB)")
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise KewpieError(f"cannot read it: {exc.strerror or exc}") from None
    if b"\x00" in data:
        raise KewpieError("not SQL: it holds NUL bytes (a binary file)")
    text = data.decode("utf-8", errors="replace")
    if not looks_like_sql(text, kind) and not (kind == SQL and OPTIONS_RE.search(text)):
        raise KewpieError("not SQL: no line begins with a statement")
    words: list[str] = []
    if kind == SQL:
        for m in OPTIONS_RE.finditer(text):
            words += [w for w in m.group(1).split() if w not in words]
    else:
        opt = os.path.splitext(path)[0] + ".opt"
        if os.path.isfile(opt):
            with open(opt, encoding="utf-8", errors="replace") as fh:
                words = fh.read().split()
    try:
        options = tuple(parse_options(words))
    except KewpieError as exc:
        raise KewpieError(f"its server options: {exc}") from None
    name = _name(path)
    found = BUG_RE.search(name)
    return Reproducer(path, name, kind, found.group(1) if found else "", options, size)


def _walk(folder: str) -> list[str]:
    """Every file under folder, in name order; ReplayError when it cannot be read."""
    found: list[str] = []

    def fail(exc: OSError) -> None:
        """os.walk's error: the folder cannot be read."""
        raise ReplayError(f"corpus folder {exc.filename or folder}: cannot read it: "
                          f"{exc.strerror or exc}")
    for top, dirs, files in os.walk(folder, onerror=fail):
        dirs.sort()
        found += [os.path.join(top, f) for f in sorted(files)]
    return found


def _unique_names(corpus: Corpus) -> None:
    """Reproducers of the same name (in different folders) get their folder's name in
    front (``BUGS-10.6.MDEV-1``): the matrix, JUnit and the history tell them apart."""
    counts: dict[str, int] = {}
    for r in corpus.reproducers:
        counts[r.name] = counts.get(r.name, 0) + 1
    corpus.reproducers = [dataclasses.replace(r, name=f"{os.path.basename(os.path.dirname(r.path))}"
                                                     f".{r.name}")
                          if counts[r.name] > 1 else r for r in corpus.reproducers]


def discover(paths: list[str]) -> Corpus:
    """The corpus of paths (see the module docstring); ReplayError for bad input."""
    if not paths:
        raise ReplayError("--mode=replay needs the corpus: reproducer files or folders "
                          "(e.g. ../shared/mariadb-qa/BUGS)")
    corpus = Corpus()
    seen: set[str] = set()
    for given in paths:
        path = os.path.abspath(given)
        if os.path.isdir(path):
            files = _walk(path)
            wanted = [f for f in files if os.path.splitext(f)[1].lower() in KINDS]
            corpus.ignored += [f for f in files if f not in wanted
                               and not f.endswith((".opt", ".result"))]
            if not wanted:
                raise ReplayError(f"corpus folder {given}: no reproducer in it (.sql or .test "
                                  f"files)")
        elif os.path.exists(path):
            wanted = [path]
            try:
                corpus.reproducers.append(read_reproducer(path))
                seen.add(path)
            except KewpieError as exc:
                raise ReplayError(f"reproducer {given}: {exc}") from None
            continue
        else:
            raise ReplayError(f"corpus {given}: no such file or folder")
        for file in wanted:
            if file in seen:
                continue
            seen.add(file)
            try:
                corpus.reproducers.append(read_reproducer(file))
            except KewpieError as exc:
                corpus.skipped.append(Skip(file, str(exc)))
    _unique_names(corpus)
    if not corpus.reproducers:
        reasons = "; ".join(f"{os.path.basename(s.path)}: {s.reason}" for s in corpus.skipped[:3])
        raise ReplayError(f"the corpus has no usable reproducer ({reasons})")
    return corpus
