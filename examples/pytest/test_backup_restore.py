"""Back up with mariabackup, wipe, restore: the server holds the same data."""
import pytest

from lib import create_tables


@pytest.mark.kewpie(server_requirements=[["--innodb-file-per-table"]])
def test_backup_prepare_restore(kewpie):
    server = kewpie.servers[0]
    create_tables(server, "shop", tables=3, rows=200, engines=("InnoDB", "Aria"))
    before = kewpie.snapshot(server, ["shop"])

    backups = kewpie.backups(server)       # kept in the bot's dir when the test fails
    full = backups.backup("full")
    assert full.step.ok, full.step
    server.stop()
    prepared = backups.prepare(full)
    backups.restore(prepared, server)      # empties the datadir, copies back, starts
    assert server.is_alive()

    kewpie.assertMatchesSnapshot(before, server)
    kewpie.assertTablesCheck(server, ["shop"])
