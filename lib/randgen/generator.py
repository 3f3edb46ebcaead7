"""Sentence generation: expanding a grammar from its start rule, per thread.

A :class:`Generator` belongs to one thread.  It owns a :class:`Prng` seeded
from the run seed and the thread number, so the same seed gives the same
sentences.  Expansion is depth-first and left to right, like randgen's:
a rule picks one of its alternatives (uniformly, or by ``==FACTOR:N==``
weights), built-ins are replaced by values, Perl blocks by their value.
``rule[invariant]`` (and ``_builtin[invariant]``) is expanded once per
sentence and reused.  ``$last_table``/``$last_field``/``$last_database``
follow randgen: ``_table`` sets the table that ``_field`` picks from.

Runaway sentences end with a warning: a rule used more than
``max_occurrences`` times in one sentence, or a sentence of more than
``max_length`` pieces, is dropped (``next_sentence`` returns None) and
counted in ``runaways``.
"""
from __future__ import annotations

import os
import time
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from .builtins import Prng, grammar_value
from .errors import GrammarError, PerlBlockError
from .grammar import BUILTIN, LIT, PERL, RULE, Grammar, Token
from .metadata import Metadata, MetadataCache
from .perl_subset import (CompiledBlock, PerlRuntimeError, PerlState, PerlUnsupported,
                          compile_block, to_str)
from .splitter import clean_sentence, split_statements

MAX_OCCURRENCES = 3500
MAX_LENGTH = 10000
MAX_KEPT_WARNINGS = 20


def derive_seed(seed: int, purpose: str, number: int = 0) -> int:
    """A stable seed for one purpose ('thread', 'gendata'...) and number, from the run seed."""
    return (int(seed) * 1_000_003 + zlib.crc32(purpose.encode()) * 7919 + number) & 0xFFFFFFFFFFFF


def pid_for_thread(thread_id: int) -> int:
    """The stable number a grammar sees as ``$$`` / ``_pid`` in a thread (randgen: the process id)."""
    return 10000 + thread_id


@dataclass
class GenContext:
    """What generation needs from the run: metadata and a few facts about the session."""

    metadata: MetadataCache | Metadata
    thread_count: int = 1
    cwd: str = field(default_factory=os.getcwd)
    tmpdir: str = "/tmp"
    current_user: str = "root@localhost"
    varchar_length: int = 1

    def snapshot(self) -> Metadata:
        """The current metadata snapshot."""
        md = self.metadata
        return md.current if isinstance(md, MetadataCache) else md


class BlockEngine(Protocol):
    """Evaluates a grammar's Perl blocks for one thread."""

    def evaluate(self, token: Token, gen: "Generator") -> str:
        """The block's value as text."""

    def new_sentence(self) -> None:
        """A new sentence starts (randgen gives each sentence a fresh $stack)."""

    def close(self) -> None:
        """Release resources (a coprocess)."""


class NativeBlocks:
    """Runs blocks compiled by :mod:`lib.randgen.perl_subset` with one thread's variables."""

    def __init__(self, compiled: dict[str, CompiledBlock], prng: Prng, thread_id: int) -> None:
        self.compiled = compiled
        self.state = PerlState(prng, thread_id, pid_for_thread(thread_id))

    def evaluate(self, token: Token, gen: "Generator") -> str:
        """Set $last_table & co, run the block, stringify its value."""
        sc = self.state.scalars
        sc["last_table"] = gen.last_table
        sc["last_field"] = gen.last_field
        sc["last_database"] = gen.last_database
        try:
            return to_str(self.compiled[token.text].run(self.state))
        except PerlRuntimeError as exc:
            raise PerlBlockError(f"Internal grammar error: {exc}", token.path, token.line,
                                 token.text) from exc

    def new_sentence(self) -> None:
        """Nothing to reset natively."""

    def close(self) -> None:
        """Nothing to release."""


def compile_blocks(grammar: Grammar) -> tuple[dict[str, CompiledBlock], list[tuple[Token, str]]]:
    """Compile every Perl block natively: (compiled by code, [(token, why not)])."""
    compiled: dict[str, CompiledBlock] = {}
    unsupported: list[tuple[Token, str]] = []
    for token in grammar.perl_blocks():
        if token.text in compiled:
            continue
        try:
            compiled[token.text] = compile_block(token.text)
        except PerlUnsupported as exc:
            unsupported.append((token, str(exc)))
    return compiled, unsupported


BlockFactory = Callable[[int, Prng], BlockEngine]


class _Runaway(Exception):
    pass


class Generator:
    """Generates one thread's sentences from a grammar."""

    def __init__(self, grammar: Grammar, thread_id: int, seed: int, context: GenContext,
                 blocks: BlockFactory | None = None, max_occurrences: int = MAX_OCCURRENCES,
                 max_length: int = MAX_LENGTH) -> None:
        self.grammar = grammar
        self.thread_id = thread_id
        self.context = context
        self.prng = Prng(derive_seed(seed, "thread", thread_id), context.varchar_length)
        self.blocks: BlockEngine | None = blocks(thread_id, self.prng) if blocks else None
        self.max_occurrences = max_occurrences
        self.max_length = max_length
        self.pid = pid_for_thread(thread_id)
        self.connection_id = 0
        self.last_table: str | None = None
        self.last_field: str | None = None
        self.last_database: str | None = None
        self.sentences = 0
        self.runaways = 0
        self.warnings: list[str] = []
        self._field_pos = 0
        self._first = True
        self._md: Metadata = context.snapshot()
        self._dispatch: dict[str, Callable[[], str]] = self._builtin_table()

    # ------------------------------------------------------------ sentences
    def next_statements(self) -> list[str]:
        """The statements of the next sentence ([] for a dropped, runaway sentence)."""
        sentence = self.next_sentence()
        if sentence is None:
            return []
        return split_statements(sentence)

    def next_sentence(self) -> str | None:
        """The next sentence, cleaned; None when it ran away (see ``warnings``)."""
        start = self.grammar.start_rule(self.thread_id, self._first)
        self._first = False
        if start not in self.grammar.rules:
            files = ", ".join(self.grammar.files) or "<string>"
            raise GrammarError(f"thread {self.thread_id} has no rule to start from (no "
                               f"thread{self.thread_id} and no query rule)", files)
        self.sentences += 1
        self._md = self.context.snapshot()
        if self.blocks is not None:
            self.blocks.new_sentence()
        try:
            pieces = self._expand(start)
        except _Runaway as exc:
            self.runaways += 1
            if len(self.warnings) < MAX_KEPT_WARNINGS:
                self.warnings.append(str(exc))
            return None
        return clean_sentence("".join(pieces))

    def _expand(self, start: str) -> list[str]:
        rules = self.grammar.rules
        prng = self.prng
        rnd = prng.random
        out: list[str] = []
        append = out.append
        counters: dict[str, int] = {}
        invariants: dict[str, str] = {}
        stack: list[Any] = [Token(RULE, start)]
        max_occ = self.max_occurrences
        max_len = self.max_length
        while stack:
            item = stack.pop()
            if type(item) is tuple:  # end of an invariant: (key, start index)
                key, begin = item
                invariants[key] = "".join(out[begin:])
                continue
            kind = item.kind
            if kind == LIT:
                append(item.text)
            elif kind == RULE:
                name = item.text
                if item.invariant:
                    cached = invariants.get(name)
                    if cached is not None:
                        append(cached)
                        continue
                    stack.append((name, len(out)))
                n = counters.get(name, 0) + 1
                counters[name] = n
                if n > max_occ:
                    raise _Runaway(f"rule {name} occurred more than {max_occ} times in one "
                                   f"sentence: possible endless loop in the grammar; the "
                                   f"sentence was dropped")
                rule = rules[name]
                alts = rule.alternatives
                if rule.cumulative is None:
                    alt = alts[int(rnd() * len(alts))] if len(alts) > 1 else alts[0]
                else:
                    alt = alts[prng.weighted_index(rule.cumulative)]
                tokens = alt.tokens
                if tokens:
                    stack.extend(reversed(tokens))
                    if len(stack) + len(out) > max_len:
                        raise _Runaway(f"sentence longer than {max_len} pieces (in rule {name}): "
                                       f"possible endless loop in the grammar; the sentence was "
                                       f"dropped")
            elif kind == BUILTIN:
                if item.invariant:
                    cached = invariants.get(item.text)
                    if cached is None:
                        cached = invariants[item.text] = self._builtin(item.text)
                    append(cached)
                else:
                    append(self._builtin(item.text))
            elif kind == PERL:
                append(self._perl(item))
        return out

    def _perl(self, token: Token) -> str:
        if self.blocks is None:
            raise PerlBlockError("no Perl block engine for this grammar", token.path, token.line,
                                 token.text)
        return self.blocks.evaluate(token, self)

    # ------------------------------------------------------------ built-ins
    def _builtin(self, name: str) -> str:
        fn = self._dispatch.get(name)
        if fn is not None:
            return fn()
        return grammar_value(self.prng, name)

    def _builtin_table(self) -> dict[str, Callable[[], str]]:
        p = self.prng
        ctx = self.context
        field_kinds = {
            "_field": "", "_field_no_pk": "no_pk", "_field_indexed": "indexed",
            "_field_key": "indexed", "_field_unindexed": "unindexed", "_field_nokey": "unindexed",
            "_field_int": "int", "_field_int_indexed": "int_indexed", "_field_int_key": "int_indexed",
            "_field_char": "char", "_field_char_indexed": "char_indexed",
            "_field_char_key": "char_indexed",
        }
        table: dict[str, Callable[[], str]] = {
            "_letter": p.letter,
            "_digit": lambda: str(p.digit()),
            "_positive_digit": lambda: str(p.positive_digit()),
            "_hex": p.hex,
            "_table": lambda: self._pick_table(self._md.tables(self.last_database)),
            "_basetable": lambda: self._pick_table(self._md.base_tables(self.last_database)),
            "_view": lambda: self._pick_table(self._md.views(self.last_database)),
            "_database": self._pick_database, "_db": self._pick_database,
            "_schema": self._pick_database,
            "_field_pk": self._field_pk,
            "_field_list": lambda: "`" + "`,`".join(
                self._md.columns(self.last_table, self.last_database)) + "`",
            "_field_count": lambda: str(len(self._md.columns(self.last_table, self.last_database))),
            "_field_next": self._field_next,
            "_cwd": lambda: f"'{ctx.cwd}'",
            "_tmpnam": lambda: f"'{os.path.join(ctx.tmpdir, f'gentest{self.pid}.tmp')}'",
            "_tmpfile": lambda: f"'{os.path.join(ctx.tmpdir, f'gentest{self.pid}.tmp')}'",
            "_tmptable": lambda: f"tmptable{self.pid}",
            "_unix_timestamp": lambda: str(int(time.time())),
            "_pid": lambda: str(self.pid),
            "_thread_id": lambda: str(self.thread_id),
            "_connection_id": lambda: str(self.connection_id),
            "_current_user": lambda: ctx.current_user,
            "_thread_count": lambda: str(ctx.thread_count),
            "_query_id": lambda: str(self.sentences),
            "_table_count": lambda: str(self._md.table_count()),
            "_collation": lambda: "_" + str(p.arrayElement(self._md.collations)),
            "_collation_name": lambda: str(p.arrayElement(self._md.collations)),
            "_charset": lambda: "_" + str(p.arrayElement(self._md.charsets)),
            "_charset_name": lambda: str(p.arrayElement(self._md.charsets)),
            "_data": lambda: "'" + p.text(40) + "'",
        }
        for name, kind in field_kinds.items():
            table[name] = (lambda k: lambda: self._pick_field(k))(kind)
        return table

    def _pick_table(self, names: list[str]) -> str:
        self.last_table = self.prng.arrayElement(names)
        return f"`{self.last_table or ''}`"

    def _pick_database(self) -> str:
        self.last_database = self.prng.arrayElement(self._md.schemas())
        return f"`{self.last_database or ''}`"

    def _pick_field(self, kind: str) -> str:
        self.last_field = self.prng.arrayElement(self._md.columns(self.last_table,
                                                                  self.last_database, kind))
        return f"`{self.last_field or ''}`"

    def _field_pk(self) -> str:
        cols = self._md.columns(self.last_table, self.last_database, "primary")
        self.last_field = cols[0] if cols else None
        return f"`{self.last_field or ''}`"

    def _field_next(self) -> str:
        cols = self._md.columns(self.last_table, self.last_database)
        if not cols:
            return "``"
        name = cols[self._field_pos % len(cols)]
        self._field_pos += 1
        return f"`{name}`"

    def close(self) -> None:
        """Release the block engine (a Perl coprocess)."""
        if self.blocks is not None:
            self.blocks.close()
