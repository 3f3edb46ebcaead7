"""Gendata: reading .zz files, randgen's table and column names, rows, the simple data set.

Covers: lib/randgen/gendata.py, lib/randgen/gendata_simple.py
"""
import glob
import os
import re

import pytest

from lib.randgen.builtins import Prng
from lib.randgen.gendata import GendataOptions, GendataPlan, read_spec
from lib.randgen.gendata_simple import NAMES, ROWS, SimpleGendata
from lib.randgen.perl_coprocess import find_perl
from tests.conftest import ROOT

SHARED = os.path.join(os.path.dirname(ROOT), "shared", "randgen-conf")

ZZ = """# comment
$tables = {
        rows => [0, 10, 100],
        engines => ['InnoDB', undef],
        partitions => [ undef , 'KEY (pk) PARTITIONS 2' ],
};
$fields = {
        types => [ 'int', 'char(10)', 'enum' ],
        indexes => [undef, 'key' ],
        null => [undef, 'not null'],
        default => [undef, 'default null'],
        sign => [undef, 'unsigned'],
};
$data = {
        numbers => [ 'digit', 'null', undef ],
        strings => [ 'letter', 'english', '100' ]
}
"""


def spec(tmp_path, text=ZZ):
    path = tmp_path / "t.zz"
    path.write_text(text)
    return read_spec(str(path))


def test_reads_hashes_lists_undef_and_ranges(tmp_path):
    s = spec(tmp_path, "$tables = { rows => [1..3], names => ['A', \"B\"] }; "
                       "$schemas = [ 'test', 'test1' ];\n$data = { numbers => [ undef ] };\n1;\n")
    assert s.tables["rows"] == [1, 2, 3] and s.tables["names"] == ["A", "B"]
    assert s.schemas == ["test", "test1"] and s.data["numbers"] == [None]


@pytest.mark.skipif(find_perl() is None, reason="no perl with JSON::PP")
def test_what_the_parser_cannot_read_goes_to_perl(tmp_path):
    s = spec(tmp_path, "my $n = 2 * 3;\n$tables = { rows => [ $n, 1 + 1 ] };\n")
    assert s.tables["rows"] == [6, 2]


def test_randgen_table_names(tmp_path):
    plan = GendataPlan(spec(tmp_path))
    names = [t.name for t in plan.tables]
    assert "table0_innodb_int_autoinc" in names
    assert "table100_innodb_int_autoinc_key_pk_parts_2" in names
    assert "table10_int_autoinc" in names
    assert len(names) == 3 * 2 * 2 and len(set(names)) == len(names)


def test_randgen_field_names_and_combinations(tmp_path):
    plan = GendataPlan(spec(tmp_path))
    names = {f.name for f in plan.fields}
    for expected in ("col_int", "col_int_key", "col_int_unsigned_not_null_key",
                     "col_char_10_default_null", "col_char_10_not_null_key", "col_enum_key"):
        assert expected in names
    # 'not null' with 'default null' is dropped; sign only for numbers
    assert not any("not_null" in n and "default_null" in n for n in names)
    assert not any(n.startswith("col_char") and "unsigned" in n for n in names)
    enum = next(f for f in plan.fields if f.name == "col_enum")
    assert "enum ('a','b'" in enum.sql


def test_statements_create_and_fill_every_table(tmp_path):
    plan = GendataPlan(spec(tmp_path))
    stmts = list(plan.statements(Prng(1)))
    creates = [s for s in stmts if s.startswith("CREATE TABLE")]
    assert len(creates) == len(plan.tables)
    assert any("ENGINE=innodb" in s and "PARTITION BY key (pk) partitions 2" in s for s in creates)
    inserts = [s for s in stmts if s.startswith("INSERT")]
    rows = sum(s.count(" (") for s in inserts)
    assert rows == sum(t.rows for t in plan.tables)
    assert all("primary key (pk)" in s for s in creates)


def test_same_seed_same_data_other_seed_other_data(tmp_path):
    plan = GendataPlan(spec(tmp_path))
    a = list(plan.statements(Prng(5)))
    b = list(plan.statements(Prng(5)))
    c = list(plan.statements(Prng(6)))
    assert a == b and a != c


def test_rows_option_and_max_rows(tmp_path):
    plan = GendataPlan(spec(tmp_path), GendataOptions(rows=[3], max_rows=2))
    assert {t.rows for t in plan.tables} == {2}


def test_metadata_of_a_plan(tmp_path):
    md = GendataPlan(spec(tmp_path)).metadata()
    t = md.table("table10_int_autoinc")
    assert t is not None and "pk" in [c.name for c in t.columns]
    assert md.columns("table10_int_autoinc", kind="primary") == ["pk"]
    assert "col_int_key" in md.columns("table10_int_autoinc", kind="indexed")


def test_literal_and_typed_values(tmp_path):
    s = spec(tmp_path, "$tables = { rows => [20], names => ['t'] };\n"
                       "$fields = { types => ['int', 'varchar(5)'], indexes => [undef] };\n"
                       "$data = { numbers => ['100'], strings => ['varchar(5)'] };\n")
    stmts = list(GendataPlan(s).statements(Prng(1)))
    insert = next(x for x in stmts if x.startswith("INSERT"))
    rows = re.findall(r"\(([^)]*)\)", insert.split("VALUES", 1)[1])
    assert len(rows) == 20
    for row in rows:
        values = [v.strip() for v in row.split(",")]
        assert "100" in values and "NULL" in values  # col_int, and the auto-increment pk
        assert any(re.fullmatch(r"'[a-z]{1,5}'", v) for v in values)


def test_simple_gendata():
    sg = SimpleGendata()
    stmts = list(sg.statements(Prng(1)))
    assert [s.split()[2] for s in stmts if s.startswith("CREATE TABLE")] == list(NAMES) + ["DUMMY"]
    for name, rows in zip(NAMES, ROWS):
        inserts = [s for s in stmts if s.startswith(f"INSERT /*! IGNORE */ INTO {name} (")]
        assert sum(s.count("), (") + s.count("),(") + 1 for s in inserts) == rows if rows else \
            not inserts
    assert "AUTO_INCREMENT=10" in next(s for s in stmts if s.startswith("CREATE TABLE AA"))
    assert stmts == list(SimpleGendata().statements(Prng(1)))
    assert SimpleGendata(rows=[5, 5]).rows[:3] == [5, 5, 20]
    assert "E" in SimpleGendata().metadata().tables()


def test_shipped_gendata_files():
    for name in ("transactions", "zero_sum", "ddl_dml"):
        plan = GendataPlan(read_spec(os.path.join(ROOT, "randgen", "conf", "kewpie", f"{name}.zz")))
        assert plan.tables
    plan = GendataPlan(read_spec(os.path.join(ROOT, "randgen", "conf", "kewpie", "zero_sum.zz")))
    assert [t.name for t in plan.tables] == ["accounts_a", "accounts_b"]
    assert [f.name for f in plan.fields] == ["balance"]


@pytest.mark.skipif(not os.path.isdir(SHARED), reason="../shared/randgen-conf not present")
def test_every_stock_gendata_file_reads():
    for path in sorted(glob.glob(os.path.join(SHARED, "**", "*.zz"), recursive=True)):
        plan = GendataPlan(read_spec(path), GendataOptions(max_rows=3))
        assert list(plan.statements(Prng(1)))
