"""A failure said once: its one-line error, and the report's brief view of its details.

A failed test's *summary* is the error itself, one line: the assertion's
message, the exception's last line (``QueryError: (1062, "Duplicate entry
...")``), mysqltest's failing line (``At line 13: query '...' failed: ...
(2013)``), a timeout or a dead server's report.  The report shows it first,
then the evidence's path, then :func:`brief` of the details (the text without
traceback frames: no driver internals), then the tail of each server log that
logged something new, each log once.  The whole text (tracebacks included)
stays in the evidence's ``failure.txt``; the history keeps the summary first.
"""
from __future__ import annotations

import re

SECTION_HEADER = re.compile(r"^--- .+ ---$")
SUMMARY_CHARS = 2000   # a summary longer than this is cut (the whole text is in the evidence)
BRIEF_LINES = 60       # of the details the report shows (the rest is in the evidence)
CHAIN_LINES = ("During handling of the above exception, another exception occurred:",
               "The above exception was the direct cause of the following exception:")
EXCEPTION_LINE = re.compile(r"^[\w.]*(Error|Exception|Failure|Timeout|Interrupt|Exit)\b[^:]*: ")


def exception_line(exc: BaseException) -> str:
    """The exception as its traceback's last line says it, its message's first line only
    (``AssertionError: tables differ:``)."""
    text = str(exc).strip()
    first = text.splitlines()[0] if text else ""
    name = type(exc).__name__
    return one_line(f"{name}: {first}" if first else name)


def one_line(text: str) -> str:
    """text's first non-empty line, stripped and cut to SUMMARY_CHARS."""
    for line in text.splitlines():
        if line.strip():
            line = line.strip()
            return line if len(line) <= SUMMARY_CHARS else line[:SUMMARY_CHARS - 3] + "..."
    return ""


def summary_of(text: str) -> str:
    """The line of a failure's text that says what went wrong, when no body said it: the
    last exception line (``AssertionError: ...``), else the first line that is no
    traceback's and no header (``test_x:``)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    exceptions = [line for line in lines if EXCEPTION_LINE.match(line)]
    if exceptions:
        return one_line(exceptions[-1])
    for line in lines:
        if not line.endswith(":") and not line.startswith(("Traceback", "File ", "---")):
            head = lines[0]
            if head.endswith(":") and not head.startswith(("Traceback", "---")) \
                    and not EXCEPTION_LINE.match(head):   # a check's header: say which
                return one_line(f"{head.split(' (', 1)[0].rstrip(':')}: {line}")
            return one_line(line)
    return one_line(lines[0]) if lines else ""


def without_tracebacks(text: str) -> list[str]:
    """text's lines without Python's traceback frames: of a chain of exceptions only the
    last is kept, and of a traceback only its exception's lines."""
    out: list[str] = []
    block = 0            # where the current exception's lines start in out
    in_frames = False
    for line in text.rstrip().splitlines():
        if line.strip() in CHAIN_LINES:
            del out[block:]      # the chained exception's lines: the last one says it
            in_frames = True     # up to the next traceback
            continue
        if line.startswith("Traceback (most recent call last):"):
            block, in_frames = len(out), True
            continue
        if in_frames and (line.startswith("  ") or not line.strip()):
            continue
        in_frames = False
        out.append(line)
    return out


def brief(message: str, summary: str, limit: int = BRIEF_LINES) -> list[str]:
    """The lines of a failure's details the report shows under its summary: no traceback
    frames, no line that only repeats the summary, at most limit lines."""
    said = summary.strip()
    kept = [line for line in without_tracebacks(message)
            if line.strip() and not _repeats(line.strip(), said)]
    if len(kept) <= limit:
        return kept
    sections = _sections(kept)
    if len(sections) > 1:   # server logs under ``--- ... ---`` headers: each keeps its tail
        return _section_tails(sections, limit)
    half = limit // 2       # the middle goes: a checker's verdict or a known bug ends it
    return kept[:half] + [_cut_line(len(kept) - 2 * half)] + kept[-half:]


def _cut_line(count: int) -> str:
    """The line that stands for count lines the report leaves to the evidence."""
    return f"... ({count} more lines in the evidence's failure.txt)"


def _sections(lines: list[str]) -> list[list[str]]:
    """lines split before each ``--- <what> ---`` header (a server's error log, an SST
    log, the cluster's evidence); the lines before the first header are a section too."""
    sections: list[list[str]] = [[]]
    for line in lines:
        if SECTION_HEADER.match(line.strip()) and sections[-1]:
            sections.append([])
        sections[-1].append(line)
    return sections


def _section_tails(sections: list[list[str]], limit: int) -> list[str]:
    """Each section's first line (its header) and its last lines, the limit shared
    between them: every log is named once and its newest lines (where a server says why
    it stopped) are shown; what is left out is said in each section."""
    share = max(3, limit // len(sections) - 2)   # each: its header, the cut line, share
    out: list[str] = []
    for section in sections:
        if len(section) <= share + 1:
            out.extend(section)
            continue
        out.append(section[0])
        out.append(_cut_line(len(section) - 1 - share))
        out.extend(section[-share:])
    return out


def _repeats(line: str, summary: str) -> bool:
    """line says the summary again: the same, or with a short prefix (``mysqltest: ``,
    an exception's module path)."""
    if not summary:
        return False
    return line == summary or (line.endswith(summary) and len(line) - len(summary) <= 40) \
        or (summary.endswith(line) and bool(EXCEPTION_LINE.match(line)))


def with_summary(summary: str, message: str) -> str:
    """The failure's whole text, its summary first (what the history and the evidence
    keep): message itself when it already starts with the summary."""
    if not summary or message.lstrip().startswith(summary):
        return message
    return f"{summary}\n{message}" if message else summary
