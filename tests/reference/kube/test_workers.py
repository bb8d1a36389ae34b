"""The scheduler's worker threads (kube/workers.py): every call submitted before shutdown() runs,
side by side, and a call that raises leaves its thread serving the next."""

from __future__ import annotations

import threading

from reference_scheduler.kube import workers


def test_every_call_runs_before_shutdown_returns_and_a_failure_stops_nothing() -> None:
    pool = workers.Workers(4, "test")
    done: list[int] = []
    lock = threading.Lock()

    def call(i: int) -> None:
        if i % 5 == 0:
            raise RuntimeError(f"call {i} fails")
        with lock:
            done.append(i)

    for i in range(100):
        pool.submit(call, i)
    pool.shutdown()
    assert sorted(done) == [i for i in range(100) if i % 5]


def test_calls_run_side_by_side() -> None:
    pool = workers.Workers(3, "test")
    # Each call waits for all three to have started: only threads running together get past it.
    together = threading.Barrier(3, timeout=30)
    passed: list[bool] = []

    def call() -> None:
        together.wait()
        passed.append(True)

    for _ in range(3):
        pool.submit(call)
    pool.shutdown()
    assert passed == [True, True, True]
