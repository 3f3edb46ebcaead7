"""Embedded Perl: the native subset, what falls outside it, and the perl coprocess.

Covers: lib/randgen/perl_subset.py, lib/randgen/perl_coprocess.py, lib/randgen/offline.py
"""
import pytest

from lib.randgen.builtins import Prng
from lib.randgen.errors import PerlBlockError
from lib.randgen.generator import GenContext, Generator, derive_seed, pid_for_thread
from lib.randgen.grammar import Grammar
from lib.randgen.metadata import Column, Metadata, Table
from lib.randgen.offline import block_factory
from lib.randgen.perl_coprocess import PerlCoprocess, find_perl
from lib.randgen.perl_subset import PerlState, PerlUnsupported, compile_block

PERL = find_perl()


def run(code, state=None):
    state = state or PerlState(Prng(1), thread_id=2)
    return compile_block(code).run(state), state


@pytest.mark.parametrize("code,value", [
    ("{ 't1_'.abs($$) }", "t1_10002"),
    ("{ 1 + 2 * 3 }", 7),
    ("{ 7 / 2 }", 3.5),
    ("{ 6 / 2 }", 3),
    ("{ 7 % 3 }", 1),
    ("{ 'ab' x 3 }", "ababab"),
    ("{ 2 ** 10 }", 1024),
    ("{ '10' == 10.0 ? 'eq' : 'ne' }", "eq"),
    ("{ 'abc' lt 'abd' }", 1),
    ("{ !1 }", ""),
    ("{ undef }", None),
    ("{ defined undef }", ""),
    ("{ '' || 'x' }", "x"),
    ("{ 0 // 'x' }", 0),
    ("{ 1 && 'y' }", "y"),
    ('{ my $x = 5; "v=$x" }', "v=5"),
    ("{ my @a = (1, 2, 3); push @a, 4; join(',', @a) }", "1,2,3,4"),
    ("{ my @a = (1, 2, 3); shift @a }", 1),
    ("{ my @a = (1, 2, 3); scalar(@a) }", 3),
    ("{ my @a = (4, 5); $#a }", 1),
    ("{ my @a = (4, 5); $a[1] }", 5),
    ("{ $h{k} = 3; exists $h{k} ? $h{k} : 0 }", 3),
    ("{ sprintf('%03d|%s', 7, 'z') }", "007|z"),
    ("{ uc('ab') . lc('CD') . length('xyz') }", "ABcd3"),
    ("{ substr('abcdef', 1, 3) }", "bcd"),
    ("{ if (1 > 2) { 'a' } elsif (2 > 1) { 'b' } else { 'c' } }", "b"),
    ("{ return 'early' if 1; 'late' }", "early"),
    ("{ return 'x' unless 0; 'y' }", "x"),
    ("{ SUBQUERY . '_f' }", "SUBQUERY_f"),
    ("{ $generator->threadId() }", 2),
    ("$undefined_var", None),
])
def test_native_subset_values(code, value):
    assert run(code)[0] == value


def test_variables_persist_in_the_state_and_my_is_local():
    state = PerlState(Prng(1))
    run("{ $count++; my $tmp = 9; '' }", state)
    run("{ $count++ }", state)
    assert state.scalars["count"] == 2 and "tmp" not in state.scalars
    assert run("{ $count += 10; $count }", state)[0] == 12
    assert run("{ $s .= 'a'; $s .= 'b'; $s }", state)[0] == "ab"


def test_prng_methods():
    state = PerlState(Prng(4))
    for _ in range(100):
        assert 1 <= run("{ $prng->int(1, 5) }", state)[0] <= 5
        assert run("{ $prng->arrayElement(['a', 'b']) }", state)[0] in ("a", "b")
        assert 0 <= run("{ $prng->digit() }", state)[0] <= 9
        assert run("{ $prng->letter() }", state)[0].isalpha()
        assert 1 <= len(run("{ $prng->string(4) }", state)[0]) <= 4


@pytest.mark.parametrize("code", [
    "{ map { $_ } (1..3) }",
    "{ $x =~ s/a/b/g }",
    "{ $executors->[0]->tables() }",
    "{ $stack->push() }",
    "{ @{$h{x}} }",
    "{ foreach my $x (1) { 1 } }",
    "{ sub x { 1 } }",
])
def test_outside_the_subset(code):
    with pytest.raises(PerlUnsupported):
        compile_block(code)


MD = Metadata.from_tables([Table("test", "t1", (Column("pk", "int", "primary"),)),
                           Table("test", "t2", (Column("pk", "int", "primary"),))])


def test_native_mode_names_file_line_and_block(tmp_path):
    path = tmp_path / "g.yy"
    path.write_text("query:\n  SELECT 1 |\n  SELECT { join(',', map { $_ } (1..2)) } ;\n")
    g = Grammar.from_files([str(path)])
    with pytest.raises(PerlBlockError) as info:
        block_factory(g, MD, 1, mode="native")
    text = str(info.value)
    assert f"{path}:3:" in text and "map" in text and "Perl block" in text


def test_runtime_failure_is_an_internal_grammar_error():
    g = Grammar.from_string("query: { 1 / 0 } ;\n")
    gen = Generator(g, 1, 1, GenContext(MD), block_factory(g, MD, 1))
    with pytest.raises(PerlBlockError, match="Internal grammar error: Illegal division by zero"):
        gen.next_sentence()


@pytest.mark.skipif(PERL is None, reason="no perl with JSON::PP")
def test_coprocess_runs_blocks_outside_the_subset_deterministically():
    text = ("query: { $stack->push(); join(',', map { 'f'.$_ } (1..3)) } "
            "{ $prng->int(1, 1000) } { join(':', @{$executors->[0]->tables()}) } "
            "{ $n++ } ;\n")
    g = Grammar.from_string(text)
    outs = []
    for _ in range(2):
        gen = Generator(g, 1, 7, GenContext(MD), block_factory(g, MD, 7))
        try:
            outs.append([gen.next_sentence() for _ in range(3)])
        finally:
            gen.close()
    assert outs[0] == outs[1]
    first = outs[0][0].split()
    assert first[0] == "f1,f2,f3" and first[2] == "t1:t2" and first[3] == "0"
    assert outs[0][1].split()[3] == "1"


@pytest.mark.skipif(PERL is None, reason="no perl with JSON::PP")
def test_coprocess_error_names_the_block():
    g = Grammar.from_string("query: { die 'boom' } ;\n")
    gen = Generator(g, 1, 1, GenContext(MD), block_factory(g, MD, 1))
    try:
        with pytest.raises(PerlBlockError, match="Internal grammar error: boom"):
            gen.next_sentence()
    finally:
        gen.close()


@pytest.mark.skipif(PERL is None, reason="no perl with JSON::PP")
def test_coprocess_pid_is_the_stable_thread_number():
    cp = PerlCoprocess(PERL, derive_seed(1, "perl", 3), 3, pid_for_thread(3), MD)
    try:
        g = Grammar.from_string("query: { abs($$) } ;\n")
        gen = Generator(g, 3, 1, GenContext(MD), lambda tid, prng: cp)
        assert gen.next_sentence() == "10003"
    finally:
        cp.close()
