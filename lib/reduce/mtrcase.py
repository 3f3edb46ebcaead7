"""The reduction's output: a mysql-test case and a bug report.

The case is a suite folder ``mtr/kw_reduce/`` that travels (:mod:`lib.mtr.travel`):
``t/<name>.test``, ``t/<name>.opt`` (the server options it needs; a ``--plugin-dir``
becomes ``$MTR_SUITE_DIR/plugin``, its libraries copied into the folder's ``plugin/``),
``r/<name>.result`` and ``README.txt`` (the commands that run it from the folder, under
``kewpie --mode=mtr`` and under mysql-test-run.pl, on each code tree):

- statements run with the query and result logs off, each on its connection
  (``connect``/``connection`` when there are several); a statement that got an
  error when replayed is expected with ``--error 0,<code>`` (the error may go
  with the bug);
- a case reduced with the trace's interleaving (``concurrent``) keeps it:
  statements go with ``send`` and are waited for with ``reap`` only when a later
  statement must follow them (:func:`lib.reduce.schedule.send_and_reap`), so those
  that overlapped in the trace overlap again;
- a case reduced concurrent (every connection at once, free-running:
  :mod:`lib.reduce.concurrent`) runs its statements in rounds, up to a stated number:
  each round connects anew, sends the connections' statements step by step with
  ``send``/``reap``, errors let through, and checks the server is alive -- the first
  round that shows the bug ends the case;
- a crash is left to crash: the crashing statement is the case's last, with
  no ``--error``: mysqltest fails with "Lost connection" while the bug is there;
- a differential wrong result becomes a check that fails: the rows the correct server
  gave for the differing query (as the mysql client prints them, listed and sorted) are
  written to a file, the query runs unchanged by the mysql client and its rows, sorted
  and listed the same way, are compared with them (:func:`differential_check`,
  lib/hunt/wrongresult/rowsform.py); ``--die wrong result (differential): ...`` when they
  differ;
- an oracle's wrong result judged again runs its compared statements unchanged, each by
  the mysql client, and compares their rows as sorted text with the first's
  (:func:`oracle_check`, lib/hunt/wrongresult/rowsform.py: no CTE around them, whose
  materialisation changed what they read), after the statements that built what the
  oracle built for them (Radar's raw copies);
- what mysql-test's default config changes that results or estimates depend on
  (``default_storage_engine``, ``histogram_type``, ``character_set_server``...) is pinned to
  what the reduction's server had: those values go to the ``.opt`` with the finding's
  options, and schema ``test`` takes the reduction's character set at the case's top
  (lib/reduce/settings.py);
- an errorlog finding's case notes the error log's size before its statements and
  ``--die``s after them when the log gained a line like the finding's
  (:func:`errorlog_check`, :mod:`lib.reduce.errorlog`);
- the case ends by emptying schema ``test`` (made again with the character set it had
  before the case) and dropping the UDFs it created (mysql-test's check-testcase wants
  the servers as they were) and echoes one line, the whole ``.result``.
"""
from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass
from typing import Sequence

from ..hunt.wrongresult.oracle import Rebuilt
from ..hunt.wrongresult.replay import mtr_check
from ..hunt.wrongresult.rowsform import expected_lines
from ..mtr.travel import PLUGIN_DIR_OPTION, PLUGIN_FOLDER, README, TreeCommands
from ..platform.safewrite import HeldOutput, OutputDir
from ..randgen.connection import LOST_CONNECTION_CODES
from .case import ReduceInput, Statement
from .errorlog import case_lines
from .concurrent import lockstep, split as concurrent_split
from .schedule import send_and_reap
from .settings import Settings, recreate_lines, schema_lines, value_of

SUITE = "kw_reduce"
DONE_LINE = "# kewpie: the case ran to its end"


@dataclass(frozen=True)
class WrongResultCheck:
    """The differing query of a differential wrong result and the rows the correct server
    gave for it, as the case's pipeline leaves a statement's rows
    (:func:`lib.hunt.wrongresult.rowsform.listed_rows`)."""

    sql: str
    rows: tuple[str, ...]


def differential_check(check: WrongResultCheck) -> list[str]:
    """The check of a differential wrong result: the correct server's rows written to a
    file, the query run unchanged by the mysql client, its rows compared with them, dying
    while they differ (:func:`lib.hunt.wrongresult.rowsform.expected_lines`)."""
    return (["", "# the wrong result (differential): the query must give the rows the correct "
             "server gave"] + expected_lines(check.sql, check.rows))


_UDF_RE = re.compile(r"\bCREATE\s+(?:AGGREGATE\s+)?FUNCTION\s+(?:IF\s+NOT\s+EXISTS\s+)?"
                     r"`?(\w+)`?\s+RETURNS\b", re.I)


def oracle_check(oracle: str, queries: Sequence[str], delim: str,
                 rebuilt: Rebuilt = Rebuilt()) -> list[str]:
    """The check of an oracle's wrong result judged again: its compared statements on a
    connection of their own after FLUSH TABLES (as the oracle ran them), speaking utf8mb4
    as the oracle's and the replay's connections do, and what the oracle rebuilt for
    them, dying while they disagree (:func:`lib.hunt.wrongresult.replay.mtr_check`); []
    when it has no form."""
    check = mtr_check(oracle, queries, delim, rebuilt)
    if not check:
        return []
    # mysqltest's own connections speak latin1: a literal of the compared statements
    # ('a%') then takes another collation than in the replay, and 260c13e64ad4's case
    # (a condition pushed into a set operation's operands) passed where its replay failed
    return (["", f"connect (kw_oracle,localhost,root,,test){delim}", f"FLUSH TABLES{delim}",
             f"SET NAMES utf8mb4{delim}"]
            + check + [f"disconnect kw_oracle{delim}", f"connection default{delim}"])


def errorlog_check(case: ReduceInput, delim: str, keep: bool = False
                   ) -> tuple[list[str], list[str]]:
    """An errorlog finding's lines before and after the statements: the log's size
    noted, then a ``--die`` when it gained a line like the finding's
    (:func:`lib.reduce.errorlog.case_lines`; keep: the noted size kept for a later check);
    nothing for other kinds."""
    lines = (case.finding.get("details") or {}).get("lines") or ()
    if case.kind != "errorlog" or not lines:
        return [], []
    return case_lines(str(lines[0]), delim, keep)


def _delimiter(texts: Sequence[str]) -> str:
    return "|||" if any(";" in t for t in texts) else ";"


_PARTITIONED = re.compile(r"\bPARTITION\s+BY\b|\bPARTITIONS\s+\d", re.I)
_STRINGS = re.compile(r"'(?:[^'\\]|\\.|'')*'")


def case_text(case: ReduceInput, statements: Sequence[Statement], errors: dict[int, int],
              check: WrongResultCheck | None = None, rebuilt: Rebuilt = Rebuilt(),
              concurrent: bool = False, rounds: int = 0, settings: Settings = Settings()
              ) -> str:
    """The .test file's text (see the module docstring); rebuilt: what the finding's
    oracle built again to judge its statements in the try that reproduced; concurrent:
    the statements sent as the trace's interleaving orders them; rounds: the statements
    of several connections run at once, in up to this many rounds (:func:`_in_rounds`);
    settings: what the reduction's server had (schema ``test``'s character set,
    lib/reduce/settings.py; its variables go to the ``.opt``)."""
    texts = [s.sql for s in statements] + list(rebuilt.statements)
    delim = _delimiter(texts)
    lines = [f"# Reduced by kewpie --mode=reduce from {case.folder}",
             f"# Signature: {case.signature.text}",
             f"#   (id {case.signature.id}): {case.title}",
             f"# {len(case.statements)} statements traced, {len(statements)} kept.", ""]
    # what the oracle rebuilt counts too: Radar's copy of a table of an engine that does
    # not take its columns is an InnoDB one (0ec90c9b96b3's sequence); a case pinned to
    # the server's default engine InnoDB needs it for every table made without ENGINE
    if any(re.search(r"\binnodb\b", t, re.I) for t in texts) or \
            value_of(settings, "default_storage_engine").lower() == "innodb":
        lines.append("--source include/have_innodb.inc")
    if any(_PARTITIONED.search(_STRINGS.sub("''", t)) for t in texts):
        # mysql-test starts its servers without partitioning unless a test asks for it
        lines.append("--source include/have_partition.inc")
    lines += ["--disable_query_log", "--disable_result_log", "--disable_warnings"]
    if delim != ";":
        lines.append(f"--delimiter {delim}")
    lines += schema_lines(settings, delim)
    logged = errorlog_check(case, delim)
    conns = list(dict.fromkeys(s.conn for s in statements))
    names = {c: f"con{i + 1}" for i, c in enumerate(conns)}
    if rounds > 0 and len(conns) > 1:
        lines += _in_rounds(statements, names, delim, rounds, errorlog_check(case, delim, True),
                            _failure_check(case, check, rebuilt, delim),
                            recreate_lines(settings, delim)) + logged[1]
        return "\n".join(lines + _cleanup(statements, delim, settings))
    lines += logged[0]   # an errorlog finding's: the log's size before the statements
    if len(conns) > 1:
        lines += [f"connect ({names[c]},localhost,root,,test){delim}" for c in conns]
    if not all(s.sql.isascii() for s in statements):
        # the replay's connections speak utf8mb4; mysqltest's latin1 would turn 'ä' into
        # two other characters (48b33a132198's MATCH ... AGAINST ('ä*') then passed)
        for c in conns if len(conns) > 1 else []:
            lines += [f"connection {names[c]}{delim}", f"SET NAMES utf8mb4{delim}"]
        if len(conns) == 1:
            lines.append(f"SET NAMES utf8mb4{delim}")
    if concurrent and len(conns) > 1:
        lines += _sent_and_reaped(statements, errors, names, delim)
    else:
        lines += _in_turn(statements, errors, names if len(conns) > 1 else {}, delim)
    lines += _failure_check(case, check, rebuilt, delim) + logged[1]
    if len(conns) > 1:
        lines += [f"disconnect {names[c]}{delim}" for c in conns] + [
            f"connection default{delim}"]
    return "\n".join(lines + _cleanup(statements, delim, settings))


def _cleanup(statements: Sequence[Statement], delim: str, settings: Settings) -> list[str]:
    """The case's end: its UDFs dropped, schema ``test`` emptied (made again as it was
    before the case), the one line echoed."""
    lines = ["", "# clean up for mysql-test's check-testcase"]
    udfs = list(dict.fromkeys(m.group(1) for s in statements for m in _UDF_RE.finditer(s.sql)))
    lines += [f"DROP FUNCTION IF EXISTS {u}{delim}" for u in udfs]
    lines += recreate_lines(settings, delim, restore=True)
    if delim != ";":
        lines.append("--delimiter ;")
    lines += ["--enable_warnings", "--enable_result_log", "--enable_query_log",
              f"--echo {DONE_LINE}", ""]
    return lines


def _in_rounds(statements: Sequence[Statement], names: dict[int, str], delim: str,
               rounds: int, logged: tuple[list[str], list[str]], check: list[str],
               emptied: list[str]) -> list[str]:
    """The statements of several connections at once, in rounds (lib/reduce/concurrent.py):
    each round connects every connection anew, runs the setup one statement at a time and
    the connections' statements step by step with ``send``/``reap``
    (:func:`lib.reduce.concurrent.lockstep`) with errors let through, then proves the
    server alive (a crash fails the case there: the lost server), runs the wrong result's
    check, closes its connections, runs the error log's check (from where the log was
    before the first round: a line logged as a connection closes counts) -- each
    ``--die``s at the first round that shows the bug -- and empties schema ``test`` for
    the next round (emptied: the lines that do it); after the rounds the error log is
    checked once more."""
    setup, lanes = concurrent_split(statements)
    # the error log's size noted once: a round's line can be logged as its connections
    # close (bdeed5453f7e's), so each round's check, after they closed, reads from here
    lines = logged[0] + ["", f"# the statements run at once, free of each other, in up to {rounds} rounds "
             f"(each from an empty schema test): the first round that shows the bug ends "
             f"the case", f"--let $kw_rounds_left= {rounds}", "while ($kw_rounds_left)", "{"]
    body = [f"connect ({names[c]},localhost,root,,test){delim}" for c in names]
    if not all(s.sql.isascii() for s in statements):
        for c in names:
            body += [f"connection {names[c]}{delim}", f"SET NAMES utf8mb4{delim}"]
    body += ["--disable_abort_on_error"]
    current = None
    for stmt in setup:
        if stmt.conn != current:
            body.append(f"connection {names[stmt.conn]}{delim}")
            current = stmt.conn
        body.append(stmt.sql.strip().rstrip(";") + delim)
    for action, stmt in lockstep(lanes):
        if stmt.conn != current:
            body.append(f"connection {names[stmt.conn]}{delim}")
            current = stmt.conn
        body.append(("send " + stmt.sql.strip().rstrip(";") if action == "send" else "reap")
                    + delim)
    body += ["--enable_abort_on_error", f"connection default{delim}",
             "# the server is still there (a crash fails the case here)", f"SELECT 1{delim}"]
    body += check
    body += [f"disconnect {names[c]}{delim}" for c in names]
    body += [f"connection default{delim}"] + logged[1] + emptied + ["--dec $kw_rounds_left"]
    return lines + body + ["}"]


def _failure_check(case: ReduceInput, check: WrongResultCheck | None, rebuilt: Rebuilt,
                   delim: str) -> list[str]:
    """A wrong result's check after the statements (a crash needs none)."""
    if check is not None:
        return differential_check(check)
    if case.judged_again:
        return oracle_check(case.oracle, case.compared, delim, rebuilt)
    return []


def _in_turn(statements: Sequence[Statement], errors: dict[int, int], names: dict[int, str],
             delim: str) -> list[str]:
    """The statements one at a time, each on its connection (names: none for one)."""
    lines: list[str] = []
    current = None
    for stmt in statements:
        if names and stmt.conn != current:
            lines.append(f"connection {names[stmt.conn]}{delim}")
            current = stmt.conn
        code = errors.get(stmt.seq, 0)
        if code and code not in LOST_CONNECTION_CODES:
            lines.append(f"--error 0,{code}")
        lines.append(stmt.sql.strip().rstrip(";") + delim)
    return lines


def _sent_and_reaped(statements: Sequence[Statement], errors: dict[int, int],
                     names: dict[int, str], delim: str) -> list[str]:
    """The statements as ``send``/``reap`` on their connections (module docstring)."""
    lines: list[str] = []
    current = None
    for action, index in send_and_reap(statements):
        stmt = statements[index]
        if stmt.conn != current:
            lines.append(f"connection {names[stmt.conn]}{delim}")
            current = stmt.conn
        if action == "send":
            lines.append("send " + stmt.sql.strip().rstrip(";") + delim)
            continue
        code = errors.get(stmt.seq, 0)
        if code and code not in LOST_CONNECTION_CODES:
            lines.append(f"--error 0,{code}")
        lines.append(f"reap{delim}")
    return lines


@dataclass(frozen=True)
class WrittenCase:
    """Where the case went: the suite folder (for --suitepath / mtr --suite) and files."""

    suite_dir: str
    name: str
    test: str
    opt: str
    result: str
    options: tuple[str, ...] = ()

    @property
    def suitepath(self) -> str:
        """What ``kewpie --mode=mtr --suitepath`` takes."""
        return os.path.dirname(self.suite_dir)


_SONAME_RE = re.compile(r"\bSONAME\s+['\"]([^'\"]+)['\"]", re.I)


def loaded_libraries(text: str, options: Sequence[str]) -> set[str]:
    """The libraries a case loads: its statements' ``SONAME '...'`` (CREATE FUNCTION,
    INSTALL SONAME/PLUGIN) and its options' ``--plugin-load(-add)=[name=]lib.so;...``."""
    names = set(_SONAME_RE.findall(text))
    for option in options:
        key, _, value = option.partition("=")
        if key.replace("_", "-").lstrip("-").removeprefix("loose-") in (
                "plugin-load", "plugin-load-add"):
            names.update(part.rpartition("=")[2] for part in value.split(";") if part)
    return {n if n.endswith(".so") else n + ".so" for n in names}


def ship_plugins(suite: OutputDir, options: Sequence[str], loads: set[str]) -> list[str]:
    """A ``--plugin-dir`` option's libraries that the case loads (loads; every one when it
    names none) copied into the suite's own ``plugin/`` folder (links kept as links: a
    server's own plugin stays a link to its install; folders, such as Debian's
    ``auth_pam_tool_dir``, left out: the suite must pass the trust rule), the option
    pointed there relative to the suite, ``--plugin-dir=$MTR_SUITE_DIR/plugin``: the case
    carries the plugins it loads wherever it is copied (kewpie's mtr mode loads plugins
    from the server's directory or the suite's ``plugin/`` only)."""
    out = []
    for option in options:
        name, _, value = option.partition("=")
        if name.replace("_", "-") not in ("--plugin-dir", "--loose-plugin-dir") or \
                not os.path.isdir(value):
            out.append(option)
            continue
        suite.remove(PLUGIN_FOLDER)
        with suite.folder(PLUGIN_FOLDER) as target:
            for entry in sorted(os.listdir(value)):
                source = os.path.join(value, entry)
                if os.path.isfile(source) and (not loads or entry in loads):
                    target.copy_file(source, entry)   # a link stays a link
        out.append(name + PLUGIN_DIR_OPTION[len("--plugin-dir"):])
    return out


def write_case(out_dir: OutputDir | str, name: str, text: str, options: Sequence[str],
               readme: str = "") -> WrittenCase:
    """The .test, .opt (when there are options), .result and README.txt (when given)
    under out_dir/mtr/kw_reduce, written without following links
    (lib/platform/safewrite.py)."""
    with HeldOutput(out_dir) as out, out.folder(f"mtr/{SUITE}") as suite:
        options = ship_plugins(suite, options, loaded_libraries(text, options))
        if readme:
            suite.write_text(README, readme)
        test = suite.write_text(f"t/{name}.test", text)
        opt = suite.path_of(f"t/{name}.opt")
        if options:
            suite.write_text(f"t/{name}.opt", " ".join(options) + "\n")
        else:
            suite.remove(f"t/{name}.opt")
        result = suite.write_text(f"r/{name}.result", DONE_LINE + "\n")
        return WrittenCase(suite.path, name, test, opt if options else "", result,
                           tuple(options))


def report_text(case: ReduceInput, statements: Sequence[Statement], options: Sequence[str],
                written: WrittenCase, present: Sequence[str], absent: Sequence[str],
                stack: str = "", commands: Sequence[TreeCommands] = ()) -> str:
    """The bug report: what, where it reproduces, the options, the reduced case and the
    commands that run it from its folder (the folder's README.txt says the same)."""
    versions = (f"present in {', '.join(present) or 'none'}; "
                f"absent in {', '.join(absent) or 'none'}")
    unique_id = case.finding.get("unique_id") or (case.finding.get("signature") or {}).get(
        "unique_id") or ""
    lines = [f"Title: {case.title}", "",
             f"Signature: {case.signature.text}", f"Signature id: {case.signature.id}",
             *([f"UniqueID (MariaDB QA): {unique_id}"] if unique_id else []),
             f"Kind: {case.kind} (oracle {case.oracle}), found on a {case.topology} topology",
             f"Versions: {versions}",
             f"Server options: {' '.join(written.options or options) or '(none)'}", "",
             f"How to repeat ({len(statements)} statements, reduced from "
             f"{len(case.statements)}):", ""]
    lines += ["  " + line for line in open(written.test, encoding="utf-8").read().splitlines()]
    lines += ["", f"Run it from its folder, {written.suite_dir} (or a copy of the folder "
              f"anywhere: {README} there says the same):", "",
              f"  cd {shlex.quote(written.suite_dir)}"]
    for tree in commands:
        lines += [f"  # {tree.tree.label}", f"  {tree.kewpie}",
                  *([f"  {tree.mtr}"] if tree.mtr else [])]
    if stack:
        lines += ["", "Stack (from the crash report):", ""] + ["  " + l for l in
                                                               stack.splitlines()]
    lines += ["", f"Finding: {case.folder}", ""]
    return "\n".join(lines)
