"""A sweep file's matrix and its checks: dimensions, cells, labels, clusters and node
lists, engines and the trees that lack them, the TPC-C-like scale, and how cells
become data sets and runs.

Covers: lib/sysbench/matrix.py, lib/sysbench/sweep.py, lib/sysbench/engines.py,
lib/sysbench/runner.py (data sets, variable settings), lib/sysbench/interleave.py,
lib/sysbench/tool.py (workload arguments), lib/servers/codetree.py (plugin_dir)
"""
import os

import pytest

from lib.errors import UsageError
from lib.servers.codetree import CodeTree
from lib.sysbench.engines import plugin_options, resolve_engine
from lib.sysbench.interleave import turn_order
from lib.sysbench.matrix import Cell, Matrix
from lib.sysbench.runner import data_set_name, safe_name, variable_points
from lib.sysbench.sweep import SweepSpec
from lib.sysbench.tool import Workload, known_workloads, shipped_script

BASE = {"name": "m", "workload": "oltp_point_select", "threads": [1, 2]}


def spec(**extra):
    return SweepSpec.from_dict({**BASE, **extra})


def test_cells_are_every_combination_in_order_and_name_what_varies():
    grid = Matrix.parse({"engine": ["InnoDB", "RocksDB"], "reconnect": [0, 1], "tables": [4]})
    assert [c.run_key for c in grid.cells] == [("InnoDB", 4, 0, None), ("InnoDB", 4, 1, None),
                                               ("RocksDB", 4, 0, None), ("RocksDB", 4, 1, None)]
    assert grid.varied == ("engine", "reconnect") and grid.given == ("engine", "tables", "reconnect")
    assert grid.cells[3].label(grid.varied) == "engine=RocksDB reconnect=1"
    assert grid.values_of("engine") == ["InnoDB", "RocksDB"]
    assert Matrix.parse(None).cells == (Cell(),)


def test_variables_as_a_product_or_as_settings_of_several_at_once():
    product = Matrix.parse({"variables": {"sync_binlog": [0, 1],
                                          "innodb_flush_log_at_trx_commit": [0, 1]}})
    assert len(product.cells) == 4
    assert product.cells[1].variables == (("sync_binlog", 0), ("innodb_flush_log_at_trx_commit", 1))
    together = Matrix.parse({"variables": [{"sync_binlog": 0, "innodb_flush_log_at_trx_commit": 0},
                                           {"sync_binlog": 1, "innodb_flush_log_at_trx_commit": 1}]})
    assert [c.label(together.varied) for c in together.cells] == \
        ["sync_binlog=0 innodb_flush_log_at_trx_commit=0",
         "sync_binlog=1 innodb_flush_log_at_trx_commit=1"]
    assert together.variable_points == [c.variables for c in together.cells]


@pytest.mark.parametrize("raw, message", [
    ([["engine", "InnoDB"]], "must be an object"),
    ({"engines": ["InnoDB"]}, "unknown dimension"),
    ({"engine": "InnoDB"}, "'engine' must be a non-empty list"),
    ({"engine": []}, "non-empty list"),
    ({"engine": ["Inno DB"]}, "engine names"),
    ({"tables": [0, 4]}, "integers >= 1"),
    ({"reconnect": [-1]}, "integers >= 0"),
    ({"nodes": [True]}, "integers >= 1"),
    ({"reconnect": [1, 1]}, "twice"),
    ({"variables": {"Bad-Name": [1]}}, "not a server variable name"),
    ({"variables": {"sync_binlog": []}}, "non-empty list"),
    ({"variables": [{"sync_binlog": [1]}]}, "string or a number"),
    ({"variables": "sync_binlog=1"}, "must be"),
])
def test_malformed_matrix_is_a_usage_error(raw, message):
    with pytest.raises(UsageError, match=message):
        Matrix.parse(raw)


def test_node_lists_need_a_cluster_of_that_many_servers():
    with pytest.raises(UsageError, match="one server"):
        spec(matrix={"nodes": [1, 3]})
    with pytest.raises(UsageError, match="2 servers"):
        spec(matrix={"nodes": [1, 3]}, cluster={"type": "galera", "nodes": 2})
    ok = spec(matrix={"nodes": [1, 3]}, cluster={"type": "galera", "nodes": 3})
    assert (ok.cluster_size, ok.cluster_type, ok.server_type) == (3, "galera", "galera")
    assert spec(cluster={"type": "replication", "nodes": 2}).server_type == "mysql"
    for bad in ({"type": "ndb", "nodes": 3}, {"type": "galera", "nodes": 1},
                {"type": "galera", "nodes": 3, "extra": 1}, {"type": "galera"}):
        with pytest.raises(UsageError, match="'cluster'"):
            spec(cluster=bad)
    with pytest.raises(UsageError, match="replicas take no writes"):
        SweepSpec.from_dict({**BASE, "workload": "oltp_read_write", "matrix": {"nodes": [1, 2]},
                             "cluster": {"type": "replication", "nodes": 2}})


def test_engines_known_gone_and_not_with_galera():
    assert resolve_engine("innodb", None).name == "InnoDB"
    assert resolve_engine("MyRocks", None).plugin == "ha_rocksdb"
    assert not resolve_engine("Aria", None).transactional
    with pytest.raises(UsageError, match="removed from MariaDB in 10.6"):
        resolve_engine("TokuDB", None)
    with pytest.raises(UsageError, match="not an engine kewpie knows"):
        resolve_engine("Falcon", None)
    with pytest.raises(UsageError, match="Galera replicates InnoDB only"):
        spec(matrix={"engine": ["InnoDB", "RocksDB"]}, cluster={"type": "galera", "nodes": 3})
    assert plugin_options([resolve_engine(e, None) for e in ("InnoDB", "RocksDB", "myrocks")]) \
        == ["--plugin-load-add=ha_rocksdb"]


def test_a_tree_without_the_plugin_lacks_the_engine(tmp_path):
    plugins = tmp_path / "usr" / "lib" / "mysql" / "plugin"
    plugins.mkdir(parents=True)
    tree = CodeTree(basedir=str(tmp_path / "usr"))
    assert tree.plugin_dir() == str(plugins)
    with pytest.raises(UsageError, match="lacks it .*ha_rocksdb.so is not in .*mariadb-plugin-rocksdb"):
        resolve_engine("RocksDB", tree)
    (plugins / "ha_rocksdb.so").write_bytes(b"")
    assert resolve_engine("RocksDB", tree).name == "RocksDB"
    assert resolve_engine("Aria", CodeTree(basedir=str(tmp_path / "none"))).name == "Aria"


def test_tpcc_like_scale_and_the_other_spec_checks():
    tpcc = SweepSpec.from_dict({**BASE, "workload": "tpcc_like", "warehouses": 2, "items": 1000,
                                "customers": 30})
    assert tpcc.tpcc_scale() == {"warehouses": 2, "items": 1000, "customers": 30}
    with pytest.raises(UsageError, match="scales by 'warehouses'"):
        SweepSpec.from_dict({**BASE, "workload": "tpcc_like", "matrix": {"tables": [1, 4]}})
    with pytest.raises(UsageError, match="TPC-C-like workload's scale"):
        spec(warehouses=2)
    with pytest.raises(UsageError, match="positive integer"):
        SweepSpec.from_dict({**BASE, "workload": "tpcc_like", "warehouses": 0})
    with pytest.raises(UsageError, match="'storage'"):
        spec(storage="tape")
    with pytest.raises(UsageError, match="'protocol'"):
        spec(protocol="pipe")
    with pytest.raises(UsageError, match="either as 'variable' or in 'matrix'"):
        spec(variable={"name": "sync_binlog", "values": [0, 1]},
             matrix={"variables": {"sync_binlog": [0, 1]}})
    assert spec(total_rows=100000).table_layout(8) == (8, 12500)
    assert spec(table_size=500).table_layout(None) == (4, 500)
    assert "tpcc_like" in known_workloads()
    assert os.path.isfile(shipped_script("tpcc_like")) and os.path.isfile(shipped_script("reconnect.lua"))


def test_cells_become_data_sets_runs_and_settings():
    legacy = spec(variable={"name": "sync_binlog", "values": [0, 1]})
    assert variable_points(legacy) == (True, [(("sync_binlog", 0),), (("sync_binlog", 1),)])
    assert variable_points(spec()) == (True, [()])
    joined = spec(variable={"name": "sync_binlog", "values": [0, 1]}, matrix={"reconnect": [0, 1]})
    assert variable_points(joined)[0] is False and len(joined.grid().cells) == 4
    assert data_set_name(spec(), Cell()) == "sbtest"
    assert data_set_name(spec(), Cell(engine="RocksDB", tables=8)) == "sbtest_rocksdb_8t"
    tpcc = SweepSpec.from_dict({**BASE, "workload": "tpcc_like"})
    assert data_set_name(tpcc, Cell(engine="InnoDB")) == "tpcc_like_innodb"
    assert safe_name("engine=RocksDB reconnect=1") == "engine=RocksDB_reconnect=1"
    assert turn_order(["a", "b"], 2) == ["b", "a"]


def test_workload_arguments():
    stock = Workload("oltp_point_select", 4, 100, "sbtest_x", "RocksDB", options=["--rand-type=uniform"])
    assert stock.script_args() == ["oltp_point_select"]
    wrapped = stock.script_args(reconnect=5)
    assert wrapped[0].endswith("sysbench/reconnect.lua") and wrapped[1:] == \
        ["--workload=oltp_point_select", "--reconnect=5"]
    assert stock.data_args() == ["--tables=4", "--table-size=100", "--mysql_storage_engine=RocksDB",
                                 "--rand-type=uniform"]
    tpcc = Workload("tpcc_like", scale={"warehouses": 2, "items": 1000})
    assert tpcc.script_args(3)[0].endswith("sysbench/tpcc_like.lua") and \
        tpcc.script_args(3)[1] == "--reconnect=3"
    assert tpcc.data_args() == ["--items=1000", "--warehouses=2"]
