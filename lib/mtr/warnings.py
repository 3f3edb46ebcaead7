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
from dataclasses import dataclass, field
from types import MappingProxyType

CLOSERS = MappingProxyType({"(": ")", "{": "}", "[": "]", "<": ">"})


def _perl_to_python(pattern: str) -> str:
    return pattern.replace("[[:digit:]]", "[0-9]")


def _qr(stripped: str) -> re.Pattern[str] | None:
    """The regex of one stripped ``qr/.../`` line (None when it is not one)."""
    if not stripped.startswith("qr") or len(stripped) < 4:
        return None
    delim = stripped[2]
    body = stripped[3:]
    close = body.rfind(CLOSERS.get(delim, delim))
    if close < 0:
        return None
    try:
        return re.compile(_perl_to_python(body[:close]))
    except re.error:
        return None


def _qr_items(lines: list[str]) -> list[re.Pattern[str]]:
    return [p for p in (_qr(line.strip()) for line in lines) if p is not None]


def read_suite_suppressions(suite_dir: str) -> list[re.Pattern[str]]:
    """The ``push @::global_suppressions, (qr...)`` list of a suite's suite.pm."""
    try:
        with open(os.path.join(suite_dir, "suite.pm"), errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return []
    block: list[str] = []
    inside = False
    for line in lines:
        if "@::global_suppressions" in line and "push" in line:
            inside = True
            continue
        if inside and line.strip().startswith(");"):
            inside = False
        if inside:
            block.append(line)
    return _qr_items(block)


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
        if current and (pattern := _qr(stripped)) is not None:
            lists[current].append(pattern)
    return lists["patterns"], lists["antipatterns"]


@dataclass
class WarningScanner:
    """Finds a test's suspicious error-log lines (per server, from a byte mark)."""

    patterns: list[re.Pattern[str]]
    antipatterns: list[re.Pattern[str]]
    suites: dict[str, list[re.Pattern[str]]] = field(default_factory=dict)

    @classmethod
    def for_tree(cls, mtr_root: str) -> "WarningScanner":
        """The scanner with the mtr tree's own lists."""
        return cls(*read_pattern_lists(os.path.join(mtr_root, "mysql-test-run.pl")))

    def suspicious(self, lines: list[str], suite_dir: str = "") -> list[str]:
        """The lines a pattern matches and no antipattern (mtr's, and the suite's
        suite.pm global suppressions) excuses."""
        if suite_dir and suite_dir not in self.suites:
            self.suites[suite_dir] = read_suite_suppressions(suite_dir)
        excuses = self.antipatterns + self.suites.get(suite_dir, [])
        out = []
        for line in lines:
            line = line.rstrip("\n")
            if any(p.search(line) for p in self.patterns) and \
                    not any(a.search(line) for a in excuses):
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
