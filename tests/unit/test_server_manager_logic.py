"""Unit tests for the pure logic of lib/servers/manager.py: fingerprint_changes."""
from lib.servers.manager import fingerprint_changes


def fp(pid=100, counters=None, variables=None):
    return {"pid": pid, "counters": dict(counters or {}), "variables": dict(variables or {})}


# ---------------------------------------------------------------- fingerprint_changes

def test_equal_fingerprints_have_no_changes():
    a = fp(counters={"Com_insert": "0"}, variables={"autocommit": "ON"})
    b = fp(counters={"Com_insert": "0"}, variables={"autocommit": "ON"})
    assert fingerprint_changes(a, b) == []


def test_empty_fingerprints_have_no_changes():
    assert fingerprint_changes({}, {}) == []


def test_pid_change_is_restarted_only():
    a = fp(pid=100, counters={"Com_insert": "0"})
    b = fp(pid=101, counters={"Com_insert": "5"}, variables={"x": "1"})
    assert fingerprint_changes(a, b) == ["restarted"]


def test_missing_baseline_counts_as_restarted():
    assert fingerprint_changes({}, fp(pid=7)) == ["restarted"]


def test_counter_change_listed():
    a = fp(counters={"Com_insert": "0", "Com_update": "2"})
    b = fp(counters={"Com_insert": "3", "Com_update": "2"})
    assert fingerprint_changes(a, b) == ["Com_insert 0->3"]


def test_variable_change_listed():
    a = fp(variables={"max_connections": "151", "autocommit": "ON"})
    b = fp(variables={"max_connections": "10", "autocommit": "ON"})
    assert fingerprint_changes(a, b) == ["max_connections 151->10"]


def test_added_and_removed_keys_listed():
    a = fp(counters={"Com_drop_table": "1"}, variables={"old_var": "x"})
    b = fp(counters={"Com_create_table": "1"}, variables={"new_var": "y"})
    assert fingerprint_changes(a, b) == ["Com_create_table None->1", "Com_drop_table 1->None",
                                         "new_var None->y", "old_var x->None"]


def test_changes_sorted_counters_before_variables():
    a = fp(counters={"b": "1", "a": "1"}, variables={"z": "1", "c": "1"})
    b = fp(counters={"b": "2", "a": "2"}, variables={"z": "2", "c": "2"})
    assert fingerprint_changes(a, b) == ["a 1->2", "b 1->2", "c 1->2", "z 1->2"]


def test_long_values_are_truncated():
    a = fp(variables={"init_connect": "x" * 100})
    b = fp(variables={"init_connect": "y" * 100})
    assert fingerprint_changes(a, b) == [f"init_connect {'x' * 20}->{'y' * 20}"]


def test_fingerprints_not_mutated():
    a = fp(counters={"Com_insert": "0"})
    b = fp(counters={"Com_insert": "1"})
    fingerprint_changes(a, b)
    assert a == fp(counters={"Com_insert": "0"})
    assert b == fp(counters={"Com_insert": "1"})
