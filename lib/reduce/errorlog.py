"""An errorlog finding's reduction: which traced statements logged the line, whether a
candidate's replay logged it again, and the check its mysql-test case ends with.

- The statements that logged it (:func:`logging_statements`): those whose error, as
  traced, is the logged line's message (the server writes some statement errors to its
  log: error 4060, 1032...); else the statements of the line's thread (its connection
  id: the trace's ``conn``) that ran in the line's second.
- A candidate reproduces when the error log gained, during its replay, a line the hunt's
  errorlog oracle flags (:mod:`lib.hunt.logcheck`: its suppressions, its signature)
  with the finding's signature (:func:`logged_signatures`).  A finding signed before
  the signature kept a line's error number (its id the line's former id: every number
  masked) is reduced as its line signs today (:func:`finding_signature`): its
  ``Got error 126`` is not reproduced by a ``Got error 128``.
- The case (:func:`case_lines`) notes the error log's size before its statements (a
  ``--perl`` block, the log named by ``@@log_error``) and after them reads what the
  log gained: a line that matches the finding's line (:func:`line_pattern`: its text
  with each quoted name and number free but the error number the signature keeps)
  makes the case ``--die`` with ``errorlog:``
  and the line, so both tools fail it with the line in their output, and the
  confirmation (:func:`reproduced_in`) signs that line again.  mysql-test's own
  warnings check is not relied on: its global suppressions hide some of the lines the
  hunt flags (``Got error N when reading table``).
"""
from __future__ import annotations

import re
from typing import Any, Sequence

from ..checks.errorlog import line_time
from ..hunt.crash import crash_report_start
from ..hunt.logcheck import error_log_findings, suppressions
from ..hunt.signature import ERROR_NUMBER_RE, Signature, errorlog_signature, normalise_log_line

DIE_PREFIX = "errorlog: "
_THREAD_RE = re.compile(r"^\s*\d{4}-\d\d-\d\d\s+\d\d?:\d\d:\d\d\s+(\d+)\s+\[")
# the line's level (the oracle flags corruption at any level) and its message
_MESSAGE_RE = re.compile(r"\[(ERROR|Warning|Note)\]\s+(?:(?:mariadbd|mysqld):\s+)?(.*)$")
_QUOTED_RE = re.compile(r"'[^']*'|`[^`]*`|\"[^\"]*\"")
_POS_FILE = "kw_errorlog.pos"   # in $MYSQL_TMP_DIR (both tools set it)
_INC_FILE = "kw_errorlog.inc"


def logged_signatures(text: str) -> list[Signature]:
    """The errorlog signatures of the lines in text (what a log gained) that the hunt's
    errorlog oracle flags, with its suppressions; a crash report's part left out (it is
    the crash oracle's)."""
    text = text[:crash_report_start(text)]
    return [f.signature for f in error_log_findings("s0", text, suppressions(()))]


def finding_signature(recorded: Signature, lines: Sequence[str]) -> Signature:
    """The signature an errorlog finding is reduced by: recorded (finding.json's), or,
    when the finding was signed before error numbers were kept (recorded is the former
    signature of one of its lines), that line's signature today -- a finding of many
    numbers (126 and 145 under one masked id) is reduced as its first such line."""
    for line in lines:
        sig = errorlog_signature(line)
        if recorded.id == sig.id:
            return recorded
        if recorded.id == sig.former_id:
            return sig
    return recorded


def logging_statements(records: Sequence[dict[str, Any]], lines: Sequence[str]
                       ) -> tuple[tuple[int, ...], bool]:
    """The seqs of the traced statements that logged the lines (module docstring), and
    whether they are known by their error: those whose traced error message is the
    line's (True); else those of the line's thread that ran in its second, a second
    either side (False); () when neither is known."""
    wanted = {normalise_log_line(m.group(2)) for m in (_MESSAGE_RE.search(l) for l in lines)
              if m}
    by_message = tuple(int(r.get("seq") or 0) for r in records
                       if r.get("error") and normalise_log_line(str(r.get("message") or ""))
                       in wanted)
    if by_message:
        return by_message, True
    seqs: list[int] = []
    for line in lines:
        thread, when = _THREAD_RE.match(line), line_time(line)
        if thread is None or when is None:
            continue
        for r in records:
            try:
                start = float(r["t"])
                end = start + float(r.get("ms") or 0) / 1000.0
            except (KeyError, TypeError, ValueError):
                continue
            if int(r.get("conn") or -1) == int(thread.group(1)) and \
                    start <= when + 2.0 and end >= when - 1.0:
                seqs.append(int(r.get("seq") or 0))
    return tuple(sorted(set(seqs))), False


def line_pattern(line: str) -> str:
    """A Perl (and Python) regex for lines like line: its level and text after the time
    stamp and thread id, each quoted name and each number free but an error number the
    signature keeps (``Got error 126``: :data:`lib.hunt.signature.ERROR_NUMBER_RE`, its
    message free), the server's name either."""
    text = _MESSAGE_RE.search(line)
    body = text.group(2) if text else re.sub(r"^.*?\]\s*", "", line.strip())
    parts = []
    for piece in re.split(f"({ERROR_NUMBER_RE.pattern}|'[^']*'|`[^`]*`|\"[^\"]*\"|\\d+)",
                          body.strip()):
        if not piece:
            continue
        if ERROR_NUMBER_RE.fullmatch(piece):
            parts.append('"[^"]*"'.join(_literal(p) for p in re.split(r'"[^"]*"', piece)))
        elif _QUOTED_RE.fullmatch(piece):
            parts.append("(?:'[^']*'|`[^`]*`|\"[^\"]*\")")
        elif piece.isdigit():
            parts.append(r"\d+")
        else:
            parts.append(_literal(piece))
    if text is None:
        return "".join(parts) + r"\s*$"
    return rf"\[{text.group(1)}\] (?:(?:mariadbd|mysqld): )?" + "".join(parts) + r"\s*$"


def _literal(text: str) -> str:
    """text as a regex for Perl's m/.../ (and Python)."""
    return re.escape(text).replace("/", r"\/").replace("@", r"\@").replace("$", r"\$")


def case_lines(line: str, delim: str, keep: bool = False) -> tuple[list[str], list[str]]:
    """The case's lines before its statements (the log's size noted) and after them (the
    ``--die`` when the log gained a line like the finding's line); keep: the noted size
    is kept for another check after this one (a case in rounds checks after each round
    from where the log was before the first)."""
    before = [f"let KW_ERRORLOG= `SELECT IF(@@log_error LIKE '/%', @@log_error, "
              f"CONCAT(@@datadir, @@log_error))`{delim}",
              "--perl", f"open(my $o, '>', \"$ENV{{MYSQL_TMP_DIR}}/{_POS_FILE}\") or die \"{_POS_FILE}: $!\";",
              "print $o (-s $ENV{KW_ERRORLOG} || 0); close($o);", "EOF"]
    pattern = line_pattern(line)
    after = ["", "# the bug: the error log gained the finding's line",
             "--perl",
             f"open(my $p, '<', \"$ENV{{MYSQL_TMP_DIR}}/{_POS_FILE}\") or die \"{_POS_FILE}: $!\"; "
             f"my $pos = <$p>; close($p);"
             + ("" if keep else f" unlink(\"$ENV{{MYSQL_TMP_DIR}}/{_POS_FILE}\");"),
             "open(my $l, '<', $ENV{KW_ERRORLOG}) or die \"$ENV{KW_ERRORLOG}: $!\"; "
             "seek($l, $pos, 0);",
             "my $found = '';",
             f"while (<$l>) {{ if (/{pattern}/) {{ $found = $_; last; }} }}",
             "close($l); $found =~ s/[\\r\\n\\$]//g;",
             f"open(my $i, '>', \"$ENV{{MYSQL_TMP_DIR}}/{_INC_FILE}\") or die \"{_INC_FILE}: $!\";",
             f"print $i ($found ne '' ? \"--die {DIE_PREFIX}$found\\n\" : \"# not logged\\n\");",
             "close($i);", "EOF",
             f"--source $MYSQL_TMP_DIR/{_INC_FILE}",
             f"--remove_file $MYSQL_TMP_DIR/{_INC_FILE}"]
    return before, after


CUT_AT = 120    # mysqltest cuts a --die message: a shorter line is a whole one


def reproduced_in(output: str, signature: Signature) -> bool:
    """Does a tool's output hold the case's ``--die`` with a line of the finding's
    signature?  mysqltest cuts a long message (bdeed5453f7e's line ended "..., so al"):
    a line of at least :data:`CUT_AT` characters also counts when, masked as the
    signature masks, all of it but its last word begins the signature's line."""
    whole = signature.parts[0] if signature.parts else ""
    for found in re.finditer(re.escape(DIE_PREFIX) + r"(.*)$", output, re.M):
        line = found.group(1)
        if errorlog_signature(line).id == signature.id:
            return True
        head = errorlog_signature(line).parts[0].rsplit(" ", 1)[0]
        if len(line.strip()) >= CUT_AT and whole.startswith(head):
            return True
    return False
