"""Parsing what the backup tools report: logs, checkpoints, binlog and Galera info (canned text).

Covers: lib/backup/results.py
"""
from lib.backup.results import (BackupResult, BinlogInfo, StepResult, ToolReport, error_lines,
                                parse_binlog_info, parse_checkpoints, parse_galera_info,
                                parse_key_values, parse_tool_log, read_backup_info)

MARIABACKUP_BACKUP_LOG = """\
[00] 2026-11-22 15:16:42 Connecting to MariaDB server host: 127.0.0.1, user: root, password: not set, port: 9304, socket: /w/var_s0/my.sock
[00] 2026-11-22 15:16:42 Using server version 10.11.19-MariaDB-0+deb12u1
mariabackup based on MariaDB server 10.11.19-MariaDB debian-linux-gnu (x86_64)
[00] 2026-11-22 15:16:43 Acquiring BACKUP LOCKS...
[00] 2026-11-22 15:16:44 Writing xtrabackup_binlog_info
[00] 2026-11-22 15:16:44 Executing FLUSH NO_WRITE_TO_BINLOG ENGINE LOGS...
[00] 2026-11-22 15:16:44 MySQL binlog position: filename 'mysql-bin.000001', position '697', GTID of the last change '0-1-2'
[00] 2026-11-22 15:16:44 Writing xtrabackup_info
[00] 2026-11-22 15:16:44         ...done
[00] 2026-11-22 15:16:44 Redo log (from LSN 44404 to 46656) was copied.
2026-11-22 15:16:44 0 [Note] InnoDB: Starting shutdown...
[00] 2026-11-22 15:16:44 completed OK!
"""

XTRABACKUP8_BACKUP_LOG = """\
2024-03-01T10:00:00.000000-00:00 0 [Note] [MY-011825] [Xtrabackup] Connecting to MySQL server host: localhost, user: root, password: set, port: not set, socket: /var/run/mysqld/mysqld.sock
2024-03-01T10:00:02.000000-00:00 0 [Note] [MY-011825] [Xtrabackup] MySQL binlog position: filename 'binlog.000002', position '1234', GTID of the last change '3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5'
2024-03-01T10:00:02.000000-00:00 0 [Note] [MY-011825] [Xtrabackup] Transaction log of lsn (19087043) to (19087053) was copied.
2024-03-01T10:00:02.000000-00:00 0 [Note] [MY-011825] [Xtrabackup] completed OK!
"""

INNOBACKUPEX24_LOG = """\
xtrabackup: Transaction log of lsn (2543172) to (2543181) was copied.
171116 12:00:00 Executing UNLOCK TABLES
MySQL binlog position: filename 'mysql-bin.000003', position '154'
171116 12:00:00 completed OK!
"""

CONNECT_FAILURE_LOG = """\
[00] 2026-11-22 15:16:19 Connecting to MariaDB server host: 127.0.0.1, user: root, password: not set, port: 9300, socket: /w/var_s0/my.sock
[00] 2026-11-22 15:16:19 Failed to connect to MariaDB server: Can't connect to server on '127.0.0.1' (111 "Connection refused").
"""

DAMAGED_PREPARE_LOG = """\
mariabackup based on MariaDB server 10.11.19-MariaDB debian-linux-gnu (x86_64)
[00] 2026-11-22 15:16:26 cd to /w/backups/dmg/
2026-11-22 15:16:26 0 [Note] InnoDB: Buffered log writes (block size=512 bytes)
2026-11-22 15:16:26 0 [ERROR] InnoDB: Invalid log header checksum
[00] 2026-11-22 15:16:26 mariadb-backup: srv_start() returned 37 (Data structure corruption).
mariabackup: Warning: 0 files and 3 streams is left open

Error in my_thread_global_end(): 1 threads didn't exit
"""

MARIABACKUP_PREPARE_LOG = """\
[00] 2026-11-22 15:16:44 Starting InnoDB instance for recovery.
2026-11-22 15:16:44 0 [Note] InnoDB: Last binlog file './mysql-bin.000001', position 697
[00] 2026-11-22 15:16:44 Last binlog file ./mysql-bin.000001, position 697
[00] 2026-11-22 15:16:44 completed OK!
"""

XTRABACKUP_PREPARE_LOG = """\
InnoDB: Last MySQL binlog file position 0 1234, file name ./binlog.000002
xtrabackup: Last MySQL binlog file position 1234, file name ./binlog.000002
xtrabackup: completed OK!
"""


# ---------------------------------------------------------------- tool logs
def test_mariabackup_backup_log():
    report = parse_tool_log(MARIABACKUP_BACKUP_LOG)
    assert report.completed_ok
    assert (report.lsn_from, report.lsn_to) == (44404, 46656)
    assert report.binlog == BinlogInfo("mysql-bin.000001", 697, "0-1-2")
    assert report.errors == () and report.message == ""


def test_xtrabackup8_backup_log():
    report = parse_tool_log(XTRABACKUP8_BACKUP_LOG)
    assert report.completed_ok
    assert (report.lsn_from, report.lsn_to) == (19087043, 19087053)
    assert report.binlog == BinlogInfo("binlog.000002", 1234,
                                       "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5")


def test_innobackupex_log_without_gtid():
    report = parse_tool_log(INNOBACKUPEX24_LOG)
    assert report.completed_ok
    assert (report.lsn_from, report.lsn_to) == (2543172, 2543181)
    assert report.binlog == BinlogInfo("mysql-bin.000003", 154, "")


def test_connect_failure_message():
    report = parse_tool_log(CONNECT_FAILURE_LOG)
    assert not report.completed_ok
    assert report.errors == ("Failed to connect to MariaDB server: Can't connect to server on "
                             "'127.0.0.1' (111 \"Connection refused\").",)
    assert report.message.startswith("Failed to connect to MariaDB server")


def test_damaged_prepare_message_skips_noise():
    report = parse_tool_log(DAMAGED_PREPARE_LOG)
    assert not report.completed_ok
    assert report.errors[0] == "InnoDB: Invalid log header checksum"
    assert "srv_start() returned 37 (Data structure corruption)" in report.message
    assert "my_thread_global_end" not in report.message


def test_prepare_logs_binlog_position():
    assert parse_tool_log(MARIABACKUP_PREPARE_LOG).binlog == BinlogInfo("mysql-bin.000001", 697)
    assert parse_tool_log(XTRABACKUP_PREPARE_LOG).binlog == BinlogInfo("binlog.000002", 1234)


def test_successful_log_reports_no_errors_even_with_error_words():
    text = "[00] Copying ./mysql/error_log.frm\n[00] 2026 completed OK!\n"
    assert parse_tool_log(text).errors == ()


def test_error_lines_limit_and_fatal_prefix():
    text = "\n".join(["[00] FATAL ERROR: 2026-11-22 15:19:07 --defaults-file must be specified "
                      "first on the command line"] + [f"[ERROR] x{i}" for i in range(6)])
    lines = error_lines(text)
    assert len(lines) == 3
    assert lines[0] == "--defaults-file must be specified first on the command line"


def test_empty_log():
    report = parse_tool_log("")
    assert report == ToolReport(completed_ok=False)


# ---------------------------------------------------------------- info files
MARIABACKUP_CHECKPOINTS = """backup_type = full-backuped
from_lsn = 0
to_lsn = 44404
last_lsn = 46656
recover_binlog_info = 0
"""

XTRABACKUP8_INCREMENTAL_CHECKPOINTS = """backup_type = incremental
from_lsn = 19087043
to_lsn = 19100000
last_lsn = 19100010
flushed_lsn = 19100000
redo_memory = 0
redo_frames = 0
"""


def test_checkpoints_full():
    cp = parse_checkpoints(MARIABACKUP_CHECKPOINTS)
    assert (cp.backup_type, cp.from_lsn, cp.to_lsn, cp.last_lsn) == ("full-backuped", 0, 44404, 46656)
    assert not cp.incremental and not cp.prepared
    assert cp.values["recover_binlog_info"] == "0"


def test_checkpoints_incremental_and_prepared():
    cp = parse_checkpoints(XTRABACKUP8_INCREMENTAL_CHECKPOINTS)
    assert cp.incremental and cp.from_lsn == 19087043 and cp.values["flushed_lsn"] == "19100000"
    assert parse_checkpoints("backup_type = log-applied\nto_lsn = 5\n").prepared
    assert parse_checkpoints("backup_type = full-prepared\n").prepared


def test_checkpoints_garbage_is_zero_not_a_crash():
    cp = parse_checkpoints("backup_type = full-backuped\nto_lsn = banana\n")
    assert cp.to_lsn == 0 and cp.from_lsn == 0


def test_binlog_info_mariadb():
    assert parse_binlog_info("mysql-bin.000001\t697\t0-1-2\n") == BinlogInfo("mysql-bin.000001", 697, "0-1-2")
    assert parse_binlog_info("mysql-bin.000004\t385\t0-1-12,1-2-7\n").gtid == "0-1-12,1-2-7"


def test_binlog_info_without_gtid():
    assert parse_binlog_info("mysql-bin.000003\t154\n") == BinlogInfo("mysql-bin.000003", 154, "")
    assert parse_binlog_info("mysql-bin.000003\t154\t\n").gtid == ""


def test_binlog_info_mysql_multiline_gtid_set():
    text = ("mysql-bin.000002\t1232\tc777888a-b6df-11e2-a604-080027635ef5:1-4,\n"
            "e1a3e0a2-b6df-11e2-a604-080027635ef5:1-2\n")
    info = parse_binlog_info(text)
    assert info == BinlogInfo("mysql-bin.000002", 1232,
                              "c777888a-b6df-11e2-a604-080027635ef5:1-4,"
                              "e1a3e0a2-b6df-11e2-a604-080027635ef5:1-2")
    assert str(info).startswith("mysql-bin.000002:1232 (GTID c777888a")


def test_binlog_info_empty_or_bad():
    assert parse_binlog_info("") is None
    assert parse_binlog_info("\n\n") is None
    assert parse_binlog_info("mysql-bin.000001 notanumber") is None


def test_galera_info():
    g = parse_galera_info("8bf4e1ec-b9a4-11ee-9d33-a6a1a1e1f7a0:1542\n")
    assert (g.uuid, g.seqno, g.extra) == ("8bf4e1ec-b9a4-11ee-9d33-a6a1a1e1f7a0", 1542, "")
    g = parse_galera_info("8bf4e1ec-b9a4-11ee-9d33-a6a1a1e1f7a0:-1 0-1-17\n")
    assert g.seqno == -1 and g.extra == "0-1-17"
    assert parse_galera_info("") is None
    assert parse_galera_info("no-colon-here") is None
    assert parse_galera_info("uuid:xyz") is None


def test_key_values():
    text = "tool_name = mariabackup\nbinlog_pos = filename 'a', position '4'\nnot a pair\n"
    assert parse_key_values(text) == {"tool_name": "mariabackup",
                                      "binlog_pos": "filename 'a', position '4'"}


def test_read_backup_info_prefers_mariadb_names(tmp_path):
    (tmp_path / "xtrabackup_checkpoints").write_text(MARIABACKUP_CHECKPOINTS)
    (tmp_path / "xtrabackup_binlog_info").write_text("mysql-bin.000001\t1\t0-1-1\n")
    (tmp_path / "mariadb_backup_binlog_info").write_text("mysql-bin.000009\t9\t0-1-9\n")
    (tmp_path / "xtrabackup_galera_info").write_text("u:5\n")
    (tmp_path / "xtrabackup_info").write_text("tool_name = mariabackup\n")
    info = read_backup_info(str(tmp_path))
    assert info.checkpoints.to_lsn == 44404
    assert info.binlog == BinlogInfo("mysql-bin.000009", 9, "0-1-9")
    assert info.galera.seqno == 5
    assert info.info["tool_name"] == "mariabackup"


def test_read_backup_info_of_empty_dir(tmp_path):
    info = read_backup_info(str(tmp_path))
    assert info.checkpoints is None and info.binlog is None and info.galera is None
    assert info.info == {}


# ---------------------------------------------------------------- result objects
def _backup(name, base=None, binlog_file=None, log_binlog=None):
    from lib.backup.results import BackupInfo
    step = StepResult("backup", ["mariabackup"], 0, 1.0, "/l",
                      ToolReport(True, binlog=log_binlog))
    info = BackupInfo(None, BinlogInfo(binlog_file, 4, "0-1-4") if binlog_file else None, None)
    return BackupResult(name, f"/b/{name}", "s0", "mariabackup", step, info, incremental_base=base)


def test_chain_full_first():
    full = _backup("full")
    inc2 = _backup("inc2", _backup("inc1", full))
    assert [b.name for b in inc2.chain()] == ["full", "inc1", "inc2"]
    assert full.chain() == [full]


def test_binlog_from_info_file_else_from_log():
    assert _backup("a", binlog_file="mysql-bin.000002").gtid == "0-1-4"
    from_log = _backup("b", log_binlog=BinlogInfo("mysql-bin.000001", 9, "0-1-9"))
    assert from_log.binlog.position == 9 and from_log.gtid == "0-1-9"
    assert _backup("c").gtid == ""


def test_step_ok_needs_exit_zero_and_success_line():
    assert StepResult("backup", [], 0, 0.1, "/l", ToolReport(True)).ok
    assert not StepResult("backup", [], 0, 0.1, "/l", ToolReport(False)).ok
    assert not StepResult("backup", [], 1, 0.1, "/l", ToolReport(True)).ok


def test_error_line_prefixes_of_every_tool_are_removed():
    text = "\n".join([
        "2024-03-01T10:00:00.000000-00:00 0 [ERROR] [MY-011825] [Xtrabackup] Failed to connect "
        "to MySQL server: Access denied",
        "171116 12:00:00 innobackupex: Error: option 'datadir' not found",
        "[ERROR] write failed",
    ])
    assert error_lines(text) == ("Failed to connect to MySQL server: Access denied",
                                 "innobackupex: Error: option 'datadir' not found",
                                 "write failed")
