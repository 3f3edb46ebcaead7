"""A live progress line on a terminal (tqdm); plain rows only in CI or a pipe."""
from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, NoReturn, TextIO

if TYPE_CHECKING:
    from tqdm import tqdm


def wanted(stream: TextIO | None = None) -> bool:
    """True on an interactive terminal outside CI."""
    stream = stream or sys.stdout
    return stream.isatty() and not os.environ.get("CI")


class Progress:
    """done/total, failures so far, elapsed and ETA; a no-op when disabled."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.enabled = enabled
        self.failures = 0
        self.bar: tqdm[NoReturn] | None = None
        if enabled:  # tqdm (~15 ms of imports) only for a terminal
            from tqdm import tqdm
            self.bar = tqdm(total=total, unit="test", leave=False, desc="0 failed",
                            bar_format="{n_fmt}/{total_fmt} tests |{bar:20}| "
                                       "{desc} [{elapsed} elapsed, ETA {remaining}]")

    def advance(self, failed: bool) -> None:
        """One more test finished."""
        if failed:
            self.failures += 1
        if self.bar is not None:
            self.bar.set_description_str(f"{self.failures} failed", refresh=False)
            self.bar.update(1)

    def close(self) -> None:
        """Remove the bar."""
        if self.bar is not None:
            self.bar.close()
