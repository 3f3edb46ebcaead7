"""The pseudo-random generator and the value built-ins of the grammar language.

:class:`Prng` is the only source of randomness of a generator thread or of
gendata: one ``random.Random`` per instance, seeded from the run seed (never
the global ``random``), so the same seed gives the same values.  Its methods
keep randgen's names (``int``, ``uint16``, ``arrayElement``, ``digit``,
``letter``...), because embedded Perl blocks call them as ``$prng->int(1,5)``.

:func:`field_type_kind` and :func:`field_type_value` implement randgen's
"field type" tokens: ``_int``, ``_tinyint_unsigned``, ``_varchar(32)``,
``_char``, ``_english``, ``_date``, ``_quid``, ``_hex``... and the same value
kinds in gendata (``digit``, ``letter``, ``english``, ``char(255)``...).
:func:`grammar_value` adds randgen's quoting for a token in a sentence.
"""
from __future__ import annotations

import builtins
import json
import random
import re
from types import MappingProxyType
from typing import Any, Mapping, Sequence, TypeVar

from .words import DICTIONARIES

T = TypeVar("T")

# value kinds of a field type
NUMERIC = "numeric"
FLOAT = "float"
STRING = "string"
DATE = "date"
TIME = "time"
DATETIME = "datetime"
TIMESTAMP = "timestamp"
YEAR = "year"
ENUM = "enum"
SET = "set"
BLOB = "blob"
DIGIT = "digit"
LETTER = "letter"
NULL = "null"
DICT = "dict"
ASCII = "ascii"
EMPTY = "empty"
HEX = "hex"
QUID = "quid"
BIT = "bit"
JSON = "json"

TYPE_KINDS: Mapping[str, str] = MappingProxyType({
    "bit": BIT, "bool": NUMERIC, "boolean": NUMERIC, "tinyint": NUMERIC, "smallint": NUMERIC,
    "mediumint": NUMERIC, "int": NUMERIC, "integer": NUMERIC, "bigint": NUMERIC,
    "float": FLOAT, "double": FLOAT, "decimal": NUMERIC, "dec": NUMERIC, "numeric": NUMERIC,
    "fixed": NUMERIC, "char": STRING, "varchar": STRING, "binary": BLOB, "varbinary": BLOB,
    "tinyblob": BLOB, "blob": BLOB, "mediumblob": BLOB, "longblob": BLOB, "tinytext": STRING,
    "text": STRING, "mediumtext": STRING, "longtext": STRING, "date": DATE, "time": TIME,
    "datetime": DATETIME, "timestamp": TIMESTAMP, "year": YEAR, "enum": ENUM, "set": SET,
    "null": NULL, "letter": LETTER, "digit": DIGIT, "data": BLOB, "ascii": ASCII,
    "string": STRING, "empty": EMPTY, "hex": HEX, "quid": QUID, "json": JSON,
    "jsonpath": JSON, "jsonkey": JSON, "jsonvalue": JSON, "jsonarray": JSON, "jsonpair": JSON,
    "jsonobject": JSON,
})

INT_RANGES: Mapping[str, tuple[int, int]] = MappingProxyType({
    "bool": (0, 1), "boolean": (0, 1),
    "tinyint": (-128, 127), "smallint": (-32768, 32767), "mediumint": (-8388608, 8388607),
    "int": (-2147483648, 2147483647), "integer": (-2147483648, 2147483647),
    "bigint": (-9223372036854775808, 9223372036854775807),
    "tinyint_unsigned": (0, 255), "tinyint_positive": (1, 255),
    "smallint_unsigned": (0, 65535), "smallint_positive": (1, 65535),
    "mediumint_unsigned": (0, 16777215), "mediumint_positive": (1, 16777215),
    "int_unsigned": (0, 4294967295), "int_positive": (1, 4294967295),
    "integer_unsigned": (0, 4294967295), "integer_positive": (1, 4294967295),
    "bigint_unsigned": (0, 18446744073709551615), "bigint_positive": (1, 18446744073709551615),
    "decimal": (-99999, 99999), "dec": (-99999, 99999), "numeric": (-99999, 99999),
    "fixed": (-99999, 99999),
})

FLOAT_RANGES: Mapping[str, tuple[float, float]] = MappingProxyType({
    "float": (-9223372036854775808.0, 9223372036854775807.0),
    "double": (-1e80, 1e80),
    "double_nano": (-1e-68, 1e-68),
})

ASCII_LOWER = "abcdefghijklmnopqrstuvwxyz"
HEX_DIGITS = "0123456789ABCDEF"
STRBUF_SIZE = 1024
_TYPE_RE = re.compile(r"^_?([A-Za-z]*)")
_FULL_RE = re.compile(r"^_?([A-Za-z_]*)")
_LEN_RE = re.compile(r"\((.*?)\)")


class Prng:
    """randgen's PRNG interface over one private ``random.Random``.

    ``varchar_length`` is the default length of ``_char``/``_varchar``/
    ``string()`` without an explicit length (randgen's ``--varchar-length``).
    """

    def __init__(self, seed: int | str, varchar_length: int = 1) -> None:
        self._rng = random.Random(seed)
        self._random = self._rng.random
        self.seed = seed
        self.varchar_length = max(1, varchar_length)
        self._strbuf: str | None = None

    # ------------------------------------------------------------ numbers
    def int(self, low: Any = 0, high: Any = 65535) -> int:
        """A uniform integer in [low, high] (any size)."""
        lo, hi = _as_int(low), _as_int(high)
        if hi < lo:
            lo, hi = hi, lo
        span = hi - lo + 1
        if span <= 1 << 48:
            return lo + int(self._random() * span)
        return lo + self._rng.randrange(span)

    uint16 = int

    def float(self, low: Any = 0.0, high: Any = 1.0) -> builtins.float:
        """A uniform float in [low, high]."""
        lo, hi = float(low), float(high)
        return lo + self._random() * (hi - lo)

    def digit(self) -> builtins.int:
        """0..9."""
        return int(self._random() * 10)

    def positive_digit(self) -> builtins.int:
        """1..9."""
        return 1 + int(self._random() * 9)

    def random(self) -> builtins.float:
        """A float in [0, 1)."""
        return self._random()

    # ------------------------------------------------------------ choices
    def arrayElement(self, items: Sequence[T] | None) -> T | None:  # noqa: N802 - randgen's name
        """A uniformly chosen element, or None for an empty list."""
        if not items:
            return None
        return items[int(self._random() * len(items))]

    def weighted_index(self, cumulative: Sequence[builtins.float]) -> builtins.int:
        """An index chosen by cumulative weights (the last one is the total)."""
        point = self._random() * cumulative[-1]
        for i, edge in enumerate(cumulative):
            if point < edge:
                return i
        return len(cumulative) - 1

    def shuffleArray(self, items: list[T]) -> list[T]:  # noqa: N802 - randgen's name
        """Shuffle items in place (Fisher-Yates) and return them."""
        for i in range(len(items) - 1, 0, -1):
            j = int(self._random() * (i + 1))
            items[i], items[j] = items[j], items[i]
        return items

    # ------------------------------------------------------------ strings
    def letter(self) -> str:
        """One lowercase letter."""
        return ASCII_LOWER[int(self._random() * 26)]

    def string(self, length: Any = None) -> str:
        """A lowercase string of random length 1..length (default varchar_length)."""
        n = self.varchar_length if length is None or length == "" else _as_int(length)
        if n <= 0:
            return ""
        if n == 1:
            return self.letter()
        # randgen keeps a rolling buffer of random letters and slices it
        if self._strbuf is None:
            self._strbuf = "".join(self.letter() for _ in range(STRBUF_SIZE))
        else:
            self._strbuf = self._strbuf[1:] + self.letter()
        actual = self.int(1, n)
        if actual <= STRBUF_SIZE:
            return self._strbuf[:actual]
        reps, rest = divmod(actual, STRBUF_SIZE)
        return self._strbuf * reps + self._strbuf[:rest]

    def ascii(self, length: Any = None) -> str:
        """Printable ASCII (no quotes or backslashes) of random length 1..length."""
        n = self.varchar_length if length is None else _as_int(length)
        if n <= 0:
            return ""
        chars = [chr(32 + int(self._random() * 95)) for _ in range(self.int(1, n))]
        return "".join(c for c in chars if c not in "'\"\\") or "a"

    def hex(self, length: Any = None) -> str:
        """``0x`` and 1..length (default 4) hex digits."""
        n = 4 if length is None or length == "" else max(1, _as_int(length))
        return "0x" + "".join(HEX_DIGITS[int(self._random() * 16)] for _ in range(self.int(1, n)))

    def quid(self) -> str:
        """Five uppercase letters."""
        return "".join(chr(65 + int(self._random() * 26)) for _ in range(5))

    def bit(self, length: Any = None) -> str:
        """A bit literal ``b'0101'`` of 1..length (default 1) bits."""
        n = 1 if length is None or length == "" else max(1, _as_int(length))
        return "b'" + "".join("1" if self._random() < 0.5 else "0"
                              for _ in range(self.int(1, n))) + "'"

    def fromDictionary(self, name: str) -> str | None:  # noqa: N802 - randgen's name
        """A word from a dictionary (english, states, places)."""
        return self.arrayElement(DICTIONARIES.get(name, ()))

    def fieldType(self, spec: Any) -> str | None:  # noqa: N802 - randgen's name
        """A raw value for a field type (``int``, ``varchar(10)``, ``date``...); None when unknown."""
        try:
            return field_type_value(self, str(spec or ""))
        except ValueError:
            return None

    def isFieldType(self, spec: Any) -> bool:  # noqa: N802 - randgen's name
        """True when spec names a field type randgen generates values for."""
        text = str(spec or "")
        return field_type_kind(text[1:] if text.startswith("_") else text) is not None

    def english(self) -> str:
        """A word from the english dictionary."""
        return str(self.fromDictionary("english"))

    def text(self, words: builtins.int) -> str:
        """Up to ``words`` english words joined by spaces (randgen's ``_data``)."""
        return " ".join(self.english() for _ in range(self.int(1, max(1, words))))

    # ------------------------------------------------------------ temporal
    def date(self) -> str:
        """YYYY-MM-DD in 1971..2035."""
        return f"{self.int(1971, 2035):04d}-{self.int(1, 12):02d}-{self.int(1, 28):02d}"

    def year(self) -> builtins.int:
        """1971..2035."""
        return self.int(1971, 2035)

    def time(self) -> str:
        """HH:MM:SS.ffffff."""
        return (f"{self.int(0, 23):02d}:{self.int(0, 59):02d}:{self.int(0, 59):02d}."
                f"{self.int(0, 999999):06d}")

    def datetime(self) -> str:
        """A date and a time."""
        return f"{self.date()} {self.time()}"

    def timestamp(self) -> str:
        """YYYYMMDDHHMMSS.ffffff."""
        return (f"{self.int(1971, 2035):04d}{self.int(1, 12):02d}{self.int(1, 28):02d}"
                f"{self.int(0, 23):02d}{self.int(0, 59):02d}{self.int(0, 59):02d}."
                f"{self.int(0, 999999):06d}")

    def enum(self) -> str:
        """A letter (gendata's enum columns hold 'a'..'z')."""
        return self.letter()

    def set(self) -> str:
        """1..10 letters joined by commas."""
        return ",".join(self.letter() for _ in range(self.digit() + 1))

    # ------------------------------------------------------------ JSON
    def json(self, length: Any = None) -> str:
        """A JSON document with about ``length`` values (default 0..8)."""
        n = self.int(0, 8) if length is None or length == "" else _as_int(length)
        if n <= 0:
            return ""
        return self.json_array(n - 1) if self._random() < 0.5 else self.json_object(n - 1)

    def json_value(self, depth: builtins.int = 0) -> str:
        """A JSON value: mostly strings and numbers, sometimes nested."""
        pick = self.int(0, 9)
        if pick == 0 and depth < 2:
            return self.json_object(self.int(0, 3), depth + 1)
        if pick == 1 and depth < 2:
            return self.json_array(self.int(0, 4), depth + 1)
        if pick <= 4:
            return json.dumps(self.string(self.int(0, 8)))
        if pick <= 7:
            return str(self.int(-1000, 1000))
        return ("true", "false", "null")[self.int(0, 2)]

    def json_array(self, n: builtins.int = 3, depth: builtins.int = 0) -> str:
        """A JSON array of n values."""
        return "[" + ",".join(self.json_value(depth) for _ in range(n)) + "]"

    def json_key(self) -> str:
        """An english word as a JSON key."""
        return self.english()

    def json_pair(self, depth: builtins.int = 0) -> str:
        """``"key": value``."""
        return f'"{self.json_key()}": {self.json_value(depth)}'

    def json_object(self, n: builtins.int = 3, depth: builtins.int = 0) -> str:
        """A JSON object of n pairs."""
        return "{" + ",".join(self.json_pair(depth) for _ in range(n)) + "}"

    def jsonpath(self) -> str:
        """A JSON path such as ``$.key[2]``."""
        path = "$"
        for _ in range(self.int(0, 3)):
            kind = self.int(0, 2)
            if kind == 0:
                path += f"[{self.int(0, 5)}]"
            elif kind == 1:
                path += "[*]"
            else:
                path += "." + self.json_key()
        return path


def _as_int(value: Any) -> int:
    """Perl-ish numeric conversion of a PRNG argument."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value)
    if value is None:
        return 0
    m = re.match(r"\s*([-+]?\d+)", str(value))
    return int(m.group(1)) if m else 0


def field_type_kind(token: str) -> str | None:
    """The value kind of a field-type token (``_int``, ``varchar(10)``, ``english``), or None."""
    m = _TYPE_RE.match(token)
    base = m.group(1).lower() if m else ""
    if base in TYPE_KINDS:
        return TYPE_KINDS[base]
    if base in DICTIONARIES:
        return DICT
    return None


def _parse_field_type(token: str) -> tuple[str, str, str, str | None]:
    """(kind, base, full, length) of a field-type token: ``_tinyint_unsigned`` is of kind
    NUMERIC, base ``tinyint``, full ``tinyint_unsigned``; ``_varchar(8)``'s length is
    ``8``.  ValueError for an unknown type."""
    spec = token[1:] if token.startswith("_") else token
    spec = spec.replace(" ", "_", 1)
    base_m = _TYPE_RE.match(spec)
    base = base_m.group(1).lower() if base_m else ""
    full_m = _FULL_RE.match(spec)
    full = (full_m.group(1).lower() if full_m else base).rstrip("_")
    len_m = _LEN_RE.search(spec)
    length = len_m.group(1) if len_m else None
    kind = TYPE_KINDS.get(base) or (DICT if base in DICTIONARIES else None)
    if kind is None:
        raise ValueError(f"unknown field type {token!r}")
    return kind, base, full, length


def field_type_value(prng: Prng, token: str) -> str | None:
    """A raw (unquoted) value for a field-type token; None means SQL NULL.

    ``_int`` gives an integer of INT's range, ``_tinyint_unsigned`` 0..255,
    ``_varchar(8)`` a string of 1..8 letters, ``char`` a string of
    1..varchar_length letters, ``english`` a word, ``date`` a date...
    """
    kind, base, full, length = _parse_field_type(token)
    if kind == DIGIT:
        return str(prng.digit())
    if kind == LETTER:
        return prng.letter()
    if kind == NUMERIC:
        lo, hi = INT_RANGES.get(full) or INT_RANGES.get(base) or (-2147483648, 2147483647)
        return str(prng.int(lo, hi))
    if kind == FLOAT:
        lo_f, hi_f = FLOAT_RANGES.get(full) or FLOAT_RANGES.get(base) or (-1e6, 1e6)
        return repr(prng.float(lo_f, hi_f))
    if kind == STRING:
        return prng.string(None if length is None else _as_int(length))
    if kind == DATE:
        return prng.date()
    if kind == YEAR:
        return str(prng.year())
    if kind == TIME:
        return prng.time()
    if kind == DATETIME:
        return prng.datetime()
    if kind == TIMESTAMP:
        return prng.timestamp()
    if kind == ENUM:
        return prng.enum()
    if kind == SET:
        return prng.set()
    if kind == BLOB:
        return prng.text(20 if length is None else max(1, _as_int(length) // 6))
    if kind == NULL:
        return None
    if kind == ASCII:
        return prng.ascii(None if length is None else _as_int(length))
    if kind == EMPTY:
        return ""
    if kind == HEX:
        return prng.hex(length)
    if kind == QUID:
        return prng.quid()
    if kind == BIT:
        return prng.bit(length)
    if kind == DICT:
        return prng.fromDictionary(base)
    return _json_value(prng, base, length)


def _json_value(prng: Prng, base: str, length: str | None) -> str:
    if base == "jsonpath":
        return prng.jsonpath()
    if base == "jsonkey":
        return prng.json_key()
    if base == "jsonvalue":
        return prng.json_value()
    if base == "jsonarray":
        return prng.json_array(prng.int(0, 4))
    if base == "jsonpair":
        return prng.json_pair()
    if base == "jsonobject":
        return prng.json_object(prng.int(0, 4))
    return prng.json(length)


UNQUOTED_KINDS = frozenset({NUMERIC, FLOAT, DIGIT, LETTER, HEX, BIT})


def grammar_value(prng: Prng, token: str) -> str:
    """The text a field-type token becomes in a sentence, quoted as randgen quotes it.

    Numbers, ``_digit``, ``_letter``, ``_hex`` and ``_bit`` are not quoted;
    ``_null`` gives ``NULL``; everything else is quoted with single quotes, or
    double quotes when the value holds a single quote.  A token ending with a
    backtick (```table _digit` ``) gets it back.
    """
    kind = field_type_kind(token)
    value = field_type_value(prng, token.rstrip("`"))
    if value is None:
        text = "NULL"
    elif kind in UNQUOTED_KINDS or token.endswith("`"):
        text = value
    elif "'" in value:
        text = '"' + value.replace('"', '\\"') + '"'
    else:
        text = "'" + value + "'"
    if token.endswith("`") and "`" not in text:
        text += "`"
    return text
