"""Redefine-only grammar files, and the base grammar each one is meant for.

Many stock ``.yy`` files are not grammars of their own: they have no
``query`` (or ``threadN``) rule and only redefine or add to rules of a base
grammar (``query_add``, ``thread1_init_add``, a new ``select_item``...); the
Perl tool runs them with ``--grammar=base.yy --redefine=this.yy``, usually
from a combinations (``.cc``) file.  :func:`is_redefine_only` tells them
apart, :func:`pick_base` finds their base grammar:

1. a combinations/config file (``*.cc``, ``*.cfg``) of the folder (or a
   parent) that names the file as ``--redefine`` next to a ``--grammar``;
2. else the grammar, in the same folder first, then the parent folders, that
   defines most of the rules the file redefines (ties: the longer common name
   prefix, then the name);
3. else none (:data:`None`): run it over a minimal base (``query: SELECT 1``).
"""
from __future__ import annotations

import glob
import os
import re
from typing import Iterable, Sequence

from .errors import GrammarError
from .grammar import read_source, split_rules

_OPTION_RE = re.compile(r"--(grammar|redefine)[= ]+['\"]?([^\s'\",\]]+)")
_ADD_RE = re.compile(r"^(.*?)(_init)?_add$")
_START_RE = re.compile(r"query|thread\d+")
MINIMAL_BASE = "query:\n  SELECT 1 ;\n"


def defined_rules(path: str, search_dirs: Sequence[str] = ()) -> list[str]:
    """Names of the rules a file defines (``_add`` rules name the rule they extend)."""
    names = []
    for name, _body, _where in split_rules(read_source(path, search_dirs), []):
        m = _ADD_RE.match(name)
        names.append(m.group(1) + (m.group(2) or "") if m else name)
    return names


def is_redefine_only(path: str, search_dirs: Sequence[str] = ()) -> bool:
    """True when the file has rules but no ``query``/``threadN`` rule of its own.

    (``query_add`` alone is an overlay: the Perl tool needs a base ``query``.)
    """
    try:
        names = [name for name, _b, _w in split_rules(read_source(path, search_dirs), [])]
    except GrammarError:
        return False
    return bool(names) and not any(_START_RE.fullmatch(n) for n in names)


def _combination_base(path: str, root: str) -> str | None:
    """The --grammar a combinations/config file pairs with --redefine=path."""
    name = os.path.basename(path)
    for folder in _folders_up(os.path.dirname(path), root):
        for cc in sorted(glob.glob(os.path.join(folder, "*.cc")) +
                         glob.glob(os.path.join(folder, "*.cfg"))):
            try:
                with open(cc, errors="replace") as fh:
                    text = fh.read()
            except OSError:
                continue
            found = _OPTION_RE.findall(text)
            if not any(kind == "redefine" and os.path.basename(p) == name for kind, p in found):
                continue
            for kind, p in found:
                if kind != "grammar":
                    continue
                candidate = _locate(p, folder, root)
                if candidate:
                    return candidate
    return None


def _locate(ref: str, folder: str, root: str) -> str | None:
    """A grammar path as written in a combinations file (``conf/x/y.yy``), found on disk."""
    for base in (folder, root, os.path.dirname(root)):
        candidate = os.path.normpath(os.path.join(base, ref))
        if os.path.isfile(candidate):
            return candidate
    tail = ref.split("conf/", 1)[-1]
    candidate = os.path.join(root, tail)
    return candidate if os.path.isfile(candidate) else None


def _folders_up(folder: str, root: str) -> Iterable[str]:
    """folder, its parent, ... up to root (inclusive)."""
    folder = os.path.abspath(folder)
    root = os.path.abspath(root)
    while True:
        yield folder
        if folder == root or not folder.startswith(root) or folder == os.path.dirname(folder):
            return
        folder = os.path.dirname(folder)


def pick_base(path: str, candidates: Sequence[str], root: str | None = None) -> str | None:
    """The base grammar for a redefine-only file, among candidate grammars (see the module doc)."""
    root = root or os.path.dirname(path)
    from_cc = _combination_base(path, root)
    if from_cc:
        return from_cc
    try:
        wanted = set(defined_rules(path, [root]))
    except GrammarError:
        return None
    stem = os.path.splitext(os.path.basename(path))[0]
    for folder in _folders_up(os.path.dirname(path), root):
        best: tuple[int, int, str] | None = None
        for cand in candidates:
            if os.path.dirname(os.path.abspath(cand)) != folder or cand == path:
                continue
            try:
                overlap = len(wanted & set(defined_rules(cand, [root])))
            except GrammarError:
                continue
            if overlap == 0:
                continue
            other = os.path.splitext(os.path.basename(cand))[0]
            key = (overlap, len(os.path.commonprefix([stem, other])), cand)
            if best is None or key[:2] > best[:2]:
                best = key
        if best is not None:
            return best[2]
    return None
