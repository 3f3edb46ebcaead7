"""Pure logic of the settings a reduced case pins: what the reduction's server had of the
variables mysql-test's default_mysqld.cnf changes, as the case's .opt options (the
finding's own option kept), schema test's character set at the case's top and put back at
its end, InnoDB started for a case pinned to it; the values read from a server.

Covers: lib/reduce/settings.py, lib/reduce/mtrcase.py, lib/reduce/check.py
"""
from lib.hunt.signature import Signature
from lib.reduce.case import ReduceInput, Statement
from lib.reduce.mtrcase import case_text
from lib.reduce.settings import (PINNED, Settings, pinned_options, read_settings,
                                 recreate_lines, schema_lines, value_of)

# a 10.11.19 server of kewpie's (its defaults), schema test as it makes it
SERVER = Settings((("character_set_server", "latin1"), ("collation_server", "latin1_swedish_ci"),
                   ("default_storage_engine", "InnoDB"),
                   ("use_stat_tables", "PREFERABLY_FOR_QUERIES"),
                   ("histogram_type", "DOUBLE_PREC_HB"), ("max_heap_table_size", "16777216"),
                   ("sort_buffer_size", "2097152")), "utf8mb4", "utf8mb4_general_ci")


def test_what_default_mysqld_cnf_changes_that_results_or_estimates_depend_on_is_pinned():
    assert set(PINNED) == {"character_set_server", "collation_server", "default_storage_engine",
                           "use_stat_tables", "histogram_type", "max_heap_table_size",
                           "sort_buffer_size"}
    assert pinned_options(SERVER, []) == [
        "--character-set-server=latin1", "--collation-server=latin1_swedish_ci",
        "--default-storage-engine=InnoDB", "--use-stat-tables=PREFERABLY_FOR_QUERIES",
        "--histogram-type=DOUBLE_PREC_HB", "--max-heap-table-size=16777216",
        "--sort-buffer-size=2097152"]
    # the finding's own option for one of them (any spelling) is not repeated
    mine = pinned_options(SERVER, ["--loose-sort_buffer_size=32768", "--histogram-type=JSON_HB",
                                   "--plugin-dir=/x"])
    assert "--sort-buffer-size=2097152" not in mine and "--histogram-type=DOUBLE_PREC_HB" \
        not in mine and "--max-heap-table-size=16777216" in mine
    assert pinned_options(Settings(), ["--a=1"]) == []
    assert value_of(SERVER, "default_storage_engine") == "InnoDB"
    assert value_of(Settings(), "default_storage_engine") == ""


def test_schema_test_is_made_the_reductions_and_put_back_as_mysql_test_had_it():
    top = schema_lines(SERVER, ";")
    assert top[-1] == "ALTER DATABASE test CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci;"
    assert any(line.startswith("let $kw_test_charset= `SELECT DEFAULT_CHARACTER_SET_NAME")
               for line in top)
    assert recreate_lines(SERVER, "|||", restore=True) == [
        "DROP DATABASE test|||",
        "eval CREATE DATABASE test CHARACTER SET $kw_test_charset COLLATE "
        "$kw_test_collation|||", "USE test|||"]
    # between a concurrent case's rounds: as the reduction's servers had it
    assert recreate_lines(SERVER, ";")[1] == \
        "CREATE DATABASE test CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci;"
    # nothing read: the case as before
    assert schema_lines(Settings(), ";") == []
    assert recreate_lines(Settings(), ";", restore=True) == [
        "DROP DATABASE test;", "CREATE DATABASE test;", "USE test;"]


def _case():
    statements = (Statement(1, 7, "CREATE TABLE t1 (a INT)"),
                  Statement(2, 7, "INSERT INTO t1 VALUES (1)"))
    return ReduceInput("/f", "crash", "crash", Signature("crash", ("f1",)), "a crash", "single",
                       ((),), statements), list(statements)


def test_the_case_pins_schema_test_and_starts_innodb_when_pinned_to_it():
    case, statements = _case()
    text = case_text(case, statements, {}, settings=SERVER)
    lines = text.splitlines()
    assert "--source include/have_innodb.inc" in lines    # mtr starts InnoDB only then
    assert lines.index("ALTER DATABASE test CHARACTER SET utf8mb4 COLLATE "
                       "utf8mb4_general_ci;") < lines.index("CREATE TABLE t1 (a INT);")
    assert lines.index("eval CREATE DATABASE test CHARACTER SET $kw_test_charset COLLATE "
                       "$kw_test_collation;") > lines.index("DROP DATABASE test;")
    myisam = Settings((("default_storage_engine", "MyISAM"),), "latin1", "latin1_swedish_ci")
    assert "--source include/have_innodb.inc" not in case_text(case, statements, {},
                                                               settings=myisam)
    # no settings read: the case as it was
    plain = case_text(case, statements, {})
    assert "ALTER DATABASE" not in plain and "\nCREATE DATABASE test;\n" in plain
    # a concurrent case's rounds make schema test the reduction's again
    two = [Statement(1, 7, "CREATE TABLE t1 (a INT)"), Statement(2, 8, "INSERT INTO t1 VALUES (1)")]
    rounds = case_text(case, two, {}, rounds=3, settings=SERVER)
    assert "CREATE DATABASE test CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci;" in rounds


class _Cursor:
    def __init__(self, answers):
        self.answers = answers
        self.sql = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def execute(self, sql):
        self.sql.append(sql)

    def fetchone(self):
        return self.answers[len(self.sql) - 1]


class _Conn:
    def __init__(self, answers):
        self.cur = _Cursor(answers)

    def cursor(self):
        return self.cur


def test_the_values_are_read_as_the_server_has_them():
    row = (b"latin1", "latin1_swedish_ci", "InnoDB", "PREFERABLY_FOR_QUERIES", "DOUBLE_PREC_HB",
           16777216, None)
    conn = _Conn([row, ("utf8mb4", "utf8mb4_general_ci")])
    got = read_settings(conn)
    assert conn.cur.sql[0] == "SELECT " + ", ".join(f"@@GLOBAL.{n}" for n in PINNED)
    assert "information_schema.SCHEMATA WHERE SCHEMA_NAME = 'test'" in conn.cur.sql[1]
    assert got.values[0] == ("character_set_server", "latin1")   # bytes decoded
    assert ("max_heap_table_size", "16777216") in got.values
    assert value_of(got, "sort_buffer_size") == ""                 # NULL: not pinned
    assert (got.charset, got.collation) == ("utf8mb4", "utf8mb4_general_ci")
    assert read_settings(_Conn([row, None])).charset == ""         # no schema test
