"""Generating sentences without a server (unit tests, benchmarks, ``--generate``).

The table and column metadata that ``_table``/``_field`` need comes from the
gendata specification (what gendata would create), or the simple data set,
or is empty.
"""
from __future__ import annotations

from .cmdline import RandgenOptions
from .errors import PerlBlockError
from .gendata import GendataOptions, GendataPlan, read_spec
from .gendata_simple import SimpleGendata
from .generator import (BlockFactory, GenContext, Generator, NativeBlocks,
                        compile_blocks, derive_seed, pid_for_thread)
from .grammar import Grammar
from .metadata import Metadata


def offline_metadata(opts: RandgenOptions, schema: str = "test") -> Metadata:
    """The metadata gendata would produce for these options."""
    if opts.gendata:
        plan = GendataPlan(read_spec(opts.gendata), GendataOptions(
            rows=opts.rows, engines=opts.engine.split(",") if opts.engine else None,
            views=opts.views, notnull=opts.notnull, short_column_names=opts.short_column_names,
            strict_fields=opts.strict_fields), schema)
        return plan.metadata()
    if opts.gendata_simple:
        return SimpleGendata(opts.rows, opts.engine or "", opts.views).metadata(schema)
    return Metadata.from_tables([], schema)


def block_factory(grammar: Grammar, metadata: Metadata, seed: int, mode: str = "auto",
                  varchar_length: int = 1) -> BlockFactory | None:
    """How this grammar's Perl blocks run (native, or a perl coprocess per thread)."""
    blocks = grammar.perl_blocks()
    if not blocks:
        return None
    compiled, unsupported = compile_blocks(grammar)
    if mode != "perl" and not unsupported:
        return lambda tid, prng: NativeBlocks(compiled, prng, tid)
    first, why = unsupported[0] if unsupported else (blocks[0], "--perl-blocks=perl")
    if mode == "native":
        raise PerlBlockError(f"outside the native Perl subset ({why})", first.path, first.line,
                             first.text)
    from .perl_coprocess import PerlCoprocess, find_perl
    perl = find_perl()
    if perl is None:
        raise PerlBlockError(f"outside the native Perl subset ({why}) and no perl (with JSON::PP) "
                             f"to run it", first.path, first.line, first.text)
    return lambda tid, prng: PerlCoprocess(perl, derive_seed(seed, "perl", tid), tid,
                                           pid_for_thread(tid), metadata, varchar_length)


def offline_generators(opts: RandgenOptions, base_dir: str, threads: int = 1,
                       metadata: Metadata | None = None) -> list[Generator]:
    """One generator per thread, over metadata (default: from the options' gendata)."""
    if not opts.grammar:
        raise PerlBlockError("no grammar given", "", 0, "")
    grammar = Grammar.from_files([opts.grammar, *opts.redefine], [base_dir])
    md = metadata if metadata is not None else offline_metadata(opts)
    ctx = GenContext(md, threads, base_dir, "/tmp", "root@localhost", opts.varchar_length)
    factory = block_factory(grammar, md, opts.seed, opts.perl_blocks, opts.varchar_length)
    first = 1
    if not grammar.runs_thread(1) and grammar.threads_with_rules():
        first = grammar.threads_with_rules()[0]  # only thread2.. rules: generate as thread 2
    return [Generator(grammar, t, opts.seed, ctx, factory) for t in range(first, first + threads)]
