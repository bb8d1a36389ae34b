"""A fixed set of threads taking calls from one queue: how the scheduler keeps many API requests
in flight at once (binds, events).

Lighter than concurrent.futures for the bind path, which hands over thousands of calls a second:
no Future (and its Condition) per call. Each thread opens its connection on its first call
(kube/rest.py): opening them all at start measured no faster, and only delayed the first bind.
"""

from __future__ import annotations

import logging
import queue
import threading
from typing import Any, Callable

log = logging.getLogger(__name__)
_STOP = object()


class Workers:
    def __init__(self, count: int, name: str) -> None:
        self._calls: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._threads = [threading.Thread(target=self._run, name=f"{name}-{i}", daemon=True) for i in range(count)]
        for thread in self._threads:
            thread.start()

    def submit(self, fn: Callable[..., None], *args: Any) -> None:
        self._calls.put((fn, args))

    def _run(self) -> None:
        while (call := self._calls.get()) is not _STOP:
            fn, args = call
            try:
                fn(*args)
            except Exception:  # a call handles its own failures; this only keeps the thread alive
                log.exception("%s failed", getattr(fn, "__name__", fn))

    def shutdown(self) -> None:
        """Run every call submitted so far, then stop the threads."""
        for _ in self._threads:
            self._calls.put(_STOP)
        for thread in self._threads:
            thread.join()
