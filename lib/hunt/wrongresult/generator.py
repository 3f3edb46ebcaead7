"""Generated SQL for the wrong-result oracles: FROM clauses, values and predicates.

A :class:`SqlGenerator` draws from one ``random.Random`` (so one seed gives
the same SQL on every machine) over the tables it is given
(:mod:`~lib.hunt.wrongresult.schema`).  Everything it writes is deterministic:
no ``RAND``, ``NOW``, ``UUID``, ``CONNECTION_ID``, user variables,
``GROUP_CONCAT``, ``LIMIT`` without a total order, or anything else whose
answer may change between two runs of the same query on the same data.
Every compound expression is parenthesised, every column qualified by its
alias (``t1``, ``t2``... in the main query, ``s1``, ``s2``... in subqueries).

Values are typed by class (:data:`~lib.hunt.wrongresult.schema.TYPE_CLASSES`):
a column, a literal (``NULL`` now and then), arithmetic, bit operations and
deterministic functions of each class, ``CASE``/``IF``/``COALESCE``,
comparisons used as values, scalar subqueries.  Predicates are comparisons,
``IS [NOT] NULL``, ``BETWEEN``, ``IN`` lists, ``LIKE``, ``IS [NOT]
TRUE/FALSE/UNKNOWN``, ``NOT``/``AND``/``OR``/``XOR``, and subqueries (``IN``,
``EXISTS``, ``ANY``/``ALL``, scalar ``MIN``/``MAX``/``COUNT``), correlated or
not.  :class:`GeneratorOptions` bounds depth, joins and the rows a query may
touch.
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Callable, Mapping, Sequence, TypeVar

from .schema import ColumnInfo, TableInfo, quote_name

T = TypeVar("T")

INT_LITERALS = ("0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "-1", "10", "100", "127",
                "128", "255", "-128", "32767", "65535", "2147483647", "-2147483648",
                "4294967295", "9223372036854775807")
DEC_LITERALS = ("0.5", "1.5", "-2.25", "9.99", "0.001", "100.01", "3.0", "-0.5")
FLOAT_LITERALS = ("1e0", "0.5e0", "-1.5e1", "1.0e2", "2.5e-1", "0e0")
STR_LITERALS = ("'a'", "'b'", "'c'", "'d'", "'j'", "'m'", "'q'", "'x'", "'z'", "'A'", "'B'",
                "''", "' '", "'a '", "'0'", "'1'", "'9'", "'-1'", "'ab'", "'abc'", "'time'",
                "'that'", "'you'", "'with'", "'what'", "'well'", "'can'", "'he'", "'i'",
                "'it'", "'on'", "'no'", "'yes'", "'1a'", "'0.5'")
DATE_LITERALS = ("'1971-01-01'", "'2000-01-01'", "'2004-02-29'", "'2009-06-15'",
                 "'2012-12-12'", "'2035-12-28'", "'1900-01-01'")
DATETIME_LITERALS = ("'2000-01-01 00:00:00'", "'2005-06-07 12:30:00'",
                     "'2009-12-31 23:59:59'", "'1980-02-03 04:05:06.500000'",
                     "'2035-01-01 00:00:00'")
TIME_LITERALS = ("'00:00:00'", "'01:02:03'", "'12:30:00'", "'23:59:59'", "'-01:00:00'",
                 "'10:00:00.250000'", "'838:59:59'")
YEAR_LITERALS = ("1971", "2000", "2009", "2035", "1901", "2155")
LITERALS: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "int": INT_LITERALS, "dec": DEC_LITERALS, "float": FLOAT_LITERALS, "str": STR_LITERALS,
    "date": DATE_LITERALS, "datetime": DATETIME_LITERALS, "time": TIME_LITERALS,
    "year": YEAR_LITERALS,
})
CLASSES = tuple(LITERALS)
# classes whose values compare with each other without surprises
COMPARABLE: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "int": ("int", "dec", "float", "year"), "dec": ("int", "dec", "float", "year"),
    "float": ("int", "dec", "float"), "year": ("int", "dec", "year"),
    "str": ("str",), "date": ("date", "datetime"), "datetime": ("date", "datetime"),
    "time": ("time",),
})
COMPARISONS = ("=", "<>", "!=", "<", "<=", ">", ">=", "<=>")
LIKE_PATTERNS = ("'a%'", "'%a%'", "'%b'", "'_'", "'__'", "'%'", "'a_'", "'%e%'", "'t%'",
                 "'%0%'", "''")
UNKNOWN_ROWS = 100  # rows assumed for a table whose size is not known
# Wrong results of MariaDB 10.11 (seen by these oracles; reproduced by hand, see
# docs/hunting.md) that the generator steers clear of by default, as SQLancer's
# MariaDBBugs: name -> what is avoided.  GeneratorOptions(avoid=frozenset()) hunts them.
KNOWN_BUGS: Mapping[str, str] = MappingProxyType({
    "year-lookup": "a YEAR value compared with a non-YEAR value: an index lookup stores an "
                   "out-of-range constant as YEAR 0000 (-2 IN (SELECT indexed_year ...) is 1 "
                   "when the table holds 0000)",
    "cast-time-null": "CAST(number AS TIME): out of range it is NULL, yet compares as a time "
                      "(CAST(9999999999 AS TIME) IS NULL and CAST(...) <= TIME'23:00:00' are both 1; "
                      "KW46-CAST-TIME-COMPARE: CAST('abc' AS TIME) is NULL and compares as "
                      "00:00:00); only temporal values are cast to TIME, and a view with a cast "
                      "to TIME, DATETIME or DATE is never read (VIEW_KNOWN_BUGS: a condition "
                      "pushed into it meets the cast of a string, hunt or19-sf8 trial 68; "
                      "CAST('abc' AS DATETIME) = TIMESTAMP'0000-00-00 00:00:00' is 1 too: EET, "
                      "session 11's 625697ff64f9 through a view's CAST(CASE ... AS DATETIME(6)))",
    "allany": "<, <=, >, >= ANY/ALL (rewritten with MIN/MAX): over a subquery returning NULL "
              "the predicate is NULL but IS NULL says 0 ('always not null'), and "
              "NOT (NOT (x <= ANY (...))) is not x <= ANY (...); only = ANY and <> ALL are written",
    "key-constant": "an indexed integer, decimal or YEAR column equal to a constant the column "
                    "cannot hold: the index lookup stores it rounded or clipped (int_key = 1.5 "
                    "finds 2; int_key = '1.5' and NOT (int_key <> 1.5) too; -128 IN (SELECT "
                    "unsigned_key ...) finds 0); only integer literals 0..127 are written, "
                    "also when tested in an IN list naming such a column (-0.5 IN (t1.k) finds "
                    "k = -1: TLP-aggregate, session 11's 8c3d59b40b07)",
    "time-datetime": "a TIME compared with a DATE/DATETIME: = and <> disagree (NOT (t <> dt) is "
                     "not t = dt; the comparison also depends on CURRENT_DATE)",
    "in-lookup": "x IN (SELECT indexed_column ...) (and = ANY, <> ALL): the index lookup "
                 "truncates or clips x to the column's type ('l-1a' IN (SELECT char1_key ...) "
                 "is 1 when the column holds 'l'); subqueries select unindexed columns only",
    "bit-range": "a BIT column compared with a negative or fractional number: the range "
                 "optimizer finds no row (bit64_key >= -1.5e1 counts 0 in WHERE, 8 as values); "
                 "BIT columns are compared with integer literals 0..127 and BIT columns only",
    "null-safe-ref": "two columns compared both with <=> and with =: the index lookup built for "
                     "<=> matches NULL with NULL and the = is dropped (a.x <=> b.y AND b.y = a.x "
                     "counts the NULL pairs); <=> is never written between two columns",
    "temporal-string": "a DATE/DATETIME/TIME column compared with a string that is no valid "
                       "value of it: the indexed column's range finds no row where the row-by-row "
                       "comparison is true (zero_datetime <=> 'a1' is 1 as a value, 0 rows in "
                       "WHERE with the index); temporal values are compared with temporal ones",
    "not-string-key": "an indexed string column as a condition: WHERE NOT (c) finds no row "
                      "('abc' is 0, so NOT 'abc' is 1 for every row; 0 rows with the index, "
                      "all without); a bare string column is never a condition",
    "int-precision": "ASCII, ABS, BIT_COUNT, NULLIF, ROUND, FLOOR, CEILING, TRUNCATE, TO_DAYS, DIV of "
                     "integers: their DECIMAL "
                     "precision is a digit short (the length is read as holding a sign it has "
                     "not), so stored -- UNION, a derived or temporary table, CREATE ... SELECT "
                     "-- in AVG or beside a decimal in COALESCE/IF/CASE, the value is clipped: "
                     "SELECT AVG(ASCII('x')) ... UNION ALL SELECT 1 gives 99.9999, SELECT "
                     "COALESCE(BIT_COUNT(-1), 1.) UNION ALL SELECT 1 gives 9, AVG(ABS(922337203"
                     "6854775807)) 999999999999999999.9999; they are written as (f(...) + 0)",
    "bit-group": "a MyISAM BIT(n) column grouped through a sort (SQL_BIG_RESULT, or a UNION of "
                 "grouped SELECTs): each group shows the next group's value (SELECT SQL_BIG_RESULT "
                 "b, COUNT(*) FROM t GROUP BY b gives 1,2,12,12 for 0,1,2,12); a BIT column is "
                 "grouped, ordered and aggregated as (b + 0)",
    "count-distinct-constant": "COUNT(DISTINCT <constant>) through an on-disk temporary table "
                               "(big_tables=1, tmp_memory_table_size=0) counts every row: "
                               "COUNT(DISTINCT 5) over 3 rows is 3; COUNT(DISTINCT ...) always "
                               "names a column",
    "minmax-constant-empty": "MIN/MAX of a constant over a join with an empty MyISAM table "
                             "('Select tables optimized away') is the constant, not NULL: "
                             "SELECT MAX(5) FROM e0 LEFT JOIN e1 ON ... gives 5; MIN/MAX always "
                             "name a column",
    "minmax-set-index": "MIN/MAX of an indexed ENUM or SET column read through the index ('Select "
                        "tables optimized away') is in the index's numeric order; read row by row "
                        "in string order (documented): MAX(st) over SET values 'a,d' and 'c' is "
                        "'a,d' with KEY(st), 'c' with IGNORE INDEX; scalar MIN/MAX subqueries are "
                        "never over ENUM or SET columns",
    "set-key-string": "an indexed ENUM or SET column (of a binary character set) compared with a "
                      "string that is no member: the index lookup reads it as a number, "
                      "'0' = set_key finds the empty sets (COUNT(*) 29; 0 with IGNORE INDEX); "
                      "indexed ENUM and SET columns are compared as CONCAT(column)",
    "temporal-number": "a DATE/DATETIME/TIME compared with a number: an indexed column's range "
                       "finds no row where the row-by-row comparison is true (-100e0 <> "
                       "datetime_key is false as a value, yet datetime_key = -100e0 matches nothing)",
    "in-null-materialization": "x [NOT] IN (SELECT c ...) (and ANY/ALL) by materialization when x "
                               "cannot be stored in c's type (a negative x and an UNSIGNED c, "
                               "2147483648 and an INT c) and the subquery returns a NULL: 0 "
                               "(NOT IN: 1) where it must be NULL (MDEV-40877): -5 NOT IN "
                               "(SELECT y ...) with y UNSIGNED holding 3 and NULL is 1; such "
                               "subqueries return no NULL (WHERE c IS NOT NULL)",
    "cast-scale-eq": "two casts of one value to one type with another precision or scale "
                     "compared (CAST(t AS TIME) and TIME(t) of a TIME(6); CAST(d AS DECIMAL(10,1)) "
                     "and CAST(d AS DECIMAL(10,2))): the optimizer takes them for one expression, "
                     "so x <> x is an 'Impossible WHERE' and x = x always true, while the values "
                     "differ (WHERE CAST(t AS TIME) <> TIME(t) finds no row, as a value it is 1 for "
                     "10:00:00.5); the two sides of a comparison are never casts of one value",
    "outer-const-function": "the inner side of an outer join a merged view or derived table "
                            "whose column is a function of constants (ABS(5), FROM_DAYS(730004), "
                            "CAST('...' AS TIME)), the outer side one row: the NULL-complemented "
                            "row fails WHERE col IS NULL (SELECT d2.r FROM (SELECT 1) d LEFT JOIN "
                            "(SELECT ABS(5) AS r FROM t1) d2 ON 1 = 0 WHERE d2.r IS NULL finds "
                            "nothing); views with such a column are never read",
    "variance-is-null": "STD/STDDEV/VARIANCE/VAR_POP/VAR_SAMP tested with IS [NOT] NULL before "
                        "their value is read: the stale null flag answers (SELECT STD(x) IS NULL, "
                        "STD(x) FROM t gives 1, 0.5000; a condition pushed into a view of STD "
                        "finds no row either way) -- the root cause of MDEV-40258 (open); the "
                        "generator writes none of them, and views with one are never read",
    "json-aggregate-having": "JSON_ARRAYAGG/JSON_OBJECTAGG named by its alias in HAVING: each "
                             "reading wraps it once more (SELECT JSON_ARRAYAGG(d) AS j FROM t "
                             "HAVING j > '' gives [[1,2]]; JSON_OBJECTAGG {\"1\":1}}}), so a "
                             "condition pushed into a grouped view or derived table that has one "
                             "finds no row; such views are never read (VIEW_KNOWN_BUGS)",
    "bit-key-join": "an indexed BIT(n) column equal to a wider BIT column through the index "
                    "(ref, a hashed join buffer): the lookup value is clipped to n bits, so "
                    "BIT(8) values 5 and 255 match a BIT(1) key's 1s (8 rows of a join where "
                    "the row-by-row join has 4); BIT columns are compared with BIT columns of "
                    "their own width only",
    "year-zero-group": "a function of a YEAR value (COALESCE, IFNULL, LEAST, NULLIF...) of a "
                       "const table (one row, a primary key lookup) grouped through a temporary "
                       "table: the year 0000 becomes 2000 (SELECT c FROM (SELECT COALESCE(y) AS "
                       "c FROM t WHERE pk = 1 GROUP BY c) d gives 2000, and so does the table "
                       "CREATE ... SELECT makes of it); an exact value that is a function of a "
                       "YEAR value is written (v + 0)",
    "unsigned-cache-real": "a BIGINT UNSIGNED value of 2^63 or more cached (MIN/MAX, BIT_AND/OR/"
                           "XOR, a scalar subquery) and read as a double is negative: MAX(u) + 0e0 "
                           "is -1 when MAX(u) is 18446744073709551615, (SELECT u ...) > 1e0 is 0; "
                           "a scalar MIN/MAX subquery of a BIGINT UNSIGNED column is compared "
                           "with integers and decimals only, and a view with such a column made by "
                           "an aggregate or a subquery is never read (VIEW_KNOWN_BUGS)",
    "expr-cache-decimal-key": "x [NOT] IN (SELECT ...) (and ANY/ALL) with x a decimal division: "
                              "the subquery cache keys it by its value at the scale it shows, so "
                              "1 / 300000.0 (3.3e-06, shown 0.0000) takes the cached answer of "
                              "0 / 1.0 (0): NOT IN (SELECT 0e0) is 0 for it, 1 with "
                              "optimizer_switch='subquery_cache=off'; the value left of such a "
                              "subquery holds no division",
    "minmax-key-fraction": "MIN/MAX of an indexed integer, decimal or YEAR column read through "
                           "the index alone ('Select tables optimized away') under a range "
                           "condition with a constant the column cannot hold: the bound is "
                           "stored rounded (SELECT MIN(k) FROM t WHERE k >= 0.25 gives 0 for "
                           "k in 0, 1, 2; MAX(k) WHERE k <= 1.5 gives 2); such a column is "
                           "compared by <, <=, >, >= and BETWEEN with integer literals 0..127 "
                           "only",
    "double-fixed-plus": "a DOUBLE(M,0) with M > 17 in arithmetic is declared DOUBLE(17,0): "
                         "x + 0 of a DOUBLE(20,0) holding 2813582087000000000 shows 1e+17 in a "
                         "UNION (and CREATE ... SELECT fails with 1264); IFNULL(bigint_unsigned, "
                         "- NULL) is such a DOUBLE(20,0) (- NULL is a DOUBLE(1,0)): the negation "
                         "of NULL is written NULL",
    "expr-cache-collation-key": "a correlated subquery naming a string column of the "
                                "enclosing query: the subquery cache keys it by its collation, "
                                "so values equal under it ('' and '   ' under PAD SPACE, 'a' "
                                "and 'A' under _ci) share one entry, and a subquery that sees "
                                "the difference answers wrongly (SELECT (SELECT HEX(t.a) FROM t "
                                "AS s LIMIT 1) FROM t gives 61 for 'A'; found by DQE, hunt "
                                "or19-sf3, c6fabc5728c7); a subquery names no character string "
                                "column of an enclosing query (BINARY, VARBINARY and BLOBs it "
                                "may)",
    "window-const-partition": "a window partitioned or ordered by constants only (PARTITION "
                              "BY 'x', ORDER BY 1+1) beside another window: the other's sort is "
                              "dropped, so SUM(a) OVER (PARTITION BY a) sums runs of rows, not "
                              "partitions (KW46-WINDOW-CONST-PARTITION; EET, Radar); a window's "
                              "PARTITION BY and ORDER BY name a column in every item (a "
                              "constant item partitions and orders nothing: left out)",
    "empty-join-having": "an implicitly grouped SELECT (no GROUP BY) with a HAVING over a join of "
                         "three tables or more, one of them of at most one row (a const table), "
                         "returns a row when the join finds none (SUM(...) ... HAVING MAX(c) > "
                         "128 gives NULL; KW46-EMPTY-JOIN-HAVING, Radar); such a query is "
                         "written without its HAVING",
    "bnlh-is-null": "an indexed column of a join tested IS NULL (or <=> NULL) becomes a lookup of "
                    "the NULL key, which a hashed join buffer (join_cache_level 3 and 4, BNLH) "
                    "never finds: t1 STRAIGHT_JOIN t2 ON t2.k IS NULL counts 0 (KW46-BNLH-IS-NULL; "
                    "DQP, DQE under --join-cache-level=4); such a test is written "
                    "COALESCE(k) IS NULL",
    "decimal-round-scale": "ROUND/TRUNCATE(d, n) of a DECIMAL(65,0) (n > 0) is declared "
                           "DECIMAL(65,n), one integer digit short: -99...9 (65 nines) is "
                           "-99...9.0 sent directly, -99...9.9 (64 nines) through "
                           "SQL_BUFFER_RESULT or a UNION's temporary table (KW46-INT-PRECISION's "
                           "family, DQP, hunt or19-sf8 a254a3958dfa); a value naming a DECIMAL "
                           "of more than 62 digits is rounded to 0 places",
    "oracle-concat-outer-join": "under sql_mode=ORACLE (a random option of the hunts) CONCAT "
                                "skips NULLs, yet a WHERE condition on CONCAT of an "
                                "outer-joined column is taken for one that rejects NULLs and "
                                "the LEFT JOIN becomes an inner one: CONCAT('q', b) = 'q' drops "
                                "the NULL-complemented row (KW46-ORACLE-CONCAT-OUTER-JOIN; the "
                                "TLP oracles, hunt or19-sf8 trial 44); when the oracle's session "
                                "has ORACLE in its sql_mode, CONCAT is written CONCAT_WS('', ...)",
    "oracle-replace-null": "under sql_mode=ORACLE REPLACE whose result is empty returns NULL "
                           "yet keeps its arguments' NOT NULL: REPLACE(c, 'x', '') IS NULL is 0 "
                           "for c = 'x', and the row meets neither IS NULL nor IS NOT NULL "
                           "(KW46-ORACLE-REPLACE-NULL, case oracle_replace_empty_null; "
                           "TLP-distinct, or19b t29, b163d42cff5e); when the oracle's session "
                           "has ORACLE in its sql_mode, REPLACE is not written",
    "between-unsigned-null": "an unsigned value of 2^63 or more (0 | -1) NOT BETWEEN a NULL "
                             "integer expression (1 + NULL, 1 MOD NULL; not the literal NULL) "
                             "AND an integer column is true as a value, false in a WHERE "
                             "(KW46-NOT-BETWEEN-UNSIGNED-NULL, case not_between_unsigned_null; "
                             "DQE, ox19b t9, 8ca7b51e4387); a BETWEEN's bound that holds NULL "
                             "in an expression is a literal of its class",
    "in-const-double": "the double 2^63 (9223372036854775807 * 1e0 + 0.5e0) IN (SELECT m ...) "
                       "of a one-row MyISAM table or SEQUENCE (a const table) whose BIGINT m is "
                       "negative is 1 as a value, and in a WHERE both the IN and its NOT are "
                       "false (KW46-IN-CONST-DOUBLE, case in_const_table_double_2p63; "
                       "TLP-distinct, ox19b t36, 67c6e171076e); the value left of an IN or "
                       "ANY/ALL subquery selecting an integer column is never a float",
    "setop-pushdown-collation": "a condition pushed into a view of a set operation (UNION, "
                                "INTERSECT, EXCEPT) is evaluated in each operand's own "
                                "collation, not the set operation column's: 'Abc' beside a "
                                "utf8mb4_uca1400_as_cs column, WHERE r NOT LIKE 'a%' drops the "
                                "literal's row (KW46-SETOP-PUSHDOWN-COLLATION; TLP-distinct, "
                                "TLP-groupby, CODDTest); a view of a set operation with a "
                                "character string column is never read (VIEW_KNOWN_BUGS)",
    "setop-pushdown-cast": "a condition on CAST(r AS SIGNED) pushed into a view of a set "
                           "operation whose column r is a DECIMAL(20,0) (an INT beside a "
                           "BIGINT UNSIGNED) casts each operand's own BIGINT UNSIGNED "
                           "(18446744073709551614 wraps to -2) and is kept outside, where the "
                           "DECIMAL clips: the row meets neither > 5 nor its negation "
                           "(KW46-SETOP-PUSHDOWN-CAST; TLP-distinct, or19a t9, ba53fd745ec5); "
                           "a view of a set operation with a DECIMAL(20+,0) column is never "
                           "read (VIEW_KNOWN_BUGS)",
    "view-constant-column": "a view's column that is a constant (0.000001 AS r1, "
                            "COALESCE(-1, x) AS r1) meets KW46-KEY-CONSTANT when joined to a "
                            "key (ON t1.decimal_key = t2.r1 finds the key's 0: radar, or19a "
                            "t56, 8880aa4b30cb) and KW46-MAX-CONST-EMPTY under MIN/MAX on the "
                            "inner side of an outer join (MIN(t2.r1) of an empty view is -1: "
                            "EET, or18a t30, 7e0874a0572c); views with such a column are "
                            "never read",
    "decimal-div-in-list": "a decimal division compared by an IN list of two or more values "
                           "(on its left or among its values): the list compares the digits "
                           "the quotient carries beyond its scale, = and IN of one value "
                           "compare it at its scale, so 0.001/29083 (shown 0.0000000) is = 0 "
                           "and IN (0), not IN (0, 1.5), and 0 IN (0.001/29083, 1.5) is 0 "
                           "(KW46-DECIMAL-DIV-IN-LIST; Pinolo, x NOT IN (y) against x NOT IN "
                           "(y, 1.5)); an IN list of decimals (of any length: Pinolo adds a "
                           "value) holds no division, on either side; nor does a comparison "
                           "(=, <>, <, <=>..., BETWEEN, against a scalar subquery): "
                           "(127 / 2147483647) <=> CAST(c AS DECIMAL(12,3)) of a 0 is 1 alone, "
                           "0 beside another conjunct or through a view (TLP-distinct, "
                           "bd1497bdafe9)",
    "vers-outer-join-dml": "a subquery of an UPDATE's or DELETE's WHERE that LEFT JOINs a "
                           "system-versioned table loses the NULL-complemented rows: EXISTS "
                           "(SELECT * FROM t1 LEFT JOIN versioned ...) is 1 in the SELECT, false "
                           "in the UPDATE and DELETE (KW46-VERS-OUTER-JOIN-DML; DQE); DQE never "
                           "reads a view with an outer join that names a system-versioned table "
                           "(VIEW_KNOWN_BUGS; the generator's own subqueries join nothing)",
    "aria-icp-binary-ref": "an indexed character string column equated with a binary string "
                           "(a BINARY, VARBINARY or BLOB column, or a value naming one): on an "
                           "Aria table a ref lookup on every part of the key pushes the "
                           "equality as the index condition, which compares otherwise than the "
                           "key, and the scan stops at the first key entry it rejects (s = "
                           "BINARY 'A' over 'a', 'A' finds no row; KW46-ARIA-ICP-FULL-REF, case "
                           "aria_icp_full_ref; TLP-distinct, Radar, ox19b t10); the column is "
                           "written CONCAT(c) there (=, <>, !=, <=>, an IN list, a join's ON, "
                           "the value left of an IN/ANY subquery)",
    "nullsafe-zero-timestamp": "a TIMESTAMP compared by <=> with a scalar MIN/MAX subquery "
                               "(c < '2009-12-31' AND c <=> (SELECT MIN(c) FROM t1)): the "
                               "zero timestamp's row is lost, 'Impossible WHERE noticed after "
                               "reading const tables' (KW46-NULLSAFE-ZERO-TIMESTAMP, case "
                               "nullsafe_zero_timestamp; TLP-aggregate, or18a t15); such a "
                               "comparison is written with =",
    "cast-hybrid-negative-time": "CAST(... AS SIGNED/UNSIGNED) of a TIME that comes through "
                                 "COALESCE, IFNULL, IF or CASE loses a negative time's sign "
                                 "(CAST(COALESCE(TIME'-01:01:01') AS SIGNED) is 10101; "
                                 "KW46-CAST-HYBRID-NEGATIVE-TIME, case "
                                 "cast_hybrid_negative_time; EET, or19a t3, which wraps the "
                                 "cast's argument in a CASE itself): a TIME value is never cast "
                                 "to SIGNED or UNSIGNED",
    "nullif-pushdown-convert": "NULLIF(a, b) whose arguments need a conversion (latin1 "
                               "against utf8mb4, a DATETIME against a string) is a CASE whose "
                               "ELSE is a again; pushed into a materialized view or derived "
                               "table, that ELSE still names the outer column, read before the "
                               "table is filled: a = NULLIF(a, b) finds no row "
                               "(KW46-PUSHDOWN-TEMPORAL-STRING, its mechanism by hand in "
                               "session 11: case nullif_pushdown_convert; TLP-groupby s9 or18 "
                               "t25, TLP-distinct 2347ba6aba71); NULLIF is written of numbers "
                               "only (the generator knows no column's character set)",
    "expr-cache-binary-in": "a character string value (naming a column) left of IN/ANY/ALL "
                            "(SELECT binary_column ...): the subquery cache keys it by its "
                            "collation while IN compares binary, so '' and ' ' (PAD SPACE) "
                            "share one cached answer (LEFT(c, 2) IN (SELECT tinyblob ...); "
                            "KW46-EXPR-CACHE-PAD-KEY's mechanism, TLP-aggregate, "
                            "67db7468e68c; right with subquery_cache=off): the value is written "
                            "CAST(v AS BINARY), which IN compares the same",
})
# Views the oracles leave out while the generator avoids a known bug: bug -> (what the
# view's definition holds, a regular expression; what the view must also have: '' nothing
# more, VIEW_UNSIGNED a BIGINT UNSIGNED column, VIEW_STRING a character string column,
# VIEW_BIT a BIT column, VIEW_WIDE_INTEGER a DECIMAL(p,0) column of p >= 20,
# VIEW_VERSIONED_DML the oracle writes (DQE) and the definition names a system-versioned
# table).  A view over such a view is left out too (oracle.views_left_out).
VIEW_UNSIGNED = "bigint-unsigned"
VIEW_STRING = "string"
VIEW_VERSIONED_DML = "versioned-dml"
VIEW_BIT = "bit"
VIEW_WIDE_INTEGER = "wide-integer"     # a DECIMAL(p,0) column of 20 digits or more
VIEW_KNOWN_BUGS: Mapping[str, tuple[str, str]] = MappingProxyType({
    "json-aggregate-having": (r"\bjson_(?:arrayagg|objectagg)\s*\(", ""),
    "unsigned-cache-real": (r"\b(?:min|max|bit_and|bit_or|bit_xor)\s*\(|\(\s*select\b",
                            VIEW_UNSIGNED),
    "variance-is-null": (r"\b(?:std|stddev|stddev_pop|stddev_samp|variance|var_pop|var_samp)"
                         r"\s*\(", ""),
    # (a cast to DATETIME or DATE too: session 11's 625697ff64f9, CAST('1:1:59.999' AS
    # DATETIME(6)) is NULL, yet = TIMESTAMP'0000-00-00 00:00:00' is 1)
    "cast-time-null": (r"\bas\s+(?:time|datetime|date)\s*[()]", ""),
    "setop-pushdown-collation": (r"\b(?:union|intersect|except)\b", VIEW_STRING),
    "setop-pushdown-cast": (r"\b(?:union|intersect|except)\b", VIEW_WIDE_INTEGER),
    "vers-outer-join-dml": (r"\b(?:left|right)\s+(?:outer\s+)?join\b", VIEW_VERSIONED_DML),
    # a grouped view (materialized) with a BIT column: KW46-BIT-GROUP through the view's
    # temporary table (5612ecfef287: a TEMPTABLE view grouped by a MyISAM BIT(1) with an
    # index shows each group the next one's value)
    "bit-group": (r"\bgroup\s+by\b|\bdistinct\b", VIEW_BIT),
})
EQUALITIES = ("=", "<>", "!=", "<=>")
RANGES = ("<", "<=", ">", ">=")
NUMBER_CLASSES = ("int", "dec", "float")
# classes whose indexed columns round or clip a lookup constant (key-constant)
LOOKUP_CLASSES = ("int", "dec", "year")
SAFE_INT_LITERALS = ("0", "1", "2", "3", "5", "7", "9", "10", "100", "127")
_COLUMN_REF_RE = re.compile(r"\b([ts]\d+)\.`")
_COLUMN_NAME_RE = re.compile(r"\b[ts]\d+\.`((?:[^`]|``)+)`")
# type classes never given to IS [NOT] NULL or used as a bare condition: a NOT NULL
# DATE/DATETIME column holding a zero date matches "col IS NULL" in a WHERE clause
# (documented ODBC behaviour, rewritten to col = 0), not as a value
NO_NULL_TEST_CLASSES = ("date", "datetime")


_CAST_RE = re.compile(r"^CAST\((.*) AS [A-Z ]+(?:\(\d+(?:,\s*\d+)?\))?\)$", re.S)
_TEMPORAL_CALL_RE = re.compile(r"^(?:TIME|DATE|TIMESTAMP)\((.*)\)$", re.S)


def _balanced(text: str) -> bool:
    """True when text's parentheses (outside string literals) pair up."""
    depth, quote = 0, ""
    for ch in text:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


def cast_core(sql: str) -> str:
    """sql without the casts around it (``CAST(x AS TIME)``, ``TIME(x)``, ``DATE(x)``,
    ``TIMESTAMP(x)``): two values with the same core differ only by how they are cast."""
    text = sql.strip()
    while True:
        while text.startswith("(") and text.endswith(")") and _balanced(text[1:-1]):
            text = text[1:-1].strip()
        m = _CAST_RE.match(text) or _TEMPORAL_CALL_RE.match(text)
        if not m or not _balanced(m.group(1)):
            return text
        text = m.group(1).strip()


@dataclass(frozen=True)
class GeneratorOptions:
    """Bounds of what :class:`SqlGenerator` writes.

    max_depth: nesting of values and predicates; subqueries: write subqueries
    at all; max_join_tables: tables in a FROM clause; max_join_rows: the
    largest product of table sizes a FROM clause may join; max_subquery_rows:
    the largest outer row count a query with subqueries may have; floats:
    write float arithmetic (float columns and literals are always used);
    avoid: the :data:`KNOWN_BUGS` the generator steers clear of (all by default);
    oracle_mode: the queries run under sql_mode=ORACLE (the oracle sets it when it reads
    the session's mode, for the known bugs oracle-concat-outer-join and oracle-replace-null);
    udfs: loaded functions of one integer returning an integer to call (``f(value)``).
    """

    max_depth: int = 3
    subqueries: bool = True
    max_join_tables: int = 3
    max_join_rows: int = 20000
    max_subquery_rows: int = 2000
    floats: bool = True
    avoid: frozenset[str] = frozenset(KNOWN_BUGS)
    # the session's sql_mode has ORACLE (oracle-concat-outer-join, oracle-replace-null)
    oracle_mode: bool = False
    udfs: tuple[str, ...] = ()  # integer functions of one integer to call now and then
                                # (a planted UDF in the tests)


BINARY_STRINGS = frozenset({"binary", "varbinary", "tinyblob", "blob", "mediumblob",
                            "longblob"})  # string types without a collation


@dataclass
class Scope:
    """The tables an expression may name: (alias, table) pairs, and the enclosing query's."""

    tables: list[tuple[str, TableInfo]]
    outer: "Scope | None" = None
    level: int = 0  # 0: the main query; 1: a subquery of it...
    rows: int = 1
    # False: the enclosing queries' character string columns are not this scope's to name
    # (the known bug expr-cache-collation-key)
    outer_strings: bool = True
    _columns: dict[tuple[tuple[str, ...], bool], list[tuple[str, ColumnInfo]]] = field(
        default_factory=dict, repr=False)

    def columns(self, *classes: str, outer: bool = False) -> list[tuple[str, ColumnInfo]]:
        """(alias, column) pairs of these classes; outer adds the enclosing queries' columns."""
        key = (classes, outer)
        hit = self._columns.get(key)
        if hit is None:
            hit = [(a, c) for a, t in self.tables for c in t.columns_of(*classes)]
            if outer and self.outer is not None:
                hit += [(a, c) for a, c in self.outer.columns(*classes, outer=True)
                        if self.outer_strings or c.type_class != "str"
                        or c.data_type in BINARY_STRINGS]
            self._columns[key] = hit
        return hit

    def column_names(self) -> set[str]:
        """Every column name of this scope's tables and the enclosing queries' (the unused
        types' too): the names an output alias must not take."""
        names = {n for _, t in self.tables for n in (t.all_names or
                                                      tuple(c.name for c in t.columns))}
        return names | (self.outer.column_names() if self.outer is not None else set())

    def classes(self) -> list[str]:
        """The type classes of this scope's columns, in a stable order."""
        present = {c.type_class for _, t in self.tables for c in t.columns}
        return [c for c in CLASSES if c in present]


@dataclass(frozen=True)
class JoinPart:
    """One table of a FROM clause: how it is joined (``''`` for the first one), the table,
    its alias and its ON condition (``''`` for none)."""

    kind: str
    table: TableInfo
    alias: str
    on: str = ""

    @property
    def ref(self) -> str:
        """The table reference: ``schema.table AS alias``."""
        return f"{self.table.sql_name} AS {self.alias}"


@dataclass(frozen=True)
class FromClause:
    """A generated FROM clause: its SQL, the scope of its tables and its parts, in order."""

    sql: str
    scope: Scope
    rows: int
    parts: tuple[JoinPart, ...] = ()

    @property
    def inner_only(self) -> bool:
        """True when every join is an inner one (JOIN, INNER JOIN, CROSS JOIN, STRAIGHT_JOIN):
        the tables may then be listed in any order with the ON conditions in the WHERE."""
        return all(p.kind in ("", "JOIN", "INNER JOIN", "CROSS JOIN", "STRAIGHT_JOIN")
                   for p in self.parts)


@dataclass(frozen=True)
class Produced:
    """An expression the generator wrote (when it records them, see SqlGenerator.trace).

    kind: ``'value'`` (cls is its type class), ``'predicate'`` (cls is the
    predicate's kind: ``cmp``, ``null``, ``in``, ``bare``, ``sub``...),
    ``'subquery'`` (the text is a whole ``SELECT``, cls its kind: ``in``,
    ``exists``, ``anyall``, ``scalar``, ``count``); scope: where it was written
    (the columns it may name); text: its SQL, as it appears in the query."""

    kind: str
    cls: str
    text: str
    scope: Scope
    parts: tuple[str, ...] = ()  # a predicate's operands: cmp (left, op, right), and/or/xor
                                 # (first, second), not (inner,), istruth (inner, test),
                                 # between (tested, neg, low, high), in (tested, neg, items)


def null_expression(sql: str) -> bool:
    """True when sql holds the literal NULL inside an expression (``(1 MOD NULL)``), not when
    it is NULL itself (the known bug between-unsigned-null)."""
    return sql.strip("() ").upper() != "NULL" and \
        re.search(r"\bNULL\b", sql, re.IGNORECASE) is not None


@dataclass
class SqlGenerator:
    """Random SQL over tables, from one ``random.Random`` (see the module docstring).

    rows maps (schema, table) to its row count (an estimate is enough); a
    table not in it counts as :data:`UNKNOWN_ROWS` rows.
    """

    tables: Sequence[TableInfo]
    rng: random.Random
    rows: Mapping[tuple[str, str], int] = field(default_factory=dict)
    options: GeneratorOptions = field(default_factory=GeneratorOptions)
    # when a list: every value, predicate and subquery written is appended to it
    # (Produced), for the oracles that rewrite parts of a query (EET, CODDTest, Pinolo)
    trace: list[Produced] | None = None

    def note(self, kind: str, cls: str, text: str, scope: Scope,
             parts: tuple[str, ...] = ()) -> str:
        """Record an expression written (when tracing); return its text."""
        if self.trace is not None:
            self.trace.append(Produced(kind, cls, text, scope, parts))
        return text

    # ------------------------------------------------------------ helpers
    def choice(self, items: Sequence[T]) -> T:
        """One item, uniformly."""
        return items[self.rng.randrange(len(items))]

    def chance(self, p: float) -> bool:
        """True with probability p."""
        return self.rng.random() < p

    def weighted(self, options: Sequence[tuple[float, T]]) -> T:
        """One item of (weight, item) pairs, by weight."""
        total = sum(w for w, _ in options if w > 0)
        x = self.rng.random() * total
        for w, item in options:
            if w <= 0:
                continue
            x -= w
            if x < 0:
                return item
        return [item for w, item in options if w > 0][-1]

    def table_rows(self, table: TableInfo) -> int:
        """The table's row count (estimate), or UNKNOWN_ROWS."""
        n = self.rows.get((table.schema, table.name))
        return UNKNOWN_ROWS if n is None else max(0, n)

    def pick_table(self, max_rows: int | None = None) -> TableInfo | None:
        """A table, non-empty ones first; None when none has at most max_rows rows."""
        fitting = [t for t in self.tables if max_rows is None or self.table_rows(t) <= max_rows]
        if not fitting:
            return None
        return self.weighted([(4.0 if self.table_rows(t) > 0 else 1.0, t) for t in fitting])

    # ------------------------------------------------------------ FROM
    def from_clause(self, max_rows: int | None = None, joins: bool = True) -> FromClause | None:
        """One table, or two or three joined (INNER/LEFT/RIGHT/STRAIGHT_JOIN/CROSS)."""
        limit = max_rows or self.options.max_join_rows
        first = self.pick_table(limit)
        if first is None:
            return None
        scope = Scope([("t1", first)])
        rows = max(1, self.table_rows(first))
        sql = f"{first.sql_name} AS t1"
        parts = [JoinPart("", first, "t1")]
        wanted = 1
        if joins and self.options.max_join_tables > 1:
            wanted = self.weighted([(60, 1), (32, 2), (8, 3)])
        wanted = min(wanted, self.options.max_join_tables)
        for n in range(2, wanted + 1):
            table = self.pick_table(max(0, limit // rows))
            if table is None:
                break
            alias = f"t{n}"
            kind = self.weighted([(30, "JOIN"), (30, "LEFT JOIN"), (10, "RIGHT JOIN"),
                                  (10, "INNER JOIN"), (8, "STRAIGHT_JOIN"), (6, "CROSS JOIN")])
            inner = Scope(scope.tables + [(alias, table)])
            if kind == "CROSS JOIN":
                sql += f" CROSS JOIN {table.sql_name} AS {alias}"
                parts.append(JoinPart(kind, table, alias))
            else:
                on = self.join_condition(scope, alias, table, inner)
                sql += f" {kind} {table.sql_name} AS {alias} ON {on}"
                parts.append(JoinPart(kind, table, alias, on))
            scope = inner
            rows *= max(1, self.table_rows(table))
        scope.rows = rows
        return FromClause(sql, scope, rows, tuple(parts))

    def join_condition(self, before: Scope, alias: str, table: TableInfo, scope: Scope) -> str:
        """An ON condition: mostly an equality of a new column with an earlier one."""
        by_class: dict[str, list[tuple[str, ColumnInfo]]] = {}
        for a, c in before.columns():
            by_class.setdefault(c.type_class, []).append((a, c))
        def partners(d: ColumnInfo) -> list[tuple[str, ColumnInfo]]:
            """The earlier columns d may be joined with."""
            found = [x for cls in self.comparable(d.type_class) for x in by_class.get(cls, ())]
            if self.avoids("bit-range"):
                found = [(a, c) for a, c in found if (c.data_type == "bit") == (d.data_type == "bit")]
            if d.data_type == "bit" and self.avoids("bit-key-join"):
                found = [(a, c) for a, c in found if c.bit_width == d.bit_width]
            return found
        joinable = [d for d in table.columns if partners(d)]
        cond = ""
        if joinable and self.chance(0.85):
            d = self.choice(joinable)
            a, c = self.choice(partners(d))
            op = self.weighted([(8, "="), (1, "<"), (1, ">="),
                                (0 if self.avoids("null-safe-ref") else 1, "<=>")])
            left, right = f"{a}.{quote_name(c.name)}", f"{alias}.{quote_name(d.name)}"
            if op in EQUALITIES:
                left, right = self.unbinary_ref(scope, left, right)
            cond = f"{left} {op} {right}"
        if not cond or self.chance(0.3):
            extra = self.predicate(scope, self.options.max_depth - 1, subqueries=False)
            cond = f"({cond}) AND {extra}" if cond else extra
        return cond

    # ------------------------------------------------------------ values
    def literal(self, cls: str) -> str:
        """A literal of the class (NULL now and then)."""
        if self.chance(0.04):
            return "NULL"
        return self.choice(LITERALS[cls])

    def column(self, scope: Scope, cls: str) -> str | None:
        """A qualified column of the class (sometimes of an enclosing query), or None."""
        cols = scope.columns(cls, outer=scope.outer is not None and self.chance(0.35))
        if not cols:
            return None
        alias, col = self.choice(cols)
        return f"{alias}.{quote_name(col.name)}"

    def leaf(self, scope: Scope, cls: str) -> str:
        """A column of the class (mostly) or a literal."""
        if self.chance(0.7):
            col = self.column(scope, cls)
            if col is not None:
                return col
        return self.literal(cls)

    def value_class(self, scope: Scope, exclude: Sequence[str] = ()) -> str:
        """A type class, mostly one the scope has columns of (never one of exclude)."""
        present = [c for c in scope.classes() if c not in exclude]
        if present and self.chance(0.85):
            return self.choice(present)
        return self.choice([c for c in CLASSES if c not in exclude])

    def comparable(self, cls: str) -> tuple[str, ...]:
        """The classes a value of cls is compared with (YEAR with YEAR only under year-lookup)."""
        if "year-lookup" in self.options.avoid:
            return ("year",) if cls == "year" else tuple(c for c in COMPARABLE[cls] if c != "year")
        return COMPARABLE[cls]

    def avoids(self, bug: str) -> bool:
        """True when the generator steers clear of this known bug."""
        return bug in self.options.avoid

    def cross_classes(self, cls: str) -> list[str]:
        """Classes a value of cls may be compared with now and then (beyond comparable)."""
        out = list(CLASSES)
        if self.avoids("year-lookup"):
            out = [c for c in out if c != "year"] if cls != "year" else ["year"]
        if self.avoids("time-datetime"):
            if cls == "time":
                out = [c for c in out if c not in ("date", "datetime")]
            elif cls in ("date", "datetime"):
                out = [c for c in out if c != "time"]
        if self.avoids("temporal-string"):
            if cls in ("date", "datetime", "time"):
                out = [c for c in out if c != "str"]
            elif cls == "str":
                out = [c for c in out if c not in ("date", "datetime", "time")]
        if self.avoids("temporal-number"):
            if cls in ("date", "datetime", "time"):
                out = [c for c in out if c not in NUMBER_CLASSES]
            elif cls in NUMBER_CLASSES:
                out = [c for c in out if c not in ("date", "datetime", "time")]
        return out

    def bare_column(self, scope: Scope, sql: str) -> ColumnInfo | None:
        """The column sql names when it is a bare column of the scope (or an outer one)."""
        m = re.fullmatch(r"([ts]\d+)\.`((?:[^`]|``)+)`", sql)
        if m is None:
            return None
        alias, name = m.group(1), m.group(2).replace("``", "`")
        s: Scope | None = scope
        while s is not None:
            for a, t in s.tables:
                if a == alias:
                    return next((c for c in t.columns if c.name == name), None)
            s = s.outer
        return None

    def is_constant(self, scope: Scope, sql: str) -> bool:
        """True when sql names no column of the scope or its enclosing queries."""
        visible: set[str] = set()
        s: Scope | None = scope
        while s is not None:
            visible.update(a for a, _ in s.tables)
            s = s.outer
        return not any(m.group(1) in visible for m in _COLUMN_REF_RE.finditer(sql))

    def constant_risk(self, scope: Scope, column_sql: str, other_sql: str, op: str) -> bool:
        """True when comparing column_sql with other_sql by op would meet a known bug.

        key-constant: column_sql is an indexed integer/decimal/YEAR column, op an
        equality and other_sql a constant other than an integer literal 0..127;
        minmax-key-fraction: the same with op a range comparison (<, <=, >, >=; BETWEEN
        asks with <);
        bit-range: column_sql is a BIT column and other_sql neither such a literal
        nor a BIT column; bit-key-join: a BIT column of another width.
        """
        col = self.bare_column(scope, column_sql)
        if col is None or other_sql in SAFE_INT_LITERALS or other_sql == "NULL":
            return False
        if col.data_type == "bit" and self.avoids("bit-range"):
            other = self.bare_column(scope, other_sql)
            return (other is None or other.data_type != "bit"
                    or (self.avoids("bit-key-join") and other.bit_width != col.bit_width))
        if not (col.key and col.type_class in LOOKUP_CLASSES and self.is_constant(scope, other_sql)):
            return False
        return ((self.avoids("key-constant") and op in EQUALITIES)
                or (self.avoids("minmax-key-fraction") and op in RANGES))

    def unkeyed_member(self, scope: Scope, sql: str) -> str:
        """sql, or ``CONCAT(sql)`` when it is a bare indexed ENUM or SET column and the
        generator avoids the known bug set-key-string (its index lookup reads a string that
        is no member as a number: '0' finds the empty set)."""
        col = self.bare_column(scope, sql)
        if col is not None and col.key and col.data_type in ("enum", "set") \
                and self.avoids("set-key-string"):
            return self.concat(sql)
        return sql

    def safe_literal(self) -> str:
        """An integer literal every integer, decimal, YEAR and BIT column can hold."""
        return self.choice(SAFE_INT_LITERALS)

    def value(self, scope: Scope, cls: str, depth: int = 0) -> str:
        """A value of the class, nested at most max_depth - depth deep."""
        return self.note("value", cls, self._value(scope, cls, depth), scope)

    def _value(self, scope: Scope, cls: str, depth: int) -> str:
        if depth >= self.options.max_depth or self.chance(0.5):
            return self.leaf(scope, cls)
        makers: Mapping[str, Callable[[Scope, int], str]] = {
            "int": self._int_value, "dec": self._dec_value, "float": self._float_value,
            "str": self._str_value, "date": self._date_value, "datetime": self._datetime_value,
            "time": self._time_value, "year": lambda s, d: self.leaf(s, "year"),
        }
        if self.chance(0.12):
            return self._generic_value(scope, cls, depth + 1)
        return makers[cls](scope, depth + 1)

    def _generic_value(self, scope: Scope, cls: str, depth: int) -> str:
        def v() -> str:
            """Another value of the class."""
            return self.value(scope, cls, depth)
        kinds = ["coalesce", "ifnull", "nullif", "if", "case", "least", "greatest"]
        if cls not in ("int", "dec", "float") and self.avoids("nullif-pushdown-convert"):
            kinds.remove("nullif")
        kind = self.choice(tuple(kinds))
        if kind == "coalesce":
            return f"COALESCE({v()}, {v()})"
        if kind == "ifnull":
            return f"IFNULL({v()}, {v()})"
        if kind == "nullif":
            made = f"NULLIF({v()}, {v()})"
            return self._exact_int(made) if cls == "int" else made
        if kind == "if":
            return f"IF({self.predicate(scope, depth)}, {v()}, {v()})"
        if kind == "case":
            return f"(CASE WHEN {self.predicate(scope, depth)} THEN {v()} ELSE {v()} END)"
        return f"{kind.upper()}({v()}, {v()})"

    def _exact_int(self, call: str) -> str:
        """An integer function whose DECIMAL precision is a digit short, as ``(call + 0)`` while
        the generator avoids the known int-precision bug."""
        return f"({call} + 0)" if self.avoids("int-precision") else call

    def _numeric(self, scope: Scope, depth: int) -> str:
        return self.value(scope, self.weighted([(6, "int"), (2, "dec"), (1, "float")]), depth)

    def _int_value(self, scope: Scope, depth: int) -> str:
        def i() -> str:
            """Another integer value."""
            return self.value(scope, "int", depth)
        kind = self.weighted([
            (6, "arith"), (2, "div"), (1, "neg"), (2, "abs"), (2, "bit"), (1, "shift"),
            (2, "strfn"), (2, "datefn"), (2, "round"), (1, "cast"), (2, "bool"), (1, "bitcount"),
            (1 if self._subqueries_allowed(scope) else 0, "count"),
            (20 if self.options.udfs else 0, "udf"),
        ])
        if kind == "arith":
            return f"({i()} {self.choice(('+', '-', '*'))} {i()})"
        if kind == "div":
            op = self.choice(('DIV', 'MOD', '%'))
            made = f"({i()} {op} {i()})"
            return self._exact_int(made) if op == "DIV" else made
        if kind == "neg":
            negated = i()
            if negated == "NULL" and self.avoids("double-fixed-plus"):
                return "NULL"  # - NULL is a DOUBLE(1,0): beside a BIGINT a DOUBLE(20,0)
            return f"(- {negated})"
        if kind == "abs":
            return self._exact_int(f"ABS({i()})") if self.chance(0.5) else \
                f"SIGN({self._numeric(scope, depth)})"
        if kind == "bit":
            return f"({i()} {self.choice(('&', '|', '^'))} {i()})"
        if kind == "shift":
            return f"({i()} {self.choice(('>>', '<<'))} {self.rng.randrange(0, 4)})"
        if kind == "strfn":
            s = self.value(scope, "str", depth)
            fn = self.choice(("LENGTH", "CHAR_LENGTH", "ASCII", "LOCATE", "STRCMP"))
            if fn in ("LOCATE", "STRCMP"):
                return f"{fn}({s}, {self.value(scope, 'str', depth)})"
            return self._exact_int(f"{fn}({s})") if fn == "ASCII" else f"{fn}({s})"
        if kind == "datefn":
            d = self.value(scope, self.choice(("date", "datetime")), depth)
            fn = self.choice(("YEAR", "MONTH", "DAYOFMONTH", "DAYOFYEAR", "TO_DAYS", "DATEDIFF"))
            if fn == "DATEDIFF":
                return f"DATEDIFF({d}, {self.value(scope, 'date', depth)})"
            # TO_DAYS declares a digit too few (9999-01-01 is 3652059): int-precision's family
            return self._exact_int(f"TO_DAYS({d})") if fn == "TO_DAYS" else f"{fn}({d})"
        if kind == "round":
            fn = self.choice(("FLOOR", "CEILING", "ROUND", "TRUNCATE"))
            n = self.value(scope, self.choice(("dec", "int")), depth)
            return self._exact_int(f"TRUNCATE({n}, 0)" if fn == "TRUNCATE" else f"{fn}({n})")
        if kind == "cast":
            # (a TIME through COALESCE/IF/CASE -- EET wraps it in one -- loses its sign:
            # cast-hybrid-negative-time)
            no_time = ("time",) if self.avoids("cast-hybrid-negative-time") else ()
            src = self.value(scope, self.value_class(scope, no_time), depth)
            return f"CAST({src} AS {self.choice(('SIGNED', 'UNSIGNED'))})"
        if kind == "bool":
            return self._truth_value(scope, depth)
        if kind == "bitcount":
            return self._exact_int(f"BIT_COUNT({i()})")
        if kind == "udf":
            return f"{self.choice(self.options.udfs)}({i()})"
        return self.scalar_subquery(scope, depth)

    def _dec_value(self, scope: Scope, depth: int) -> str:
        kind = self.weighted([(4, "divide"), (2, "plus"), (2, "round"), (1, "cast"), (1, "abs")])
        if kind == "divide":
            return (f"({self.value(scope, self.choice(('int', 'dec')), depth)} / "
                    f"{self.value(scope, self.choice(('int', 'dec')), depth)})")
        if kind == "plus":
            return (f"({self.value(scope, self.choice(('int', 'dec')), depth)} "
                    f"{self.choice(('+', '-', '*'))} {self.choice(DEC_LITERALS)})")
        if kind == "round":
            fn = self.choice(("ROUND", "TRUNCATE"))
            rounded, places = self.value(scope, 'dec', depth), self.rng.randrange(0, 3)
            if places and self.avoids("decimal-round-scale") and self.names_widest_decimal(rounded):
                places = 0
            return f"{fn}({rounded}, {places})"
        if kind == "cast":
            return f"CAST({self.value(scope, self.value_class(scope), depth)} AS DECIMAL(12,3))"
        return f"ABS({self.value(scope, 'dec', depth)})"

    def _float_value(self, scope: Scope, depth: int) -> str:
        if not self.options.floats:
            return self.leaf(scope, "float")
        kind = self.choice(("plus", "times", "cast"))
        if kind == "plus":
            return f"({self.value(scope, 'float', depth)} + {self.choice(FLOAT_LITERALS)})"
        if kind == "times":
            return f"({self._numeric(scope, depth)} * {self.choice(FLOAT_LITERALS)})"
        return f"CAST({self._numeric(scope, depth)} AS DOUBLE)"

    def _str_value(self, scope: Scope, depth: int) -> str:
        def s() -> str:
            """Another string value."""
            return self.value(scope, "str", depth)
        kind = self.weighted([(3, "concat"), (3, "case"), (2, "cut"), (2, "trim"), (1, "replace"),
                              (1, "pad"), (1, "cast"), (1, "reverse"), (1, "repeat")])
        if kind == "concat":
            if self.chance(0.2):
                return f"CONCAT_WS('-', {s()}, {s()})"
            return self.concat(s(), s())
        if kind == "case":
            return f"{self.choice(('UPPER', 'LOWER'))}({s()})"
        if kind == "cut":
            fn = self.choice(("LEFT", "RIGHT", "SUBSTRING"))
            if fn == "SUBSTRING":
                return f"SUBSTRING({s()}, {self.rng.randrange(1, 4)}, {self.rng.randrange(1, 4)})"
            return f"{fn}({s()}, {self.rng.randrange(0, 4)})"
        if kind == "trim":
            return f"{self.choice(('TRIM', 'LTRIM', 'RTRIM'))}({s()})"
        if kind == "replace":
            value, old, new = s(), self.choice(STR_LITERALS), self.choice(STR_LITERALS)
            if self.options.oracle_mode and self.avoids("oracle-replace-null"):
                return f"REVERSE({value})"     # (the same draws)
            return f"REPLACE({value}, {old}, {new})"
        if kind == "pad":
            return f"{self.choice(('LPAD', 'RPAD'))}({s()}, {self.rng.randrange(0, 5)}, 'x')"
        if kind == "cast":
            return f"CAST({self.value(scope, self.value_class(scope), depth)} AS CHAR)"
        if kind == "reverse":
            return f"REVERSE({s()})"
        return f"REPEAT({s()}, {self.rng.randrange(0, 3)})"

    def _date_value(self, scope: Scope, depth: int) -> str:
        d = self.value(scope, self.choice(("date", "datetime")), depth)
        kind = self.choice(("date", "add", "sub", "last", "cast"))
        if kind == "date":
            return f"DATE({d})"
        if kind in ("add", "sub"):
            unit = self.choice(("DAY", "MONTH", "YEAR"))
            fn = "DATE_ADD" if kind == "add" else "DATE_SUB"
            return f"{fn}({d}, INTERVAL {self.rng.randrange(0, 40)} {unit})"
        if kind == "last":
            return f"LAST_DAY({d})"
        return f"CAST({d} AS DATE)"

    def _datetime_value(self, scope: Scope, depth: int) -> str:
        d = self.value(scope, self.choice(("date", "datetime")), depth)
        kind = self.choice(("cast", "add", "timestamp"))
        if kind == "cast":
            return f"CAST({d} AS DATETIME)"
        if kind == "add":
            return f"({d} + INTERVAL {self.rng.randrange(0, 48)} {self.choice(('HOUR', 'MINUTE', 'DAY'))})"
        return f"TIMESTAMP({d})"

    def _time_value(self, scope: Scope, depth: int) -> str:
        kind = self.choice(("time", "cast", "sec", "add"))
        if kind == "time":
            return f"TIME({self.value(scope, self.choice(('datetime', 'time')), depth)})"
        if kind == "cast":
            src = ("time", "datetime") if self.avoids("cast-time-null") else CLASSES
            return f"CAST({self.value(scope, self.choice(src), depth)} AS TIME)"
        if kind == "sec":
            return f"SEC_TO_TIME({self.value(scope, 'int', depth)})"
        return f"ADDTIME({self.value(scope, 'time', depth)}, {self.choice(TIME_LITERALS)})"

    # ------------------------------------------------------------ predicates
    def _truth_value(self, scope: Scope, depth: int) -> str:
        """A condition as an integer value: ``(p)``, and ``(p IS TRUE)`` when p is a bare value
        (a condition's value is that value: a bare DOUBLE column summed as an integer is
        summed in floating point, in an order that changes its last digits -- session 11's
        1136eac9e1bc, AVG((t1.double_col) + 0) by TLP-groupby)."""
        kind, text, parts = self._predicate(scope, depth, True)
        text = self.note("predicate", kind, text, scope, parts)
        return f"({text} IS TRUE)" if kind == "bare" else f"({text})"

    def predicate(self, scope: Scope, depth: int = 0, subqueries: bool = True) -> str:
        """A condition over the scope (any SQL value is one: NULL, 0, non-zero)."""
        kind, text, parts = self._predicate(scope, depth, subqueries)
        return self.note("predicate", kind, text, scope, parts)

    def _comparison(self, scope: Scope, nxt: int) -> tuple[str, str, str]:
        """A comparison's (left, operator, right), clear of the avoided bugs' shapes."""
        cls = self.value_class(scope)
        other = self.choice(self.comparable(cls))
        if self.chance(0.2):
            other = self.choice(self.cross_classes(cls))
        op = self.choice(COMPARISONS)
        left, right = self.value(scope, cls, nxt), self.value(scope, other, nxt)
        if self.list_division(cls, left):       # decimal-div-in-list: in any comparison
            left = self.leaf(scope, cls)
        if self.list_division(other, right):
            right = self.leaf(scope, other)
        left, right = self.unkeyed_member(scope, left), self.unkeyed_member(scope, right)
        if op in EQUALITIES:
            left, right = self.unbinary_ref(scope, left, right)
        if self.constant_risk(scope, left, right, op):
            right = self.safe_literal()
        if self.constant_risk(scope, right, left, op):
            left = self.safe_literal()
        if (op == "<=>" and self.avoids("null-safe-ref") and self.bare_column(scope, left)
                and self.bare_column(scope, right)):
            op = "="
        if self.avoids("cast-scale-eq") and left != right \
                and cast_core(left) == cast_core(right):
            right = self.literal(other)
        if op == "<=>" and right == "NULL":
            left = self.null_key_lookup(scope, left)
        elif op == "<=>" and left == "NULL":
            right = self.null_key_lookup(scope, right)
        return left, op, right

    def in_list(self, scope: Scope, depth: int) -> tuple[str, str]:
        """The tested value and the items of an ``IN (...)`` list, the known bugs' shapes
        left out (set-key-string, decimal-div-in-list, key-constant either way round,
        aria-icp-binary-ref)."""
        cls = self.value_class(scope)
        tested = self.unkeyed_member(scope, self.value(scope, cls, depth))
        if self.list_division(cls, tested):
            tested = self.leaf(scope, cls)
        safe = self.constant_risk(scope, tested, "0.5", "=")
        members = [self.safe_literal() if safe else self.literal(cls) if self.chance(0.7)
                   else self.list_item(scope, cls, depth)
                   for _ in range(self.rng.randrange(1, 5))]
        # (key-constant the other way round: -0.5 IN (t1.decimal_key) is a lookup of the
        # constant in the member's index, session 11's 8c3d59b40b07)
        if any(self.constant_risk(scope, m, tested, "=") for m in members):
            tested = self.safe_literal()
        items = ", ".join(members)
        return self.unbinary_ref(scope, tested, items)[0], items

    def list_division(self, cls: str, sql: str) -> bool:
        """True when sql, a value of cls on either side of an IN list or a comparison, is a
        decimal value holding a division and the generator avoids the known bug
        decimal-div-in-list (an IN list of two or more values compares the digits a
        quotient carries beyond its scale; one of a single value, like =, does not; a
        comparison does or does not by context: bd1497bdafe9's ``<=>``)."""
        return cls == "dec" and "/" in sql and self.avoids("decimal-div-in-list")

    def names_binary(self, scope: Scope, sql: str) -> bool:
        """True when sql names a binary string column (BINARY, VARBINARY, a BLOB) of the
        scope or an enclosing query's."""
        for m in _COLUMN_NAME_RE.finditer(sql):
            col = self.bare_column(scope, m.group(0))
            if col is not None and col.data_type in BINARY_STRINGS:
                return True
        return False

    def is_string_key(self, scope: Scope, sql: str) -> bool:
        """True when sql is a bare indexed character string column (not a binary one)."""
        col = self.bare_column(scope, sql)
        return (col is not None and bool(col.key) and col.type_class == "str"
                and col.data_type not in BINARY_STRINGS)

    def unbinary_ref(self, scope: Scope, left: str, right: str) -> tuple[str, str]:
        """The two sides of an equality (=, <>, !=, <=>, a one-value IN), a bare indexed
        character string column written ``CONCAT(c)`` when the other side names a binary
        string column and the generator avoids the known bug aria-icp-binary-ref (an Aria
        key's ref lookup on all its parts, the equality compared binary as the pushed index
        condition, stops at the first entry it rejects)."""
        if not self.avoids("aria-icp-binary-ref"):
            return left, right
        if self.is_string_key(scope, left) and self.names_binary(scope, right):
            left = self.concat(left)
        if self.is_string_key(scope, right) and self.names_binary(scope, left):
            right = self.concat(right)
        return left, right

    def list_item(self, scope: Scope, cls: str, depth: int) -> str:
        """A value of an IN list: a literal of cls instead of a decimal division
        (:meth:`list_division`)."""
        item = self.value(scope, cls, depth)
        return self.literal(cls) if self.list_division(cls, item) else item

    def names_widest_decimal(self, sql: str) -> bool:
        """True when sql names a DECIMAL column of more than 62 digits (in one of the
        generator's tables): rounded to more places than its scale, its type would need
        more than 65 digits (the known bug decimal-round-scale)."""
        names = {m.group(1).replace("``", "`") for m in _COLUMN_NAME_RE.finditer(sql)}
        return any(c.name in names and c.precision > 62 for t in self.tables for c in t.columns)

    def concat(self, *parts: str) -> str:
        """``CONCAT(parts)``; under sql_mode=ORACLE, while the generator avoids the known
        bug oracle-concat-outer-join, ``CONCAT_WS('', parts)``: Oracle's CONCAT skips NULLs,
        yet the optimizer takes a condition on it for one that rejects NULLs."""
        if self.options.oracle_mode and self.avoids("oracle-concat-outer-join"):
            return f"CONCAT_WS('', {', '.join(parts)})"
        return f"CONCAT({', '.join(parts)})"

    def null_key_lookup(self, scope: Scope, sql: str) -> str:
        """sql tested for NULL (``IS NULL``, ``<=> NULL``), as ``COALESCE(sql)`` when it is a
        bare indexed column of a join (two tables or more) and the generator avoids the
        known bug bnlh-is-null: the test becomes a lookup of the NULL key, which a hashed
        join buffer (join_cache_level 3 and 4) never finds."""
        col = self.bare_column(scope, sql)
        if col is not None and col.key and len(scope.tables) > 1 and self.avoids("bnlh-is-null"):
            return f"COALESCE({sql})"
        return sql

    def _predicate(self, scope: Scope, depth: int,
                   subqueries: bool) -> tuple[str, str, tuple[str, ...]]:
        deep = depth >= self.options.max_depth
        sub_ok = subqueries and not deep and self._subqueries_allowed(scope)
        kind = self.weighted([
            (30, "cmp"), (8, "null"), (7, "between"), (8, "in"),
            (5 if scope.columns("str", outer=True) else 1, "like"),
            (0 if deep else 5, "not"), (0 if deep else 9, "and"), (0 if deep else 8, "or"),
            (0 if deep else 2, "xor"), (0 if deep else 4, "istruth"), (2, "bare"),
            (7 if sub_ok else 0, "sub"),
        ])
        nxt = depth + 1
        if kind == "cmp":
            left, op, right = self._comparison(scope, nxt)
            return kind, f"({left} {op} {right})", (left, op, right)
        if kind == "null":
            cls = self.value_class(scope, NO_NULL_TEST_CLASSES)
            neg = self.choice(('', 'NOT '))
            tested = self.value(scope, cls, nxt)
            if not neg:
                tested = self.null_key_lookup(scope, tested)
            return kind, f"({tested} IS {neg}NULL)", ()
        if kind == "between":
            cls = self.value_class(scope)
            neg = self.choice(("", "NOT "))
            tested, low, high = (self.value(scope, cls, nxt) for _ in range(3))
            tested = self.unkeyed_member(scope, tested)
            if self.constant_risk(scope, tested, "0.5", "<"):
                low, high = sorted((self.safe_literal(), self.safe_literal()), key=int)
            if self.avoids("between-unsigned-null"):
                low, high = (self.literal(cls) if null_expression(b) else b for b in (low, high))
            return kind, f"({tested} {neg}BETWEEN {low} AND {high})", (tested, neg, low, high)
        if kind == "in":
            tested, items = self.in_list(scope, nxt)
            neg = self.choice(('', 'NOT '))
            return kind, f"({tested} {neg}IN ({items}))", (tested, neg, items)
        if kind == "like":
            return kind, (f"({self.value(scope, 'str', nxt)} {self.choice(('', 'NOT '))}LIKE "
                          f"{self.choice(LIKE_PATTERNS)})"), ()
        if kind == "not":
            inner = self.predicate(scope, nxt, subqueries)
            return kind, f"(NOT {inner})", (inner,)
        if kind in ("and", "or", "xor"):
            first, second = self.predicate(scope, nxt, subqueries), self.predicate(scope, nxt, subqueries)
            return kind, f"({first} {kind.upper()} {second})", (first, second)
        if kind == "istruth":
            truth = self.choice(("TRUE", "FALSE", "UNKNOWN"))
            inner = self.predicate(scope, nxt, subqueries)
            test = f"IS {self.choice(('', 'NOT '))}{truth}"
            return kind, f"({inner} {test})", (inner, test)
        if kind == "bare":
            no_bare = NO_NULL_TEST_CLASSES + (("str",) if self.avoids("not-string-key") else ())
            return kind, self.value(scope, self.value_class(scope, no_bare), nxt), ()
        return kind, self.subquery_predicate(scope, nxt), ()

    # ------------------------------------------------------------ subqueries
    def _sub_from(self, scope: Scope, correlated: bool = True) -> tuple[str, Scope] | None:
        table = self.pick_table(self.options.max_subquery_rows)
        if table is None:
            return None
        alias = f"s{scope.level + 1}"
        inner = Scope([(alias, table)], scope if correlated else None, scope.level + 1,
                      scope.rows * max(1, self.table_rows(table)),
                      outer_strings=not self.avoids("expr-cache-collation-key"))
        return f"{table.sql_name} AS {alias}", inner

    def _sub_where(self, inner: Scope, depth: int, always: bool = False) -> str:
        if always or self.chance(0.6):
            return f" WHERE {self.predicate(inner, depth)}"
        return ""

    def _sub_columns(self, table: TableInfo, kind: str) -> list[ColumnInfo]:
        """The columns a subquery of kind may select from table (the avoided bugs' left
        out); none: the subquery is an EXISTS."""
        columns = list(table.columns)
        if self.avoids("in-lookup") and kind in ("in", "anyall"):
            columns = [c for c in columns if not c.key]
        if self.avoids("bit-range"):
            columns = [c for c in columns if c.data_type != "bit"]
        if self.avoids("minmax-set-index") and kind == "scalar":
            columns = [c for c in columns if c.data_type not in ("enum", "set")]
        return columns

    def subquery_predicate(self, scope: Scope, depth: int, correlated: bool = True) -> str:
        """IN / EXISTS / ANY-ALL / scalar-comparison subquery (correlated now and then; never
        when correlated is False: the subquery names no column of the enclosing queries)."""
        made = self._sub_from(scope, correlated)
        if made is None:
            return self.predicate(scope, depth, subqueries=False)
        from_sql, inner = made
        table = inner.tables[0][1]
        alias = inner.tables[0][0]
        kind = self.weighted([(4, "in"), (3, "exists"), (2, "anyall"), (3, "scalar")])
        if kind == "exists":
            where = self._sub_where(inner, depth, always=True)
            sub = self.note("subquery", "exists", f"SELECT * FROM {from_sql}{where}", inner)
            return f"({self.choice(('', 'NOT '))}EXISTS ({sub}))"
        columns = self._sub_columns(table, kind)
        if not columns:
            sub = self.note("subquery", "exists",
                            f"SELECT * FROM {from_sql}{self._sub_where(inner, depth)}", inner)
            return f"(EXISTS ({sub}))"
        col = self.choice(columns)
        cls = col.type_class
        outer_value = self.outer_value(scope, col, kind, depth)
        sub_col = f"{alias}.{quote_name(col.name)}"
        where = self._sub_where(inner, depth)
        if kind in ("in", "anyall") and self.avoids("in-null-materialization"):
            where = (f"{where} AND ({sub_col} IS NOT NULL)" if where
                     else f" WHERE ({sub_col} IS NOT NULL)")
        if kind == "in":
            neg = self.choice(('', 'NOT '))
            sub = self.note("subquery", "in", f"SELECT {sub_col} FROM {from_sql}{where}", inner,
                            (outer_value, neg, cls))
            return f"({outer_value} {neg}IN ({sub}))"
        if kind == "anyall":
            if self.avoids("allany"):
                op, quantifier = self.choice((("=", "ANY"), ("=", "SOME"), ("<>", "ALL"),
                                              ("!=", "ALL")))
            else:
                op, quantifier = self.choice(COMPARISONS[:-1]), self.choice(("ANY", "ALL", "SOME"))
            sub = self.note("subquery", "anyall", f"SELECT {sub_col} FROM {from_sql}{where}",
                            inner, (outer_value, op, quantifier, cls))
            return f"({outer_value} {op} {quantifier} ({sub}))"
        agg = self.choice(("MIN", "MAX"))
        op = self.choice(COMPARISONS)
        if op == "<=>" and self.avoids("nullsafe-zero-timestamp") and (
                col.data_type == "timestamp" or self.names_timestamp(scope, outer_value)):
            op = "="
        if self.constant_risk(scope, outer_value, "(SELECT ...)", op):
            outer_value = f"({outer_value} + 0)"  # a value, not the column: no lookup, no range
        sub = self.note("subquery", "scalar", f"SELECT {agg}({sub_col}) FROM {from_sql}{where}",
                        inner, (outer_value, op, cls))
        return f"({outer_value} {op} ({sub}))"

    def outer_value(self, scope: Scope, col: ColumnInfo, kind: str, depth: int) -> str:
        """The value of the enclosing query a subquery of kind (``in``, ``anyall``,
        ``scalar``) selecting col is compared with, clear of the avoided bugs' shapes."""
        classes = self.comparable(col.type_class)
        if kind == "scalar" and col.data_type == "bigint" and col.unsigned \
                and self.avoids("unsigned-cache-real"):
            classes = tuple(c for c in classes if c != "float")  # never read as a double
        if kind in ("in", "anyall") and col.type_class == "int" and self.avoids("in-const-double"):
            classes = tuple(c for c in classes if c != "float") or classes
        outer_cls = self.choice(classes)
        outer_value = self.value(scope, outer_cls, depth)
        if kind in ("in", "anyall") and "/" in outer_value and \
                self.avoids("expr-cache-decimal-key"):
            outer_value = self.leaf(scope, outer_cls)
        if kind == "scalar" and self.list_division(outer_cls, outer_value):
            outer_value = self.leaf(scope, outer_cls)   # decimal-div-in-list: a comparison
        if kind in ("in", "anyall"):
            if col.data_type in BINARY_STRINGS and self.avoids("aria-icp-binary-ref") \
                    and self.is_string_key(scope, outer_value):
                outer_value = self.concat(outer_value)   # (a semi-join may look it up)
            outer_value = self.binary_in_value(scope, outer_value, col)
        return outer_value

    def names_timestamp(self, scope: Scope, sql: str) -> bool:
        """True when sql names a TIMESTAMP column of the scope or an enclosing query's."""
        found = (self.bare_column(scope, m.group(0)) for m in _COLUMN_NAME_RE.finditer(sql))
        return any(c is not None and c.data_type == "timestamp" for c in found)

    def binary_in_value(self, scope: Scope, sql: str, sub: ColumnInfo) -> str:
        """The value left of an IN/ANY/ALL subquery selecting the column sub: ``CAST(sql AS
        BINARY)`` when sub is a binary string column, sql names a character string column
        and the generator avoids the known bug expr-cache-binary-in (the subquery cache
        keys sql by its collation, so '' and ' ' share an answer the binary comparison
        tells apart; against a binary column IN compares sql's bytes, as the cast does)."""
        if sub.data_type not in BINARY_STRINGS or not self.avoids("expr-cache-binary-in"):
            return sql
        for m in _COLUMN_NAME_RE.finditer(sql):
            col = self.bare_column(scope, m.group(0))
            if col is not None and col.type_class == "str" and col.data_type not in BINARY_STRINGS:
                return f"CAST({sql} AS BINARY)"
        return sql

    def scalar_subquery(self, scope: Scope, depth: int) -> str:
        """``(SELECT COUNT(*) FROM ... WHERE ...)``: one row, always."""
        made = self._sub_from(scope)
        if made is None:
            return self.literal("int")
        from_sql, inner = made
        sub = self.note("subquery", "count",
                        f"SELECT COUNT(*) FROM {from_sql}{self._sub_where(inner, depth)}", inner)
        return f"({sub})"

    def _subqueries_allowed(self, scope: Scope) -> bool:
        return (self.options.subqueries and scope.level < 2 and bool(self.tables)
                and scope.rows <= self.options.max_subquery_rows)
