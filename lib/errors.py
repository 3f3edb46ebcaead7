"""Typed exceptions raised by the harness.

Every error below the command-line layer is one of these; the command line
turns them into one log line and an exit code.  Messages say what went wrong
and, where possible, what to do about it.
"""
from __future__ import annotations

EXIT_OK = 0
EXIT_TEST_FAILED = 1
EXIT_ENVIRONMENT = 2


class KewpieError(Exception):
    """Base class: a problem with usage or the environment (exit status 2)."""

    exit_code = EXIT_ENVIRONMENT


class UsageError(KewpieError):
    """Bad command-line input (unknown suite or test, bad option value)."""


class SuiteError(KewpieError):
    """A suite's suite_config.py or a test module cannot be loaded."""


class UnsafeOptionError(SuiteError):
    """A server option would listen beyond loopback or on an unleased port, or
    write outside the server's vardir (checked before any server starts)."""


class CodeTreeError(KewpieError):
    """A required binary is missing from the code tree (--basedir)."""


class PortLeaseError(KewpieError):
    """No free port block could be leased."""


class ServerError(KewpieError):
    """A server could not be bootstrapped, started or stopped."""

    evidence_title = "error log tail"

    def __init__(self, message: str, log_tail: str = "") -> None:
        super().__init__(message)
        self.log_tail = log_tail

    def __str__(self) -> str:
        base = super().__str__()
        if self.log_tail:
            return f"{base}\n--- {self.evidence_title} ---\n{self.log_tail}"
        return base


class ServerStartError(ServerError):
    """A server exited early or did not answer within its start timeout."""


class ServerDiedError(ServerError):
    """A server that should be running is gone (crash or kill)."""


class ReplicationError(ServerError):
    """Replication could not be set up or a replica did not catch up."""


class TestTimeoutError(Exception):
    """Raised inside a test when --test-timeout expires."""


class CleanupError(KewpieError):
    """Something failed while stopping servers or freeing files at the end of a run.

    Raised only after every step of the cleanup was tried, so servers are
    stopped even when one step failed.
    """


class Interrupted(KeyboardInterrupt):
    """SIGINT, SIGTERM or SIGHUP arrived: stop everything and leave."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"interrupted by signal {signum}")
        self.signum = signum


class CapReached(Interrupted):
    """A time cap of the harness's own went off (lib/platform/timecap.py): the work under
    it unwinds as on SIGINT, and the code that set the cap goes on."""

    def __init__(self, seconds: float) -> None:
        import signal   # not at the top: --help must not load it (test_cli_help_width)
        super().__init__(signal.SIGALRM)
        self.args = (f"stopped at its cap of {seconds:g} s",)
        self.seconds = seconds


class QueryError(Exception):
    """A SQL statement failed; carries the MySQL error code and message."""

    def __init__(self, code: int, message: str, sql: str = "", server: str = "") -> None:
        where = f" on {server}" if server else ""
        super().__init__(f"({code}) {message}{where}" + (f" [sql: {sql[:200]}]" if sql else ""))
        self.code = code
        self.message = message
        self.sql = sql
        self.server = server


class NetworkError(KewpieError):
    """A network namespace, link or rule could not be made, changed or removed."""
