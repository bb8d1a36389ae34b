"""Signals that wake a process's main loop.

A handler runs on the main thread between two bytecodes, possibly while that thread holds the very
lock an `Event.set()` needs (inside `Event.clear()`, say): setting an Event from the handler
itself could deadlock. The handler hands the work to a short-lived thread instead.
"""

from __future__ import annotations

import signal
import threading
from typing import Iterable


def set_events_on(signums: Iterable[int], *events: threading.Event) -> None:
    """On any of `signums`, set every one of `events` (a stop flag and the event the main loop
    sleeps on, so it wakes at once rather than at its next period)."""

    def set_all() -> None:
        for event in events:
            event.set()

    def handler(signum: int, frame: object) -> None:
        threading.Thread(target=set_all, name=f"signal-{signum}", daemon=True).start()

    for signum in signums:
        signal.signal(signum, handler)
