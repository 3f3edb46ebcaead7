"""The pquery-style load's pure parts: the mysqltest reader (commands left out, statements
kept as written, delimiters, blocks), the filters (what a load never sends), the corpus
(dedupe, cache, sources) and the replay's picks (seeded, runs of consecutive statements).

Covers: lib/hunt/pquery/mysqltest.py, lib/hunt/pquery/filters.py, lib/hunt/pquery/corpus.py, lib/hunt/pquery/replay.py, lib/hunt/pquery/__init__.py, lib/hunt/logcheck.py, lib/hunt/knownbugs.py
"""
import json
import os

import pytest

from lib.hunt.errors import HuntError
from lib.hunt.pquery.corpus import CorpusError, build_corpus, mysql_test_dir, read_cache
from lib.hunt.pquery.filters import refusal
from lib.hunt.pquery.mysqltest import statements
from lib.hunt.pquery.replay import HOME, HOME_EVERY, ReplayGenerator
from lib.randgen.generator import GenContext
from lib.randgen.metadata import Metadata


def _sql(text):
    return [s.sql for s in statements(text)]


def test_commands_left_out_statements_kept_as_written():
    text = """
--source include/have_innodb.inc
# a comment with an ' apostrophe
let $x = 1;
CREATE TABLE t1 (a INT, b VARCHAR(10) DEFAULT ';');
--error ER_PARSE_ERROR
SELECT 1 FROM; SELECT 2;
echo done;
disable_warnings;
DROP TABLE IF EXISTS t2;
"""
    assert _sql(text) == ["CREATE TABLE t1 (a INT, b VARCHAR(10) DEFAULT ';')",
                          "SELECT 1 FROM", "SELECT 2", "DROP TABLE IF EXISTS t2"]
    assert [s.line for s in statements(text)] == [5, 7, 7, 10]


def test_quotes_hold_delimiters_and_span_lines():
    text = "INSERT INTO t1 VALUES (1, 'it''s; ok'), (2, \"a\\\"b;\");\nSELECT `a;b`,\n 'x\ny;' FROM t1;\n"
    assert _sql(text) == ["INSERT INTO t1 VALUES (1, 'it''s; ok'), (2, \"a\\\"b;\")",
                          "SELECT `a;b`,\n 'x\ny;' FROM t1"]


def test_eval_and_carriers():
    text = "eval SELECT $x;\neval SELECT 3;\nsend SELECT 6;\nreap;\nquery_vertical SELECT 7;\n" \
           "--eval SELECT 8\n--send_eval SELECT $y\nSELECT '$.a' AS p;\n"
    # a plain statement is sent as written ($ is not a variable there); eval's must be whole
    assert _sql(text) == ["SELECT 3", "SELECT 6", "SELECT 7", "SELECT 8", "SELECT '$.a' AS p"]


def test_blocks_keep_their_statements_drop_their_headers():
    text = "if ($x)\n{\n  SELECT 4;\n}\nwhile ($x) {\n  dec $x;\n  SELECT 5;\n}\nSELECT 6;\n"
    assert _sql(text) == ["SELECT 4", "SELECT 5", "SELECT 6"]


def test_delimiters_in_both_forms():
    text = """delimiter |;
CREATE PROCEDURE p1() BEGIN SELECT 1; SELECT 2; END|
delimiter ;|
--delimiter //
CREATE FUNCTION f() RETURNS INT RETURN 1//
--delimiter ;
DELIMITER $$
CREATE TRIGGER tr BEFORE INSERT ON t1 FOR EACH ROW BEGIN SET @a=1; END$$
DELIMITER ;
SELECT 9;
"""
    assert _sql(text) == ["CREATE PROCEDURE p1() BEGIN SELECT 1; SELECT 2; END",
                          "CREATE FUNCTION f() RETURNS INT RETURN 1",
                          "CREATE TRIGGER tr BEFORE INSERT ON t1 FOR EACH ROW BEGIN SET @a=1; END",
                          "SELECT 9"]


def test_perl_and_write_file_bodies_are_not_sql():
    text = """perl;
  print "SELECT 99;";
EOF
--write_file $MYSQLTEST_VARDIR/tmp/x.sql
SELECT 98;
EOF
write_file $MYSQLTEST_VARDIR/tmp/y.sql END_OF_IT;
SELECT 97;
END_OF_IT
--perl MY_END
SELECT 96;
MY_END
SELECT 1;
"""
    assert _sql(text) == ["SELECT 1"]


def test_disable_parsing_skips_until_enable():
    assert _sql("--disable_parsing\nSELECT 1;\n--enable_parsing\nSELECT 2;\n") == ["SELECT 2"]


def test_plain_sql_file_one_statement_a_line():
    assert _sql("SELECT 1;\nINSERT INTO t VALUES (1);\n\nSELECT 2\n") == [
        "SELECT 1", "INSERT INTO t VALUES (1)", "SELECT 2"]


@pytest.mark.parametrize("sql,rule", [
    ("SHUTDOWN", "shutdown"),
    ("shutdown 230", "shutdown"),
    ("KILL QUERY @id", "kill"),
    ("CREATE TABLE t1 (a INT) DATA DIRECTORY = '/tmp/x'", "paths"),
    ("ALTER TABLE t1 ADD PARTITION (PARTITION p3 INDEX DIRECTORY='/x')", "paths"),
    ("SET GLOBAL general_log_file = '/tmp/general.log'", "paths"),
    ("SET @@global.slow_query_log_file='/tmp/x'", "paths"),
    ("set session debug_dbug='d:o,/tmp/trace'", "paths"),
    ("SET GLOBAL server_audit_output_type = 'syslog'", "paths"),
    ("LOAD DATA LOCAL INFILE '/etc/passwd' INTO TABLE t1", "paths"),
    ("SET PASSWORD = PASSWORD('x')", "harness-access"),
    ("DROP USER root@localhost", "harness-access"),
    ("REVOKE ALL PRIVILEGES, GRANT OPTION FROM CURRENT_USER", "harness-access"),
    ("ALTER USER root@localhost ACCOUNT LOCK", "harness-access"),
    ("DELETE FROM mysql.user", "harness-access"),
    ("DELETE FROM `mysql`.`global_priv` WHERE 1", "harness-access"),
    ("use mysql", "harness-access"),
    ("DROP DATABASE mysql", "harness-access"),
    ("SET GLOBAL max_connections = 1", "harness-access"),
    ("set global wait_timeout= 1", "harness-access"),
    ("SET GLOBAL max_connect_errors=1", "harness-access"),
    ("CREATE SERVER s FOREIGN DATA WRAPPER mysql OPTIONS (HOST '127.0.0.1', PORT 3306)", "network"),
    ("CREATE TABLE t1 (a INT) ENGINE=FEDERATED CONNECTION='mysql://root@127.0.0.1:9306/test/t1'",
     "network"),
    ("CHANGE MASTER TO master_host='127.0.0.1', master_port=3310", "network"),
    ("INSTALL PLUGIN handlersocket SONAME 'handlersocket.so'", "network"),
    # a hunt's false hang: root's password (no change time in a bootstrapped datadir) expired,
    # the harness's connections refused ("does not answer SQL")
    ("set global default_password_lifetime= 2", "harness-access"),
    ("set global disconnect_on_expired_password= ON", "harness-access"),
    ("SET GLOBAL wsrep_reject_queries = ALL_KILL", "harness-access"),
    ("SET GLOBAL max_statement_time = 0.001", "harness-access"),
    ("SET @@global.max_allowed_packet = 1024", "harness-access"),
    ("SET GLOBAL proxy_protocol_networks = '*'", "harness-access"),
    ("SET GLOBAL wsrep_provider = '/usr/lib/galera/libgalera_smm.so'", "network"),
    ("SET GLOBAL wsrep_notify_cmd = '/bin/true'", "paths"),
])
def test_refused(sql, rule):
    assert refusal(sql) == rule


@pytest.mark.parametrize("sql", [
    "SELECT * FROM mysql.user",                      # reading the privilege tables is fine
    "SELECT @tmpdir = @@global.tmpdir",
    "SET @tmpdir = @@global.tmpdir",                 # a user variable, read from the global
    "SET GLOBAL innodb_file_per_table = 1",          # a 'file' in the name, not a path
    "SET GLOBAL innodb_log_file_size = 10485760",
    "UPDATE t1 SET port = 3, address = 'x'",         # columns, not variables
    "SELECT * INTO OUTFILE 'x.txt' FROM t1",         # confined by secure_file_priv
    "LOAD DATA INFILE 'x.txt' INTO TABLE t1",
    "CREATE USER u1@localhost",
    "GRANT SELECT ON test.* TO u1@localhost",
    "INSTALL SONAME 'ha_rocksdb'",
    "CHANGE MASTER TO master_use_gtid=slave_pos",
    "ALTER TABLE mysql.innodb_table_stats MODIFY last_update TIMESTAMP",
    "SET SESSION lock_wait_timeout = 1",
    "CREATE PROCEDURE sp1() kill:BEGIN SELECT 1; END",
    "SET SESSION max_statement_time = 1",           # a session's own limit is fine
    "SET STATEMENT max_statement_time = 1 FOR SELECT 1",
    "SET GLOBAL wsrep_mode = 'STRICT_REPLICATION'",
])
def test_sent(sql):
    assert refusal(sql) == ""


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return str(path)


def test_corpus_of_a_folder_dedupes_filters_and_caches(tmp_path):
    src = tmp_path / "mt"
    _write(src, "main/t/a.test", "SELECT 1;\nSHUTDOWN;\nCREATE TABLE t1 (a INT);\n")
    _write(src, "main/t/b.test", "SELECT  1;\nINSERT INTO t1 VALUES (1);\n")
    _write(src, "include/c.inc", "--echo hi\nSELECT 2;\n")
    _write(src, "main/r/a.result", "SELECT 3;\n")           # not a script: not read
    work = str(tmp_path / "wd")
    corpus = build_corpus(str(src), "/nowhere", work)
    assert corpus.mined and corpus.stats.files == 3
    assert (corpus.stats.statements, corpus.stats.duplicates, corpus.stats.kept) == (6, 1, 4)
    assert corpus.stats.refused == {"shutdown": 1}
    assert corpus.read() == ["SELECT 2", "SELECT 1", "CREATE TABLE t1 (a INT)",
                             "INSERT INTO t1 VALUES (1)"]   # path order, first of duplicates
    assert [o for _, o in read_cache(corpus.cache)][1] == "main/t/a.test:1"
    assert corpus.cache.startswith(os.path.join(work, "pquery", "mt-"))
    again = build_corpus(str(src), "/nowhere", work)
    assert not again.mined and again.cache == corpus.cache and again.stats == corpus.stats
    _write(src, "main/t/b.test", "SELECT 5;\n")               # a changed tree: mined again
    third = build_corpus(str(src), "/nowhere", work)
    assert third.mined and third.cache != corpus.cache and "SELECT 5" in third.read()
    with open(third.cache) as fh:
        assert json.loads(fh.readline())["format"] == "kewpie-pquery-corpus/1"


def test_corpus_of_a_file_and_bad_sources(tmp_path):
    path = _write(tmp_path, "load.sql", "SELECT 1;\nSELECT 2;\n")
    assert build_corpus(path, "/nowhere", str(tmp_path / "wd")).read() == ["SELECT 1", "SELECT 2"]
    with pytest.raises(CorpusError, match="no such file or folder"):
        build_corpus(str(tmp_path / "missing.sql"), "/nowhere", str(tmp_path / "wd"))
    empty = _write(tmp_path, "empty.sql", "--echo nothing\n")
    with pytest.raises(CorpusError, match="no statement to send"):
        build_corpus(empty, "/nowhere", str(tmp_path / "wd"))
    assert issubclass(CorpusError, HuntError)   # bad input: one ERROR line, exit 2


def test_mysql_test_source_is_the_trees_or_the_installed_one(tmp_path):
    own = tmp_path / "tree" / "share" / "mysql" / "mysql-test"
    own.mkdir(parents=True)
    assert mysql_test_dir(str(tmp_path / "tree")) == str(own)
    if os.path.isdir("/usr/share/mysql/mysql-test"):
        assert mysql_test_dir(str(tmp_path / "other")) == "/usr/share/mysql/mysql-test"


def _picks(seed, thread, n, corpus):
    gen = ReplayGenerator(corpus, thread, seed, GenContext(Metadata.from_tables([])))
    return [s for _ in range(n) for s in gen.next_statements()]


def test_replay_picks_are_seeded_per_thread_and_come_in_runs():
    corpus = [f"SELECT {i}" for i in range(1000)]
    first = _picks(7, 1, 500, corpus)
    assert first == _picks(7, 1, 500, corpus)
    assert first != _picks(7, 2, 500, corpus) and first != _picks(8, 1, 500, corpus)
    numbers = [int(s.split()[1]) for s in first if s.startswith("SELECT")]
    consecutive = sum(1 for a, b in zip(numbers, numbers[1:]) if b == a + 1)
    assert consecutive > len(numbers) // 3          # runs of consecutive statements
    assert len(set(numbers)) > 200                  # and picks from all over the corpus
    # between picks, every HOME_EVERY statements, the way back to schema test
    homes = [i for i, s in enumerate(first) if s == HOME[1]]
    assert homes and all(first[i - 1] == HOME[0] for i in homes)
    assert len(homes) <= len(first) // HOME_EVERY + 1


@pytest.mark.parametrize("line,flagged", [
    # a surface load's SET SESSION sort_buffer_size = 32768: the statement fails and the
    # server logs its error; documented behaviour, a false finding of the errorlog oracle
    ("2026-11-28  4:28:21 9 [ERROR] mariadbd: Out of sort memory, consider increasing server "
     "sort buffer size", False),
    # its SET SESSION max_heap_table_size = 16384 fills a MEMORY table: error 1114, logged
    ("2026-11-28  5:03:52 8 [ERROR] mariadbd: The table 't2' is full", False),
    ("2026-11-28  5:03:52 8 [ERROR] mariadbd: The table './test/t2' is crashed", True),
    ("2026-11-28  4:28:21 9 [ERROR] mariadbd: Incorrect information in file: './test/t1.frm'",
     True),
])
def test_errorlog_lines_a_load_makes_a_healthy_server_log(line, flagged):
    from lib.hunt.logcheck import flagged_lines, suppressions
    assert bool(flagged_lines(line, suppressions(()))) is flagged


def test_shipped_random_options_are_options():
    from lib.hunt.randopts import read_option_list
    from lib.home import data_path
    options = read_option_list(data_path("randgen", "conf", "kewpie", "random-options-10.11.txt"))
    assert len(options) > 100 and not any(o.name.startswith("lc") for o in options)


@pytest.mark.parametrize("parts,version,tag,bug", [
    (("signal 11", "frames: Item_func_distance::val_real < Arg_comparator::compare_real"),
     "10.11.19", "known", "KW46-DISTANCE"),
    (("signal 11", "frames: Item_func_lastval::val_int < Type_handler_int_result::Item_val_bool"),
     "10.11.18", "known", "MDEV-39063"),
    (("signal 11", "frames: Item_func_lastval::val_int < Type_handler_int_result::Item_val_bool"),
     "10.11.19", "known-fixed", "MDEV-39063"),       # fixed in 10.11.19: a regression there
    (("signal 11", "frames: my_hash_first < my_hash_search"), "10.11.19", "new", None),
    (("signal 11", "frames: my_mb_ctype_8bit < Item_func_match::val_real < "
      "Type_handler_temporal_result::Item_val_bool"), "10.11.19", "known", "KW46-MATCH-UPDATE"),
    (("signal 11", "frames: st_select_lex_unit::exec_recursive < TABLE_LIST::fill_recursive < "
      "mysql_handle_single_derived"), "10.11.19", "known", "KW46-CTE-RECURSIVE"),
    (("signal 11", "frames: rename_columns_in_stat_table < Alter_info::apply_statistics_deletes_renames"
      " < mysql_alter_table"), "10.11.19", "known", "MDEV-28780"),
    (("signal 11", "frames: Item_cond_and::get_mm_tree < SQL_SELECT::test_quick_select < "
      "JOIN::optimize_stage2"), "10.11.19", "known", "KW46-SEL-ARG-TRACE"),
    (("signal 11", "frames: JOIN::optimize_stage2 < JOIN::optimize_inner < JOIN::optimize < "
      "st_select_lex::optimize_unflattened_subqueries"), "10.11.18", "known", "MDEV-35565"),
    (("signal 11", "frames: Item_func_match::val_real < Type_handler_temporal_result::Item_val_bool"
      " < Item_cond_and::val_bool < filesort"), "10.11.19", "known", "KW46-MATCH-NOPAD-FILESORT"),
])
def test_shipped_known_bugs(parts, version, tag, bug):
    from lib.home import data_path
    from lib.hunt.knownbugs import KnownBugs
    from lib.hunt.signature import Signature
    known = KnownBugs.load([data_path("randgen", "conf", "kewpie", "known_bugs-mariadb-10.11.txt")])
    tagged = known.tag(Signature("crash", parts), version)
    assert (tagged.tag, tagged.bug.bug_id if tagged.bug else None) == (tag, bug)


def test_shipped_known_bugs_match_an_errorlog_signature_by_its_id():
    from lib.home import data_path
    from lib.hunt.knownbugs import KnownBugs
    from lib.hunt.signature import Signature
    known = KnownBugs.load([data_path("randgen", "conf", "kewpie", "known_bugs-mariadb-10.11.txt")])
    sig = Signature("errorlog", ("[ERROR] mariadbd: Incorrect information in file: ?",))
    tagged = known.tag(sig, "10.11.19")
    assert (sig.id, tagged.tag, tagged.bug.bug_id if tagged.bug else None) == (
        "da32697056d5", "known", "KW46-KILLED-FRM")
