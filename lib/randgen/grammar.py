"""Parser for randgen grammar files (``.yy``), the randgen "master" dialect.

A grammar is a set of rules ``name: alternative | alternative ;`` where a
rule ends with ``;`` followed by a newline.  The parser follows randgen's
reading of a file:

- ``#include <file>`` / ``#include "file"`` inserts a file (resolved against
  the including file's folder, then the randgen folder);
- ``#`` starts a comment to the end of the line (``$#`` in Perl is kept);
  a ``\\`` at the end of a line joins it with the next;
- several files (the grammar, then ``--redefine`` files) are read in order,
  and a later definition of a rule replaces an earlier one; ``query_add`` and
  ``threadN_add`` add alternatives to ``query``/``threadN``, and
  ``query_init_add``/``threadN_init_add`` add statements to the init rules;
- an alternative may start with ``==FACTOR:N==`` (weight N, default 1);
- inside an alternative, runs of identifier characters are tokens
  (``_varchar(32)`` stays one token), ``{ ... }`` is an embedded Perl block,
  ``$name`` a Perl variable, ``name[invariant]`` an invariant reference.

Tokens are then classified: all-uppercase tokens and punctuation are
literals; names of rules are rule references; ``_table``, ``_field``,
``_int``... are built-ins; other lowercase words stay literals.
"""
from __future__ import annotations

import bisect
import os
import re
from dataclasses import dataclass
from typing import Iterable, Sequence

from .builtins import field_type_kind
from .errors import GrammarError

# token kinds
LIT = 0
RULE = 1
PERL = 2
BUILTIN = 3

KIND_NAMES = ("literal", "rule", "perl", "builtin")

# built-ins that are not field types (handled by the generator)
CONTEXT_BUILTINS = frozenset({
    "_letter", "_digit", "_positive_digit", "_table", "_hex", "_cwd", "_tmpnam", "_tmpfile",
    "_tmptable", "_unix_timestamp", "_pid", "_thread_id", "_connection_id", "_current_user",
    "_thread_count", "_database", "_db", "_schema", "_basetable", "_view", "_field",
    "_field_list", "_field_count", "_field_next", "_field_pk", "_field_no_pk",
    "_field_indexed", "_field_key", "_field_unindexed", "_field_nokey", "_field_int",
    "_field_int_indexed", "_field_int_key", "_field_char", "_field_char_indexed",
    "_field_char_key", "_collation", "_collation_name", "_charset", "_charset_name", "_data",
    "_query_id", "_table_count",
})

START_RULE_RE = re.compile(r"^(query|thread\d+)(_init)?$")
_INCLUDE_RE = re.compile(r'^\s*#include\s+[<"](.*?)[>"]\s*$')
_RULE_END_RE = re.compile(r";[ \t\r\f\v]*\n+")
_FACTOR_RE = re.compile(r"^\s*==FACTOR:([0-9]*\.?[0-9]+)==\s*")
_IDENT_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_'\"`$[]")
_INVARIANT_RE = re.compile(r"^([A-Za-z0-9_]+)\[invariant\]$")
_WS_RE = re.compile(r"\s+")
_NAME_RE = re.compile(r"[A-Za-z0-9_]+")


@dataclass(frozen=True)
class Token:
    """One token of an alternative: a literal, a rule reference, a Perl block or a built-in."""

    kind: int
    text: str
    invariant: bool = False
    path: str = ""
    line: int = 0

    def describe(self) -> str:
        """``rule 'x'``, ``builtin '_table'``... for messages."""
        return f"{KIND_NAMES[self.kind]} {self.text!r}"


@dataclass
class Alternative:
    """One alternative of a rule: its tokens and its weight (``==FACTOR:N==``)."""

    tokens: tuple[Token, ...]
    weight: float = 1.0

    def text(self) -> str:
        """The alternative as written (tokens joined)."""
        return "".join(t.text if t.kind != RULE or not t.invariant else t.text + "[invariant]"
                       for t in self.tokens)


@dataclass
class Rule:
    """A grammar rule: a name, its alternatives and where it was defined."""

    name: str
    alternatives: list[Alternative]
    path: str = ""
    line: int = 0
    cumulative: tuple[float, ...] | None = None

    def finish(self) -> None:
        """Precompute the cumulative weights (None when every weight is 1)."""
        weights = [a.weight for a in self.alternatives]
        if all(w == 1.0 for w in weights):
            self.cumulative = None
            return
        total = 0.0
        cumulative = []
        for w in weights:
            total += w
            cumulative.append(total)
        self.cumulative = tuple(cumulative)


class SourceText:
    """Text with the file and line of every offset (for messages)."""

    def __init__(self, text: str = "", marks: Sequence[tuple[int, str, int]] = ()) -> None:
        self.text = text
        self.marks: list[tuple[int, str, int]] = list(marks)  # (offset, path, line)

    @classmethod
    def from_lines(cls, lines: Iterable[tuple[str, str, int]]) -> "SourceText":
        """Join (text, path, line) lines with newlines, remembering where each came from."""
        parts: list[str] = []
        marks: list[tuple[int, str, int]] = []
        offset = 0
        for text, path, line in lines:
            marks.append((offset, path, line))
            parts.append(text)
            offset += len(text) + 1
        return cls("\n".join(parts), marks)

    def where(self, offset: int) -> tuple[str, int]:
        """(path, line) of an offset."""
        if not self.marks:
            return "", 0
        i = bisect.bisect_right([m[0] for m in self.marks], offset) - 1
        _, path, line = self.marks[max(i, 0)]
        return path, line

    def slice(self, start: int, end: int) -> "SourceText":
        """The text between start and end, with its marks shifted."""
        marks = [(0, *self.where(start))]
        for off, path, line in self.marks:
            if start < off < end:
                marks.append((off - start, path, line))
        return SourceText(self.text[start:end], marks)

    def concat(self, sep: str, other: "SourceText") -> "SourceText":
        """self + sep + other, marks kept."""
        shift = len(self.text) + len(sep)
        return SourceText(self.text + sep + other.text,
                          self.marks + [(off + shift, p, ln) for off, p, ln in other.marks])


class Grammar:
    """A parsed grammar: rules by name, the files it came from.

    Build it with :meth:`from_files` (a grammar and its ``--redefine`` files)
    or :meth:`from_string`.
    """

    def __init__(self, rules: dict[str, Rule], files: Sequence[str] = (),
                 warnings: Sequence[str] = ()) -> None:
        self.rules = rules
        self.files = list(files)
        self.warnings = list(warnings)
        for rule in rules.values():
            rule.finish()
        if not any(START_RULE_RE.match(n) and not n.endswith("_init") for n in rules):
            where = ", ".join(self.files) or "<string>"
            raise GrammarError(f"grammar has no 'query' (or 'threadN') rule: {where} (a file "
                               f"that only redefines rules goes with --redefine after its "
                               f"base grammar)")

    # ------------------------------------------------------------ building
    @classmethod
    def from_files(cls, paths: Sequence[str], search_dirs: Sequence[str] = ()) -> "Grammar":
        """Read the grammar and its redefine files, in that order."""
        if not paths:
            raise GrammarError("no grammar file given")
        sources = []
        for path in paths:
            if not os.path.isfile(path):
                raise GrammarError(f"grammar file not found: {path}")
            sources.append(read_source(path, search_dirs))
        return cls._build(sources, list(paths))

    @classmethod
    def from_string(cls, text: str, name: str = "<string>", *more: str) -> "Grammar":
        """Parse grammar text (and optional redefining texts)."""
        sources = [SourceText.from_lines(_logical_lines(t, n, ()))
                   for t, n in [(text, name)] + [(m, f"<redefine {i + 1}>") for i, m in enumerate(more)]]
        return cls._build(sources, [name])

    @classmethod
    def _build(cls, sources: list[SourceText], files: list[str]) -> "Grammar":
        bodies: dict[str, SourceText] = {}
        origin: dict[str, tuple[str, int]] = {}
        query_adds: list[SourceText] = []
        thread_adds: dict[str, list[SourceText]] = {}
        init_adds: list[SourceText] = []
        thread_init_adds: dict[str, list[SourceText]] = {}
        warnings: list[str] = []
        for source in sources:
            for name, body, where in split_rules(source, warnings):
                if name == "query_add":
                    query_adds.append(body)
                elif re.fullmatch(r"thread\d+_add", name):
                    thread_adds.setdefault(name[:-4], []).append(body)
                elif name == "query_init_add":
                    init_adds.append(body)
                elif re.fullmatch(r"thread\d+_init_add", name):
                    thread_init_adds.setdefault(name[:-4], []).append(body)
                else:
                    if name in bodies:
                        warnings.append(f"{where[0]}:{where[1]}: rule {name} is defined again "
                                        f"(the later definition is used)")
                    bodies[name] = body
                    origin[name] = where
        for target, adds in [("query", query_adds), *thread_adds.items()]:
            for add in adds:
                bodies[target] = bodies[target].concat(" | ", add) if target in bodies else add
                origin.setdefault(target, add.where(0))
        for add in init_adds:
            bodies["query_init"] = (bodies["query_init"].concat("; ", add)
                                    if "query_init" in bodies else add)
            origin.setdefault("query_init", add.where(0))
        for target, adds in thread_init_adds.items():
            for add in adds:
                if target in bodies:
                    bodies[target] = bodies[target].concat("; ", add)
                elif "query_init" in bodies:
                    bodies[target] = bodies["query_init"].concat("; ", add)
                else:
                    bodies[target] = add
                origin.setdefault(target, add.where(0))
        raw = {name: [_parse_alternative(alt) for alt in split_alternatives(body)]
               for name, body in bodies.items()}
        rules: dict[str, Rule] = {}
        names = set(raw)
        for name, alts in raw.items():
            rules[name] = Rule(name, [Alternative(tuple(classify(t, names) for t in toks), w)
                                      for toks, w in alts], *origin[name])
        return cls(rules, files, warnings)

    # ------------------------------------------------------------ queries
    def start_rule(self, thread_id: int, first: bool) -> str:
        """The rule a thread's sentence starts from (``threadN_init``, ``query_init``, ``threadN``, ``query``)."""
        if first:
            for name in (f"thread{thread_id}_init", "query_init"):
                if name in self.rules:
                    return name
        name = f"thread{thread_id}"
        return name if name in self.rules else "query"

    def runs_thread(self, thread_id: int) -> bool:
        """True when a thread has a rule to run (``threadN`` or ``query``).

        A grammar with only ``thread2``/``thread3`` rules leaves thread 1 (and any
        thread above the last one) without one: randgen sends such a thread's
        missing start rule as text; kewpie keeps that thread idle, with a warning.
        """
        return f"thread{thread_id}" in self.rules or "query" in self.rules

    def threads_with_rules(self) -> list[int]:
        """The thread numbers that have a ``threadN`` rule of their own."""
        return sorted(int(n[6:]) for n in self.rules if re.fullmatch(r"thread\d+", n))

    def has_init(self, thread_id: int) -> bool:
        """True when the thread has an init rule."""
        return f"thread{thread_id}_init" in self.rules or "query_init" in self.rules

    def tokens(self) -> Iterable[Token]:
        """Every token of every alternative."""
        for rule in self.rules.values():
            for alt in rule.alternatives:
                yield from alt.tokens

    def perl_blocks(self) -> list[Token]:
        """Every embedded Perl token (blocks and ``$variables``), in rule order."""
        return [t for t in self.tokens() if t.kind == PERL]

    def uses(self, *names: str) -> bool:
        """True when any of these built-ins appears in the grammar."""
        wanted = set(names)
        return any(t.kind == BUILTIN and t.text in wanted for t in self.tokens())


# ---------------------------------------------------------------- reading
def read_source(path: str, search_dirs: Sequence[str] = ()) -> SourceText:
    """A grammar file's logical lines (includes expanded, comments removed, lines joined)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError as exc:
        raise GrammarError(f"cannot read grammar file: {exc}", path) from exc
    return SourceText.from_lines(_logical_lines(text, path, search_dirs))


def _logical_lines(text: str, path: str, search_dirs: Sequence[str],
                   depth: int = 0) -> list[tuple[str, str, int]]:
    if depth > 20:
        raise GrammarError("#include nested more than 20 levels deep", path)
    out: list[tuple[str, str, int]] = []
    pending: tuple[str, int] | None = None  # a line continued with a backslash
    for lineno, line in enumerate(text.splitlines(), 1):
        m = _INCLUDE_RE.match(line)
        if m:
            inc = _find_include(m.group(1), path, search_dirs)
            if inc is None:
                raise GrammarError(f"#include file not found: {m.group(1)}", path, lineno)
            with open(inc, encoding="utf-8", errors="replace") as fh:
                out.extend(_logical_lines(fh.read(), inc, search_dirs, depth + 1))
            continue
        line = strip_comment(line).rstrip()
        if pending is not None:
            line = pending[0] + line
            start = pending[1]
        else:
            start = lineno
        if line.endswith("\\"):
            pending = (line[:-1] + " ", start)
            continue
        pending = None
        out.append((line, path, start))
    if pending is not None:
        out.append((pending[0], path, pending[1]))
    return out


def _find_include(name: str, including: str, search_dirs: Sequence[str]) -> str | None:
    candidates = [name] if os.path.isabs(name) else \
        [os.path.join(os.path.dirname(including), name), *(os.path.join(d, name) for d in search_dirs)]
    for c in candidates:
        if os.path.isfile(c):
            return c
    return None


def strip_comment(line: str) -> str:
    """The line without its ``#`` comment (a ``$#`` of Perl is not a comment)."""
    pos = line.find("#")
    while pos != -1:
        if pos > 0 and line[pos - 1] == "$":
            pos = line.find("#", pos + 1)
            continue
        return line[:pos]
    return line


def split_rules(source: SourceText, warnings: list[str] | None = None
                ) -> list[tuple[str, SourceText, tuple[str, int]]]:
    """Cut a source into (name, body, (path, line)) rules at ``;`` + newline.

    A ``;`` inside a Perl block (braces) does not end a rule, unless the braces
    of the file do not balance, in which case randgen's plain split is used.
    """
    text = source.text + "\n"
    balanced = text.count("{") == text.count("}")
    ends: list[tuple[int, int]] = []  # (end of rule text, start of next)
    depth = 0
    pos = 0
    for m in _RULE_END_RE.finditer(text):
        if balanced:
            depth += text.count("{", pos, m.start()) - text.count("}", pos, m.start())
            pos = m.start()
            if depth > 0:
                continue
        ends.append((m.start(), m.end()))
    rules = []
    start = 0
    for end, nxt in ends + [(len(text), len(text))]:
        chunk = text[start:end]
        colon = chunk.find(":")
        if colon != -1:
            name = chunk[:colon].replace("\r", "").replace("\n", "").strip()
            if name:
                lead = len(chunk[:colon]) - len(chunk[:colon].lstrip())
                body = source.slice(start + colon + 1, end)
                rules.append((name, body, source.where(start + lead)))
        elif chunk.strip() and warnings is not None:
            # randgen skips such text silently; say so
            path, line = source.where(start + len(chunk) - len(chunk.lstrip()))
            warnings.append(f"{path}:{line}: text outside any rule is ignored (a rule is "
                            f"'name: ... ;', and ';' at the end of a line ends it): "
                            f"{chunk.strip()[:80]!r}")
        start = nxt
    return rules


def split_alternatives(body: SourceText) -> list[SourceText]:
    """Cut a rule body at ``|`` outside Perl blocks."""
    text = body.text
    balanced = text.count("{") == text.count("}")
    parts = []
    depth = 0
    start = 0
    for i, ch in enumerate(text):
        if ch == "{" and balanced:
            depth += 1
        elif ch == "}" and balanced:
            depth -= 1
        elif ch == "|" and depth == 0:
            parts.append(body.slice(start, i))
            start = i + 1
    parts.append(body.slice(start, len(text)))
    return parts


def _parse_alternative(alt: SourceText) -> tuple[list[tuple[str, str, int, bool]], float]:
    """Raw tokens (text, path, line, is_perl) of an alternative and its weight."""
    text = alt.text
    weight = 1.0
    m = _FACTOR_RE.match(text)
    offset = 0
    if m:
        weight = float(m.group(1))
        offset = m.end()
    tokens: list[tuple[str, str, int, bool]] = []
    n = len(text)
    i = offset
    # skip leading whitespace, and trailing whitespace at the end
    while i < n and text[i].isspace():
        i += 1
    end = n
    while end > i and text[end - 1].isspace():
        end -= 1
    while i < end:
        ch = text[i]
        if ch == "{":
            j = _block_end(text, i, end)
            path, line = alt.where(i)
            tokens.append((text[i:j], path, line, True))
            i = j
        elif ch in _IDENT_CHARS:
            j = i
            while j < end and text[j] in _IDENT_CHARS:
                j += 1
            path, line = alt.where(i)
            tokens.append((text[i:j], path, line, False))
            i = j
        else:
            j = i
            while j < end and text[j] not in _IDENT_CHARS and text[j] != "{":
                j += 1
            path, line = alt.where(i)
            tokens.append((_WS_RE.sub(" ", text[i:j]), path, line, False))
            i = j
    return _merge_lengths(tokens), weight


def _block_end(text: str, start: int, end: int) -> int:
    """The end of the brace-balanced Perl block starting at start (quotes respected)."""
    depth = 0
    i = start
    quote = ""
    while i < end:
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    if quote:  # an unbalanced quote: count braces only, as randgen does
        depth = 0
        for i in range(start, end):
            if text[i] == "{":
                depth += 1
            elif text[i] == "}":
                depth -= 1
                if depth == 0:
                    return i + 1
    return end


def _merge_lengths(tokens: list[tuple[str, str, int, bool]]) -> list[tuple[str, str, int, bool]]:
    """Join ``_varchar`` ``(`` ``32`` ``)`` back into ``_varchar(32)``."""
    out: list[tuple[str, str, int, bool]] = []
    i = 0
    while i < len(tokens):
        t = tokens[i]
        if (i + 3 < len(tokens) and not t[3] and _NAME_RE.fullmatch(t[0])
                and tokens[i + 1][0] == "(" and tokens[i + 2][0].isdigit()
                and tokens[i + 3][0].startswith(")")):
            out.append((f"{t[0]}({tokens[i + 2][0]})", t[1], t[2], False))
            rest = tokens[i + 3][0][1:]
            if rest:
                out.append((rest, *tokens[i + 3][1:]))
            i += 4
            continue
        out.append(t)
        i += 1
    return out


def classify(raw: tuple[str, str, int, bool], rule_names: set[str] | frozenset[str]) -> Token:
    """Turn a raw token into a literal, rule reference, Perl block or built-in."""
    text, path, line, is_perl = raw
    if is_perl:
        return Token(PERL, text, False, path, line)
    if text == text.upper():
        return Token(LIT, text, False, path, line)
    invariant = False
    name = text
    m = _INVARIANT_RE.match(text)
    if m:
        name, invariant = m.group(1), True
    if name in rule_names:
        return Token(RULE, name, invariant, path, line)
    if name.startswith("$"):
        return Token(PERL, name, False, path, line)
    if name.startswith("_") and (name in CONTEXT_BUILTINS or field_type_kind(name) is not None):
        return Token(BUILTIN, name, invariant, path, line)
    return Token(LIT, text, False, path, line)
