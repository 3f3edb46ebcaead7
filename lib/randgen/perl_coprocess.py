"""Grammar blocks outside the native Perl subset, run by a ``perl`` coprocess.

When a grammar has a block the native evaluator (:mod:`lib.randgen.perl_subset`)
cannot compile, all of that grammar's blocks run in Perl, so that their
variables live in one place.  Each generator thread starts one persistent
``perl lib/randgen/coprocess.pl`` and talks to it over pipes, one JSON object
per line.  The coprocess offers what randgen's blocks use: ``$prng`` (seeded
from the thread's seed, so runs repeat), ``$generator->threadId()``,
``$executors->[0]`` with the Perl tool's metadata API (``tables()``,
``baseTables()``, ``metaColumns()``, ``metaColumnsDataType()``,
``databases()``, ``columnRealType()``...) and, against a server, ``dbh()`` and
``execute()`` over DBI; ``$stack`` (fresh per sentence),
``$last_table``/``$last_field``/``$last_database``, ``$$`` as the thread's
stable number, List::Util's functions (``shuffle``, ``first``, ``max``...) and
GenTest's ``say``.

Without a usable ``perl`` (with JSON::PP), such a grammar stops with a
:class:`~lib.randgen.errors.PerlBlockError` naming the file, line and block.
"""
from __future__ import annotations

import json
import os
import re
import shutil
from typing import TYPE_CHECKING, Any

from ..platform.process import DEVNULL, PIPE, spawn, stop_child, wait_exit
from ..platform.tools import run_tool
from .errors import PerlBlockError, RandgenEnvironmentError
from .grammar import Token
from .metadata import Metadata
from .words import ENGLISH

if TYPE_CHECKING:
    from .connection import ConnectionSpec
    from .generator import Generator

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "coprocess.pl")
_PID_RE = re.compile(r"\$\$(?![A-Za-z_{$])")


def find_perl() -> str | None:
    """The perl binary, if there is one with JSON::PP."""
    perl = shutil.which("perl") or ("/usr/bin/perl" if os.path.exists("/usr/bin/perl") else None)
    if perl is None:
        return None
    try:
        ok = run_tool([perl, "-MJSON::PP", "-e", "1"], timeout=10).ok
    except OSError:
        return None
    return perl if ok else None


def perl_dsn(conn: "ConnectionSpec") -> str:
    """A DBI DSN for DBD::mysql (the socket when there is one: host=localhost)."""
    parts = [f"database={conn.database or 'test'}"]
    if conn.unix_socket:
        parts += ["host=localhost", f"mysql_socket={conn.unix_socket}"]
    else:
        parts += [f"host={conn.host}", f"port={conn.port}"]
    parts.append(f"user={conn.user}")
    if conn.password:
        parts.append(f"password={conn.password}")
    return "dbi:mysql:" + ";".join(parts)


class PerlCoprocess:
    """One thread's Perl coprocess: evaluates blocks, keeps their variables."""

    def __init__(self, perl: str, seed: int, thread_id: int, pid: int, metadata: Metadata,
                 varchar_length: int = 1, connection_id: int = 0,
                 user: str = "root@localhost", dsn: str = "", version: str = "") -> None:
        self.thread_id = thread_id
        self._meta_version = metadata.version
        try:
            # no parent-death signal: it would fire when the creating thread ends; the
            # coprocess exits at EOF on its stdin, which it gets when kewpie dies
            self.proc = spawn([perl, SCRIPT], stdin=PIPE, stdout=PIPE,
                              stderr=DEVNULL, text=True, with_parent=False)
        except OSError as exc:
            raise RandgenEnvironmentError(f"cannot start the Perl coprocess ({perl}): {exc}") from exc
        self._request({"op": "init", "seed": seed % 2147483647, "thread_id": thread_id,
                       "pid": pid, "meta": metadata.to_json(), "varchar_length": varchar_length,
                       "words": list(ENGLISH), "connection_id": connection_id, "user": user,
                       "dsn": dsn, "version": version})

    def _request(self, msg: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        try:
            self.proc.stdin.write(json.dumps(msg) + "\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
        except (BrokenPipeError, OSError) as exc:
            raise RandgenEnvironmentError(f"the Perl coprocess of thread {self.thread_id} "
                                          f"died: {exc}") from exc
        if not line:
            raise RandgenEnvironmentError(f"the Perl coprocess of thread {self.thread_id} "
                                          f"exited (status {self.proc.poll()})")
        reply: dict[str, Any] = json.loads(line)  # the coprocess answers with a JSON object
        return reply

    def evaluate(self, token: Token, gen: "Generator") -> str:
        """Run a block in Perl and return its value as text."""
        md = gen.context.snapshot()
        if md.version != self._meta_version:
            self._meta_version = md.version
            self._request({"op": "meta", "meta": md.to_json(), "connection_id": gen.connection_id})
        code = token.text.strip()
        if code.startswith("{") and code.endswith("}"):
            code = code[1:-1]
        code = _PID_RE.sub("$main::_kw_pid", code)
        reply = self._request({"op": "eval", "code": code, "s": gen.sentences,
                               "t": gen.last_table, "f": gen.last_field, "d": gen.last_database})
        if not reply.get("ok"):
            raise PerlBlockError(f"Internal grammar error: {reply.get('error')}", token.path,
                                 token.line, token.text)
        value = reply.get("v")
        return "" if value is None else str(value)

    def new_sentence(self) -> None:
        """The sentence number travels with each eval; nothing to do here."""

    def close(self) -> None:
        """Ask the coprocess to quit and reap it."""
        if self.proc.poll() is not None:
            return
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write('{"op": "quit"}\n')
            self.proc.stdin.close()
        except OSError:
            pass
        if not wait_exit(self.proc, 5.0):
            stop_child(self.proc, 1.0)
