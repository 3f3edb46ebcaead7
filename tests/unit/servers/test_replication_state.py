"""A replica whose replication thread stopped is told from one that only reconnects,
with the thread's error quoted (what every wait for replicas fails on at once).

Covers: lib/servers/replication.py (replica_stopped)
"""
from lib.servers.replication import replica_stopped

RUNNING = {"Slave_IO_Running": "Yes", "Slave_SQL_Running": "Yes", "Last_SQL_Errno": 0,
           "Last_SQL_Error": "", "Last_IO_Errno": 0, "Last_IO_Error": ""}


def test_running_or_reconnecting_threads_are_no_stop():
    assert replica_stopped(RUNNING) == ""
    assert replica_stopped(dict(RUNNING, Slave_IO_Running="Connecting", Last_IO_Errno=2003,
                                Last_IO_Error="error connecting to master")) == ""


def test_a_stopped_sql_thread_quotes_last_sql_error():
    status = dict(RUNNING, Slave_SQL_Running="No", Last_SQL_Errno=1062,
                  Last_SQL_Error="Could not execute Write_rows_v1 event on table test.t1; "
                                 "Duplicate entry '1' for key 'PRIMARY'")
    assert replica_stopped(status) == (
        "the replica's SQL thread stopped: Last_SQL_Error (1062): Could not execute "
        "Write_rows_v1 event on table test.t1; Duplicate entry '1' for key 'PRIMARY'")


def test_a_stopped_io_thread_quotes_last_io_error():
    status = dict(RUNNING, Slave_IO_Running="No", Last_IO_Errno=1236,
                  Last_IO_Error="Got fatal error 1236 from master")
    assert replica_stopped(status) == ("the replica's IO thread stopped: Last_IO_Error (1236): "
                                       "Got fatal error 1236 from master")
    assert "not running (Last_SQL_Error is empty)" in replica_stopped(
        dict(RUNNING, Slave_SQL_Running="No"))


def test_a_server_that_is_no_replica_is_said_so():
    assert replica_stopped({}) == "not configured as a replica"
