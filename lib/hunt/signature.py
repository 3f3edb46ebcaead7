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
- errorlog: the error line with numbers, quoted names and paths normalised;
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
    of the text, the id or equality."""

    kind: str
    parts: tuple[str, ...]
    unique_id: "UniqueId | None" = field(default=None, compare=False)

    @property
    def text(self) -> str:
        """``kind | part | part``: what known-bugs regexes are matched against."""
        return SEPARATOR.join((self.kind, *self.parts))

    @property
    def id(self) -> str:
        """12 hex digits of the text's SHA-1 (``sig:<id>`` in a known-bugs file)."""
        return hashlib.sha1(self.text.encode("utf-8")).hexdigest()[:12]

    def to_json(self) -> dict[str, Any]:
        """id, text, kind and parts (and a crash's UniqueID), for finding.json."""
        data: dict[str, Any] = {"id": self.id, "text": self.text, "kind": self.kind,
                                "parts": list(self.parts)}
        if self.unique_id is not None:
            data["unique_id"] = self.unique_id.text
        return data


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


def normalise_log_line(line: str) -> str:
    """An error-log line without its time stamp and thread id, with quoted names, paths
    and numbers normalised: ``[ERROR] InnoDB: Table ? is corrupted (page N)``."""
    text = _LOG_PREFIX_RE.sub("", line.rstrip())
    text = re.sub(r"'[^']*'|`[^`]*`|\"[^\"]*\"", "?", text)
    text = re.sub(r"(?:[\w.+-]*/)+([\w.+-]+)", r"\1", text)
    text = re.sub(r"0x[0-9a-fA-F]+", "N", text)
    text = re.sub(r"\d+", "N", text)
    return re.sub(r"\s+", " ", text).strip()


def errorlog_signature(line: str) -> Signature:
    """A new error-log line."""
    return Signature("errorlog", (normalise_log_line(line),))


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
