"""kewpie 2012's ``lib.util.xtrabackup_methods``: the innobackupex helpers under their
old module name (see :mod:`lib.kewpie2012.backup_methods`)."""
from .backup_methods import (datadir_from_cnf, innobackupex_backup, innobackupex_prepare,
                             innobackupex_restore, innobackupex_tool)
from .mysql_methods import execute_cmd

__all__ = ("datadir_from_cnf", "execute_cmd", "innobackupex_backup", "innobackupex_prepare",
           "innobackupex_restore", "innobackupex_tool")
