"""HostBudget: admission waits for room, and cancel wakes the waiters."""

import threading

import pytest

from numba_cuzk.engine.budget import HostBudget


def _acquire_in_thread(budget, nbytes):
    got = []
    thread = threading.Thread(target=lambda: got.append(budget.acquire(nbytes)))
    thread.start()
    return thread, got


def test_waits_for_bytes_and_count():
    budget = HostBudget(limit_bytes=100, max_partitions=2)
    assert budget.acquire(60)
    thread, got = _acquire_in_thread(budget, 50)  # 110 > 100: waits
    thread.join(0.2)
    assert thread.is_alive() and not got
    budget.release(60)
    thread.join(5)
    assert got == [True] and budget.peak_bytes == 60
    assert budget.acquire(10)
    thread, got = _acquire_in_thread(budget, 1)  # bytes fit, but 2 partitions are in flight
    thread.join(0.2)
    assert thread.is_alive()
    budget.cancel()
    thread.join(5)
    assert got == [False] and budget.peak_partitions == 2
    assert not budget.acquire(1)


def test_refuses_what_can_never_fit():
    with pytest.raises(ValueError, match="exceeds the host memory budget of 100 bytes"):
        HostBudget(100, 1).acquire(101)
