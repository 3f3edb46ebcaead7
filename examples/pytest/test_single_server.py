"""One plain MariaDB server per test, shared between tests by kewpie's reuse rule."""
import pytest

from lib import QueryError


def test_create_and_query(kewpie_server):
    kewpie_server.execute("CREATE TABLE test.t (id INT PRIMARY KEY, v VARCHAR(10))")
    kewpie_server.execute("INSERT INTO test.t VALUES (1, 'a'), (2, 'b')")
    assert kewpie_server.execute("SELECT COUNT(*) FROM test.t") == [(2,)]


def test_same_server_clean_test_schema(kewpie_server):
    # the previous test passed and left only `test` changed: same server, `test` emptied
    assert kewpie_server.execute("SHOW TABLES FROM test") == []
    with pytest.raises(QueryError) as err:
        kewpie_server.execute("SELECT * FROM test.t")
    assert err.value.code == 1146


@pytest.mark.kewpie(server_requirements=[["--max-connections=77", "--innodb-file-per-table"]])
def test_server_options(kewpie_server):
    assert kewpie_server.variable("max_connections") == "77"
    with kewpie_server.connect() as conn, conn.cursor() as cur:
        cur.execute("SELECT @@innodb_file_per_table")
        assert cur.fetchone() == (1,)
