"""kewpie 2012's logging object (``test_executor.logging``, ``server.logging``).

Old tests call ``logging.test_debug(msg)``, ``logging.verbose(msg)`` and
``logging.debug_class(obj)`` besides the usual levels; :class:`CompatLogger`
maps them onto kewpie's logger.
"""
from __future__ import annotations

import logging
from typing import Any


class CompatLogger:
    """kewpie 2012's logging object (``test_debug``, ``info``...) over our logger."""

    def __init__(self, logger: logging.Logger, show_test_debug: bool = False) -> None:
        self._logger = logger
        self._show_test_debug = show_test_debug  # --test-debug

    def test_debug(self, msg: str) -> None:
        """Debug output from a test: shown (INFO, 'TEST_DEBUG') with --test-debug, else
        only in kewpie.log."""
        if self._show_test_debug:
            self._logger.info(f"TEST_DEBUG {msg}")
        else:
            self._logger.debug(msg)

    def verbose(self, msg: str) -> None:
        """kewpie 2012's verbose level: debug here."""
        self._logger.debug(msg)

    def debug_class(self, obj: Any) -> None:
        """kewpie 2012 dumped an object's attributes at debug level."""
        self._logger.debug(f"{type(obj).__name__}: {vars(obj) if hasattr(obj, '__dict__') else obj}")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._logger, name)
