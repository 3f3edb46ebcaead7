"""A native evaluator for the common subset of the Perl in grammar blocks.

Grammar alternatives may hold Perl code, ``{ ... }``, whose value is put into
the sentence.  This module compiles such a block once into Python closures
and runs it against a per-thread :class:`PerlState` (variables persist per
thread, as they do in randgen, where each thread is its own process).

Supported: scalars (``$x``), arrays (``@a``, ``$a[0]``, ``$#a``) and hashes
(``%h``, ``$h{k}``), ``my``/``our``, number and string literals (``"..."``
interpolates ``$x``), ``undef``; operators ``. x + - * / % **``, ``++``/``--``,
``= .= += -= *= /= ||= //= &&= x=``, comparisons (``== != < > <= >=`` and
``eq ne lt gt le ge``), ``! && || // and or not``, ``? :``, ranges ``..`` in
lists, array refs ``[...]``; ``return``; ``if/elsif/else``, ``unless`` and
statement modifiers (``... if COND``); the functions ``abs int length lc uc
lcfirst ucfirst defined join push pop shift unshift scalar time sprintf substr
chr ord rand``; ``$prng->int/uint16/float/arrayElement/digit/letter/string/
date/time/datetime/timestamp/year/hex/quid/bit/fromDictionary/shuffleArray``,
``$generator->threadId()``, ``$last_table``, ``$last_field``,
``$last_database`` and ``$$`` (a stable per-thread number, not the process id).

Anything else (``map``, ``grep``, regular expressions, ``sub``, loops,
``$executors``, ``$stack``...) raises :class:`PerlUnsupported` at compile
time; the engine then runs the whole grammar's blocks in a ``perl``
coprocess (:mod:`lib.randgen.perl_coprocess`), or stops with an error naming
the file, line and block when no ``perl`` is available.
"""
from __future__ import annotations

import functools
import operator
import re
import time as _time
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable

from .builtins import Prng

Value = Any
Fn = Callable[["PerlState"], Value]


class PerlUnsupported(Exception):
    """The block uses Perl outside the native subset (raised at compile time)."""


class PerlRuntimeError(Exception):
    """The block failed while running (like a Perl ``die``)."""


class _Return(Exception):
    """``return`` inside a block."""

    def __init__(self, value: Value) -> None:
        super().__init__()
        self.value = value


@dataclass
class PerlState:
    """One thread's Perl variables and the objects blocks may call."""

    prng: Prng
    thread_id: int = 1
    pid: int = 0
    scalars: dict[str, Value] = field(default_factory=dict)
    arrays: dict[str, list[Value]] = field(default_factory=dict)
    hashes: dict[str, dict[str, Value]] = field(default_factory=dict)
    local: dict[str, Value] | None = None

    def __post_init__(self) -> None:
        self.scalars["prng"] = self.prng
        self.scalars["generator"] = GeneratorProxy(self)
        if not self.pid:
            self.pid = 10000 + self.thread_id


class GeneratorProxy:
    """What ``$generator`` offers a native block: ``threadId()`` and ``prng()``."""

    def __init__(self, state: PerlState) -> None:
        self._state = state

    def threadId(self) -> int:  # noqa: N802 - randgen's name
        """The thread number (1-based)."""
        return self._state.thread_id

    def prng(self) -> Prng:
        """The thread's PRNG."""
        return self._state.prng


PRNG_METHODS = frozenset({
    "int", "uint16", "float", "arrayElement", "digit", "positive_digit", "letter", "string",
    "date", "time", "datetime", "timestamp", "year", "hex", "quid", "bit", "fromDictionary",
    "shuffleArray", "english", "set", "enum", "fieldType", "isFieldType", "text",
})
GENERATOR_METHODS = frozenset({"threadId", "prng"})
FUNCTIONS = frozenset({
    "abs", "int", "length", "lc", "uc", "lcfirst", "ucfirst", "defined", "join", "push", "pop",
    "shift", "unshift", "scalar", "time", "sprintf", "substr", "chr", "ord", "rand",
})
PERL_KEYWORDS = frozenset({
    "map", "grep", "sort", "keys", "values", "each", "split", "sub", "do", "eval", "die", "warn",
    "print", "printf", "say", "local", "foreach", "for", "while", "until", "last", "next", "redo",
    "ref", "bless", "qw", "q", "qq", "m", "s", "tr", "y", "reverse", "wantarray", "open", "close",
    "require", "use", "no", "package", "return", "if", "unless", "else", "elsif", "my", "our",
    "lc", "uc", "x", "eq", "ne", "lt", "gt", "le", "ge", "cmp", "and", "or", "not", "xor",
})
NAMED_UNARY = frozenset({"abs", "int", "length", "lc", "uc", "lcfirst", "ucfirst", "defined",
                         "scalar", "chr", "ord", "rand"})


# ---------------------------------------------------------------- values
_NUM_RE = re.compile(r"\s*([-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?))")


def to_num(v: Value) -> int | float:
    """Perl's numeric value of v ('12abc' is 12, '' and undef are 0)."""
    if v is None:
        return 0
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, (int, float)):
        return v
    if isinstance(v, str):
        m = _NUM_RE.match(v)
        if not m:
            return 0
        text = m.group(1)
        if any(c in text for c in ".eE"):
            f = float(text)
            return int(f) if f.is_integer() and abs(f) < 1e15 and "e" not in text.lower() else f
        return int(text)
    if isinstance(v, (list, dict)):
        return len(v)
    return 1


def to_str(v: Value) -> str:
    """Perl's string value of v (undef is '', 3.0 is '3')."""
    if v is None:
        return ""
    if isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "1" if v else ""
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if v.is_integer() and abs(v) < 1e15:
            return str(int(v))
        return "%.15g" % v
    if isinstance(v, list):
        return f"ARRAY(0x{id(v):x})"
    if isinstance(v, dict):
        return f"HASH(0x{id(v):x})"
    return str(v)


def truthy(v: Value) -> bool:
    """Perl truth: undef, '', '0' and 0 are false."""
    if v is None:
        return False
    if isinstance(v, str):
        return v != "" and v != "0"
    if isinstance(v, (int, float)):
        return v != 0
    return True


def _bool(b: bool) -> Value:
    return 1 if b else ""


def _norm_num(x: int | float) -> int | float:
    if isinstance(x, float) and x.is_integer() and abs(x) < 1e15:
        return int(x)
    return x


# ---------------------------------------------------------------- tokenizer
_TOKEN_RE = re.compile(r"""
    (?P<ws>\s+)
  | (?P<num>0[xX][0-9a-fA-F]+|\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|\.\d+)
  | (?P<sq>'(?:[^'\\]|\\.)*')
  | (?P<dq>"(?:[^"\\]|\\.)*")
  | (?P<pid>\$\$(?![A-Za-z_{$]))
  | (?P<lastidx>\$\#(?:[A-Za-z_]\w*|\{|\$))
  | (?P<var>[$@%](?:::)?[A-Za-z_]\w*(?:::\w+)*|\$\{[A-Za-z_]\w*\})
  | (?P<deref>[$@%](?=[${]))
  | (?P<op>->|\+\+|--|\*\*=?|=~|!~|==|!=|<=>|<=|>=|&&=?|\|\|=?|//=?|\.\.|\.=|\+=|-=|\*=|/=|x=|=>|::|[-+*/%.<>=!?:,;(){}\[\]\\&|^~])
  | (?P<word>[A-Za-z_]\w*)
""", re.VERBOSE | re.DOTALL)


@dataclass(frozen=True)
class _Tok:
    kind: str
    text: str


def tokenize(code: str) -> list[_Tok]:
    """Perl tokens of a block's code (whitespace dropped)."""
    out: list[_Tok] = []
    pos = 0
    n = len(code)
    while pos < n:
        m = _TOKEN_RE.match(code, pos)
        if not m:
            raise PerlUnsupported(f"cannot read Perl at {code[pos:pos + 20]!r}")
        kind = m.lastgroup or ""
        pos = m.end()
        if kind == "ws":
            continue
        text = m.group()
        if kind == "word" and text == "x" and out and (
                out[-1].kind in ("num", "var", "sq", "dq", "pid") or out[-1].text in (")", "]")):
            out.append(_Tok("op", "x"))
            continue
        if kind == "var" and text.startswith("${"):
            text = "$" + text[2:-1]
        out.append(_Tok(kind, text))
    out.append(_Tok("eof", ""))
    return out


# ---------------------------------------------------------------- parser
class _Parser:
    """Recursive descent over the token list, building closures directly."""

    def __init__(self, code: str) -> None:
        self.toks = tokenize(code)
        self.i = 0

    # helpers
    def peek(self, k: int = 0) -> _Tok:
        """The token k places ahead."""
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def next(self) -> _Tok:
        """Consume and return the next token."""
        t = self.toks[self.i]
        self.i += 1
        return t

    def at(self, text: str) -> bool:
        """True when the next token is this operator or word."""
        t = self.peek()
        return t.text == text and t.kind in ("op", "word")

    def expect(self, text: str) -> None:
        """Consume text or fail."""
        t = self.next()
        if t.text != text:
            raise PerlUnsupported(f"expected {text!r}, found {t.text or 'end of block'!r}")

    # program
    def program(self, until: str = "") -> Fn:
        """Statements up to the end (or until)."""
        stmts: list[Fn] = []
        while True:
            while self.at(";"):
                self.next()
            t = self.peek()
            if t.kind == "eof" or (until and t.kind == "op" and t.text == until):
                break
            stmts.append(self.statement())
            t = self.peek()
            if self.at(";") or t.kind == "eof" or (until and t.kind == "op" and t.text == until):
                continue
            if not self._last_was_block:
                raise PerlUnsupported(f"unexpected {t.text!r}")
        return _seq(stmts)

    _last_was_block = False

    def block(self) -> Fn:
        """A braced block of statements."""
        self.expect("{")
        body = self.program(until="}")
        self.expect("}")
        return body

    def statement(self) -> Fn:
        """One statement, with an optional modifier."""
        self._last_was_block = False
        t = self.peek()
        if t.kind == "word" and t.text in ("if", "unless"):
            self.next()
            fn = self._if(t.text == "unless")
            self._last_was_block = True
            return fn
        if t.kind == "word" and t.text in ("for", "foreach", "while", "until", "sub", "do",
                                           "eval", "package", "use", "no", "BEGIN", "local"):
            raise PerlUnsupported(f"'{t.text}' is not in the native subset")
        if t.kind == "op" and t.text == "{":
            raise PerlUnsupported("bare blocks are not in the native subset")
        if t.kind == "word" and t.text == "return":
            self.next()
            if self.peek().kind == "eof" or self.at(";") or self.at("}") or self.at("if") \
                    or self.at("unless"):
                expr: Fn = _const(None)
            else:
                expr = self.expr_low()
            fn = _return(expr)
        else:
            fn = self.expr_low()
        # statement modifiers
        if self.at("if") or self.at("unless"):
            neg = self.next().text == "unless"
            cond = self.expr_low()
            fn = _modifier(fn, cond, neg)
        return fn

    def _if(self, negate: bool) -> Fn:
        branches: list[tuple[Fn, Fn]] = []
        self.expect("(")
        cond = self.expr_low()
        self.expect(")")
        if negate:
            cond = _negated(cond)
        branches.append((cond, self.block()))
        other: Fn | None = None
        while True:
            if self.at("elsif"):
                self.next()
                self.expect("(")
                c = self.expr_low()
                self.expect(")")
                branches.append((c, self.block()))
            elif self.at("else"):
                self.next()
                other = self.block()
                break
            else:
                break
        return _if(branches, other)

    # expressions: lowest precedence first
    def _left_assoc(self, operand: Callable[[], Fn], ops: dict[str, Callable[[Fn, Fn], Fn]]) -> Fn:
        """One left-associative level: operand (op operand)*, ops combining the two sides."""
        left = operand()
        while True:
            t = self.peek()
            if t.kind in ("op", "word") and t.text in ops:
                self.next()
                left = ops[t.text](left, operand())
            else:
                return left

    def expr_low(self) -> Fn:
        """Lowest precedence: or, xor."""
        return self._left_assoc(self.expr_lowand, {"or": _or, "xor": _xor})

    def expr_lowand(self) -> Fn:
        """Low-precedence and."""
        return self._left_assoc(self.expr_lownot, {"and": _and})

    def expr_lownot(self) -> Fn:
        """Low-precedence not."""
        if self.at("not"):
            self.next()
            inner = self.expr_lownot()
            return lambda s: _bool(not truthy(inner(s)))
        return self.expr_list()

    def expr_list(self) -> Fn:
        """A comma list."""
        first = self.assign()
        if not self.at(","):
            return first
        items = [first]
        while self.at(",") or self.at("=>"):
            self.next()
            if self.at(")") or self.peek().kind == "eof" or self.at(";"):
                break
            items.append(self.assign())
        return _list(items)

    def assign(self) -> Fn:
        """An assignment, or a ternary."""
        start = self.i
        left = self.ternary()
        t = self.peek()
        if t.kind == "op" and t.text in ("=", ".=", "+=", "-=", "*=", "/=", "||=", "&&=", "//=",
                                         "x=", "**="):
            self.next()
            target = self._lvalue_at(start)
            right = self.assign()
            return _assign(target, t.text, right)
        return left

    def _lvalue_at(self, start: int) -> "_LValue":
        saved = self.i
        self.i = start
        target = self.lvalue()
        self.i = saved
        return target

    def lvalue(self) -> "_LValue":
        """Something that can be assigned to."""
        t = self.next()
        if t.kind == "word" and t.text in ("my", "our"):
            if self.at("("):
                self.next()
                names = []
                while not self.at(")"):
                    v = self.next()
                    if v.kind != "var":
                        raise PerlUnsupported("only variables can be declared")
                    names.append(v.text)
                    if self.at(","):
                        self.next()
                self.next()
                return _LValue("list", names=names, declare=t.text == "my")
            v = self.next()
            if v.kind != "var":
                raise PerlUnsupported(f"cannot declare {v.text!r}")
            return _LValue(v.text[0], name=v.text[1:], declare=t.text == "my")
        if t.kind == "var":
            sigil, name = t.text[0], t.text[1:]
            if sigil == "$" and self.at("["):
                self.next()
                idx = self.expr_low()
                self.expect("]")
                return _LValue("elem", name=name, index=idx)
            if sigil == "$" and self.at("{"):
                key = self._hash_key()
                return _LValue("helem", name=name, index=key)
            return _LValue(sigil, name=name)
        if t.kind == "op" and t.text == "(":
            names = []
            while not self.at(")"):
                v = self.next()
                if v.kind != "var":
                    raise PerlUnsupported("list assignment to something other than variables")
                names.append(v.text)
                if self.at(","):
                    self.next()
            self.next()
            return _LValue("list", names=names)
        raise PerlUnsupported(f"cannot assign to {t.text!r}")

    def ternary(self) -> Fn:
        """cond ? a : b."""
        cond = self.range_()
        if self.at("?"):
            self.next()
            a = self.assign()
            self.expect(":")
            b = self.assign()
            return lambda s: a(s) if truthy(cond(s)) else b(s)
        return cond

    def range_(self) -> Fn:
        """a .. b."""
        left = self.oror()
        if self.at(".."):
            self.next()
            right = self.oror()
            return lambda s: list(range(int(to_num(left(s))), int(to_num(right(s))) + 1))
        return left

    def oror(self) -> Fn:
        """|| and //."""
        return self._left_assoc(self.andand, {"||": _or, "//": _defor})

    def andand(self) -> Fn:
        """&&."""
        return self._left_assoc(self.equality, {"&&": _and})

    def equality(self) -> Fn:
        """== != <=> eq ne cmp."""
        return self._left_assoc(self.relational, _binops("==", "!=", "<=>", "eq", "ne", "cmp"))

    def relational(self) -> Fn:
        """< > <= >= lt gt le ge."""
        return self._left_assoc(self.uniop, _binops("<", ">", "<=", ">=", "lt", "gt", "le", "ge"))

    def uniop(self) -> Fn:
        """Named unary operators without parentheses."""
        # named unary operators without parentheses bind tighter than comparisons
        t = self.peek()
        if t.kind == "word" and t.text in NAMED_UNARY and not (self.peek(1).text == "("):
            self.next()
            nt = self.peek()
            if nt.kind == "eof" or nt.text in (";", ")", "}", ",", "?", ":") or \
                    nt.kind == "word" and nt.text in ("eq", "ne", "lt", "gt", "le", "ge", "and", "or"):
                return _call(t.text, [])
            return _call(t.text, [self.additive()])
        return self.additive()

    def additive(self) -> Fn:
        """+ - ."""
        return self._left_assoc(self.multiplicative, _binops("+", "-", "."))

    def multiplicative(self) -> Fn:
        """* / % x."""
        return self._left_assoc(self.unary, _binops("*", "/", "%", "x"))

    def unary(self) -> Fn:
        """! - + \\ ++ --."""
        t = self.peek()
        if t.kind == "op" and t.text == "!":
            self.next()
            inner = self.unary()
            return lambda s: _bool(not truthy(inner(s)))
        if t.kind == "op" and t.text == "-":
            self.next()
            inner = self.unary()
            return lambda s: _norm_num(-to_num(inner(s)))
        if t.kind == "op" and t.text == "+":
            self.next()
            return self.unary()
        if t.kind == "op" and t.text == "\\":
            self.next()
            return self.unary()  # references: an array is its own reference here
        if t.kind == "op" and t.text in ("++", "--"):
            self.next()
            target = self.lvalue()
            return _incdec(target, 1 if t.text == "++" else -1, prefix=True)
        return self.power()

    def power(self) -> Fn:
        """**."""
        base = self.postfix()
        if self.at("**"):
            self.next()
            exp = self.unary()
            return lambda s: _norm_num(to_num(base(s)) ** to_num(exp(s)))
        return base

    def postfix(self) -> Fn:
        """Postfix ++ and --."""
        start = self.i
        value = self.primary()
        t = self.peek()
        if t.kind == "op" and t.text in ("++", "--"):
            self.next()
            target = self._lvalue_at(start)
            return _incdec(target, 1 if t.text == "++" else -1, prefix=False)
        return value

    def _hash_key(self) -> Fn:
        self.expect("{")
        t = self.peek()
        if t.kind == "word" and self.peek(1).text == "}":
            self.next()
            key: Fn = _const(t.text)
        else:
            key = self.expr_low()
        self.expect("}")
        return key

    def primary(self) -> Fn:
        """Literals, variables, calls, parentheses."""
        t = self.next()
        if t.kind == "num":
            v = int(t.text, 16) if t.text.lower().startswith("0x") else to_num(t.text)
            return _const(v)
        if t.kind == "sq":
            return _const(re.sub(r"\\([\\'])", r"\1", t.text[1:-1]))
        if t.kind == "dq":
            return _interpolate(t.text[1:-1])
        if t.kind == "pid":
            return lambda s: s.pid
        if t.kind == "lastidx":
            name = t.text[2:]
            if not re.fullmatch(r"[A-Za-z_]\w*", name):
                raise PerlUnsupported("$#{...} is not in the native subset")
            return lambda s: len(_get_array(s, name)) - 1
        if t.kind == "var":
            return self._variable(t.text)
        if t.kind == "deref":
            raise PerlUnsupported("dereferencing (@$x, ${...}) is not in the native subset")
        if t.kind == "op" and t.text == "(":
            if self.at(")"):
                self.next()
                return _list([])
            inner = self.expr_low()
            self.expect(")")
            if self.at("["):
                raise PerlUnsupported("list slices are not in the native subset")
            return inner
        if t.kind == "op" and t.text == "[":
            items: list[Fn] = []
            if not self.at("]"):
                items.append(self.expr_low())
            self.expect("]")
            inner_list = items[0] if items else _list([])
            return lambda s: list(_flatten([inner_list(s)]))
        if t.kind == "word":
            return self._word(t.text)
        raise PerlUnsupported(f"unexpected {t.text!r}")

    def _variable(self, text: str) -> Fn:
        sigil, name = text[0], text[1:]
        if "::" in name:
            name = name.split("::")[-1]
        if sigil == "$":
            if self.at("["):
                self.next()
                idx = self.expr_low()
                self.expect("]")
                return lambda s: _array_get(_get_array(s, name), idx(s))
            if self.at("{"):
                key = self._hash_key()
                return lambda s: _get_hash(s, name).get(to_str(key(s)))
            if self.at("->"):
                return self._method(name)
            return lambda s: _get_scalar(s, name)
        if sigil == "@":
            if self.at("["):
                raise PerlUnsupported("array slices are not in the native subset")
            return lambda s: _get_array(s, name)
        if sigil == "%":
            return lambda s: _get_hash(s, name)
        raise PerlUnsupported(f"unknown variable {text!r}")

    def _method(self, name: str) -> Fn:
        self.expect("->")
        if self.at("[") or self.at("{"):
            raise PerlUnsupported(f"${name}->[...] is not in the native subset")
        m = self.next()
        if m.kind != "word":
            raise PerlUnsupported(f"${name}->{m.text} is not in the native subset")
        allowed = PRNG_METHODS if name == "prng" else GENERATOR_METHODS if name == "generator" else None
        if allowed is None or m.text not in allowed:
            raise PerlUnsupported(f"${name}->{m.text}() is not in the native subset")
        args: list[Fn] = []
        if self.at("("):
            self.next()
            if not self.at(")"):
                args = [self.assign()]
                while self.at(",") or self.at("=>"):
                    self.next()
                    args.append(self.assign())
            self.expect(")")
        method = m.text
        fn = _method_call(name, method, args)
        if self.at("->"):
            if name == "generator" and method == "prng":
                return self._chained_prng(fn)
            raise PerlUnsupported("chained method calls are not in the native subset")
        return fn

    def _chained_prng(self, receiver: Fn) -> Fn:
        self.expect("->")
        m = self.next()
        if m.kind != "word" or m.text not in PRNG_METHODS:
            raise PerlUnsupported(f"->{m.text}() is not in the native subset")
        args: list[Fn] = []
        if self.at("("):
            self.next()
            if not self.at(")"):
                args = [self.assign()]
                while self.at(","):
                    self.next()
                    args.append(self.assign())
            self.expect(")")
        method = m.text
        return lambda s: _prng_call(receiver(s), method, [a(s) for a in args])

    def _word(self, word: str) -> Fn:
        if word == "undef":
            if self.at("("):
                self.next()
                self.expect(")")
            return _const(None)
        if word in ("my", "our"):
            self.i -= 1
            target = self.lvalue()
            return _declare(target)
        if word in ("exists", "delete"):
            return self._exists_delete(word)
        if word not in FUNCTIONS:
            if word not in PERL_KEYWORDS and not word.startswith("__") and \
                    not (self.at("(") or self.at("->") or self.at("::") or self.at("{")
                         or self.peek().kind in ("var", "num", "sq", "dq")):
                return _const(word)  # a bareword is a string under "no strict"
            raise PerlUnsupported(f"'{word}' is not in the native subset")
        args: list[Fn] = []
        if self.at("("):
            self.next()
            if not self.at(")"):
                args = [self.assign()]
                while self.at(",") or self.at("=>"):
                    self.next()
                    if self.at(")"):
                        break
                    args.append(self.assign())
            self.expect(")")
        elif word in NAMED_UNARY:
            if not (self.peek().kind == "eof" or self.at(";") or self.at(")") or self.at("}")):
                args = [self.additive()]
        else:
            # list operator: takes everything up to the end of the statement
            if not (self.peek().kind == "eof" or self.at(";") or self.at(")") or self.at("}")):
                args = [self.assign()]
                while self.at(",") or self.at("=>"):
                    self.next()
                    args.append(self.assign())
        if word in ("push", "unshift", "pop", "shift"):
            return self._array_fn(word, args)
        return _call(word, args)

    def _exists_delete(self, word: str) -> Fn:
        paren = self.at("(")
        if paren:
            self.next()
        t = self.next()
        if t.kind != "var" or not t.text.startswith("$") or not self.at("{"):
            raise PerlUnsupported(f"{word} on something other than a hash element")
        name = t.text[1:]
        key = self._hash_key()
        if paren:
            self.expect(")")
        if word == "exists":
            return lambda s: _bool(to_str(key(s)) in _get_hash(s, name))
        return lambda s: _get_hash(s, name).pop(to_str(key(s)), None)

    def _array_fn(self, word: str, args: list[Fn]) -> Fn:
        # the first argument must be an array variable: re-read it
        if not args:
            raise PerlUnsupported(f"{word} without an array is not in the native subset")
        name = self._array_name_of_first_arg(word)
        rest = args[1:]
        if word == "push":
            return lambda s: _push(_get_array(s, name), [a(s) for a in rest], front=False)
        if word == "unshift":
            return lambda s: _push(_get_array(s, name), [a(s) for a in rest], front=True)
        if word == "pop":
            return lambda s: _get_array(s, name).pop() if _get_array(s, name) else None
        return lambda s: _get_array(s, name).pop(0) if _get_array(s, name) else None

    def _array_name_of_first_arg(self, word: str) -> str:
        # find the token after the function name (and an optional '(')
        j = self.i - 1
        while j > 0 and not (self.toks[j].kind == "word" and self.toks[j].text == word):
            j -= 1
        k = j + 1
        if self.toks[k].text == "(":
            k += 1
        t = self.toks[k]
        if t.kind != "var" or not t.text.startswith("@"):
            raise PerlUnsupported(f"{word} on something other than an array variable")
        return t.text[1:]


@dataclass
class _LValue:
    kind: str  # '$', '@', '%', 'elem', 'helem', 'list'
    name: str = ""
    index: Fn | None = None
    names: list[str] = field(default_factory=list)
    declare: bool = False


# ---------------------------------------------------------------- runtime pieces
def _const(v: Value) -> Fn:
    return lambda s: v


def _seq(stmts: list[Fn]) -> Fn:
    if not stmts:
        return _const(None)
    if len(stmts) == 1:
        return stmts[0]

    def _run(s: PerlState) -> Value:
        v = None
        for st in stmts:
            v = st(s)
        return v
    return _run


def _return(expr: Fn) -> Fn:
    def _run(s: PerlState) -> Value:
        raise _Return(expr(s))
    return _run


def _modifier(fn: Fn, cond: Fn, negate: bool) -> Fn:
    def _run(s: PerlState) -> Value:
        c = cond(s)
        if truthy(c) != negate:
            return fn(s)
        return c
    return _run


def _if(branches: list[tuple[Fn, Fn]], other: Fn | None) -> Fn:
    def _run(s: PerlState) -> Value:
        c = None
        for cond, body in branches:
            c = cond(s)
            if truthy(c):
                return body(s)
        if other is not None:
            return other(s)
        return c
    return _run


def _or(a: Fn, b: Fn) -> Fn:
    def _run(s: PerlState) -> Value:
        v = a(s)
        return v if truthy(v) else b(s)
    return _run


def _defor(a: Fn, b: Fn) -> Fn:
    def _run(s: PerlState) -> Value:
        v = a(s)
        return v if v is not None else b(s)
    return _run


def _xor(a: Fn, b: Fn) -> Fn:
    return lambda s: _bool(truthy(a(s)) != truthy(b(s)))


def _and(a: Fn, b: Fn) -> Fn:
    def _run(s: PerlState) -> Value:
        v = a(s)
        return b(s) if truthy(v) else v
    return _run


def _list(items: list[Fn]) -> Fn:
    return lambda s: list(_flatten([f(s) for f in items]))


def _flatten(values: list[Value]) -> list[Value]:
    out: list[Value] = []
    for v in values:
        if isinstance(v, list):
            out.extend(v)
        elif isinstance(v, dict):
            for k, val in v.items():
                out.extend((k, val))
        else:
            out.append(v)
    return out


def _num_op(op: str, x: int | float, y: int | float) -> int | float:
    if op == "+":
        return _norm_num(x + y)
    if op == "-":
        return _norm_num(x - y)
    if op == "*":
        return _norm_num(x * y)
    if op == "/":
        if y == 0:
            raise PerlRuntimeError("Illegal division by zero")
        r = x / y
        return _norm_num(r)
    if op == "%":
        yi = int(y)
        if yi == 0:
            raise PerlRuntimeError("Illegal modulus zero")
        return int(x) % yi
    raise PerlRuntimeError(f"unknown operator {op}")


NUM_COMPARE = MappingProxyType({"==": operator.eq, "!=": operator.ne, "<": operator.lt,
                                ">": operator.gt, "<=": operator.le, ">=": operator.ge})
STR_COMPARE = MappingProxyType({"eq": operator.eq, "ne": operator.ne, "lt": operator.lt,
                                "gt": operator.gt, "le": operator.le, "ge": operator.ge})


def _binops(*ops: str) -> dict[str, Callable[[Fn, Fn], Fn]]:
    """Combiners for binary operators evaluated by _binop."""
    return {op: functools.partial(_binop, op) for op in ops}


def _negated(f: Fn) -> Fn:
    return lambda s: _bool(not truthy(f(s)))


def _binop(op: str, a: Fn, b: Fn) -> Fn:
    if op == ".":
        return lambda s: to_str(a(s)) + to_str(b(s))
    if op == "x":
        return lambda s: to_str(a(s)) * max(0, int(to_num(b(s))))
    if op in ("+", "-", "*", "/", "%"):
        return lambda s: _num_op(op, to_num(a(s)), to_num(b(s)))
    if op in NUM_COMPARE:
        test = NUM_COMPARE[op]
        return lambda s: _bool(test(to_num(a(s)), to_num(b(s))))
    if op in STR_COMPARE:
        test = STR_COMPARE[op]
        return lambda s: _bool(test(to_str(a(s)), to_str(b(s))))
    if op == "<=>":
        return lambda s: _cmp(to_num(a(s)), to_num(b(s)))
    if op == "cmp":
        return lambda s: _cmp(to_str(a(s)), to_str(b(s)))
    raise PerlUnsupported(f"operator {op!r} is not in the native subset")


def _cmp(x: Any, y: Any) -> int:
    return int(x > y) - int(x < y)


def _get_scalar(s: PerlState, name: str) -> Value:
    if s.local is not None and ("$" + name) in s.local:
        return s.local["$" + name]
    return s.scalars.get(name)


def _get_array(s: PerlState, name: str) -> list[Value]:
    if s.local is not None and ("@" + name) in s.local:
        local: list[Value] = s.local["@" + name]
        return local
    arr = s.arrays.get(name)
    if arr is None:
        arr = s.arrays[name] = []
    return arr


def _get_hash(s: PerlState, name: str) -> dict[str, Value]:
    if s.local is not None and ("%" + name) in s.local:
        local: dict[str, Value] = s.local["%" + name]
        return local
    h = s.hashes.get(name)
    if h is None:
        h = s.hashes[name] = {}
    return h


def _array_get(arr: list[Value], idx: Value) -> Value:
    i = int(to_num(idx))
    try:
        return arr[i]
    except IndexError:
        return None


def _store(s: PerlState, target: _LValue, value: Value) -> Value:
    kind, name = target.kind, target.name
    if kind == "$":
        if target.declare:
            if s.local is None:
                s.local = {}
            s.local["$" + name] = value
        elif s.local is not None and ("$" + name) in s.local:
            s.local["$" + name] = value
        else:
            s.scalars[name] = value
        return value
    if kind in ("@", "%"):
        items = value if isinstance(value, list) else [value] if value is not None else []
        new: Any = list(items) if kind == "@" else \
            {to_str(items[i]): items[i + 1] if i + 1 < len(items) else None
             for i in range(0, len(items), 2)}
        if target.declare:
            if s.local is None:
                s.local = {}
            s.local[kind + name] = new
        elif s.local is not None and (kind + name) in s.local:
            s.local[kind + name] = new
        elif kind == "@":
            s.arrays[name] = new
        else:
            s.hashes[name] = new
        return new
    if kind == "elem":
        arr = _get_array(s, name)
        assert target.index is not None
        i = int(to_num(target.index(s)))
        if i < 0:
            i += len(arr)
        while len(arr) <= i:
            arr.append(None)
        arr[i] = value
        return value
    if kind == "helem":
        assert target.index is not None
        _get_hash(s, name)[to_str(target.index(s))] = value
        return value
    if kind == "list":
        items = value if isinstance(value, list) else [value]
        for i, var in enumerate(target.names):
            sub = _LValue(var[0], var[1:], declare=target.declare)
            if var[0] == "$":
                _store(s, sub, items[i] if i < len(items) else None)
            else:
                _store(s, sub, items[i:])
                break
        return value
    raise PerlRuntimeError(f"cannot assign to {kind}")


def _load(s: PerlState, target: _LValue) -> Value:
    kind, name = target.kind, target.name
    if kind == "$":
        return None if target.declare else _get_scalar(s, name)
    if kind == "@":
        return _get_array(s, name)
    if kind == "%":
        return _get_hash(s, name)
    if kind == "elem":
        assert target.index is not None
        return _array_get(_get_array(s, name), target.index(s))
    if kind == "helem":
        assert target.index is not None
        return _get_hash(s, name).get(to_str(target.index(s)))
    raise PerlRuntimeError("cannot read a list")


def _assign(target: _LValue, op: str, right: Fn) -> Fn:
    if op == "=":
        return lambda s: _store(s, target, right(s))
    if op in ("||=", "&&=", "//="):
        def _run_logical(s: PerlState) -> Value:
            cur = _load(s, target)
            if op == "||=" and truthy(cur) or op == "&&=" and not truthy(cur) \
                    or op == "//=" and cur is not None:
                return cur
            return _store(s, target, right(s))
        return _run_logical
    base = op[:-1]

    def _run(s: PerlState) -> Value:
        cur = _load(s, target)
        val = right(s)
        if base == ".":
            new: Value = to_str(cur) + to_str(val)
        elif base == "x":
            new = to_str(cur) * max(0, int(to_num(val)))
        elif base == "**":
            new = _norm_num(to_num(cur) ** to_num(val))
        else:
            new = _num_op(base, to_num(cur), to_num(val))
        return _store(s, target, new)
    return _run


def _declare(target: _LValue) -> Fn:
    def _run(s: PerlState) -> Value:
        if target.kind == "list":
            for var in target.names:
                _store(s, _LValue(var[0], var[1:], declare=target.declare),
                       None if var[0] == "$" else [])
            return None
        return _store(s, target, None if target.kind == "$" else [])
    return _run


def _incdec(target: _LValue, delta: int, prefix: bool) -> Fn:
    def _run(s: PerlState) -> Value:
        cur = _load(s, target)
        new = _norm_num(to_num(cur) + delta)
        _store(s, target, new)
        return new if prefix else (cur if cur is not None else 0)
    return _run


def _push(arr: list[Value], values: list[Value], front: bool) -> int:
    flat = _flatten(values)
    if front:
        arr[0:0] = flat
    else:
        arr.extend(flat)
    return len(arr)


def _scalar_of(name: str) -> Fn:
    return lambda s: _get_scalar(s, name)


def _scalar_text(name: str) -> Fn:
    return lambda s: to_str(_get_scalar(s, name))


def _element_text(name: str, index: Fn) -> Fn:
    return lambda s: to_str(_array_get(_get_array(s, name), index(s)))


def _array_text(name: str) -> Fn:
    return lambda s: " ".join(to_str(v) for v in _get_array(s, name))


def _interpolate(body: str) -> Fn:
    """A double-quoted string: escapes and ``$name`` / ``${name}`` / ``$name[i]`` interpolation."""
    parts: list[Fn | str] = []
    buf: list[str] = []
    i = 0
    escapes = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", '"': '"', "$": "$",
               "@": "@", "e": "\x1b", "a": "\x07"}
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            buf.append(escapes.get(body[i + 1], body[i + 1]))
            i += 2
            continue
        if ch == "$":
            m = re.match(r"\$(?:\{(\w+)\}|(\w+))", body[i:])
            if m and not (m.group(2) or "").isdigit():
                name = m.group(1) or m.group(2)
                if buf:
                    parts.append("".join(buf))
                    buf = []
                j = i + m.end()
                if j < len(body) and body[j] == "[" and not m.group(1):
                    k = body.find("]", j)
                    idx_text = body[j + 1:k]
                    if k == -1 or not re.fullmatch(r"-?\d+|\$\w+", idx_text):
                        raise PerlUnsupported("complex interpolation is not in the native subset")
                    idx_fn = _const(int(idx_text)) if idx_text.lstrip("-").isdigit() else \
                        _scalar_of(idx_text[1:])
                    parts.append(_element_text(name, idx_fn))
                    i = k + 1
                    continue
                if j + 1 < len(body) and body[j:j + 2] == "->":
                    raise PerlUnsupported("method calls in strings are not in the native subset")
                parts.append(_scalar_text(name))
                i = j
                continue
        if ch == "@" and re.match(r"@[A-Za-z_]", body[i:]):
            m = re.match(r"@(\w+)", body[i:])
            assert m
            if buf:
                parts.append("".join(buf))
                buf = []
            parts.append(_array_text(m.group(1)))
            i += m.end()
            continue
        buf.append(ch)
        i += 1
    if buf:
        parts.append("".join(buf))
    if all(isinstance(p, str) for p in parts):
        return _const("".join(p for p in parts if isinstance(p, str)))
    return lambda s: "".join(p if isinstance(p, str) else p(s) for p in parts)


def _method_call(receiver: str, method: str, args: list[Fn]) -> Fn:
    def _run(s: PerlState) -> Value:
        obj = _get_scalar(s, receiver)
        vals = [a(s) for a in args]
        if isinstance(obj, GeneratorProxy):
            return getattr(obj, method)(*vals)
        return _prng_call(obj, method, vals)
    return _run


def _prng_call(obj: Any, method: str, vals: list[Value]) -> Value:
    if not isinstance(obj, Prng):
        raise PerlRuntimeError(f"Can't call method \"{method}\" on an undefined value")
    if method in ("arrayElement", "shuffleArray"):
        arr = vals[0] if vals and isinstance(vals[0], list) else _flatten(vals)
        return getattr(obj, method)(arr)
    if method in ("int", "uint16"):
        lo = to_num(vals[0]) if vals else 0
        hi = to_num(vals[1]) if len(vals) > 1 else 65535
        return obj.int(int(lo), int(hi))
    if method == "float":
        return obj.float(to_num(vals[0]) if vals else 0, to_num(vals[1]) if len(vals) > 1 else 1)
    return getattr(obj, method)(*vals)


def _sprintf(fmt: Value, *args: Value) -> str:
    text = to_str(fmt)
    out: list[str] = []
    it = iter(args)
    pos = 0
    for m in re.finditer(r"%([-+ 0#]*\d*(?:\.\d+)?)([sdifxXoeEgGcu%])", text):
        out.append(text[pos:m.start()])
        flags, conv = m.group(1), m.group(2)
        if conv == "%":
            out.append("%")
        else:
            v = next(it, None)
            if conv in "diu":
                out.append(("%" + flags + "d") % int(to_num(v)))
            elif conv in "xXo":
                out.append(("%" + flags + conv) % int(to_num(v)))
            elif conv in "feEgG":
                out.append(("%" + flags + conv) % float(to_num(v)))
            elif conv == "c":
                out.append(chr(int(to_num(v))))
            else:
                out.append(("%" + flags + "s") % to_str(v))
        pos = m.end()
    out.append(text[pos:])
    return "".join(out)


def _call(name: str, args: list[Fn]) -> Fn:
    if name == "time":
        return lambda s: int(_time.time())
    if name == "join":
        if not args:
            raise PerlUnsupported("join without arguments")
        sep, rest = args[0], args[1:]
        return lambda s: to_str(sep(s)).join(to_str(v) for v in _flatten([a(s) for a in rest]))
    if name == "sprintf":
        return lambda s: _sprintf(*_flatten([a(s) for a in args]))
    if name == "substr":
        def _run_substr(s: PerlState) -> Value:
            vals = [a(s) for a in args]
            text = to_str(vals[0]) if vals else ""
            off = int(to_num(vals[1])) if len(vals) > 1 else 0
            if len(vals) > 2:
                ln = int(to_num(vals[2]))
                start = off if off >= 0 else len(text) + off
                return text[start:start + ln] if ln >= 0 else text[start:ln]
            return text[off:]
        return _run_substr
    if name == "rand":
        arg = args[0] if args else _const(1)
        return lambda s: s.prng.random() * to_num(arg(s))
    if name == "scalar":
        arg = args[0] if args else _const(None)
        return lambda s: (lambda v: len(v) if isinstance(v, (list, dict)) else v)(arg(s))
    arg = args[0] if args else _const(None)
    unary: dict[str, Callable[[Value], Value]] = {
        "abs": lambda v: _norm_num(abs(to_num(v))),
        "int": lambda v: int(to_num(v)),
        "length": lambda v: None if v is None else len(to_str(v)),
        "lc": lambda v: to_str(v).lower(),
        "uc": lambda v: to_str(v).upper(),
        "lcfirst": lambda v: to_str(v)[:1].lower() + to_str(v)[1:],
        "ucfirst": lambda v: to_str(v)[:1].upper() + to_str(v)[1:],
        "defined": lambda v: _bool(v is not None),
        "chr": lambda v: chr(int(to_num(v))),
        "ord": lambda v: ord(to_str(v)[0]) if to_str(v) else 0,
    }
    if name not in unary:
        raise PerlUnsupported(f"'{name}' is not in the native subset")
    f = unary[name]
    return lambda s: f(arg(s))


# ---------------------------------------------------------------- API
class CompiledBlock:
    """A Perl block compiled to Python closures; call :meth:`run` with a thread's state."""

    def __init__(self, code: str, fn: Fn) -> None:
        self.code = code
        self._fn = fn

    def run(self, state: PerlState) -> Value:
        """Evaluate the block and return its value (the last statement's, or ``return``'s)."""
        saved = state.local
        state.local = None
        try:
            return self._fn(state)
        except _Return as ret:
            return ret.value
        except PerlRuntimeError:
            raise
        except (TypeError, ValueError, AttributeError, IndexError, KeyError,
                OverflowError, RecursionError) as exc:
            raise PerlRuntimeError(str(exc)) from exc
        finally:
            state.local = saved


def block_body(code: str) -> str:
    """The code inside a ``{ ... }`` block (a ``$variable`` token is its own code)."""
    text = code.strip()
    if text.startswith("{") and text.endswith("}"):
        return text[1:-1]
    return text


def compile_block(code: str) -> CompiledBlock:
    """Compile a grammar's Perl block (``{ ... }`` or ``$var``); PerlUnsupported if outside the subset."""
    parser = _Parser(block_body(code))
    fn = parser.program()
    if parser.peek().kind != "eof":
        raise PerlUnsupported(f"unexpected {parser.peek().text!r}")
    return CompiledBlock(code, fn)
