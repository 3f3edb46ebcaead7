"""Running tool steps with stand-in tools, incremental chain checks, storage and 2012 helpers.

Covers: lib/backup/execute.py, lib/backup/prepare.py, lib/backup/restore.py,
lib/backup/storage.py, lib/backup/validate.py, lib/backup/errors.py, lib/kewpie2012/backup_methods.py
"""
import os
from types import SimpleNamespace
import stat

import pytest

from lib.backup.errors import BackupInfoError, BackupToolError, RestoreError
from lib.backup.execute import RunAs, run_step
from lib.backup.prepare import check_chain
from lib.backup.restore import check_prepared
from lib.backup.storage import backups_root, chown_tree, empty_datadir, safe_label, unique_dir
from lib.backup.validate import compare_checksum_maps, normalize_dump
from lib.kewpie2012.backup_methods import datadir_from_cnf, innobackupex_tool


def script(path, body):
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


# ---------------------------------------------------------------- run_step
def test_run_step_success(tmp_path):
    tool = script(tmp_path / "tool", 'echo "[00] copying"; echo "[00] 2026 completed OK!" >&2\n')
    result = run_step("backup", [tool, "--no-defaults"], str(tmp_path / "b.log"),
                      RunAs(cwd=str(tmp_path), tmpdir=str(tmp_path)))
    assert result.ok and result.returncode == 0 and result.seconds >= 0
    assert "completed OK!" in open(result.log_path).read()


def test_run_step_failure_carries_tool_message_and_tail(tmp_path):
    tool = script(tmp_path / "tool", "echo \"[00] 2026-11-22 15:16:19 Failed to connect to MariaDB "
                                     "server: Can't connect\"; exit 1\n")
    with pytest.raises(BackupToolError) as ctx:
        run_step("backup", [tool, "--no-defaults"], str(tmp_path / "b.log"), RunAs())
    err = ctx.value
    assert err.returncode == 1 and err.step == "backup"
    assert err.tool_message == "Failed to connect to MariaDB server: Can't connect"
    assert "failed (exit 1): Failed to connect" in str(err)
    assert "--- backup tool log tail ---" in str(err)
    assert err.log_path == str(tmp_path / "b.log")


def test_run_step_exit_zero_without_success_line_fails(tmp_path):
    tool = script(tmp_path / "tool", "echo done\n")
    with pytest.raises(BackupToolError, match="never said 'completed OK!'"):
        run_step("prepare", [tool], str(tmp_path / "p.log"), RunAs())


def test_run_step_check_false_returns_result(tmp_path):
    tool = script(tmp_path / "tool", "exit 3\n")
    result = run_step("prepare", [tool], str(tmp_path / "p.log"), RunAs(), check=False)
    assert result.returncode == 3 and not result.ok


def test_run_step_timeout_kills(tmp_path):
    tool = script(tmp_path / "tool", "sleep 30\n")
    with pytest.raises(BackupToolError, match="did not finish within") as ctx:
        run_step("backup", [tool], str(tmp_path / "b.log"), RunAs(), timeout=0.3)
    assert ctx.value.returncode is None


def test_run_step_stream_into_extractor(tmp_path):
    dest = tmp_path / "dest"
    dest.mkdir()
    tool = script(tmp_path / "tool", 'echo "stream-bytes"; echo "completed OK!" >&2\n')
    extract = script(tmp_path / "extract", 'cat > "$2/got"\n')
    result = run_step("backup", [tool], str(tmp_path / "b.log"), RunAs(),
                      [extract, "-x", str(dest)], str(tmp_path / "x.log"))
    assert result.ok and result.extract_argv[0] == extract
    assert (dest / "got").read_text() == "stream-bytes\n"


def test_run_step_extractor_failure(tmp_path):
    tool = script(tmp_path / "tool", 'echo data; echo "completed OK!" >&2\n')
    extract = script(tmp_path / "extract", 'cat >/dev/null; echo "xbstream: bad stream" >&2; exit 2\n')
    with pytest.raises(BackupToolError, match="extractor extract failed") as ctx:
        run_step("backup", [tool], str(tmp_path / "b.log"), RunAs(), [extract],
                 str(tmp_path / "x.log"))
    assert "bad stream" in ctx.value.tool_message


def test_run_as_sets_tmpdir_and_env(tmp_path):
    assert RunAs(env={"A": "1"}, tmpdir="/w/tmp", cwd="/w").environment() == \
        {"A": "1", "TMPDIR": "/w/tmp"}
    assert RunAs().environment() == dict(os.environ)
    tool = script(tmp_path / "tool", 'echo "$TMPDIR $A $(pwd)"; echo "completed OK!" >&2\n')
    result = run_step("backup", [tool], str(tmp_path / "b.log"),
                      RunAs(env={"A": "1", "PATH": os.environ["PATH"]}, tmpdir="/w/tmp",
                            cwd=str(tmp_path)))
    assert f"/w/tmp 1 {tmp_path}" in open(result.log_path).read()


# ---------------------------------------------------------------- incremental chains
def backup_dir(tmp_path, name, backup_type, from_lsn, to_lsn, last_lsn):
    d = tmp_path / name
    d.mkdir()
    (d / "xtrabackup_checkpoints").write_text(
        f"backup_type = {backup_type}\nfrom_lsn = {from_lsn}\nto_lsn = {to_lsn}\n"
        f"last_lsn = {last_lsn}\n")
    return str(d)


def test_chain_in_order(tmp_path):
    full = backup_dir(tmp_path, "full", "full-backuped", 0, 100, 120)
    inc1 = backup_dir(tmp_path, "inc1", "incremental", 100, 200, 220)
    inc2 = backup_dir(tmp_path, "inc2", "incremental", 200, 200, 260)
    check_chain(full, [inc1, inc2])


def test_chain_gap_refused(tmp_path):
    full = backup_dir(tmp_path, "full", "full-backuped", 0, 100, 120)
    inc2 = backup_dir(tmp_path, "inc2", "incremental", 200, 300, 320)
    with pytest.raises(BackupInfoError, match="starts at LSN 200 but .*full ends at LSN 100"):
        check_chain(full, [inc2])


def test_chain_swapped_with_same_checkpoint_refused(tmp_path):
    # an idle server: both incrementals start at the full's checkpoint
    full = backup_dir(tmp_path, "full", "full-backuped", 0, 100, 120)
    inc1 = backup_dir(tmp_path, "inc1", "incremental", 100, 100, 150)
    inc2 = backup_dir(tmp_path, "inc2", "incremental", 100, 100, 180)
    check_chain(full, [inc1, inc2])
    with pytest.raises(BackupInfoError, match="was taken before"):
        check_chain(full, [inc2, inc1])


def test_chain_full_as_incremental_refused(tmp_path):
    full = backup_dir(tmp_path, "full", "full-backuped", 0, 100, 120)
    other = backup_dir(tmp_path, "other", "full-backuped", 0, 100, 130)
    with pytest.raises(BackupInfoError, match="not an incremental"):
        check_chain(full, [other])


def test_chain_without_checkpoints_is_left_to_the_tool(tmp_path):
    full = tmp_path / "full"
    full.mkdir()
    check_chain(str(full), [])


def test_check_prepared(tmp_path):
    prepared = backup_dir(tmp_path, "p", "log-applied", 0, 100, 120)
    check_prepared(prepared)
    raw = backup_dir(tmp_path, "r", "full-backuped", 0, 100, 120)
    with pytest.raises(RestoreError, match="not prepared"):
        check_prepared(raw)
    with pytest.raises(RestoreError, match="does not exist"):
        check_prepared(str(tmp_path / "missing"))


# ---------------------------------------------------------------- storage
class FakeServer:
    paths = SimpleNamespace(vardir="/w/bot0/var_s1")


def test_backups_root_is_next_to_vardirs():
    assert backups_root(FakeServer()) == "/w/bot0/backups"


def test_safe_label_and_unique_dir(tmp_path):
    assert safe_label("xtrabackup_basic.basic_test") == "xtrabackup_basic.basic_test"
    assert safe_label("a b/../c") == "a_b_.._c"
    assert safe_label("///") == "backups"
    first = unique_dir(str(tmp_path), "full")
    os.makedirs(first)
    assert first.endswith("/full")
    assert unique_dir(str(tmp_path), "full").endswith("/full-2")


def test_empty_datadir(tmp_path):
    data = tmp_path / "data"
    (data / "mysql").mkdir(parents=True)
    (data / "ibdata1").write_text("x")
    empty_datadir(str(data), None)
    assert os.listdir(data) == [] and stat.S_IMODE(os.stat(data).st_mode) == 0o750
    os.rmdir(data)
    empty_datadir(str(data), None)
    assert data.is_dir()


def test_empty_datadir_refuses_symlink(tmp_path):
    (tmp_path / "real").mkdir()
    os.symlink(tmp_path / "real", tmp_path / "data")
    with pytest.raises(RestoreError, match="symlink"):
        empty_datadir(str(tmp_path / "data"), None)


def test_chown_tree_counts_changes(tmp_path):
    (tmp_path / "d" / "sub").mkdir(parents=True)
    (tmp_path / "d" / "sub" / "f").write_text("x")
    uid, gid = os.getuid(), os.getgid()
    assert chown_tree(str(tmp_path / "d"), uid, gid) == 0
    if os.geteuid() == 0:
        assert chown_tree(str(tmp_path / "d"), 65534, 65534) == 3
        assert os.stat(tmp_path / "d" / "sub" / "f").st_uid == 65534


# ---------------------------------------------------------------- validation helpers
def test_normalize_dump_drops_auto_increment_table_option_only():
    text = (") ENGINE=InnoDB AUTO_INCREMENT=1024 DEFAULT CHARSET=latin1;\n"
            "INSERT INTO `t` VALUES (1,' AUTO_INCREMENT=5');\n")
    assert normalize_dump(text) == (") ENGINE=InnoDB DEFAULT CHARSET=latin1;\n"
                                    "INSERT INTO `t` VALUES (1,' AUTO_INCREMENT=5');\n")


def test_compare_checksum_maps():
    out = compare_checksum_maps({"`a`.`t1`": 1, "`a`.`t2`": 2, "`a`.`t3`": 3},
                                {"`a`.`t1`": 1, "`a`.`t2`": 9, "`a`.`t4`": 4}, "s0", "s1")
    assert out == ["`a`.`t2`: checksum 2 on s0 but 9 on s1", "`a`.`t3`: missing on s1",
                   "`a`.`t4`: only on s1"]


# ---------------------------------------------------------------- kewpie 2012 helpers
def test_datadir_from_cnf(tmp_path):
    cnf = tmp_path / "my.cnf"
    cnf.write_text("[client]\ndatadir=/wrong\n[mysqld]\nport=1\ndatadir=/w/var_s0/data\n")
    assert datadir_from_cnf(str(cnf)) == "/w/var_s0/data"
    assert datadir_from_cnf(str(tmp_path / "missing.cnf")) is None


def test_innobackupex_tool_uses_given_script_with_ibbackup(tmp_path):
    tool = innobackupex_tool("/opt/pxb/innobackupex", "/opt/pxb/xtrabackup")
    argv = tool.prepare_argv("/b/full", use_memory="500M")
    assert argv[:3] == ["/opt/pxb/innobackupex", "--no-defaults", "--apply-log"]
    assert "--ibbackup=/opt/pxb/xtrabackup" in argv and argv[-1] == "/b/full"


def test_innobackupex_tool_falls_back_to_mariabackup_mode(tmp_path):
    mariabackup = script(tmp_path / "mariabackup", "exit 0\n")
    tool = innobackupex_tool("", mariabackup)
    argv = tool.restore_argv("/w/my.cnf", "/b/full", "/w/data")
    assert argv == [mariabackup, "--innobackupex", "--defaults-file=/w/my.cnf", "--copy-back",
                    "/b/full"]


def test_run_step_tool_and_extractor_both_fail(tmp_path):
    tool = script(tmp_path / "tool", 'echo "[ERROR] write failed" >&2; exit 1\n')
    extract = script(tmp_path / "extract", 'cat >/dev/null; exit 2\n')
    with pytest.raises(BackupToolError, match=r"failed \(exit 1\) and so did the stream extractor "
                                              r"\(exit 2") as ctx:
        run_step("backup", [tool], str(tmp_path / "b.log"), RunAs(), [extract],
                 str(tmp_path / "x.log"))
    assert ctx.value.tool_message == "write failed"
