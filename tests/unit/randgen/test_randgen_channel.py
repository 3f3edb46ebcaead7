"""Which client library a randgen thread's statements go through, and how errors map.

Covers: lib/randgen/channel.py, lib/randgen/connection.py
"""
import pymysql

from lib.randgen import channel
from lib.randgen.channel import PyChannel, StatementError, open_channel
from lib.randgen.connection import ConnectionSpec


class FakeCursor:
    description = None

    def __init__(self, exc=None):
        self.exc = exc

    def execute(self, sql):
        if self.exc:
            raise self.exc

    def nextset(self):
        return None


class FakeConn:
    def __init__(self, exc=None):
        self.exc = exc

    def cursor(self):
        return FakeCursor(self.exc)

    def thread_id(self):
        return 7

    def close(self):
        raise pymysql.err.InterfaceError(0, "already closed")


def test_without_mysqlclient_statements_go_through_pymysql(monkeypatch):
    monkeypatch.setattr(channel, "load_mysqlclient", lambda: None)
    monkeypatch.setattr(ConnectionSpec, "connect", lambda self, **kw: FakeConn())
    chan = open_channel(ConnectionSpec())
    assert isinstance(chan, PyChannel) and chan.driver == "PyMySQL"
    assert chan.thread_id() == 7
    chan.close()  # a broken connection's close does not raise


def test_validators_get_a_pymysql_cursor_even_with_mysqlclient(monkeypatch):
    monkeypatch.setattr(channel, "load_mysqlclient", lambda: object())
    monkeypatch.setattr(ConnectionSpec, "connect", lambda self, **kw: FakeConn())
    chan = open_channel(ConnectionSpec(), rows=True)
    assert isinstance(chan, PyChannel)
    assert isinstance(chan.cursor(), FakeCursor)


def error_of(exc):
    try:
        PyChannel(FakeConn(exc)).run("SELECT 1")
    except StatementError as err:
        return err.code, err.lost
    raise AssertionError("no error")


def test_error_codes_and_lost_connections():
    assert error_of(pymysql.err.ProgrammingError(1064, "syntax")) == (1064, False)
    assert error_of(pymysql.err.OperationalError(2013, "Lost connection")) == (2013, True)
    assert error_of(pymysql.err.OperationalError(2006, "gone away")) == (2006, True)
    assert error_of(pymysql.err.ProgrammingError(2014, "out of sync")) == (2014, True)
    assert error_of(pymysql.err.InterfaceError(0, "")) == (0, True)
