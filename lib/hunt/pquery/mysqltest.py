"""The SQL of a mysqltest script (``.test``/``.inc``) or a plain SQL file, its
mysqltest commands left out.

mysqltest reads a script as commands: a line that starts with ``#`` is a
comment, one that starts with ``--`` is a one-line command (``--error 1064``,
``--let $x= 1``), anything else runs up to the current delimiter (``;``, or
what ``delimiter`` set) and is a command when its first word is one of
mysqltest's, else a statement sent to the server as written (no variable is
expanded in it).  :func:`statements` follows those rules:

- statements are kept as written; ``eval``, ``send_eval`` and ``query`` ...
  give the statement they carry (``eval``'s only when it uses no ``$``
  variable: nothing here can expand it);
- ``delimiter`` changes the delimiter, in mysqltest's form (``delimiter |;``)
  and in the mariadb client's (a ``DELIMITER //`` line), so SQL files written
  for the client read the same way;
- ``if (...) {``/``while (...) {`` headers and ``}`` are dropped (the block's
  statements are kept), as are the bodies of ``perl``, ``write_file`` and
  ``append_file`` up to their terminator (``EOF``);
- a delimiter inside a quoted string (``'``, ``"``, a backquote) or a comment
  line inside a statement does not end it.

What it cannot see: a statement that mysqltest builds from variables at run
time (``eval`` with ``$``, ``let``'s queries), and the order a test needs --
each statement stands alone.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from types import MappingProxyType
from typing import Iterator

# mysqltest's commands (client/mysqltest.cc's command_names, MariaDB 10.11), lower case
COMMANDS = frozenset({
    "connection", "query", "connect", "sleep", "real_sleep", "inc", "dec", "source",
    "disconnect", "let", "echo", "while", "end", "save_master_pos", "sync_with_master",
    "sync_slave_with_master", "error", "send", "reap", "dirty_close", "replace_result",
    "replace_column", "ping", "eval", "enable_query_log", "disable_query_log",
    "enable_result_log", "disable_result_log", "enable_connect_log", "disable_connect_log",
    "wait_for_slave_to_stop", "enable_warnings", "disable_warnings", "enable_info",
    "disable_info", "enable_session_track_info", "disable_session_track_info",
    "enable_metadata", "disable_metadata", "enable_column_names", "disable_column_names",
    "exec", "execw", "exec_in_background", "delimiter", "disable_abort_on_error",
    "enable_abort_on_error", "vertical_results", "horizontal_results", "query_vertical",
    "query_horizontal", "sorted_result", "partially_sorted_result", "lowercase_result",
    "start_timer", "end_timer", "character_set", "disable_ps_protocol",
    "enable_ps_protocol", "enable_ps2_protocol", "disable_ps2_protocol",
    "disable_view_protocol", "enable_view_protocol", "disable_cursor_protocol",
    "enable_cursor_protocol", "disable_non_blocking_api", "enable_non_blocking_api",
    "disable_reconnect", "enable_reconnect", "if", "disable_parsing", "enable_parsing",
    "replace_regex", "remove_file", "file_exists", "write_file", "copy_file", "perl", "die",
    "exit", "skip", "chmod", "append_file", "cat_file", "diff_files", "send_quit",
    "change_user", "mkdir", "rmdir", "force-rmdir", "force-cpdir", "list_files",
    "list_files_write_file", "list_files_append_file", "send_shutdown", "shutdown_server",
    "result_format", "move_file", "remove_files_wildcard", "copy_files_wildcard",
    "send_eval", "output", "reset_connection", "enable_prepare_warnings",
    "disable_prepare_warnings", "require", "result", "system", "replace_numeric_round",
    "query_get_value", "assert", "enable_async_client", "disable_async_client",
    "enable_testcase", "disable_testcase", "wait_for_slave_param", "evalp",
    "query_attrs_add", "query_attrs_delete", "query_attrs_reset",
    "enable_service_connection", "disable_service_connection",
})
# commands that carry a statement: True when it may hold mysqltest variables ($x),
# which nothing here can expand (such a statement is dropped)
CARRIERS = MappingProxyType({"query": False, "query_vertical": False,
                             "query_horizontal": False, "send": False, "eval": True,
                             "send_eval": True, "evalp": True})
# commands whose body follows on the next lines, up to a terminator line (EOF)
BLOCKS = frozenset({"perl", "write_file", "append_file"})
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_CLIENT_DELIMITER = re.compile(r"delimiter\s+(\S+)\s*$", re.I)
_VARIABLE = re.compile(r"\$[A-Za-z_{]")


@dataclass(frozen=True)
class Statement:
    """A statement of a script and the line it starts on."""

    line: int
    sql: str


@dataclass
class _Reader:
    """The reading state of one script."""

    delimiter: str = ";"
    skip_until: str = ""          # inside a perl/write_file block: its terminator
    parsing: bool = True          # disable_parsing ... enable_parsing

    def in_block(self) -> bool:
        """Inside a perl/write_file/append_file block (its lines are not SQL)."""
        return bool(self.skip_until)


def _command_word(text: str) -> str:
    match = _WORD.match(text)
    return match.group(0).lower() if match else ""


def _block_terminator(word: str, rest: str) -> str:
    """The terminator line of a perl/write_file/append_file block (default EOF):
    ``perl [TERMINATOR]``, ``write_file FILE [TERMINATOR]``."""
    words = rest.split()
    at = 0 if word == "perl" else 1
    return words[at] if len(words) > at else "EOF"


def _dispatch(text: str, reader: _Reader, line: int, word_known: bool) -> Statement | None:
    """A complete command or statement (its delimiter removed): the SQL it sends, if any."""
    text = text.strip()
    if not text:
        return None
    word = _command_word(text)
    if word in ("enable_parsing", "disable_parsing"):
        reader.parsing = word == "enable_parsing"
        return None
    if not reader.parsing:
        return None
    if word in COMMANDS or word_known:
        rest = text[len(word):].strip() if word else ""
        if word == "delimiter":
            if rest:
                reader.delimiter = rest.split()[0]
            return None
        if word in BLOCKS:
            reader.skip_until = _block_terminator(word, rest)
            return None
        if word in CARRIERS and rest:
            if CARRIERS[word] and _VARIABLE.search(rest):
                return None
            return Statement(line, rest)
        return None
    return Statement(line, text)


@dataclass
class _Pending:
    """The statement read so far across lines: its text, first line and open quote."""

    buf: list[str]
    start: int = 0     # its first line
    quote: str = ""    # inside a quoted string: its quote


def statements(text: str) -> Iterator[Statement]:
    """The SQL statements of a mysqltest script or SQL file, in order (see the module
    docstring)."""
    reader = _Reader()
    pending = _Pending([])
    for number, raw in enumerate(text.split("\n"), start=1):
        if reader.skip_until:
            if raw.strip() == reader.skip_until:
                reader.skip_until = ""
            continue
        pos = 0
        if not pending.buf and not pending.quote:
            found, pos = _line_start(raw, reader, number)
            if found is not None:
                yield found
            if pos < 0:
                continue
            pending.start = number
        yield from _scan_line(raw, pos, number, reader, pending)
        if pending.buf:
            pending.buf.append("\n")
    if pending.buf and "".join(pending.buf).strip():
        found = _dispatch("".join(pending.buf), reader, pending.start, False)
        if found is not None:
            yield found


def _scan_line(raw: str, pos: int, number: int, reader: _Reader,
               pending: _Pending) -> Iterator[Statement]:
    """The statements a line ends, from pos on: quotes, delimiters and ``{`` blocks
    followed; what is left open stays in pending."""
    while pos < len(raw):
        if pending.quote:
            end = _close_quote(raw, pos, pending.quote)
            if end < 0:
                pending.buf.append(raw[pos:])
                return
            pending.buf.append(raw[pos:end + 1])
            pos, pending.quote = end + 1, ""
            continue
        delim = reader.delimiter
        nxt = _next_special(raw, pos, delim)
        if nxt < 0:
            pending.buf.append(raw[pos:])
            return
        if raw.startswith(delim, nxt):
            pending.buf.append(raw[pos:nxt])
            found = _dispatch("".join(pending.buf), reader, pending.start, False)
            pending.buf = []
            if found is not None:
                yield found
            pos = nxt + len(delim)
        elif raw[nxt] == "{":
            head = ("".join(pending.buf) + raw[pos:nxt]).lstrip().lower()
            pending.buf.append(raw[pos:nxt + 1])
            pos = nxt + 1
            if head.startswith(("if", "while")):
                pending.buf = []  # if (...) { / while (...) {: the header goes, the block stays
                pending.quote = ""
            else:
                continue
        else:
            char = raw[nxt]
            pending.buf.append(raw[pos:nxt + 1])
            pos = nxt + 1
            if not (nxt > 0 and raw[nxt - 1] == "\\"):
                pending.quote = char
            continue
        if reader.in_block():
            return
        if not pending.buf:  # a new statement may start on the rest of the line
            found, pos = _line_start(raw, reader, number, pos)
            if found is not None:
                yield found
            if pos < 0:
                return
            pending.start = number


def _line_start(raw: str, reader: _Reader, number: int,
                pos: int = 0) -> tuple[Statement | None, int]:
    """Where a new command starts on a line: (a one-line command's statement, -1) when
    the rest of the line is a comment, a ``--`` command, a block's ``}`` or a client
    DELIMITER line; else (None, the index the command starts at)."""
    rest = raw[pos:]
    stripped = rest.lstrip()
    while stripped.startswith("}"):
        stripped = stripped[1:].lstrip()
    if not stripped or stripped.startswith("#"):
        return None, -1
    if stripped.startswith("--"):
        return _dispatch(stripped[2:], reader, number, True), -1
    client = _CLIENT_DELIMITER.match(stripped)
    if client:
        token = client.group(1)
        if not (token.endswith(reader.delimiter) and len(token) > len(reader.delimiter)):
            reader.delimiter = token  # the mariadb client's form: DELIMITER //
            return None, -1
    return None, len(raw) - len(stripped)


def _next_special(raw: str, pos: int, delim: str) -> int:
    """The index of the next quote, block brace or delimiter from pos, or -1."""
    best = -1
    for char in ("'", '"', "`", "{", delim):
        i = raw.find(char, pos)
        if i >= 0 and (best < 0 or i < best):
            best = i
    return best


def _close_quote(raw: str, pos: int, quote: str) -> int:
    """The index of the quote that closes one opened before pos (a backslash escapes the
    next character, as mysqltest reads it), or -1 when it is not on this line."""
    i = pos
    while i < len(raw):
        char = raw[i]
        if char == "\\":
            i += 2
            continue
        if char == quote:
            return i
        i += 1
    return -1
