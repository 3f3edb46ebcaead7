"""Typed SQL expressions as trees: :class:`Expr`, and the catalog of MariaDB's functions
and operators the generator draws from.

An :class:`Expr` is a node: a leaf (a column, a literal) whose ``template`` is its
SQL, or an operation whose ``template`` places its arguments (``"ABS({0})"``,
``"({0} BETWEEN {1} AND {2})"``).  Each node knows its **family** (what it
returns: lib.hunt.surface.types.FAMILIES, plus ``bool`` for predicates), the
collation of a string (``""``: coercible, as a literal is), the **features** it
uses (function and operator names, for the coverage figures) and why it is not
deterministic (``nondet``: ``random``, ``clock``, ``session``, ``sequence``,
``order``, ``float``, ``ties``...; empty when it is).  An oracle can walk the
tree (``args``), replace a node (:meth:`Expr.replace_at`) and render it again
(:meth:`Expr.sql`): EET's rewrites, CODDTest's constant folding and TLP's
partitions work on the trees, not on strings.

:data:`CATALOG` lists the functions and operators by result family: their
template, argument families, and the nondeterminism they bring.  Argument
families: a family name, ``num`` (int, dec or real), ``any``, or a fixed set of
words the generator fills in (``unit``, ``path``...).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Iterator, Mapping

# why an expression may give another answer to the same query on the same data
NONDETERMINISM: Mapping[str, str] = MappingProxyType({
    "random": "RAND(), UUID(), UUID_SHORT(), RANDOM_BYTES(): a new value per call",
    "clock": "NOW(), CURDATE(), SYSDATE(), UNIX_TIMESTAMP() without argument: the time",
    "session": "CONNECTION_ID(), LAST_INSERT_ID(), ROW_COUNT(), FOUND_ROWS(): the session",
    "sequence": "NEXTVAL(), LASTVAL(), SETVAL(): a sequence's state, changed by the call",
    "order": "the order rows are seen in: GROUP_CONCAT/JSON_ARRAYAGG/JSON_OBJECTAGG without "
             "ORDER BY, LIMIT without a total ORDER BY, a window function over ties, RAND(N)",
    "float": "floating-point aggregation (SUM/AVG/STD/VARIANCE of FLOAT/DOUBLE): the last "
             "digits depend on the order values are added in",
    "ties": "which of equal values under a collation is returned (MIN/MAX/GROUP BY/DISTINCT "
            "of 'a' and 'A' under _ci; of 'ss' and 'ß' under german2)",
    "history": "system-versioned history (FOR SYSTEM_TIME AS OF a time): what the clock and "
               "earlier writes left",
    "warning": "a value the server accepts only with a warning that may differ between plans",
})


@dataclass(frozen=True)
class Expr:
    """An expression node (see the module docstring)."""

    template: str
    args: tuple["Expr", ...] = ()
    family: str = "int"
    collation: str = ""              # a string's collation ("": coercible)
    features: frozenset[str] = frozenset()
    nondet: frozenset[str] = frozenset()
    aggregate: bool = False           # this node is an aggregate function
    window: bool = False              # this node is a window function
    leaf: str = ""                    # "column", "literal", "param" for leaves
    table: str = ""                   # a column leaf: its table alias
    nullable: bool = True

    def sql(self) -> str:
        """The expression as SQL."""
        if not self.args:
            return self.template
        return self.template.format(*(a.sql() for a in self.args))

    def walk(self) -> Iterator["Expr"]:
        """This node and every node below it, depth first."""
        yield self
        for arg in self.args:
            yield from arg.walk()

    def all_features(self) -> frozenset[str]:
        """The features of the whole tree."""
        out: set[str] = set()
        for node in self.walk():
            out |= node.features
        return frozenset(out)

    def all_nondet(self) -> frozenset[str]:
        """Why the whole tree may not be deterministic (empty: it is)."""
        out: set[str] = set()
        for node in self.walk():
            out |= node.nondet
        return frozenset(out)

    def has_aggregate(self) -> bool:
        """An aggregate anywhere in the tree (not inside a subquery)."""
        return any(n.aggregate for n in self.walk())

    def has_window(self) -> bool:
        """A window function anywhere in the tree."""
        return any(n.window for n in self.walk())

    def columns(self) -> list["Expr"]:
        """The column leaves of the tree."""
        return [n for n in self.walk() if n.leaf == "column"]

    def paths(self) -> Iterator[tuple[int, ...]]:
        """The path (argument indexes from the root) of every node, depth first."""
        yield ()
        for i, arg in enumerate(self.args):
            for path in arg.paths():
                yield (i, *path)

    def at(self, path: tuple[int, ...]) -> "Expr":
        """The node at a path."""
        node = self
        for i in path:
            node = node.args[i]
        return node

    def replace_at(self, path: tuple[int, ...], new: "Expr") -> "Expr":
        """A copy of the tree with the node at path replaced by new."""
        if not path:
            return new
        head, rest = path[0], path[1:]
        args = list(self.args)
        args[head] = args[head].replace_at(rest, new)
        return replace(self, args=tuple(args))


def column(ref: str, family: str, collation: str = "", table: str = "",
           nullable: bool = True) -> Expr:
    """A column leaf (``t1.c3``)."""
    return Expr(ref, family=family, collation=collation, leaf="column", table=table,
                nullable=nullable)


def literal(text: str, family: str) -> Expr:
    """A literal leaf."""
    return Expr(text, family=family, leaf="literal", nullable=text.upper() == "NULL")


def op(template: str, args: tuple[Expr, ...], family: str, name: str, collation: str = "",
       nondet: frozenset[str] = frozenset(), aggregate: bool = False,
       window: bool = False) -> Expr:
    """An operation node."""
    return Expr(template, args, family, collation, frozenset({name}), nondet, aggregate, window)


@dataclass(frozen=True)
class Function:
    """A catalog entry: a function or operator returning ``family``."""

    name: str                        # the feature name (coverage)
    template: str
    args: tuple[str, ...]            # argument families, or word lists ("unit", "path", ...)
    family: str
    nondet: frozenset[str] = frozenset()
    same_collation: bool = False     # string arguments must share a collation
    keeps_collation: bool = False    # the result has the first string argument's collation
    collation: str = ""              # the result's own collation (JSON_TYPE: utf8mb3)


def _f(name: str, template: str, args: tuple[str, ...], family: str, *nondet: str,
       same: bool = False, keeps: bool = False, collation: str = "") -> Function:
    return Function(name, template, args, family, frozenset(nondet), same, keeps, collation)


# words the generator fills in for an argument of that kind
WORDS: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "unit": ("DAY", "MONTH", "YEAR", "HOUR", "MINUTE", "SECOND", "WEEK", "QUARTER",
             "MICROSECOND", "DAY_HOUR", "YEAR_MONTH"),
    "tsunit": ("DAY", "MONTH", "YEAR", "HOUR", "MINUTE", "SECOND", "WEEK", "QUARTER",
               "MICROSECOND"),
    "path": ("'$'", "'$.a'", "'$.b'", "'$[0]'", "'$[1]'", "'$.a[1]'", "'$.a.b'", "'$**.c'",
             "'$[*]'", "'$.k'", "'$.A'"),
    "small": ("0", "1", "2", "3", "-1", "5"),
    "scale": ("0", "1", "-1", "0.5", "-0.25"),
    "count": ("0", "1", "2", "3", "4"),
    "format": ("'%Y-%m-%d'", "'%H:%i:%s.%f'", "'%a %b %e %Y'", "'%W %U %u %V %X'", "'%j %p %r'",
               "'%y%m%d%H%i%S'", "'%%'"),
    "regex": ("'^a'", "'b$'", "'[0-9]+'", "'^$'", "'a|b'", "'(?i)ä'", "'.'", "'^.{2,3}$'"),
    "like": ("'a%'", "'%a%'", "'%b'", "'_'", "'__'", "'%'", "'a_'", "'%e%'", "''", "'%\\_%'",
             "'A%'", "'ä%'"),
    "charset": ("utf8mb4", "latin1", "ascii", "utf8mb3", "binary"),
    "sep": ("','", "''", "'|'"),
    "tz": ("'+00:00'", "'+05:30'", "'-12:00'", "'+14:00'"),
    "sha": ("0", "224", "256", "512"),
    "weekmode": ("0", "1", "3", "7"),
})

NUM = ("int", "dec", "real")


# integers (never overflowing at the types' edges: no + - * of two integers)
_INTEGERS: tuple[Function, ...] = (
    _f("DIV", "({0} DIV {1})", ("int", "count"), "int"),
    _f("MOD", "({0} MOD {1})", ("int", "int"), "int"),
    _f("%", "({0} % {1})", ("dec", "int"), "dec"),
    _f("&", "({0} & {1})", ("int", "int"), "int"),
    _f("|", "({0} | {1})", ("int", "int"), "int"),
    _f("^", "({0} ^ {1})", ("int", "int"), "int"),
    _f("~", "(~{0})", ("int",), "int"),
    _f(">>", "({0} >> {1})", ("int", "count"), "int"),
    _f("<<", "({0} << {1})", ("int", "count"), "int"),
    _f("SIGN", "SIGN({0})", ("num",), "int"),
    _f("BIT_COUNT", "BIT_COUNT({0})", ("int",), "int"),
    _f("CEIL", "CEIL({0})", ("dec",), "int"),
    _f("FLOOR", "FLOOR({0})", ("dec",), "int"),
    _f("LENGTH", "LENGTH({0})", ("str",), "int"),
    _f("CHAR_LENGTH", "CHAR_LENGTH({0})", ("str",), "int"),
    _f("BIT_LENGTH", "BIT_LENGTH({0})", ("str",), "int"),
    _f("OCTET_LENGTH", "OCTET_LENGTH({0})", ("bin",), "int"),
    _f("ASCII", "ASCII({0})", ("str",), "int"),
    _f("ORD", "ORD({0})", ("str",), "int"),
    _f("LOCATE", "LOCATE({0}, {1})", ("str", "str"), "int", same=True),
    _f("INSTR", "INSTR({0}, {1})", ("str", "str"), "int", same=True),
    _f("STRCMP", "STRCMP({0}, {1})", ("str", "str"), "int", same=True),
    _f("FIELD", "FIELD({0}, {1}, {2})", ("str", "str", "str"), "int", same=True),
    _f("FIND_IN_SET", "FIND_IN_SET({0}, {1})", ("str", "str"), "int", same=True),
    _f("CRC32", "CRC32({0})", ("str",), "int"),
    _f("YEAR", "YEAR({0})", ("date",), "int"),
    _f("MONTH", "MONTH({0})", ("datetime",), "int"),
    _f("DAYOFMONTH", "DAYOFMONTH({0})", ("date",), "int"),
    _f("HOUR", "HOUR({0})", ("time",), "int"),
    _f("MINUTE", "MINUTE({0})", ("datetime",), "int"),
    _f("SECOND", "SECOND({0})", ("time",), "int"),
    _f("MICROSECOND", "MICROSECOND({0})", ("datetime",), "int"),
    _f("DAYOFWEEK", "DAYOFWEEK({0})", ("date",), "int"),
    _f("DAYOFYEAR", "DAYOFYEAR({0})", ("datetime",), "int"),
    _f("WEEK", "WEEK({0}, {1})", ("date", "weekmode"), "int"),
    _f("YEARWEEK", "YEARWEEK({0})", ("date",), "int"),
    _f("QUARTER", "QUARTER({0})", ("date",), "int"),
    _f("TO_DAYS", "TO_DAYS({0})", ("date",), "int"),
    _f("TO_SECONDS", "TO_SECONDS({0})", ("datetime",), "int"),
    _f("DATEDIFF", "DATEDIFF({0}, {1})", ("date", "datetime"), "int"),
    _f("TIMESTAMPDIFF", "TIMESTAMPDIFF({0}, {1}, {2})", ("tsunit", "datetime", "date"), "int"),
    _f("EXTRACT", "EXTRACT({0} FROM {1})", ("unit", "datetime"), "int"),
    _f("TIME_TO_SEC", "TIME_TO_SEC({0})", ("time",), "int"),
    _f("PERIOD_DIFF", "PERIOD_DIFF({0}, {1})", ("small", "small"), "int"),
    _f("INTERVAL", "INTERVAL({0}, 0, 10, 100)", ("num",), "int"),
    _f("JSON_LENGTH", "JSON_LENGTH({0})", ("json",), "int"),
    _f("JSON_DEPTH", "JSON_DEPTH({0})", ("json",), "int"),
    _f("JSON_VALID", "JSON_VALID({0})", ("str",), "int"),
    _f("CAST_SIGNED", "CAST({0} AS SIGNED)", ("any",), "int"),
    _f("CAST_UNSIGNED", "CAST({0} AS UNSIGNED)", ("num",), "int"),
    _f("ROUND", "ROUND({0})", ("dec",), "dec"),
    _f("TRUNCATE", "TRUNCATE({0}, {1})", ("dec", "small"), "dec"),
    _f("ST_SRID", "ST_SRID({0})", ("geom",), "int"),
    _f("ST_IsEmpty", "ST_IsEmpty({0})", ("geom",), "int"),
    _f("ST_Dimension", "ST_Dimension({0})", ("geom",), "int"),
    _f("UNCOMPRESSED_LENGTH", "UNCOMPRESSED_LENGTH(COMPRESS({0}))", ("str",), "int"),
    _f("IS_IPV4", "IS_IPV4({0})", ("str",), "int"),
    _f("BENCHMARK0", "BENCHMARK(0, {0})", ("int",), "int"),
)

# decimals: arithmetic with a decimal operand (no integer overflow)
_DECIMALS: tuple[Function, ...] = (
    _f("+", "({0} + {1})", ("dec", "num"), "dec"),
    _f("-", "({0} - {1})", ("dec", "num"), "dec"),
    _f("*", "({0} * {1})", ("dec", "small"), "dec"),
    _f("/", "({0} / {1})", ("dec", "dec"), "dec"),
    _f("neg", "(- {0})", ("dec",), "dec"),
    _f("ABS", "ABS({0})", ("dec",), "dec"),
    _f("ROUND", "ROUND({0}, {1})", ("dec", "small"), "dec"),
    _f("CAST_DECIMAL", "CAST({0} AS DECIMAL(30,10))", ("any",), "dec"),
    _f("GREATEST", "GREATEST({0}, {1})", ("dec", "dec"), "dec"),
    _f("LEAST", "LEAST({0}, {1})", ("dec", "dec"), "dec"),
    _f("CONV", "CONV({0}, 10, 16)", ("int",), "str"),
    _f("UNIX_TIMESTAMP", "UNIX_TIMESTAMP({0})", ("datetime",), "int"),
)

# reals: nothing that overflows a double at its edges
_REALS: tuple[Function, ...] = (
    _f("+", "({0} + {1})", ("real", "num"), "real"),
    _f("-", "({0} - {1})", ("real", "num"), "real"),
    _f("*", "({0} * {1})", ("real", "scale"), "real"),
    _f("/", "({0} / {1})", ("real", "small"), "real"),
    _f("SQRT", "SQRT({0})", ("num",), "real"),
    _f("LN", "LN({0})", ("num",), "real"),
    _f("LOG", "LOG({0})", ("num",), "real"),
    _f("LOG2", "LOG2({0})", ("num",), "real"),
    _f("LOG10", "LOG10({0})", ("num",), "real"),
    _f("SIN", "SIN({0})", ("num",), "real"),
    _f("COS", "COS({0})", ("num",), "real"),
    _f("ATAN", "ATAN({0})", ("num",), "real"),
    _f("ATAN2", "ATAN2({0}, {1})", ("num", "num"), "real"),
    _f("RADIANS", "RADIANS({0})", ("num",), "real"),
    _f("PI", "(PI() * {0})", ("small",), "real"),
    _f("ABS", "ABS({0})", ("real",), "real"),
    _f("CAST_DOUBLE", "CAST({0} AS DOUBLE)", ("any",), "real"),
    _f("RAND", "RAND()", (), "real", "random"),
    _f("RAND_SEED", "RAND({0})", ("small",), "real", "order"),
    _f("ST_Area", "ST_Area({0})", ("geom",), "real"),
    _f("ST_Length", "ST_Length({0})", ("geom",), "real"),
    _f("ST_Distance", "ST_Distance({0}, {1})", ("geom", "geom"), "real"),
    _f("ST_X", "ST_X(ST_PointN(ST_ExteriorRing(ST_Envelope({0})), 1))", ("geom",), "real"),
)

# strings
_STRINGS: tuple[Function, ...] = (
    _f("CONCAT", "CONCAT({0}, {1})", ("str", "str"), "str", same=True, keeps=True),
    _f("CONCAT_WS", "CONCAT_WS({0}, {1}, {2})", ("sep", "str", "str"), "str", same=True,
       keeps=True),
    _f("SUBSTRING", "SUBSTRING({0}, {1}, {2})", ("str", "small", "count"), "str", keeps=True),
    _f("LEFT", "LEFT({0}, {1})", ("str", "count"), "str", keeps=True),
    _f("RIGHT", "RIGHT({0}, {1})", ("str", "count"), "str", keeps=True),
    _f("LPAD", "LPAD({0}, {1}, 'x')", ("str", "count"), "str", keeps=True),
    _f("RPAD", "RPAD({0}, {1}, ' ')", ("str", "count"), "str", keeps=True),
    _f("TRIM", "TRIM({0})", ("str",), "str", keeps=True),
    _f("TRIM_LEADING", "TRIM(LEADING 'a' FROM {0})", ("str",), "str", keeps=True),
    _f("LTRIM", "LTRIM({0})", ("str",), "str", keeps=True),
    _f("RTRIM", "RTRIM({0})", ("str",), "str", keeps=True),
    _f("UPPER", "UPPER({0})", ("str",), "str", keeps=True),
    _f("LOWER", "LOWER({0})", ("str",), "str", keeps=True),
    _f("REPLACE", "REPLACE({0}, 'a', 'b')", ("str",), "str", keeps=True),
    _f("REVERSE", "REVERSE({0})", ("str",), "str", keeps=True),
    _f("REPEAT", "REPEAT({0}, {1})", ("str", "count"), "str", keeps=True),
    _f("INSERT", "INSERT({0}, 2, 1, 'x')", ("str",), "str", keeps=True),
    _f("HEX", "HEX({0})", ("any",), "str"),
    _f("MD5", "MD5({0})", ("str",), "str"),
    _f("SHA1", "SHA1({0})", ("str",), "str"),
    _f("SHA2", "SHA2({0}, {1})", ("str", "sha"), "str"),
    _f("TO_BASE64", "TO_BASE64({0})", ("str",), "str"),
    _f("QUOTE", "QUOTE({0})", ("str",), "str", keeps=True),
    _f("SPACE", "SPACE({0})", ("count",), "str"),
    _f("ELT", "ELT({0}, 'a', 'b', 'c')", ("count",), "str"),
    _f("FORMAT", "FORMAT({0}, 2)", ("num",), "str"),
    _f("CAST_CHAR", "CAST({0} AS CHAR)", ("any",), "str", collation="utf8mb4_general_ci"),
    _f("CONVERT", "CONVERT({0} USING {1})", ("str", "charset"), "str"),
    _f("DATE_FORMAT", "DATE_FORMAT({0}, {1})", ("datetime", "format"), "str"),
    _f("MONTHNAME", "MONTHNAME({0})", ("date",), "str"),
    _f("DAYNAME", "DAYNAME({0})", ("date",), "str"),
    _f("SOUNDEX", "SOUNDEX({0})", ("str",), "str"),
    _f("REGEXP_REPLACE", "REGEXP_REPLACE({0}, {1}, 'x')", ("str", "regex"), "str", keeps=True),
    _f("REGEXP_SUBSTR", "REGEXP_SUBSTR({0}, {1})", ("str", "regex"), "str", keeps=True),
    _f("JSON_UNQUOTE", "JSON_UNQUOTE(JSON_EXTRACT({0}, {1}))", ("json", "path"), "str",
       keeps=True),
    _f("JSON_TYPE", "JSON_TYPE({0})", ("json",), "str", collation="utf8mb3_general_ci"),
    _f("JSON_VALUE", "JSON_VALUE({0}, {1})", ("json", "path"), "str", keeps=True),
    _f("INET6_NTOA", "INET6_NTOA({0})", ("inet6",), "str"),
    _f("SFORMAT", "SFORMAT('{{}}-{{}}', {0}, {1})", ("any", "any"), "str"),
    _f("NATURAL_SORT_KEY", "NATURAL_SORT_KEY({0})", ("str",), "str"),
    _f("ST_AsText", "ST_AsText({0})", ("geom",), "str"),
    _f("ST_GeometryType", "ST_GeometryType({0})", ("geom",), "str"),
    _f("CHARSET", "CHARSET({0})", ("str",), "str", collation="utf8mb3_general_ci"),
    _f("COLLATION", "COLLATION({0})", ("str",), "str", collation="utf8mb3_general_ci"),
    _f("UUID", "UUID()", (), "uuid", "random"),
    _f("DATABASE", "DATABASE()", (), "str", collation="utf8mb3_general_ci"),
    _f("TO_CHAR", "TO_CHAR(CAST({0} AS DATETIME), 'YYYY-MM-DD HH24:MI:SS')", ("datetime",),
       "str"),
    _f("COLLATE", "({0} COLLATE utf8mb4_bin)", ("str",), "str"),
)

# binary strings
_BINARIES: tuple[Function, ...] = (
    _f("UNHEX", "UNHEX({0})", ("str",), "bin"),
    _f("CAST_BINARY", "CAST({0} AS BINARY)", ("any",), "bin"),
    _f("COMPRESS", "COMPRESS({0})", ("str",), "bin"),
    _f("INET6_ATON", "INET6_ATON({0})", ("inet6",), "bin"),
    _f("WEIGHT_STRING", "WEIGHT_STRING({0})", ("str",), "bin"),
    _f("AES_ENCRYPT", "AES_ENCRYPT({0}, 'k')", ("str",), "bin"),
    _f("UNCOMPRESS", "UNCOMPRESS({0})", ("bin",), "bin"),
)

# temporal
_TEMPORALS: tuple[Function, ...] = (
    _f("DATE_ADD", "({0} + INTERVAL {1} DAY)", ("date", "small"), "date"),
    _f("DATE_SUB", "DATE_SUB({0}, INTERVAL {1} MONTH)", ("date", "small"), "date"),
    _f("ADDDATE", "ADDDATE({0}, {1})", ("date", "small"), "date"),
    _f("LAST_DAY", "LAST_DAY({0})", ("date",), "date"),
    _f("DATE", "DATE({0})", ("datetime",), "date"),
    _f("MAKEDATE", "MAKEDATE(2001, {0})", ("count",), "date"),
    _f("FROM_DAYS", "FROM_DAYS(730000 + {0})", ("count",), "date"),
    _f("CAST_DATE", "CAST({0} AS DATE)", ("any",), "date"),
    _f("STR_TO_DATE", "STR_TO_DATE({0}, '%Y-%m-%d')", ("str",), "date"),
    _f("DATE_ADD_DT", "DATE_ADD({0}, INTERVAL {1} {2})", ("datetime", "small", "unit"),
       "datetime"),
    _f("TIMESTAMP", "TIMESTAMP({0})", ("date",), "datetime"),
    _f("TIMESTAMP2", "TIMESTAMP({0}, {1})", ("date", "time"), "datetime"),
    _f("ADDTIME", "ADDTIME({0}, {1})", ("datetime", "time"), "datetime"),
    _f("CONVERT_TZ", "CONVERT_TZ({0}, {1}, {2})", ("datetime", "tz", "tz"), "datetime"),
    _f("CAST_DATETIME", "CAST({0} AS DATETIME(6))", ("any",), "datetime"),
    _f("FROM_UNIXTIME", "FROM_UNIXTIME({0})", ("count",), "datetime"),
    _f("NOW", "NOW()", (), "datetime", "clock"),
    _f("SEC_TO_TIME", "SEC_TO_TIME({0})", ("num",), "time"),
    _f("MAKETIME", "MAKETIME({0}, 30, 0)", ("small",), "time"),
    _f("TIMEDIFF", "TIMEDIFF({0}, {1})", ("time", "time"), "time"),
    _f("SUBTIME", "SUBTIME({0}, {1})", ("time", "time"), "time"),
    _f("TIME", "TIME({0})", ("datetime",), "time"),
    _f("CAST_TIME", "CAST({0} AS TIME(3))", ("any",), "time"),
)

# JSON, geometry, INET6 and UUID
_JSON_GEOMETRY: tuple[Function, ...] = (
    _f("JSON_EXTRACT", "JSON_EXTRACT({0}, {1})", ("json", "path"), "json"),
    _f("JSON_OBJECT", "JSON_OBJECT('a', {0}, 'b', {1})", ("any", "any"), "json"),
    _f("JSON_ARRAY", "JSON_ARRAY({0}, {1})", ("any", "any"), "json"),
    _f("JSON_SET", "JSON_SET({0}, {1}, {2})", ("json", "path", "any"), "json"),
    _f("JSON_INSERT", "JSON_INSERT({0}, '$.n', {1})", ("json", "any"), "json"),
    _f("JSON_REMOVE", "JSON_REMOVE({0}, '$.a')", ("json",), "json"),
    _f("JSON_MERGE_PATCH", "JSON_MERGE_PATCH({0}, {1})", ("json", "json"), "json"),
    _f("JSON_MERGE_PRESERVE", "JSON_MERGE_PRESERVE({0}, {1})", ("json", "json"), "json"),
    _f("JSON_KEYS", "JSON_KEYS({0})", ("json",), "json"),
    _f("JSON_COMPACT", "JSON_COMPACT({0})", ("json",), "json"),
    _f("JSON_QUOTE", "JSON_QUOTE({0})", ("str",), "json"),
    _f("JSON_ARRAY_APPEND", "JSON_ARRAY_APPEND({0}, '$', {1})", ("json", "int"), "json"),
    _f("JSON_NORMALIZE", "JSON_NORMALIZE({0})", ("json",), "json"),
    _f("JSON_SEARCH", "JSON_SEARCH({0}, 'one', 'x')", ("json",), "json"),
    _f("ST_Envelope", "ST_Envelope({0})", ("geom",), "geom"),
    _f("ST_Centroid", "ST_Centroid({0})", ("geom",), "geom"),
    _f("ST_Buffer", "ST_Buffer({0}, 1)", ("geom",), "geom"),
    _f("ST_Union", "ST_Union({0}, {1})", ("geom", "geom"), "geom"),
    _f("ST_Intersection", "ST_Intersection({0}, {1})", ("geom", "geom"), "geom"),
    _f("ST_StartPoint", "ST_StartPoint({0})", ("geom",), "geom"),
    _f("ST_ConvexHull", "ST_ConvexHull({0})", ("geom",), "geom"),
    _f("CAST_INET6", "CAST({0} AS INET6)", ("inet6",), "inet6"),
    _f("CAST_UUID", "CAST({0} AS UUID)", ("uuid",), "uuid"),
)

# predicates (family bool); comparisons, IN, BETWEEN... are built by the generator
_PREDICATES: tuple[Function, ...] = (
    _f("LIKE", "({0} LIKE {1})", ("str", "like"), "bool"),
    _f("NOT LIKE", "({0} NOT LIKE {1})", ("str", "like"), "bool"),
    _f("REGEXP", "({0} REGEXP {1})", ("str", "regex"), "bool"),
    _f("JSON_CONTAINS", "JSON_CONTAINS({0}, {1})", ("json", "json"), "bool"),
    _f("JSON_CONTAINS_PATH", "JSON_CONTAINS_PATH({0}, 'one', {1})", ("json", "path"), "bool"),
    _f("JSON_EXISTS", "JSON_EXISTS({0}, {1})", ("json", "path"), "bool"),
    _f("ST_Contains", "ST_Contains({0}, {1})", ("geom", "geom"), "bool"),
    _f("ST_Intersects", "ST_Intersects({0}, {1})", ("geom", "geom"), "bool"),
    _f("ST_Within", "ST_Within({0}, {1})", ("geom", "geom"), "bool"),
    _f("ST_Equals", "ST_Equals({0}, {1})", ("geom", "geom"), "bool"),
    _f("MBRContains", "MBRContains({0}, {1})", ("geom", "geom"), "bool"),
    _f("IS_IPV6", "IS_IPV6(CAST({0} AS CHAR))", ("inet6",), "bool"),
)
_GROUPS = (_INTEGERS, _DECIMALS, _REALS, _STRINGS, _BINARIES, _TEMPORALS, _JSON_GEOMETRY,
           _PREDICATES)


def _catalog() -> dict[str, list[Function]]:
    """The functions of every group, filed under their result family (in the groups'
    order: the generator draws from these lists)."""
    c: dict[str, list[Function]] = {f: [] for f in
                                     ("int", "dec", "real", "str", "bin", "date", "datetime",
                                      "time", "json", "geom", "inet6", "uuid", "bool")}
    for group in _GROUPS:
        for fn in group:
            c[fn.family].append(fn)
    return c


CATALOG: Mapping[str, tuple[Function, ...]] = MappingProxyType(
    {k: tuple(v) for k, v in _catalog().items()})

# Bugs of MariaDB 10.11 the generator found and steers clear of by default (as SQLancer's
# MariaDBBugs flags; docs/findings.md has each one's case): name -> what is avoided.
# ExprGenerator(avoid=frozenset()) hunts them again.
KNOWN_BUGS: Mapping[str, str] = MappingProxyType({
    "st-distance-pushdown": "ST_Distance of a multi-geometry or collection (a MULTIPOINT "
                            "column value, ST_Union(POINT(1,1), POINT(2,2))) in a condition "
                            "pushed into a materialized derived table crashes the server "
                            "(signal 11 in Item_func_distance::val_real); ST_Distance is "
                            "not written",
    "match-update": "MATCH ... AGAINST in an UPDATE's SET of a MyISAM or Aria table whose "
                    "updated column is indexed crashes the server (signal 11 in "
                    "Item_func_match::init_search < init_ftfuncs < mysql_update); an "
                    "UPDATE's SET writes no MATCH",
    "vcol-div-precision": "a generated column computed by a DECIMAL division takes the "
                          "div_precision_increment of the session that opened the table: "
                          "a MyISAM or Aria table indexed on it is corrupted (error 126) by "
                          "a DELETE or REPLACE in a session of another precision (MDEV-7113's "
                          "class); a generated column multiplies instead (b * 0.25, not "
                          "b / 4)",
    "ps-match": "a prepared SELECT whose first EXECUTE fails with 'Can't find FULLTEXT "
                "index matching the column list' (MATCH in a derived table's join "
                "condition, the index left out by an index hint) crashes the server on its "
                "second EXECUTE (signal 11 in st_select_lex::update_used_tables); a "
                "PREPAREd SELECT holds no MATCH",
    "vers-desc-key": "a MyISAM table WITH SYSTEM VERSIONING and a key with a DESC part over a "
                     "PAD SPACE column, joined with itself through that key: a group of a "
                     "GROUP BY is lost by one access path (KW46-VERS-DESC-KEY, TLP-having, "
                     "live19 trial 14); a system-versioned MyISAM table gets no DESC key part "
                     "(CREATE TABLE, ALTER TABLE ... ADD INDEX)",
    "timestamp-range-fraction": "a TIMESTAMP(n) value out of TIMESTAMP's range stored under "
                                "IGNORE (or a non-strict sql_mode) keeps its fraction: "
                                "'9999-12-31 23:59:59.999' reads 1970-01-01 00:00:00.999000, "
                                "not the zero timestamp, and through a temporary table "
                                "0000-00-00 00:00:00.000000 (KW46-TIMESTAMP-RANGE-FRACTION, "
                                "TLP-aggregate, hunt or19-sf8); an UPDATE's SET of a "
                                "TIMESTAMP(n) column stores NULL for a value out of range",
    "enum-error-value-key": "an ENUM with '' among its members holding the error value 0 "
                            "(INSERT IGNORE or UPDATE IGNORE of an invalid value): e = '' "
                            "finds those rows in a scan, not through an index on e (nor a "
                            "TEMPTABLE view's key), which looks up the member '' alone: 1 row "
                            "of 3 (KW46-ENUM-ERROR-VALUE-KEY, case enum_error_value_key; "
                            "Radar, or18b t9, 4a36bcf7c388); the schema's ENUM('a','b','c','') "
                            "is ENUM('a','b','c')",
    "aria-bit-keyread": "an Aria table's BIT(1) whose bit falls at bit 7 of a null byte (the "
                        "15th nullable column, counting its own null bit) reads 0 from its "
                        "index alone (SUM(b + 0) 0 where the rows hold 1, 0, 1, NULL; "
                        "KW46-ARIA-BIT-KEYREAD, case aria_bit_keyread; TLP-aggregate, "
                        "TLP-distinct, or19-sf5 t10): the position depends on the columns "
                        "before it (and ALTER TABLE ... ADD COLUMN), so no key of an Aria "
                        "table (CREATE TABLE, ALTER TABLE ... ADD INDEX) has a BIT part of a "
                        "width that is no multiple of 8",
    "set-key-spaces": "an indexed SET holding the empty set compared with a string of spaces "
                      "(a join ON set_key = varchar_column holding ' '): the index lookup "
                      "stores ' ' into the SET, no member, and finds no row where the string "
                      "comparison '' = ' ' (PAD SPACE) finds the empty sets: COUNT(*) 0, 2 "
                      "with IGNORE INDEX (KW46-SET-KEY-STRING met another way, case "
                      "set_key_spaces; Radar, or18a t16, 340e4f7c95f6); no key of a table "
                      "(CREATE TABLE, ALTER TABLE ... ADD INDEX) has a SET part",
})

AGGREGATES = ("COUNT", "COUNT_DISTINCT", "SUM", "AVG", "MIN", "MAX", "BIT_AND", "BIT_OR",
              "BIT_XOR", "GROUP_CONCAT", "STD", "VARIANCE", "JSON_ARRAYAGG", "SUM_DISTINCT")
WINDOWS = ("ROW_NUMBER", "RANK", "DENSE_RANK", "PERCENT_RANK", "CUME_DIST", "NTILE", "LAG",
           "LEAD", "FIRST_VALUE", "LAST_VALUE", "NTH_VALUE", "SUM_OVER", "COUNT_OVER",
           "MIN_OVER", "MAX_OVER", "AVG_OVER")
COMPARISONS = ("=", "<>", "!=", "<", "<=", ">", ">=", "<=>")
PREDICATES = ("IS NULL", "IS NOT NULL", "BETWEEN", "NOT BETWEEN", "IN", "NOT IN", "IS TRUE",
              "IS FALSE", "IS UNKNOWN", "IS NOT TRUE", "NOT", "AND", "OR", "XOR",
              "MATCH_AGAINST")   # (subqueries are clauses: lib.hunt.surface.coverage.CLAUSES)
SPECIAL = ("CASE", "IF", "IFNULL", "COALESCE", "NULLIF", "SCALAR_SUBQUERY", "GREATEST_ANY",
           "LEAST_ANY")


def function_names() -> frozenset[str]:
    """Every function and operator feature the generator may use."""
    names = {f.name for fns in CATALOG.values() for f in fns}
    return frozenset(names | set(AGGREGATES) | set(WINDOWS) | set(COMPARISONS)
                     | set(PREDICATES) | set(SPECIAL))
