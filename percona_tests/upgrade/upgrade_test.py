"""A datadir made and loaded by the old tree, started by the new tree, upgraded, checked:
CHECK TABLE, and row counts and checksums equal to before the upgrade."""
import os

from lib import KewpieTestCase, SHIPPED, get_logger, run_upgrade

GRAMMAR = SHIPPED["transactions"]
SCHEMAS = ["test", "shop"]


def row_counts(server, schemas):
    """{schema.table: rows} of every base table in schemas."""
    marks = ", ".join(["%s"] * len(schemas))
    tables = server.execute("SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES "
                            f"WHERE TABLE_TYPE='BASE TABLE' AND TABLE_SCHEMA IN ({marks}) "
                            "ORDER BY 1, 2", schemas)
    return {f"{s}.{t}": server.execute(f"SELECT COUNT(*) FROM `{s}`.`{t}`")[0][0]
            for s, t in tables}


class UpgradeTest(KewpieTestCase):

    def load_on_old_tree(self, server):
        """randgen gendata and a transactional load, plus other engines and objects."""
        result = self.randgen(server, grammar=GRAMMAR.grammar, gendata=GRAMMAR.gendata,
                              queries=300, threads=2)
        self.assertEqual(result.check(allowed_errors=GRAMMAR.expected_errors), [],
                         result.summary())
        server.execute("CREATE DATABASE shop")
        for engine in ("InnoDB", "MyISAM", "Aria"):
            server.execute(f"CREATE TABLE shop.items_{engine.lower()} (id INT PRIMARY KEY "
                           f"AUTO_INCREMENT, name VARCHAR(32), qty INT, KEY (name)) ENGINE={engine}")
            server.execute(f"INSERT INTO shop.items_{engine.lower()} (name, qty) "
                           "SELECT CONCAT('item', seq), seq % 17 FROM shop.seq_1_to_500")
        server.execute("CREATE VIEW shop.stock AS SELECT name, SUM(qty) AS qty "
                       "FROM shop.items_innodb GROUP BY name")
        server.execute("CREATE PROCEDURE shop.restock(n INT) UPDATE shop.items_innodb "
                       "SET qty = qty + n")
        server.execute("CREATE USER 'clerk'@'localhost' IDENTIFIED BY 'pw'")
        server.execute("GRANT SELECT, EXECUTE ON shop.* TO 'clerk'@'localhost'")

    def test_old_datadir_upgraded_by_new_tree(self):
        server = self.servers[0]
        old_tree = server.tree
        old = server.variable("version")
        for variable in ("basedir", "plugin_dir", "lc_messages_dir", "character_sets_dir"):
            if old_tree.relocated:  # the unpacked tree's own share files, errmsg and plugins
                self.assertTrue(server.variable(variable).startswith(old_tree.basedir),
                                f"{variable} = {server.variable(variable)}")
        self.load_on_old_tree(server)
        counts = row_counts(server, SCHEMAS)
        snapshot = self.snapshot(server, SCHEMAS)

        server.restart(basedir="new")
        new = server.variable("version")
        self.assertNotEqual(server.tree.basedir, old_tree.basedir)
        self.assertNotEqual(old, new)
        # Within 10.11 mariadb-upgrade says "already upgraded" unless forced: force it, so
        # every phase (system tables, mariadb-check of every table) runs on the new tree.
        output = run_upgrade(server, force=True)
        self.assertRegex(output, r"Phase \d+/\d+: Checking and upgrading tables")
        self.assertRegex(output, r"test\.t1 +OK")
        self.assertTrue(output.rstrip().endswith("OK"), output[-2000:])
        with open(os.path.join(server.paths.datadir, "mysql_upgrade_info")) as fh:
            self.assertEqual(fh.read().strip("\0\n "), new.split("-")[0] + "-MariaDB")

        self.assertTablesCheck(server, SCHEMAS + ["mysql"])
        self.assertEqual(row_counts(server, SCHEMAS), counts)
        self.assertMatchesSnapshot(snapshot, server)
        server.execute("CALL shop.restock(1)")  # routines, views and grants still work
        self.assertEqual(server.execute("SELECT COUNT(*) FROM shop.stock")[0][0], 500)
        self.assertIn(("clerk",), server.execute("SELECT user FROM mysql.user"))
        get_logger().info(f"upgrade: {old} ({old_tree.basedir}) -> {new} "
                          f"({server.tree.basedir}): {len(counts)} tables, "
                          f"{sum(counts.values())} rows, equal after mariadb-upgrade")
