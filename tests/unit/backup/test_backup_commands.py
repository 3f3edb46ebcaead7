"""Command construction of the backup tools: mariabackup, xtrabackup, innobackupex.

Covers: lib/backup/tool.py, lib/backup/mariabackup.py, lib/backup/xtrabackup.py,
lib/backup/choose.py
"""
import os

import pytest

from lib.backup.mariabackup import MariaBackup, MariaBackupInnobackupex
from lib.backup.choose import select_tool
from lib.backup.xtrabackup import InnoBackupEx, XtraBackup
from lib.servers.codetree import CodeTree
from lib.errors import CodeTreeError

CNF = "/w/bot0/var_s0/my.cnf"
SOCK = "/w/bot0/var_s0/my.sock"
B = "/w/bot0/backups/t"


def mb():
    return MariaBackup("/usr/bin/mariadb-backup", "/usr/bin/mbstream")


def xb():
    return XtraBackup("/opt/pxb/bin/xtrabackup", "/opt/pxb/bin/xbstream")


def ibx(ibbackup=None):
    return InnoBackupEx("/opt/pxb/bin/innobackupex", "/opt/pxb/bin/xbstream", ibbackup=ibbackup)


# ---------------------------------------------------------------- every tool: defaults first
@pytest.mark.parametrize("tool", [mb(), xb(), ibx("/opt/pxb/bin/xtrabackup")], ids=lambda t: t.name)
def test_defaults_option_comes_first(tool):
    backup = tool.backup_command(CNF, f"{B}/full", SOCK).argv
    prepare = tool.prepare_argv(f"{B}/full")
    restore = tool.restore_argv(CNF, f"{B}/full", "/w/bot0/var_s1/data")
    assert backup[1] == f"--defaults-file={CNF}"
    assert prepare[1] == "--no-defaults"
    assert restore[1] == f"--defaults-file={CNF}"


def test_mariabackup_innobackupex_mode_puts_defaults_after_the_mode_switch():
    tool = MariaBackupInnobackupex("/usr/bin/mariabackup", "/usr/bin/mbstream")
    argv = tool.backup_command(CNF, f"{B}/full", SOCK).argv
    assert argv[:3] == ["/usr/bin/mariabackup", "--innobackupex", f"--defaults-file={CNF}"]
    assert argv[-1] == f"{B}/full"
    assert "--no-timestamp" in argv and not any(a.startswith("--ibbackup") for a in argv)
    assert tool.prepare_argv(f"{B}/full")[:4] == ["/usr/bin/mariabackup", "--innobackupex",
                                                  "--no-defaults", "--apply-log"]


# ---------------------------------------------------------------- mariabackup
def test_mariabackup_full_backup():
    cmd = mb().backup_command(CNF, f"{B}/full", SOCK)
    assert cmd.argv == ["/usr/bin/mariadb-backup", f"--defaults-file={CNF}", "--backup",
                        f"--target-dir={B}/full", "--user=root", f"--socket={SOCK}"]
    assert cmd.extract_argv is None and not cmd.streamed


def test_mariabackup_incremental_parallel_tmpdir():
    argv = mb().backup_command(CNF, f"{B}/inc1", SOCK, incremental_basedir=f"{B}/full",
                               parallel=4, tmpdir=f"{B}/tmp").argv
    assert f"--incremental-basedir={B}/full" in argv
    assert "--parallel=4" in argv
    assert f"--tmpdir={B}/tmp" in argv
    assert argv.index("--backup") < argv.index(f"--incremental-basedir={B}/full")


def test_mariabackup_stream_pipes_mbstream_into_extraction():
    cmd = mb().backup_command(CNF, f"{B}/s", SOCK, parallel=8, stream=True)
    assert "--stream=mbstream" in cmd.argv
    assert not any(a.startswith("--target-dir") for a in cmd.argv)   # stdout is the backup
    assert cmd.streamed
    assert cmd.extract_argv == ["/usr/bin/mbstream", "-x", "-C", f"{B}/s", "--parallel=8"]


def test_mariabackup_galera_info_and_extra_args():
    argv = mb().backup_command(CNF, f"{B}/g", SOCK, galera_info=True,
                               extra=["--no-lock"]).argv
    assert "--galera-info" in argv and argv[-1] == "--no-lock"


def test_mariabackup_prepare_plan_has_no_apply_log_only():
    plan = mb().prepare_plan(f"{B}/full", [f"{B}/inc1", f"{B}/inc2"], tmpdir=f"{B}/tmp")
    assert plan == [
        ["/usr/bin/mariadb-backup", "--no-defaults", "--prepare", f"--target-dir={B}/full",
         f"--tmpdir={B}/tmp"],
        ["/usr/bin/mariadb-backup", "--no-defaults", "--prepare", f"--target-dir={B}/full",
         f"--incremental-dir={B}/inc1", f"--tmpdir={B}/tmp"],
        ["/usr/bin/mariadb-backup", "--no-defaults", "--prepare", f"--target-dir={B}/full",
         f"--incremental-dir={B}/inc2", f"--tmpdir={B}/tmp"],
    ]


@pytest.mark.parametrize("method", ["copy-back", "move-back"])
def test_mariabackup_restore(method):
    argv = mb().restore_argv(CNF, f"{B}/full", "/w/bot0/var_s1/data", method, parallel=2)
    assert argv == ["/usr/bin/mariadb-backup", f"--defaults-file={CNF}", f"--{method}",
                    f"--target-dir={B}/full", "--datadir=/w/bot0/var_s1/data", "--parallel=2"]


def test_restore_method_checked():
    with pytest.raises(ValueError, match="copy-back"):
        mb().restore_argv(CNF, f"{B}/full", "/d", "rsync-back")


def test_stream_without_extractor_is_a_clear_error():
    tool = MariaBackup("/usr/bin/mariadb-backup", None)
    with pytest.raises(CodeTreeError, match="mbstream"):
        tool.backup_command(CNF, f"{B}/s", SOCK, stream=True)


# ---------------------------------------------------------------- xtrabackup
def test_xtrabackup_full_and_incremental():
    full = xb().backup_command(CNF, f"{B}/full", SOCK).argv
    assert full == ["/opt/pxb/bin/xtrabackup", f"--defaults-file={CNF}", "--backup",
                    f"--target-dir={B}/full", "--user=root", f"--socket={SOCK}"]
    inc = xb().backup_command(CNF, f"{B}/inc1", SOCK, incremental_basedir=f"{B}/full",
                              parallel=4).argv
    assert f"--incremental-basedir={B}/full" in inc and "--parallel=4" in inc


def test_xtrabackup_stream_xbstream_with_scratch_target_dir():
    cmd = xb().backup_command(CNF, f"{B}/s", SOCK, parallel=4, stream=True, tmpdir=f"{B}/tmp")
    assert "--stream=xbstream" in cmd.argv
    assert f"--target-dir={B}/tmp" in cmd.argv        # scratch space, not the destination
    assert cmd.extract_argv == ["/opt/pxb/bin/xbstream", "-x", "-C", f"{B}/s", "--parallel=4"]


def test_xtrabackup_prepare_apply_log_only_for_all_but_the_last():
    plan = xb().prepare_plan(f"{B}/full", [f"{B}/inc1", f"{B}/inc2"], use_memory="256M")
    assert ["--apply-log-only" in argv for argv in plan] == [True, True, False]
    assert all("--use-memory=256M" in argv for argv in plan)
    assert [a for a in plan[1] if a.startswith("--incremental-dir")] == [f"--incremental-dir={B}/inc1"]
    assert [a for a in plan[2] if a.startswith("--incremental-dir")] == [f"--incremental-dir={B}/inc2"]


def test_xtrabackup_full_only_prepare_has_no_apply_log_only():
    assert xb().prepare_plan(f"{B}/full") == [
        ["/opt/pxb/bin/xtrabackup", "--no-defaults", "--prepare", f"--target-dir={B}/full"]]


@pytest.mark.parametrize("method", ["copy-back", "move-back"])
def test_xtrabackup_restore(method):
    argv = xb().restore_argv(CNF, f"{B}/full", "/d", method)
    assert argv == ["/opt/pxb/bin/xtrabackup", f"--defaults-file={CNF}", f"--{method}",
                    f"--target-dir={B}/full", "--datadir=/d"]


# ---------------------------------------------------------------- innobackupex
def test_innobackupex_backup_positional_dir_and_ibbackup():
    argv = ibx("/opt/pxb/bin/xtrabackup").backup_command(CNF, f"{B}/full", SOCK).argv
    assert argv == ["/opt/pxb/bin/innobackupex", f"--defaults-file={CNF}", "--user=root",
                    f"--socket={SOCK}", "--no-timestamp", "--ibbackup=/opt/pxb/bin/xtrabackup",
                    f"{B}/full"]


def test_innobackupex_incremental_and_parallel():
    argv = ibx().backup_command(CNF, f"{B}/inc1", SOCK, incremental_basedir=f"{B}/full",
                                parallel=4).argv
    i = argv.index("--incremental")
    assert argv[i + 1] == f"--incremental-basedir={B}/full"
    assert "--parallel=4" in argv and argv[-1] == f"{B}/inc1"


def test_innobackupex_stream_uses_scratch_dir_positionally():
    cmd = ibx().backup_command(CNF, f"{B}/s", SOCK, stream=True, tmpdir=f"{B}/tmp", parallel=2)
    assert "--stream=xbstream" in cmd.argv and cmd.argv[-1] == f"{B}/tmp"
    assert cmd.extract_argv == ["/opt/pxb/bin/xbstream", "-x", "-C", f"{B}/s", "--parallel=2"]


def test_innobackupex_prepare_redo_only_then_incremental_dirs():
    plan = ibx().prepare_plan(f"{B}/full", [f"{B}/inc1", f"{B}/inc2"])
    assert plan[0] == ["/opt/pxb/bin/innobackupex", "--no-defaults", "--apply-log", "--redo-only",
                       f"{B}/full"]
    assert plan[1] == ["/opt/pxb/bin/innobackupex", "--no-defaults", "--apply-log", "--redo-only",
                       f"{B}/full", f"--incremental-dir={B}/inc1"]
    assert plan[2] == ["/opt/pxb/bin/innobackupex", "--no-defaults", "--apply-log", f"{B}/full",
                       f"--incremental-dir={B}/inc2"]


@pytest.mark.parametrize("method", ["copy-back", "move-back"])
def test_innobackupex_restore_takes_datadir_from_defaults_file(method):
    argv = ibx("/x/xtrabackup").restore_argv(CNF, f"{B}/full", "/ignored", method)
    assert argv == ["/opt/pxb/bin/innobackupex", f"--defaults-file={CNF}", f"--{method}",
                    "--ibbackup=/x/xtrabackup", f"{B}/full"]


# ---------------------------------------------------------------- choosing the tool
def _exe(path):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return str(path)


def test_select_prefers_xtrabackup_path(tmp_path):
    xtra = _exe(tmp_path / "pxb" / "xtrabackup")
    stream = _exe(tmp_path / "pxb" / "xbstream")
    tree = CodeTree("/usr", tools={"mariabackup": "/usr/bin/mariadb-backup"})
    tool = select_tool(tree, xtra)
    assert isinstance(tool, XtraBackup) and tool.path == xtra and tool.extractor == stream


def test_select_mariabackup_given_as_xtrabackup_path(tmp_path):
    path = _exe(tmp_path / "bin" / "mariabackup")
    _exe(tmp_path / "bin" / "mbstream")
    tool = select_tool(CodeTree("/usr"), path)
    assert isinstance(tool, MariaBackup)
    assert tool.extractor == os.path.join(str(tmp_path), "bin", "mbstream")


def test_select_tree_mariabackup_then_xtrabackup():
    tree = CodeTree("/usr", tools={"mariabackup": "/usr/bin/mariadb-backup",
                                   "xtrabackup": "/usr/bin/xtrabackup"})
    assert isinstance(select_tool(tree), MariaBackup)
    tree = CodeTree("/opt/ps", tools={"xtrabackup": "/opt/ps/bin/xtrabackup"})
    assert isinstance(select_tool(tree), XtraBackup)


def test_select_without_any_tool_names_the_search():
    tree = CodeTree("/opt/none", searched={"mariabackup": ["/opt/none/bin/mariabackup"],
                                           "xtrabackup": ["/opt/none/bin/xtrabackup"]})
    with pytest.raises(CodeTreeError) as ctx:
        select_tool(tree)
    assert "--xtrabackup-path" in str(ctx.value) and "/opt/none/bin/xtrabackup" in str(ctx.value)


def test_select_bad_xtrabackup_path():
    with pytest.raises(CodeTreeError, match="no such executable"):
        select_tool(CodeTree("/usr"), "/nonexistent/xtrabackup")
