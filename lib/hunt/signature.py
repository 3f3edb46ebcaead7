"""Stable signatures of findings: the same bug gives the same signature across trials,
seeds and machines.

A :class:`Signature` is a kind and a few parts, joined as its text
(``crash | signal 11 | kw_planted < Item_func_udf_int::val_int < ...``); its
id is the first 12 hex digits of the text's SHA-1.  Parts leave out what
changes from run to run: addresses, offsets, line numbers, paths, literals,
connection ids, timestamps.

- crash: the signal, or the assertion (condition, function, file name) or
  InnoDB's fatal message, and the top :data:`TOP_FRAMES` function names below
  the signal handler;
- hang: the stuck statements' states and shapes (:func:`fingerprint`), or
  "server does not answer SQL";
- errorlog: the error line with numbers, quoted names and paths normalised, but an
  error number (``Got error 126 when reading table``) kept;
- divergence: the kind of set and the differing tables, or the replica's
  stop reason;
- wrong-result: the oracle and the query's shape;
- performance: the oracle (CERT) and the query's shape: a row estimate that
  contradicts a restriction of the query, never mixed with wrong results.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

if TYPE_CHECKING:
    from .uniqueid import UniqueId

TOP_FRAMES = 5
SEPARATOR = " | "


@dataclass(frozen=True)
class Signature:
    """A finding's signature: kind plus parts; text and id derive from them.  A crash's
    also carries MariaDB QA's UniqueID (:mod:`lib.hunt.uniqueid`), beside it: not part
    of the text, the id or equality.  former: the text the same finding had when it was
    signed the way before (an errorlog line whose error number is kept today had every
    number masked: :func:`errorlog_signature`), '' when it is the same; not part of the
    id or equality either (known-bugs entries match it too: lib/hunt/knownbugs.py)."""

    kind: str
    parts: tuple[str, ...]
    unique_id: "UniqueId | None" = field(default=None, compare=False)
    former: str = field(default="", compare=False)

    @property
    def former_id(self) -> str:
        """The id of :attr:`former` ('' when there is none)."""
        return _digest(self.former) if self.former else ""

    @property
    def text(self) -> str:
        """``kind | part | part``: what known-bugs regexes are matched against."""
        return SEPARATOR.join((self.kind, *self.parts))

    @property
    def id(self) -> str:
        """12 hex digits of the text's SHA-1 (``sig:<id>`` in a known-bugs file)."""
        return _digest(self.text)

    def to_json(self) -> dict[str, Any]:
        """id, text, kind and parts (and a crash's UniqueID, the former id and text), for
        finding.json."""
        data: dict[str, Any] = {"id": self.id, "text": self.text, "kind": self.kind,
                                "parts": list(self.parts)}
        if self.unique_id is not None:
            data["unique_id"] = self.unique_id.text
        if self.former:
            data["former"] = {"id": self.former_id, "text": self.former}
        return data


def _digest(text: str) -> str:
    """A signature text's id: 12 hex digits of its SHA-1."""
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:12]


_COMMENT_RE = re.compile(r"/\*(?!!|\+).*?\*/|(?:--\s|#)[^\n]*", re.S)
_STRING_RE = re.compile(r"'(?:[^'\\]|\\.|'')*'|\"(?:[^\"\\]|\\.|\"\")*\"")
_NUMBER_RE = re.compile(r"(?<![\w.`])[-+]?(?:0x[0-9a-fA-F]+|\d+(?:\.\d*)?(?:e[-+]?\d+)?|\.\d+)(?![\w`])",
                        re.I)
_LIST_RE = re.compile(r"\(\s*\?(?:\s*,\s*\?)*\s*\)")
_VALUES_RE = re.compile(r"(values\s*\(\?\+\))(?:\s*,\s*\(\?\+\))+", re.I)


def fingerprint(sql: str) -> str:
    """A statement's shape: comments dropped, strings and numbers as ``?``, lists of them
    as ``(?+)``, spacing collapsed, lower case (as pt-fingerprint)."""
    text = _COMMENT_RE.sub(" ", sql)
    text = _STRING_RE.sub("?", text)
    text = _NUMBER_RE.sub("?", text)
    text = re.sub(r"\s+", " ", text).strip().rstrip(";").strip().lower()
    text = _LIST_RE.sub("(?+)", text)
    text = _VALUES_RE.sub(r"\1", text)
    return text.replace("`", "")


def crash_signature(signal: int | None, assertion: str, fatal: str, frames: Sequence[str],
                    no_report: str = "", unique_id: "UniqueId | None" = None) -> Signature:
    """A crash: what killed the server, and where (the top frames below the handler).

    no_report, when mariadbd wrote no crash report, says how the process ended
    (``killed by signal 9``); unique_id is MariaDB QA's UniqueID of the crash."""
    if no_report and signal is None and not assertion and not fatal:
        return Signature("crash", ("no crash report", no_report), unique_id)
    what = (f"assertion: {assertion}" if assertion else f"fatal: {fatal}" if fatal
            else f"signal {signal}" if signal is not None else "unknown cause")
    top = [f for f in frames if f and f != "?"][:TOP_FRAMES]
    return Signature("crash", (what, "frames: " + (" < ".join(top) if top else "none")),
                     unique_id)


def hang_signature(stalled: Iterable[Mapping[str, Any]]) -> Signature:
    """A hang: the distinct (state, statement shape) pairs of the stuck statements."""
    seen = sorted({f"{row.get('State') or row.get('Command') or '?'}: "
                   f"{fingerprint(str(row.get('Info') or ''))}" for row in stalled})
    return Signature("hang", ("stuck: " + " ; ".join(seen),) if seen else ("stuck",))


def unresponsive_signature(role: str) -> Signature:
    """A hang seen from outside: a server that runs but answers no SQL."""
    return Signature("hang", (f"{role} does not answer SQL",))


_LOG_PREFIX_RE = re.compile(r"^\s*(?:\d{4}-\d\d-\d\d\s+\d\d?:\d\d:\d\d|\d{6}\s+\d\d?:\d\d:\d\d)"
                            r"(?:\s+(?:0x)?[0-9a-fA-F]+)?\s+")
# an error number the signature keeps (:func:`normalise_log_line`): after the word error,
# errno or Error_code -- "Got error 126 when reading table", "failed with error 28",
# "Operating system error number 2", "errno: 13", "Error_code: 1062" -- and the handler
# error of a storage engine's own report, "Got error '126 "Index is corrupted"' for"
# (its message, which the number gives, masked: ``Got error '126 ?' for ?``)
_ERROR_NUMBER = (r"(?<![\w.])(?i:error|errno|error_code)(?:\s+(?i:number|code))?"
                 r"(?:\s*[:=]\s*|\s+)(?:'-?\d+ \"[^\"]*\"'|-?\d+)(?!\w|\.\d)")
ERROR_NUMBER_RE = re.compile(_ERROR_NUMBER)
_QUOTED = r"'[^']*'|`[^`]*`|\"[^\"]*\""
_PATH = r"(?:[\w.+-]*/)+[\w.+-]+"
_NUMBER = r"\d*0x[0-9a-fA-F]+|\d+"
_MASKED_RE = re.compile(f"({_QUOTED})|({_PATH})|({_NUMBER})")
_KEPT_RE = re.compile(f"({_ERROR_NUMBER})|({_QUOTED})|({_PATH})|({_NUMBER})")


def _mask(match: "re.Match[str]") -> str:
    """One token of a log line, normalised: an error number kept (its message masked),
    a quoted name ``?``, a path its file name (numbers masked), a number ``N``."""
    kept, quoted, path, number = match.groups() if match.re is _KEPT_RE else \
        (None, *match.groups())
    if kept:
        return re.sub(r'"[^"]*"', "?", kept)
    if quoted:
        return "?"
    if path:
        return _numbers(path.rsplit("/", 1)[1])
    return _numbers(number or "")


def _numbers(text: str) -> str:
    """text's hex numbers, then its runs of digits, ``N``."""
    return re.sub(r"\d+", "N", re.sub(r"0x[0-9a-fA-F]+", "N", text))


def normalise_log_line(line: str, masked: bool = False) -> str:
    """An error-log line without its time stamp and thread id, with quoted names, paths
    and numbers normalised -- ``[ERROR] InnoDB: Table ? is corrupted (page N)`` -- but
    an error number after error, errno or Error_code kept: ``[ERROR] Got error 126 when
    reading table ?`` (an index corrupted) is not ``Got error 128`` (out of memory).
    masked: every number masked, as findings were signed before the numbers were kept
    (:attr:`Signature.former`)."""
    text = _LOG_PREFIX_RE.sub("", line.rstrip())
    text = (_MASKED_RE if masked else _KEPT_RE).sub(_mask, text)
    return re.sub(r"\s+", " ", text).strip()


def errorlog_signature(line: str) -> Signature:
    """A new error-log line: its error number kept (:func:`normalise_log_line`); former,
    when that differs, its text with every number masked (as it was signed before)."""
    sig = Signature("errorlog", (normalise_log_line(line),))
    former = Signature("errorlog", (normalise_log_line(line, masked=True),))
    return sig if former.text == sig.text else Signature(sig.kind, sig.parts, former=former.text)


def divergence_signature(set_kind: str, what: str) -> Signature:
    """Servers that no longer agree: the kind of set and what differs (tables, or why a
    replica stopped)."""
    return Signature("divergence", (set_kind, what))


def wrong_result_signature(oracle: str, shape: str) -> Signature:
    """A wrong result: the oracle that saw it and the query's shape."""
    return Signature("wrong-result", (oracle, shape))


def performance_signature(oracle: str, shape: str) -> Signature:
    """A performance finding (CERT: an estimate a restriction made larger): the oracle and
    the query's shape."""
    return Signature("performance", (oracle, shape))


def title(sig: Signature) -> str:
    """A one-line description for the summary table."""
    if sig.kind == "crash" and len(sig.parts) == 2 and sig.parts[1].startswith("frames: "):
        frames = sig.parts[1][len("frames: "):].split(" < ")
        return f"{sig.parts[0]} in {' < '.join(frames[:2])}"
    return SEPARATOR.join(sig.parts)[:160]
