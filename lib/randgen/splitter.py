"""Cleaning a generated sentence and splitting it into statements.

randgen joins a sentence's pieces, tidies the spacing (``X . col`` becomes
``X.col``, ``COUNT (`` becomes ``COUNT(``) and sends each ``;``-separated
statement on its own, so that every statement gets its own error code.
A ``;`` inside a quoted string, a backtick name or a comment does not
split, and neither does one inside a compound statement: ``BEGIN ... END``
bodies (of CREATE PROCEDURE/FUNCTION/TRIGGER/EVENT, or ``BEGIN NOT ATOMIC``)
and top-level ``IF/CASE/LOOP/REPEAT/WHILE ... END ...`` blocks.  ``BEGIN``
directly followed by ``;``, ``WORK`` or the end is a transaction start.
"""
from __future__ import annotations

import re

_DOT_SPACE = re.compile(r"\.\s+")
_SPACE_PUNCT = re.compile(r"\s+([.,])")
_MULTI_SPACE = re.compile(r"\s{2,}")
_AGGREGATE = re.compile(r"(\W)(AVG|BIT_AND|BIT_OR|BIT_XOR|COUNT|GROUP_CONCAT|MAX|MIN|STD|"
                        r"STDDEV_POP|STDDEV_SAMP|STDDEV|SUM|VAR_POP|VAR_SAMP|VARIANCE) ")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")
_BLOCK_STARTERS = frozenset({"IF", "CASE", "LOOP", "REPEAT", "WHILE"})
_END_FOLLOWERS = frozenset({"IF", "CASE", "LOOP", "REPEAT", "WHILE"})


def clean_sentence(sentence: str) -> str:
    """randgen's spacing clean-up of a joined sentence."""
    if ". " in sentence or ".\t" in sentence or ".\n" in sentence:
        sentence = _DOT_SPACE.sub(".", sentence)
    sentence = _SPACE_PUNCT.sub(r"\1", sentence)
    sentence = _MULTI_SPACE.sub(" ", sentence)
    if "(" in sentence:
        sentence = _AGGREGATE.sub(r"\1\2", sentence)
    return sentence


_SCAN = re.compile(r"""('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|`[^`]*`)"""
                   r"|(/\*.*?\*/|--\s[^\n]*)|(;)"
                   r"|\b(BEGIN|END|CASE|IF|LOOP|REPEAT|WHILE)\b", re.I | re.S)


def split_statements(sentence: str) -> list[str]:
    """The statements of a sentence (stripped, empty ones dropped)."""
    if ";" not in sentence:
        s = sentence.strip()
        return [s] if s else []
    out: list[str] = []
    start = 0
    stack: list[str] = []   # 'B' (BEGIN...END), 'C' (CASE...END), 'K' (top-level IF/LOOP...)
    skip_until = -1         # the word after END (END IF...) is not a new block
    for m in _SCAN.finditer(sentence):
        if m.group(3):
            if not stack:
                piece = sentence[start:m.start()].strip()
                if piece:
                    out.append(piece)
                start = m.end()
            continue
        word = m.group(4)
        if not word or m.start() < skip_until:
            continue
        word = word.upper()
        j = m.end()
        if word == "BEGIN":
            nxt = _next_word(sentence, j)
            if nxt not in ("", ";", "WORK") and not _prev_is(sentence, m.start(), "XA"):
                stack.append("B")
        elif word == "CASE" and stack:
            stack.append("C")
        elif word in _BLOCK_STARTERS and not stack:
            if _at_statement_start(sentence, start, m.start()) and \
                    _next_word(sentence, j) not in ("(", "EXISTS", "NOT"):
                stack.append("K")
        elif word == "END" and stack:
            nxt = _next_word(sentence, j)
            if nxt in _END_FOLLOWERS:
                if stack[-1] in ("C", "K"):
                    stack.pop()
                skip_until = _skip_word(sentence, j)
            else:
                stack.pop()
    piece = sentence[start:].strip()
    if piece:
        out.append(piece)
    return out


def _at_statement_start(text: str, start: int, pos: int) -> bool:
    """True when only spaces and comments come between start and pos."""
    between = text[start:pos]
    if not between.strip():
        return True
    return not re.sub(r"/\*.*?\*/", "", between, flags=re.S).strip()


def _next_word(text: str, j: int) -> str:
    """The next word (upper case), or the next punctuation character, or ''."""
    n = len(text)
    while j < n and text[j].isspace():
        j += 1
    if j >= n:
        return ""
    m = _WORD.match(text, j)
    return m.group().upper() if m else text[j]


def _skip_word(text: str, j: int) -> int:
    n = len(text)
    while j < n and text[j].isspace():
        j += 1
    m = _WORD.match(text, j)
    return m.end() if m else j


def _prev_is(text: str, i: int, word: str) -> bool:
    before = text[:i].rstrip()
    return before.upper().endswith(word) and (len(before) == len(word) or
                                              not before[-len(word) - 1].isalnum())
