"""SQL text read at its top level: outside quotes and parentheses.

One scanner (:func:`scan`) walks a generated statement's text as the oracles
need it read: a quote (``'``, ``"`` or a backquote) runs to its closing twin,
a backslash inside one escapes the next character, and parentheses nest.  It
gives where a separator stands at depth 0 (:func:`split_top_level`: a view's
select list cut at its commas, a SELECT cut at its `` FROM ``; case-blind when
asked) and where the first parenthesis closes that was not opened in the text
(:func:`closing_parenthesis`: the end of a call whose argument list the text
starts in); :func:`unquoted` is its walk outside quotes, for readers of their own
(``dqpknown``'s groups).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator


@dataclass(frozen=True)
class Scan:
    """What :func:`scan` found: where each top-level separator starts, and the index of
    the first ``)`` that closes a parenthesis opened before the text (-1: none)."""

    cuts: tuple[int, ...]
    unmatched: int


def unquoted(text: str) -> Iterator[tuple[int, str]]:
    """Each character of text outside quotes, with its index: a quote (``'``, ``"`` or a
    backquote) runs to its closing twin and a backslash inside one escapes the next
    character; the quotes themselves are not given."""
    quote, i = "", 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "'\"`":
            quote = ch
        else:
            yield i, ch
        i += 1


def scan(text: str, sep: str = "", case_blind: bool = False) -> Scan:
    """text walked outside quotes with the parentheses' depth (see the module docstring):
    the starts of sep at depth 0 (none when sep is empty; compared without case when
    case_blind; a separator found is stepped over whole) and the first unmatched ``)``."""
    cuts: list[int] = []
    unmatched = -1
    wanted = sep.upper() if case_blind else sep
    depth, after = 0, 0
    for i, ch in unquoted(text):
        if i < after:
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0 and unmatched < 0:
                unmatched = i
        elif depth == 0 and sep and _at(text, i, wanted, case_blind):
            cuts.append(i)
            after = i + len(sep)
    return Scan(tuple(cuts), unmatched)


def _at(text: str, i: int, sep: str, case_blind: bool) -> bool:
    """Does sep stand at text[i] (sep upper-cased already when case_blind)?"""
    if case_blind:
        return text[i:i + len(sep)].upper() == sep
    return text.startswith(sep, i)


def split_top_level(text: str, sep: str, case_blind: bool = False) -> list[str]:
    """text cut at each sep outside parentheses and quotes (without case when
    case_blind); the text whole when sep is not there."""
    parts, start = [], 0
    for cut in scan(text, sep, case_blind).cuts:
        parts.append(text[start:cut])
        start = cut + len(sep)
    parts.append(text[start:])
    return parts


def closing_parenthesis(text: str) -> int:
    """The index of the ``)`` that closes a parenthesis opened before text (text starts
    inside an argument list), outside quotes; -1 when text does not close it."""
    return scan(text).unmatched
