"""The error-log warnings check, with mysql-test-run's own patterns and suppressions.

After each test mtr takes the lines the test added to each server's error log,
keeps the suspicious ones (``[Warning]``, ``[ERROR]``, assertions...) that none
of its built-in antipatterns excuse, writes them to ``<error log>.warnings``
and runs ``include/check-warnings.test``: the server's ``mtr.check_warnings``
applies the global suppressions of ``include/mtr_warnings.sql`` and the
test's own ``mtr.add_suppression()`` rows.  The patterns and antipatterns are
read from the mtr tree's ``mysql-test-run.pl`` (the ``qr`` lists of
``extract_warning_lines``), so they follow the installed version.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from types import MappingProxyType

CLOSERS = MappingProxyType({"(": ")", "{": "}", "[": "]", "<": ">"})


def _perl_to_python(pattern: str) -> str:
    return pattern.replace("[[:digit:]]", "[0-9]")


def read_pattern_lists(script: str) -> tuple[list[re.Pattern[str]], list[re.Pattern[str]]]:
    """(patterns, antipatterns) of extract_warning_lines in mysql-test-run.pl."""
    try:
        with open(script, errors="replace") as fh:
            text = fh.read()
    except OSError:
        return [], []
    lists: dict[str, list[re.Pattern[str]]] = {"patterns": [], "antipatterns": []}
    current: str | None = None
    for line in text.splitlines():
        stripped = line.strip()
        m = re.match(r"my @(patterns|antipatterns)\s*=", stripped)
        if m:
            current = m.group(1)
            continue
        if current and stripped.startswith(");"):
            current = None
            continue
        if current and stripped.startswith("qr"):
            delim = stripped[2]
            end = CLOSERS.get(delim, delim)
            body = stripped[3:]
            close = body.rfind(end)
            if close < 0:
                continue
            try:
                lists[current].append(re.compile(_perl_to_python(body[:close])))
            except re.error:
                continue
    return lists["patterns"], lists["antipatterns"]


@dataclass
class WarningScanner:
    """Finds a test's suspicious error-log lines (per server, from a byte mark)."""

    patterns: list[re.Pattern[str]]
    antipatterns: list[re.Pattern[str]]

    @classmethod
    def for_tree(cls, mtr_root: str) -> "WarningScanner":
        """The scanner with the mtr tree's own lists."""
        return cls(*read_pattern_lists(os.path.join(mtr_root, "mysql-test-run.pl")))

    def suspicious(self, lines: list[str]) -> list[str]:
        """The lines a pattern matches and no antipattern excuses."""
        out = []
        for line in lines:
            line = line.rstrip("\n")
            if any(p.search(line) for p in self.patterns) and \
                    not any(a.search(line) for a in self.antipatterns):
                out.append(line)
        return out


def read_since(path: str, mark: int) -> tuple[list[str], int]:
    """The lines of path from byte mark on, and the new mark."""
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if size < mark:
                mark = 0
            fh.seek(mark)
            data = fh.read()
    except OSError:
        return [], mark
    return data.decode(errors="replace").splitlines(keepends=True), mark + len(data)


def log_size(path: str) -> int:
    """The current size of path (0 when missing)."""
    try:
        return os.path.getsize(path)
    except OSError:
        return 0
