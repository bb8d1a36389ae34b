"""A signal that comes while a report is written waits until the writing is done, then ends the
run as any interruption does (conformance/interrupts.py)."""

from __future__ import annotations

import os
import signal
import threading
from typing import Iterator

import pytest

from conformance import interrupts


@pytest.fixture
def record() -> Iterator[interrupts.Interrupts]:
    saved = {signum: signal.getsignal(signum) for signum in interrupts.HANDLED}
    rec = interrupts.Interrupts()
    rec.install()
    try:
        yield rec
    finally:
        for signum, handler in saved.items():
            signal.signal(signum, handler)


def test_a_signal_while_deferred_is_raised_when_the_body_is_done(record: interrupts.Interrupts) -> None:
    done = []
    with pytest.raises(KeyboardInterrupt, match="SIGTERM"):
        with record.deferred():
            os.kill(os.getpid(), signal.SIGTERM)
            # Also sent from another thread: the kernel may hand it to any thread of the process.
            sender = threading.Thread(target=os.kill, args=(os.getpid(), signal.SIGINT))
            sender.start()
            sender.join()
            done.append("written")
    assert done == ["written"] and record.received is signal.SIGTERM
    assert record.exit_status() == 143


def test_without_a_signal_nothing_is_raised(record: interrupts.Interrupts) -> None:
    with record.deferred():
        pass
    assert record.received is None


def test_outside_deferred_a_signal_interrupts_at_once(record: interrupts.Interrupts) -> None:
    with pytest.raises(KeyboardInterrupt, match="SIGINT"):
        os.kill(os.getpid(), signal.SIGINT)
        threading.Event().wait(5)  # the handler raises here, long before the wait ends
    assert record.exit_status() == 130
