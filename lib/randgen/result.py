"""The outcome of a randgen run: status, statistics, error profile.

Statuses and the exit codes they map to (gentest.pl's codes, so that old
tests checking ``retcode == 0`` keep their meaning):

========================  ====  =============================================
status                    exit  meaning
========================  ====  =============================================
``ok``                       0  the load ran; statement errors alone do not fail it
``server_lost``            101  the server crashed, or the connection could not be re-made
``failure``            100-109  Perl randgen: a reporter or validator found a problem
``grammar_error``          110  the grammar or a Perl block failed (with the reason)
``environment_error``      110  missing file, no server, bad option... (with the reason)
``tool_error``             255  Perl randgen itself failed (exit 1, 2 or 255)
========================  ====  =============================================
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from types import MappingProxyType
from typing import Any, Iterable, Mapping

STATUS_OK = "ok"
STATUS_SERVER_LOST = "server_lost"
STATUS_FAILURE = "failure"
STATUS_GRAMMAR_ERROR = "grammar_error"
STATUS_ENVIRONMENT_ERROR = "environment_error"
STATUS_TOOL_ERROR = "tool_error"

EXIT_OK = 0
EXIT_SERVER_CRASHED = 101
EXIT_ENVIRONMENT = 110
EXIT_TOOL = 255

EXIT_CODES: Mapping[str, int] = MappingProxyType({STATUS_OK: EXIT_OK, STATUS_SERVER_LOST: EXIT_SERVER_CRASHED,
              STATUS_GRAMMAR_ERROR: EXIT_ENVIRONMENT, STATUS_ENVIRONMENT_ERROR: EXIT_ENVIRONMENT,
              STATUS_FAILURE: 100, STATUS_TOOL_ERROR: EXIT_TOOL})


@dataclass
class ThreadStats:
    """One thread's counts."""

    thread_id: int
    sentences: int = 0
    statements: int = 0
    ok: int = 0
    errors: dict[int, int] = field(default_factory=dict)
    reconnects: int = 0
    runaways: int = 0

    @property
    def failed(self) -> int:
        """Statements that returned an error."""
        return sum(self.errors.values())


@dataclass
class RandgenResult:
    """What a randgen run did, and whether it passed.

    ``errors`` maps MySQL error codes to counts (0 for client-side errors);
    ``error_samples`` keeps one message and statement per code.
    """

    status: str = STATUS_OK
    reason: str = ""
    exit_code: int = EXIT_OK
    engine: str = "builtin"
    grammar: str = ""
    gendata: str = ""
    seed: int = 1
    threads: int = 0
    sentences: int = 0
    statements: int = 0
    ok_statements: int = 0
    errors: dict[int, int] = field(default_factory=dict)
    error_samples: dict[int, str] = field(default_factory=dict)
    duration: float = 0.0
    gendata_seconds: float = 0.0
    gendata_statements: int = 0
    gendata_errors: dict[int, int] = field(default_factory=dict)
    started_at: float = 0.0
    first_statement_at: float | None = None
    runaways: int = 0
    reconnects: int = 0
    metadata_refreshes: int = 0
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    per_thread: list[ThreadStats] = field(default_factory=list)
    differences: list[dict[str, Any]] = field(default_factory=list)  # validators' (first 50)
    difference_count: int = 0
    reports: list[str] = field(default_factory=list)   # reporters' findings and evidence
    stalled: list[dict[str, Any]] = field(default_factory=list)  # Deadlock: the stuck statements
    log_path: str = ""
    output: str = ""

    @property
    def ok(self) -> bool:
        """True when the run passed (status ok)."""
        return self.status == STATUS_OK

    @property
    def statements_per_second(self) -> float:
        """Statements executed per second of the load phase."""
        return self.statements / self.duration if self.duration > 0 else 0.0

    @property
    def error_count(self) -> int:
        """Statements that returned an error."""
        return sum(self.errors.values())

    @property
    def error_rate(self) -> float:
        """Failed statements / statements (0 when none ran)."""
        return self.error_count / self.statements if self.statements else 0.0

    def unexpected_errors(self, allowed: Iterable[int]) -> dict[int, int]:
        """Error codes (with counts) outside allowed."""
        allow = set(allowed)
        return {c: n for c, n in self.errors.items() if c not in allow}

    def check(self, allowed_errors: Iterable[int] | None = None,
              max_error_rate: float | None = None, min_statements: int = 0) -> list[str]:
        """Problems with this run ([] when it passed and its error profile is as expected)."""
        problems = []
        if not self.ok:
            problems.append(f"status {self.status}: {self.reason}")
        if allowed_errors is not None:
            extra = self.unexpected_errors(allowed_errors)
            for code, n in sorted(extra.items()):
                problems.append(f"unexpected error {code} x{n}: {self.error_samples.get(code, '')}")
        if max_error_rate is not None and self.error_rate > max_error_rate:
            problems.append(f"error rate {self.error_rate:.1%} above {max_error_rate:.1%}")
        if self.statements < min_statements:
            problems.append(f"only {self.statements} statements ran (wanted {min_statements})")
        return problems

    def error_profile(self) -> str:
        """``1062 x3, 1213 x1`` (or ``none``)."""
        if not self.errors:
            return "none"
        return ", ".join(f"{c} x{n}" for c, n in sorted(self.errors.items()))

    def summary(self) -> str:
        """A few lines for a test failure message or a log."""
        lines = [f"randgen ({self.engine}) {self.status}" + (f": {self.reason}" if self.reason else ""),
                 f"grammar {self.grammar or '-'}, gendata {self.gendata or '-'}, seed {self.seed}, "
                 f"{self.threads} thread(s)",
                 f"{self.sentences} sentences, {self.statements} statements in "
                 f"{self.duration:.2f}s ({self.statements_per_second:.0f}/s), errors: "
                 f"{self.error_profile()}"]
        if self.runaways:
            lines.append(f"{self.runaways} runaway sentence(s) dropped: {self.warnings[:1]}")
        if self.difference_count:
            lines.append(f"{self.difference_count} validator difference(s); first: "
                         f"{json.dumps(self.differences[0])[:1500]}")
        for report in self.reports[:3]:
            lines.append(report[:2000])
        if self.log_path:
            lines.append(f"log: {self.log_path}")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        """Everything as plain data (``output`` left out)."""
        data = asdict(self)
        data.pop("output", None)
        data["statements_per_second"] = self.statements_per_second
        data["errors"] = {str(k): v for k, v in self.errors.items()}
        data["error_samples"] = {str(k): v for k, v in self.error_samples.items()}
        data["gendata_errors"] = {str(k): v for k, v in self.gendata_errors.items()}
        for t in data["per_thread"]:
            t["errors"] = {str(k): v for k, v in t["errors"].items()}
        return data

    def to_json_text(self) -> str:
        """to_json() as indented JSON text."""
        return json.dumps(self.to_json(), indent=2)
