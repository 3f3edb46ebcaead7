"""The built-in randgen on what stock grammars use: Perl-block APIs, redefines, crashes as errors.

Pure logic: grammars and metadata are built in memory; the Perl coprocess
(perl with JSON::PP, as Debian ships it) evaluates blocks offline.

Covers: lib/randgen/generator.py, lib/randgen/perl_subset.py, lib/randgen/perl_coprocess.py,
lib/randgen/combinations.py, lib/randgen/validators.py, lib/randgen/cmdline.py,
lib/randgen/executor.py, lib/randgen/workers.py
"""
import os
import textwrap

import pytest

from lib.randgen.builtins import Prng
from lib.randgen.cmdline import RandgenOptions, parse_command
from lib.randgen.combinations import is_redefine_only, pick_base
from lib.randgen.errors import GrammarError
from lib.randgen.generator import GenContext, Generator
from lib.randgen.grammar import Grammar
from lib.randgen.metadata import Column, Metadata, Table, collation_names
from lib.randgen.offline import block_factory, offline_generators
from lib.randgen.perl_coprocess import find_perl
from lib.randgen.perl_randgen import EXIT_NAMES, map_exit_code, options_to_args, resolve_for_perl
from lib.randgen.perl_subset import PerlState, compile_block
from lib.randgen.validators import (UNDECODABLE, Outcome, Validators, compare_outcomes,
                                    normalise_names, run_statement, same_rows, transform,
                                    transformable)

needs_perl = pytest.mark.skipif(find_perl() is None, reason="no perl with JSON::PP")


def metadata():
    cols = (Column("pk", "int", "primary"), Column("col_int_key", "int", "indexed"),
            Column("col_varchar_10", "varchar", "", 10), Column("col_date", "date"))
    return Metadata.from_tables([Table("test", "big", cols, False, 1000),
                                 Table("test", "small", cols, False, 10),
                                 Table("test", "view_small", cols, True, 10),
                                 Table("other", "t1", cols[:2], False, 5)])


def sentences(text, n=3, threads=1, seed=1, md=None):
    grammar = Grammar.from_string(textwrap.dedent(text))
    md = md or metadata()
    factory = block_factory(grammar, md, seed)
    gen = Generator(grammar, 1, seed, GenContext(md, threads), factory)
    try:
        return [gen.next_sentence() for _ in range(n)]
    finally:
        gen.close()


# ---------------------------------------------------------------- Perl-block APIs
@needs_perl
@pytest.mark.parametrize("call,expected", [
    ("join(',', @{$executors->[0]->baseTables()})", "big,small"),
    ("join(',', @{$executors->[0]->tables()})", "big,small,view_small"),
    ("join(',', @{$executors->[0]->metaTables('other')})", "t1"),
    ("join(',', @{$executors->[0]->metaViews()})", "view_small"),
    ("join(',', @{$executors->[0]->bigTables()})", "big"),
    ("join(',', @{$executors->[0]->smallBaseTables()})", "small"),
    ("join(',', @{$executors->[0]->databases()})", "other,test"),
    ("join(',', @{$executors->[0]->metaSchemas()})", "other,test"),
    ("join(',', @{$executors->[0]->metaColumns('small')})", "col_date,col_int_key,col_varchar_10,pk"),
    ("join(',', @{$executors->[0]->tableColumns('t1', 'other')})", "col_int_key,pk"),
    ("join(',', @{$executors->[0]->metaColumnsIndexType('indexed', 'small')})", "col_int_key,pk"),
    ("join(',', @{$executors->[0]->metaColumnsIndexType('primary', 'big')})", "pk"),
    ("join(',', @{$executors->[0]->metaColumnsIndexTypeNot('primary', 'big')})",
     "col_date,col_int_key,col_varchar_10"),
    ("join(',', @{$executors->[0]->metaColumnsDataType('int', 'big')})", "col_int_key,pk"),
    ("join(',', @{$executors->[0]->metaColumnsDataIndexType('int', 'ordinary', 'big')})",
     "non_existing_column"),
    ("join(',', @{$executors->[0]->metaColumnsDataTypeIndexTypeNot('int', 'primary', 'big')})",
     "col_int_key"),
    ("$executors->[0]->columnRealType('col_varchar_10', 'big')", "varchar"),
    ("$executors->[0]->columnMetaType('col_varchar_10', 'big')", "char"),
    ("$executors->[0]->columnMaxLength('col_varchar_10', 'big')", "10"),
    ("$executors->[0]->isBigTable('big') ? 'yes' : 'no'", "yes"),
    ("$executors->[0]->defaultSchema()", "test"),
    ("scalar(@{$executors->[0]->metaCollations()}) > 0 ? 'yes' : 'no'", "yes"),
    ("$executors->[0]->setMetadataReloadInterval(20); 'fine'", "fine"),
    ("$generator->threadId()", "1"),
])
def test_executor_metadata_api_in_the_coprocess(call, expected):
    # a map{} forces the coprocess, where the executor API lives
    text = f"query:\n  {{ my @x = map {{ $_ }} (1); {call} }} ;\n"
    assert sentences(text, 1) == [expected]


@needs_perl
def test_prng_field_type_and_list_util_in_the_coprocess():
    text = """
    query:
      { my @x = map { $_ } (1); join ' ', $prng->fieldType('tinyint_unsigned'), $prng->fieldType('date'), $prng->fieldType('varchar(3)') } |
      { join '-', shuffle(1..5) } | { join ',', sort { $a <=> $b } List::Util::shuffle(1..5) } |
      { first { $_ > 2 } (1..5) } | { max(3, 9, 4) . min(3, 9, 4) . sum(1, 2, 3) } ;
    """
    out = sentences(text, 40)
    typed = [s for s in out if " " in s]
    assert typed
    for s in typed:
        number, date, word = s.split(" ")
        assert 0 <= int(number) <= 255 and len(date) == 10 and 1 <= len(word) <= 3
    shuffled = [s for s in out if s.count("-") == 4]
    assert shuffled and all(sorted(s.split("-")) == list("12345") for s in shuffled)
    assert "1,2,3,4,5" in out and "3" in out and "936" in out


@needs_perl
def test_coprocess_runs_repeat_with_the_seed():
    text = "query:\n  { join '-', shuffle(1..9) } { $prng->int(1, 1000) } ;\n"
    assert sentences(text, 5, seed=7) == sentences(text, 5, seed=7)
    assert sentences(text, 5, seed=7) != sentences(text, 5, seed=8)


@needs_perl
def test_unknown_executor_method_is_a_grammar_error_with_file_and_line():
    with pytest.raises(GrammarError) as err:
        sentences("query:\n  { my @x = map { $_ } (1); $executors->[0]->noSuchThing() } ;\n", 1)
    assert "<string>:2:" in str(err.value) and "no method 'noSuchThing'" in str(err.value)


def test_native_prng_field_type():
    p = Prng(3)
    assert 0 <= int(p.fieldType("tinyint_unsigned")) <= 255
    assert len(p.fieldType("date")) == 10 and p.fieldType("nonsense") is None
    assert p.isFieldType("varchar(10)") and not p.isFieldType("nonsense")
    block = compile_block("{ $prng->fieldType('smallint') }")
    assert -32768 <= int(block.run(PerlState(Prng(1), 1, 10001))) <= 32767


# ---------------------------------------------------------------- crashes become errors
def test_null_character_set_names_are_left_out():
    rows = [("utf8mb4_general_ci", "utf8mb4"), ("uca1400_ai_ci", None), ("latin1_bin", "latin1")]
    assert collation_names(rows) == (("latin1_bin", "uca1400_ai_ci", "utf8mb4_general_ci"),
                                     ("latin1", "utf8mb4"))


def test_charset_builtins_without_a_server():
    out = sentences("query:\n  SELECT _charset 'a' , _collation_name ;\n", 5)
    assert all(s.startswith("SELECT _") and "None" not in s for s in out)


def test_thread_without_a_start_rule_is_an_error_not_a_key_error():
    grammar = Grammar.from_string("thread2:\n  SELECT 2 ;\n")
    assert not grammar.runs_thread(1) and grammar.runs_thread(2)
    gen = Generator(grammar, 1, 1, GenContext(metadata()))
    with pytest.raises(GrammarError) as err:
        gen.next_sentence()
    assert "thread 1 has no rule to start from" in str(err.value)
    assert Generator(grammar, 2, 1, GenContext(metadata())).next_sentence() == "SELECT 2"


def test_offline_generation_starts_at_the_first_thread_with_a_rule(tmp_path):
    path = tmp_path / "t.yy"
    path.write_text("thread2:\n  SELECT 2 ;\nthread3:\n  SELECT 3 ;\n")
    gens = offline_generators(RandgenOptions(grammar=str(path)), str(tmp_path))
    assert gens[0].thread_id == 2 and gens[0].next_sentence() == "SELECT 2"


def test_engine_fault_names_the_grammar():
    from lib.randgen.executor import engine_fault
    try:
        {}["query"]
    except KeyError as exc:
        text = engine_fault(["/g/x.yy"], exc)
    assert text.startswith("/g/x.yy: the randgen engine failed (KeyError: 'query' at ")


# ---------------------------------------------------------------- redefine
def test_several_redefines_apply_in_order():
    base = "query:\n  a ;\na:\n  A1 ;\nb:\n  B1 ;\n"
    g = Grammar.from_string(base, "base.yy", "a:\n  A2 ;\n", "a:\n  A3 ;\nb:\n  B3 ;\n",
                            "query_add:\n  b ;\n")
    assert sorted(alt.text() for alt in g.rules["query"].alternatives) == ["a", "b"]
    assert g.rules["a"].alternatives[0].text() == "A3"
    assert g.rules["b"].alternatives[0].text() == "B3"
    assert any("defined again" in w for w in g.warnings)


def test_init_adds_from_redefines():
    g = Grammar.from_string("query:\n  SELECT 1 ;\nquery_init:\n  SET @a = 1 ;\n", "b.yy",
                            "query_init_add:\n  SET @b = 2 ;\n", "thread1_init_add:\n  SET @c = 3 ;\n")
    gen = Generator(g, 1, 1, GenContext(metadata()))
    assert gen.next_statements() == ["SET @a = 1", "SET @b = 2", "SET @c = 3"]


def test_redefine_command_line_keeps_the_order():
    o = parse_command("gentest.pl --grammar=a.yy --redefine=r1.yy,r2.yy --redefine r3.yy")
    assert o.redefine == ["r1.yy", "r2.yy", "r3.yy"]


def test_redefine_only_files_pair_with_their_base(tmp_path):
    conf = tmp_path / "conf"
    (conf / "sub").mkdir(parents=True)
    (conf / "sub" / "dml.yy").write_text("query:\n  select | insert ;\nselect:\n  SELECT 1 ;\n"
                                         "insert:\n  INSERT INTO t VALUES (1) ;\n")
    (conf / "sub" / "ddl.yy").write_text("query:\n  alter ;\nalter:\n  ALTER TABLE t FORCE ;\n")
    (conf / "sub" / "more_selects.yy").write_text("select:\n  SELECT 2 | SELECT 3 ;\n"
                                                  "query_add:\n  insert ;\n")
    (conf / "sub" / "paired_in_cc.yy").write_text("alter:\n  ALTER TABLE t ENGINE=InnoDB ;\n")
    (conf / "sub" / "x.cc").write_text("$combinations = [['--grammar=conf/sub/dml.yy "
                                       "--redefine=conf/sub/paired_in_cc.yy']];\n")
    (conf / "sub" / "lonely.yy").write_text("nothing_known:\n  SELECT 9 ;\n")
    names = {p: str(conf / "sub" / p) for p in ("dml.yy", "ddl.yy", "more_selects.yy",
                                                 "paired_in_cc.yy", "lonely.yy")}
    assert is_redefine_only(names["more_selects.yy"]) and not is_redefine_only(names["dml.yy"])
    bases = [names["dml.yy"], names["ddl.yy"]]
    assert pick_base(names["more_selects.yy"], bases, str(conf)) == names["dml.yy"]
    assert pick_base(names["paired_in_cc.yy"], bases, str(conf)) == names["dml.yy"]
    assert pick_base(names["lonely.yy"], bases, str(conf)) is None
    g = Grammar.from_files([names["dml.yy"], names["more_selects.yy"]])
    assert sorted(a.text() for a in g.rules["select"].alternatives) == ["SELECT 2", "SELECT 3"]


def test_redefine_only_file_alone_says_so(tmp_path):
    path = tmp_path / "r.yy"
    path.write_text("select:\n  SELECT 2 ;\n")
    with pytest.raises(GrammarError) as err:
        Grammar.from_files([str(path)])
    assert "has no 'query'" in str(err.value)


# ---------------------------------------------------------------- validators, options
def test_comparator_outcomes():
    a = Outcome("s1", rows=[(1, "x"), (2, None)])
    assert compare_outcomes(a, Outcome("s2", rows=[(2, None), (1, "x")])) == ""
    assert compare_outcomes(a, Outcome("s2", rows=[(1, "x")])) == "length"
    assert compare_outcomes(a, Outcome("s2", rows=[(1, "y"), (2, None)])) == "content"
    assert compare_outcomes(a, Outcome("s2", error=1146, message="no table")) == "error"
    assert compare_outcomes(Outcome("s1", affected=1), Outcome("s2", affected=0)) == "length"
    assert same_rows([("0.33333",)], [("0.3333",)])        # randgen compares 4 decimals
    assert not same_rows([("0.3333",)], [("0",)])


def test_an_undecodable_result_reopens_the_connection_and_is_not_compared():
    class Conn:
        def __init__(self):
            self.calls = []

        def close(self):
            self.calls.append("close")

        def connect(self):
            self.calls.append("connect")

    class Cursor:
        def __init__(self):
            self.connection = Conn()

        def execute(self, sql):
            raise UnicodeDecodeError("utf-8", b"\xed", 0, 1, "invalid continuation byte")

    cur = Cursor()
    got = run_statement(cur, "SELECT c FROM t", "s1")
    assert got.error == UNDECODABLE and "reopened" in got.message
    assert cur.connection.calls == ["close", "connect"]
    checker = Validators(["ResultsetComparator"], [], [("s2", cur)], 1,
                         lambda *a: pytest.fail("an undecodable result is not a difference"))
    assert checker.check(cur, "SELECT c FROM t", Outcome("s1", rows=[("x",)]))


def test_transformers_rewrite_selects_only():
    assert transformable("SELECT a FROM t WHERE b > 1")
    assert not transformable("SELECT RAND() FROM t") and not transformable("UPDATE t SET a = 1")
    assert not transformable("SELECT a FROM t LIMIT 2")
    assert transform("Distinct", "SELECT a FROM t", 1).statements == ("SELECT DISTINCT a FROM t",)
    assert transform("ExecuteAsDerived", "SELECT a FROM t", 1).statements == \
        ("SELECT * FROM ( SELECT a FROM t ) AS kewpie_derived",)
    assert transform("OrderBy", "SELECT a FROM t ORDER BY a", 1) is None
    view = transform("ExecuteAsView", "SELECT a FROM t", 3)
    assert len(view.statements) == 2 and view.cleanup == ("DROP VIEW IF EXISTS kewpie_transform_view_3",)


def test_validator_and_reporter_options():
    o = parse_command("gentest.pl --grammar=g.yy --validators=ResultsetComparator,Transformer "
                      "--transformers=Distinct --reporters=Deadlock,Backtrace --reporter=Recovery "
                      "--dsn1=dbi:mysql:host=a --dsn2=dbi:mysql:host=b --deadlock-timeout=5")
    assert o.validators == ["ResultsetComparator", "Transformer"]
    assert o.reporters == ["Deadlock", "Backtrace", "Recovery"] and o.transformers == ["Distinct"]
    assert o.compare_dsns == ["dbi:mysql:host=b"] and o.dsn == "dbi:mysql:host=a"
    assert o.deadlock_timeout == 5
    assert normalise_names(["resultsetcomparator", "None", "Foo"]) == (["ResultsetComparator"], ["Foo"])


# ---------------------------------------------------------------- passthrough
def test_passthrough_exit_names_follow_gentest_constants():
    assert EXIT_NAMES[105] == "STATUS_RECOVERY_FAILURE" and EXIT_NAMES[107] == "STATUS_SERVER_DEADLOCKED"
    assert map_exit_code(107, "")[0] == "failure"


def test_passthrough_resolves_kewpie_grammars_and_checks_files(tmp_path):
    perl = tmp_path / "perl"
    (perl / "conf" / "stock").mkdir(parents=True)
    (perl / "conf" / "stock" / "s.yy").write_text("query: SELECT 1 ;\n")
    home = tmp_path / "kewpie"
    (home / "conf" / "kewpie").mkdir(parents=True)
    (home / "conf" / "kewpie" / "k.yy").write_text("query: SELECT 1 ;\n")
    o = resolve_for_perl(parse_command("gentest.pl --grammar=conf/kewpie/k.yy --queries=1"),
                         str(perl), str(home))
    assert o.grammar == str(home / "conf" / "kewpie" / "k.yy")
    assert f"--grammar={home / 'conf' / 'kewpie' / 'k.yy'}" in o.args
    o = resolve_for_perl(parse_command("gentest.pl --grammar=conf/stock/s.yy"), str(perl), str(home))
    assert o.grammar == "conf/stock/s.yy"
    from lib.randgen.errors import RandgenEnvironmentError
    with pytest.raises(RandgenEnvironmentError, match="grammar not found"):
        resolve_for_perl(parse_command("gentest.pl --grammar=conf/nope.yy"), str(perl), str(home))
    args = options_to_args(RandgenOptions(grammar="g.yy", validators=["Transformer"],
                                          compare_dsns=["dbi:mysql:host=b"]))
    assert "--validators=Transformer" in args and "--dsn2=dbi:mysql:host=b" in args


# ---------------------------------------------------------------- worker processes
def test_threads_split_over_processes():
    from lib.randgen.workers import process_count, thread_groups
    assert thread_groups(5, 2) == [[1, 3, 5], [2, 4]]
    assert thread_groups(1, 1) == [[1]]
    assert process_count(1) == 1 and process_count(8, 3) == 3 and process_count(2, 9) == 2


def test_worker_results_merge():
    from lib.randgen.result import RandgenResult
    from lib.randgen.workers import merge
    res = RandgenResult()
    reply = {"status": "ok", "per_thread": [{"thread_id": 2, "sentences": 5, "statements": 9,
                                             "ok": 8, "errors": {"1213": 1}, "reconnects": 0,
                                             "runaways": 0}],
             "error_samples": {"1213": "Deadlock"}, "warnings": ["w"], "difference_count": 1,
             "differences": [{"validator": "Transformer/Distinct"}], "reports": [],
             "first_statement_at": 5.0}
    assert merge(res, reply, [2]) == ""
    assert res.per_thread[0].errors == {1213: 1} and res.error_samples == {1213: "Deadlock"}
    assert res.difference_count == 1 and res.first_statement_at == 5.0
    assert "without a result" in merge(res, None, [4])
    assert merge(res, {"status": "grammar_error", "reason": "x.yy:3: bad"}, [2]) == \
        "grammar_error: x.yy:3: bad"
