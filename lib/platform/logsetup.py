"""kewpie-style logging: ``20120113-125552 INFO message``, every line with its secrets
(a DSN's password, a secret option's value) shown as ``***`` (lib/platform/secrets.py)."""
from __future__ import annotations

import io
import logging
import os
import sys
import time
from typing import TextIO

from .secrets import redact_text

LOGGER_NAME = "kewpie"


class KewpieFormatter(logging.Formatter):
    """Formats records as ``YYYYMMDD-HHMMSS LEVEL message``, secrets masked."""

    def format(self, record: logging.LogRecord) -> str:
        """Render one record in kewpie's style (its secrets as ``***``)."""
        stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(record.created))
        level = "WARNING" if record.levelno == logging.WARNING else record.levelname
        text = record.getMessage()
        if record.exc_info and record.levelno >= logging.DEBUG:
            text = text + "\n" + self.formatException(record.exc_info)
        return f"{stamp} {level} {redact_text(text)}"


def get_logger() -> logging.Logger:
    """Return the harness logger (configured by :func:`configure`)."""
    return logging.getLogger(LOGGER_NAME)


class NoFollowFileHandler(logging.FileHandler):
    """A FileHandler that never opens its file through a symbolic link (O_NOFOLLOW)."""

    def _open(self) -> io.TextIOWrapper:
        """Open the log file ourselves: truncated for mode "w", appended to otherwise."""
        flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
        flags |= os.O_TRUNC if "w" in self.mode else os.O_APPEND
        fd = os.open(self.baseFilename, flags, 0o644)
        return os.fdopen(fd, "a", encoding=self.encoding, errors=self.errors)


class TqdmHandler(logging.StreamHandler[TextIO]):
    """A log handler that prints above the progress bar instead of through it."""

    def emit(self, record: logging.LogRecord) -> None:
        """Write one formatted record with tqdm.write (tqdm imported here: only a run
        with a progress line pays for it, not every command)."""
        try:
            from tqdm import tqdm
            tqdm.write(self.format(record), file=self.stream)
        except Exception:  # noqa: BLE001 - logging must not raise
            self.handleError(record)


def configure(verbose: bool = False, stream: TextIO | None = None, logfile: str | None = None,
              console: bool = True, progress_safe: bool = False) -> logging.Logger:
    """Attach kewpie-style handlers to the harness logger and return it.

    console=False logs only to logfile (parallel bots); progress_safe prints
    through the live progress line.
    """
    logger = get_logger()
    for old in list(logger.handlers):
        logger.removeHandler(old)
        old.close()
    if progress_safe:
        handler: logging.Handler = TqdmHandler(stream or sys.stdout)
    else:
        handler = logging.StreamHandler(stream or sys.stdout)
    handler.setFormatter(KewpieFormatter())
    handler.setLevel(logging.DEBUG if verbose else logging.INFO)
    if console:
        logger.addHandler(handler)
    if logfile:
        fh = NoFollowFileHandler(logfile, mode="w")
        fh.setFormatter(KewpieFormatter())
        fh.setLevel(logging.DEBUG)
        logger.addHandler(fh)
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    return logger
