"""Unit tests for the pure logic of the reuse rule: lib/servers/fingerprint.py
(changed_parts, describe_changes, the SQL it builds) and lib/servers/spare.py paths.

Covers: lib/servers/fingerprint.py, lib/servers/spare.py
"""
from lib.servers.fingerprint import (VOLATILE_VARIABLES, Fingerprint, Part, StateProbe,
                                     base_parts, changed_parts, describe_changes, describe_rows)
from lib.servers.spare import spare_path


def fp(pid=100, details=None, test_objects=0, **parts):
    return Fingerprint(pid, dict(parts), test_objects, dict(details or {}))


def test_equal_fingerprints_have_no_changes():
    assert changed_parts(fp(tables="3:99"), fp(tables="3:99")) == []


def test_pid_change_is_restarted_only():
    assert changed_parts(fp(pid=1, tables="1:1"), fp(pid=2, tables="2:2")) == ["restarted"]


def test_missing_baseline_counts_as_restarted():
    assert changed_parts(None, fp()) == ["restarted"]


def test_changed_parts_sorted():
    before = fp(variables="1:1", tables="1:1", schemas="1:1")
    after = fp(variables="1:2", tables="2:1", schemas="1:1")
    assert changed_parts(before, after) == ["tables", "variables"]


def test_test_objects_do_not_count_as_a_change():
    assert changed_parts(fp(tables="1:1"), fp(tables="1:1", test_objects=3)) == []


def test_describe_rows_added_removed_changed():
    old = {"db1.t1": "db1|t1|BASE TABLE", "max_connections": "max_connections|151"}
    new = {"db2.t2": "db2|t2|BASE TABLE", "max_connections": "max_connections|10"}
    assert describe_rows(old, new) == "-db1.t1, +db2.t2, max_connections 151->10"


def test_describe_rows_limits():
    assert describe_rows({}, {str(i): "x" for i in range(6)}, limit=2) == "+0, +1 (+4 more)"


def test_describe_changes_without_details_names_parts():
    assert describe_changes(fp(), fp(), ["tables", "variables"]) == "tables, variables"


def test_describe_changes_with_details():
    before = fp(details={"mysql_global_priv": {"localhost.root": "localhost|root|{}"}})
    after = fp(details={"mysql_global_priv": {"localhost.root": "localhost|root|{}",
                                              "%.joe": "%|joe|{}"}})
    assert describe_changes(before, after, ["mysql_global_priv"]) == "mysql_global_priv (+%.joe)"


def test_part_hash_is_count_and_sum_without_group_concat():
    sql = Part("x", "FROM t", ("a", "b")).hash_sql()
    assert "GROUP_CONCAT" not in sql and "COUNT(*)" in sql and "SUM(CAST(CONV(LEFT(MD5(" in sql
    assert "IFNULL(a, '\\\\N')" in sql


def test_base_parts_exclude_test_and_volatile_variables():
    parts = {p.name: p for p in base_parts(("sys_config",))}
    assert "'test'" in parts["tables"].source and "'sys_config'" in parts["tables"].source
    for name in VOLATILE_VARIABLES:
        assert f"'{name}'" in parts["variables"].source
    assert {"schemas", "routines", "events", "triggers", "views", "plugins", "status",
            "transactions", "sessions"} <= set(parts)


class FakeServer:
    name = "s0"

    def __init__(self):
        self.statements = []

    def execute(self, sql, args=None, db=None):
        self.statements.append(sql)
        if "GROUP_CONCAT" in sql:
            return [("mysql", "db", "Host,Db,User"), ("sys", "sys_config", "variable,value")]
        return [tuple([0] + ["1:1"] * 40)]


def test_probe_is_one_round_trip_after_it_is_built():
    server = FakeServer()
    probe = StateProbe(server)
    assert "mysql_db" in probe.by_name
    assert "`Host`" in probe.by_name["mysql_db"].columns
    server.statements.clear()
    print1 = probe.take(7)
    assert len(server.statements) == 1 and print1.pid == 7 and print1.test_objects == 0


def test_spare_path_next_to_vardir():
    assert spare_path("/x/bot0/var_s0/") == "/x/bot0/var_s0.spare"
