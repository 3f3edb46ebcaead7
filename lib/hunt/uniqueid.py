"""MariaDB QA's UniqueID of a crash: the bug signature ``known_bugs.strings`` lists.

mariadb-qa (``new_text_string.sh``) names a crash by one line, its UniqueID::

    SIGSEGV|frame1|frame2|frame3|frame4                        a signal
    <assertion>|SIGABRT|frame1|frame2|frame3|frame4            an assertion, then the signal

- the assertion is the condition of the first ``Assertion `...' failed.`` line
  of the error log (glibc's assert), else the text after InnoDB's
  ``Failing assertion:``; none for a plain signal;
- the signal is its name (``SIGSEGV``, ``SIGABRT``, ``SIGFPE``...), as gdb
  says ``Program terminated with signal SIGSEGV``;
- the frames are the crashing thread's function names below the signal
  handler, innermost first, without their arguments, leaving out the frames
  that say how the process died rather than where (``pthread_kill``,
  ``raise``, ``abort``, ``__assert_fail``, ``memcpy``/``memmove``,
  ``fprintf``, the unwinder's and the sanitizers' own, and frames without a
  name: ``??``); when ``do_command`` is the fifth kept frame or later, it and
  the frames above it go; then the first four.

With no frame at all but an assertion, the UniqueID is ``ASSERT|<assertion>``
(mariadb-qa's form for an assertion without a core); with neither, there is
none.  mariadb-qa reads the frames from gdb's backtrace of the core (the core
comes first when there is one); kewpie reads them from mariadbd's own crash
report or from gdb's backtrace, whichever names more frames
(:func:`better_of`; :func:`lib.hunt.crashreport.crash_unique_id` reads both
from their text): a release build's report
and gdb agree when the report is whole, and gdb goes on where the report
stopped short.  Release builds are stripped: a static function prints as
``??`` in both and is left out, and inlined functions have no frame, so
a release build's UniqueID often differs from the debug build's in the
list -- :mod:`lib.hunt.bugmatch` matches them.

:attr:`UniqueId.stack` keeps every kept frame (not only four) for that
matching.  :func:`unique_id_from_text` parses a UniqueID as listed.
"""
from __future__ import annotations

import re
import signal as signals
from dataclasses import dataclass, field

SEPARATOR = "|"
UID_FRAMES = 4
STACK_FRAMES = 16
DO_COMMAND = "do_command"
DO_COMMAND_AT = 5        # do_command as the 5th kept frame or later: it and what follows go
SOURCE_REPORT = "crash report"
SOURCE_GDB = "gdb backtrace of the core"

# Frames that say how the process died, not where: new_text_string.sh's FRAMES_FILTER as
# facts (the pthread_kill/raise/abort/assert machinery, memcpy, memmove, fprintf, the
# unwinder's, the sanitizers'), with the plain names a libc without debug symbols prints.
_DROP_RE = re.compile(
    r"__interceptor_strcmp\.part\.0|std::terminate|fprintf|__pthread_kill_|"
    r"^__GI___pthread_kill$|^(?:__GI_)?raise$|^(?:__GI_)?abort$|^pthread_kill$|"
    r"^__pthread_kill$|__assert_fail|memmove|memcpy|^\?*$|signal handler called|"
    r"uw_update_context_1|uw_init_context_1|_Unwind_Resume|__sanitizer|__msan|__asan|"
    r"__ubsan|__lsan|__tsan", re.I)
# The frame after which the bug's own frames start: the signal handler's.
HANDLER_GDB = ("<signal handler called>",)
HANDLER_REPORT = ("__restore_rt", "handle_fatal_signal")
_ASSERT_RE = re.compile(r"Assertion (.*) failed\.?\s*$")
_INNODB_ASSERT_RE = re.compile(r"Failing assertion:[ \t]*(.*?)\s*$")
_SIGNAL_NAME_RE = re.compile(r"^SIG[A-Z0-9]+$")


@dataclass(frozen=True)
class UniqueId:
    """A crash's UniqueID (see the module docstring) and the frames it was taken from."""

    signal: str                              # SIGSEGV...; '' when unknown
    frames: tuple[str, ...]                  # the first four kept frames
    assertion: str = ""                      # the assertion's condition ('' for none)
    stack: tuple[str, ...] = field(default=(), compare=False)  # every kept frame (16 at most)
    source: str = field(default="", compare=False)             # crash report or gdb

    @property
    def text(self) -> str:
        """The UniqueID as mariadb-qa writes it (``[assertion|]SIGNAL|f1|f2|f3|f4``)."""
        if not self.frames:
            return f"ASSERT{SEPARATOR}{self.assertion}" if self.assertion else ""
        head = [p for p in (self.assertion, self.signal) if p]
        return SEPARATOR.join([*head, *self.frames])

    def to_json(self) -> dict[str, object]:
        """The UniqueID and its parts, for finding.json and the replay's JSON."""
        return {"text": self.text, "signal": self.signal, "assertion": self.assertion,
                "frames": list(self.frames), "stack": list(self.stack), "source": self.source}


def signal_name(number: int | None) -> str:
    """``SIGSEGV`` for 11 ('' for None or a number that is no signal)."""
    if number is None:
        return ""
    try:
        return signals.Signals(number).name
    except ValueError:
        return ""


def assertion_text(log_text: str) -> str:
    """The assertion's condition as mariadb-qa takes it from the error log: the first
    ``Assertion `x' failed.`` line's x, else the first ``Failing assertion: x``."""
    for line in log_text.splitlines():
        m = _ASSERT_RE.search(line)
        if m:
            cond = m.group(1)
            cond = cond[1:] if cond[:1] in "`'" else cond
            return cond[:-1] if cond.endswith("'") else cond
    for line in log_text.splitlines():
        m = _INNODB_ASSERT_RE.search(line)
        if m:
            return m.group(1)
    return ""


def frame_text(name: str) -> str:
    """A frame as a UniqueID writes it: the function name up to its argument list."""
    return re.sub(r"\s*\(.*", "", name.strip()) if not name.startswith("<") else name


def kept_frames(names: tuple[str, ...] | list[str], handler: tuple[str, ...]) -> tuple[str, ...]:
    """The frames a UniqueID is taken from: those after the last signal-handler frame
    (all of them when there is none), the dying ones left out, cut at do_command when
    it is the fifth kept frame or later."""
    start = 0
    for index, name in enumerate(names):
        if name in handler:
            start = index + 1
    kept = [frame_text(n) for n in names[start:] if not _DROP_RE.search(n or "")]
    kept = [k for k in kept if k]
    if DO_COMMAND in kept and kept.index(DO_COMMAND) + 1 >= DO_COMMAND_AT:
        kept = kept[:kept.index(DO_COMMAND)]
    return tuple(kept[:STACK_FRAMES])


def build_unique_id(signal: str, names: tuple[str, ...] | list[str], handler: tuple[str, ...],
                    assertion: str, source: str) -> UniqueId | None:
    """The UniqueID of a stack (function names, innermost first) below its handler
    frames; None with neither a kept frame nor an assertion."""
    stack = kept_frames(names, handler)
    if not stack and not assertion:
        return None
    return UniqueId(signal, stack[:UID_FRAMES], assertion, stack, source)


def better_of(report: UniqueId | None, gdb: UniqueId | None) -> UniqueId | None:
    """The report's UniqueID, or gdb's frames when they name more frames than the
    report's (the report stopped short, or its unwinder gave up); the report's signal
    and assertion when it has them."""
    if gdb is None or report is None:
        return report or gdb
    if len(gdb.stack) > len(report.stack):
        return UniqueId(report.signal or gdb.signal, gdb.frames,
                        report.assertion or gdb.assertion, gdb.stack, SOURCE_GDB)
    return report


def split_unique_id(text: str) -> tuple[str, str, tuple[str, ...]]:
    """(assertion, signal, frames) of a UniqueID as written; ('', '', ()) for one that
    is no crash's (a typed one such as ``MARIADB_ERROR_CODE|...`` or ``ASSERT|...``).
    The signal is the first field named ``SIG...``; everything before it, ``|`` and
    all, is the assertion (conditions hold ``||``)."""
    parts = text.strip().split(SEPARATOR)
    for index, part in enumerate(parts):
        if _SIGNAL_NAME_RE.match(part.strip()):
            assertion = SEPARATOR.join(parts[:index]).strip()
            frames = tuple(p.strip() for p in parts[index + 1:] if p.strip())
            return assertion, part.strip(), frames
    return "", "", ()


def unique_id_from_text(text: str) -> UniqueId | None:
    """A UniqueID as written (``known_bugs.strings``, a finding's JSON), None when it is
    no crash's."""
    assertion, signal, frames = split_unique_id(text)
    if not signal:
        return None
    return UniqueId(signal, frames[:UID_FRAMES], assertion, frames, "as written")
