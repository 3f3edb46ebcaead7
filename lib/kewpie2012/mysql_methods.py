"""kewpie 2012 helper functions, for porting old tests with only Python 3 fixes.

Return conventions follow the old tool: ``execute_query`` gives
``(0, rows)`` or ``(1, "Error N: message")``; ``execute_cmd`` gives
``(retcode, output)``; ``check_slaves_by_*`` give ``None`` when all servers
agree and otherwise ``{server_name: [differences]}``.
"""
from __future__ import annotations

import difflib
import os
import shlex
from typing import Any, Mapping

import pymysql

from ..checks.dbcompare import VOLATILE_DUMP_PREFIXES
from ..platform.process import with_tags
from ..platform.tools import run_tool

CMD_TIMEOUT = 3600.0  # seconds execute_cmd gives a command line (a backup of a test's data)


def _connect(server: Any, schema: str | None, password: str | None = None) -> pymysql.Connection:
    """A connection with kewpie 2012's semantics: as ``root@localhost`` (the server's
    socket; 2012's 127.0.0.1 resolved to localhost) and in the server's default
    character set (MySQLdb sent none), running the server's ``client_init_command``."""
    params: dict[str, Any] = dict(user="root", password=password or "", database=schema,
                                  connect_timeout=10, ssl_disabled=True)  # a local test server
    socket_file = getattr(server, "socket_file", None)
    if socket_file and os.path.exists(socket_file):
        params["unix_socket"] = socket_file
    else:
        params.update(host="127.0.0.1", port=server.port)
    init = getattr(server, "client_init_command", None)
    if init:
        params["init_command"] = init
    conn = pymysql.connect(**params)
    default = getattr(conn, "server_charset", None)
    if default and default != conn.charset:
        try:
            conn.set_character_set(default)
        except (pymysql.MySQLError, KeyError, LookupError):
            pass  # a charset Python cannot decode: keep the client's
    return conn


def execute_query(query: str, server: Any, server_host: str = "127.0.0.1",
                  schema: str = "test", password: str | None = None) -> tuple[int, Any]:
    """Run one query; ``(0, rows)`` on success, ``(1, 'Error N: msg')`` on failure."""
    del server_host  # servers always listen on 127.0.0.1
    try:
        conn = _connect(server, schema, password)
    except pymysql.MySQLError as exc:
        return 1, _error_text(exc)
    try:
        with conn.cursor() as cur:
            cur.execute(query)
            rows = cur.fetchall()
        conn.commit()
        return 0, rows
    except pymysql.MySQLError as exc:
        return 1, _error_text(exc)
    finally:
        conn.close()


def _error_text(exc: pymysql.MySQLError) -> str:
    if len(exc.args) >= 2:
        return f"Error {exc.args[0]}: {exc.args[1]}"
    return f"Error: {exc}"


def execute_queries(query_list: list[str], server: Any, schema: str = "test") -> tuple[int, Any]:
    """Run queries in one transaction; ``(retcode, {query+index: result})``."""
    results: dict[str, Any] = {}
    retcode = 0
    try:
        conn = _connect(server, schema)
    except pymysql.MySQLError as exc:
        return 1, _error_text(exc)
    try:
        with conn.cursor() as cur:
            for idx, query in enumerate(query_list):
                try:
                    cur.execute(query)
                    results[query + str(idx)] = cur.fetchall()
                except pymysql.MySQLError as exc:
                    results[query + str(idx)] = _error_text(exc)
                    retcode = 1
        conn.commit()
    finally:
        conn.close()
    return retcode, results


def execute_cmd(cmd: str, stdout_path: str, exec_path: str | None = None,
                get_output: bool = False, *, tags_from: Mapping[str, str] | None = None,
                timeout: float = CMD_TIMEOUT) -> tuple[int, str | None]:
    """Run a shell command line with its output (stdout and stderr) in stdout_path;
    ``(retcode, output or None)``.

    It runs through ``lib.platform.tools.run_tool`` (``/bin/sh -c``, stdin from
    /dev/null): its whole process group is stopped when timeout passes (retcode
    is then negative and the output ends with a line saying so).  tags_from is
    the environment of a server of the run (``server.settings.env``): the
    command carries the run's tags, so the end of the run finds what it left
    behind.
    """
    ran = run_tool(["/bin/sh", "-c", cmd], log_path=stdout_path, cwd=exec_path,
                   env=with_tags(None, tags_from), timeout=timeout)
    if ran.timed_out and stdout_path != os.devnull:
        with open(stdout_path, "a") as out:
            out.write(f"kewpie: command stopped after {timeout:g} s: {cmd}\n")
    output = None
    if get_output:
        with open(stdout_path, errors="replace") as fh:
            output = fh.read()
    return ran.returncode, output


def get_tables(server: Any, schema: str) -> list[str]:
    """Table names in schema."""
    retcode, rows = execute_query(f"SHOW TABLES IN `{schema}`", server)
    return [r[0] for r in rows] if retcode == 0 else []


def check_slaves_by_query(master_server: Any, other_servers: list[Any], query: str,
                          expected_result: Any = None) -> dict[str, list[str]] | None:
    """Run query everywhere; None if every server matches the master (or expected_result)."""
    if not expected_result:
        _, expected_result = execute_query(query, master_server)
    diffs: dict[str, list[str]] = {}
    for server in other_servers:
        _, result = execute_query(query, server)
        if result != expected_result:
            diffs.setdefault(server.name, []).append(
                f"{server.name}: expected_result= {expected_result} | slave_result= {result}")
    return diffs or None


def check_slaves_by_checksum(master_server: Any, other_servers: list[Any],
                             schemas: list[str] | None = None,
                             tables: list[str] | None = None) -> dict[str, list[str]] | None:
    """CHECKSUM TABLE every table of schemas; None if equal, else the differences."""
    schemas = schemas or ["test"]
    diffs: dict[str, list[str]] = {}
    for server in other_servers:
        for schema in schemas:
            names = tables or get_tables(master_server, schema)
            for table in names:
                query = f"CHECKSUM TABLE `{schema}`.`{table}`"
                _, master_sum = execute_query(query, master_server)
                _, slave_sum = execute_query(query, server)
                if master_sum != slave_sum:
                    diffs.setdefault(server.name, []).append(
                        f"{schema}.{table}: master_checksum= {master_sum} | "
                        f"slave_checksum= {slave_sum}")
    return diffs or None


def take_mysqldump(server: Any, databases: list[str] | None = None,
                   tables: list[str] | None = None, dump_path: str | None = None,
                   cmd_root: str | None = None) -> tuple[int, str | None]:
    """mysqldump the server into dump_path (default vardir/dumpfile.dat)."""
    dump_path = dump_path or os.path.join(server.paths.vardir, "dumpfile.dat")
    if cmd_root:
        cmd = cmd_root
    else:
        cmd = (f"{shlex.quote(server.tree.tool('dump'))} --no-defaults --user=root "
               f"--port={server.port} --host=127.0.0.1 --protocol=tcp "
               f"--skip-dump-date --result-file={shlex.quote(dump_path)}")
        databases = databases or []
        if len(databases) > 1:
            cmd += " --databases " + " ".join(shlex.quote(d) for d in databases)
        elif databases:
            cmd += " " + shlex.quote(databases[0]) + " " + " ".join(shlex.quote(t) for t in tables or [])
        else:
            cmd += " --all-databases"
    return execute_cmd(cmd, os.devnull)


def filter_data(input_data: list[str], filter_text: str) -> list[str]:
    """Lines of input_data that do not contain filter_text."""
    return [line for line in input_data if filter_text not in line.strip()]


def diff_dumpfiles(orig_file_path: str, new_file_path: str) -> tuple[bool, str]:
    """Compare two dump files; ``(True, '')`` when equal, else ``(False, diff)``."""
    with open(orig_file_path, errors="replace") as fh:
        orig = [l for l in fh.readlines() if not l.startswith(VOLATILE_DUMP_PREFIXES)]
    with open(new_file_path, errors="replace") as fh:
        new = [l for l in fh.readlines() if not l.startswith(VOLATILE_DUMP_PREFIXES)]
    diff = list(difflib.unified_diff(orig, new, fromfile=orig_file_path, tofile=new_file_path))
    return diff == [], "".join(diff)
