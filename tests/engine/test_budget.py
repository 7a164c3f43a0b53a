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


def test_process_synthesis_is_bounded_by_the_shared_folders_free_space(monkeypatch):
    """Witnesses of synthesis processes wait in SHARED_DIR (/dev/shm) until staged: a
    folder with less free space than the budget bounds them, and a witness that cannot
    fit there is refused naming the folder (a container's /dev/shm can be 64 MB)."""
    import shutil
    from collections import namedtuple

    from numba_cuzk.engine import engine as engine_module
    from numba_cuzk.engine.config import EngineConfig

    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(1000, 0, 1000))
    config = EngineConfig(host_memory_budget_bytes=10**6)
    small = engine_module._host_budget(config, 2)
    assert small.limit_bytes == 1000
    with pytest.raises(ValueError, match=f"exceeds the free space of {engine_module.SHARED_DIR}"):
        small.acquire(2000)
    from dataclasses import replace

    assert engine_module._host_budget(replace(config, synthesis="thread"), 2).limit_bytes == 10**6
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(10**7, 0, 10**7))
    assert engine_module._host_budget(config, 2).limit_bytes == 10**6
