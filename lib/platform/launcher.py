"""Launch children from a thread that lives as long as the harness.

The kernel's parent-death signal (``PR_SET_PDEATHSIG``) fires when the
*thread* that forked a child exits, not when its process does.  A server
started from a short-lived thread (a fault schedule healing a node, a
client thread) would be SIGKILLed as soon as that thread ended.  A
:class:`Launcher` owns one long-lived daemon thread; calls made from any
thread other than the main thread are run there, so children die with the
harness process and only with it.
"""
from __future__ import annotations

import queue
import threading
from concurrent.futures import Future
from typing import Any, Callable, TypeVar

T = TypeVar("T")


class Launcher:
    """Runs callables (process launches) on one long-lived thread."""

    def __init__(self, name: str = "kewpie-launcher") -> None:
        self.name = name
        self._queue: "queue.SimpleQueue[tuple[Callable[[], Any], Future[Any]]]" = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def _ensure_thread(self) -> None:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._serve, name=self.name, daemon=True)
                self._thread.start()

    def _serve(self) -> None:
        while True:
            fn, future = self._queue.get()
            try:
                future.set_result(fn())
            except BaseException as exc:  # noqa: BLE001 - handed to the caller
                future.set_exception(exc)

    def call(self, fn: Callable[[], T]) -> T:
        """fn() on the main thread if called there, else on the launcher thread."""
        if threading.current_thread() is threading.main_thread():
            return fn()
        self._ensure_thread()
        future: Future[T] = Future()
        self._queue.put((fn, future))
        return future.result()
