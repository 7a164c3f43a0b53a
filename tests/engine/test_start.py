"""An Engine whose start fails leaves nothing running: its synthesis processes are gone,
no shared-memory file of it is left (witness files, the process pool's semaphores), its
threads are stopped, and the start's error is the one raised."""

from __future__ import annotations

import multiprocessing
import os
import sys
import threading
from multiprocessing import synchronize

import pytest

from numba_cuzk.engine import Engine, EngineConfig
from numba_cuzk.engine import engine as engine_module
from numba_cuzk.engine.synthesis import SHARED_DIR, SHARED_PREFIX


class StartFailed(Exception):
    pass


def _fail(*args, **kwargs):
    raise StartFailed("injected")


@pytest.mark.parametrize("step", ["trace", "nvml"])
def test_a_failed_start_leaves_no_process_thread_or_shared_memory(step, monkeypatch, tmp_path):
    """The kernel trace fails after the process pool started (before the threads); the
    NVML sampler fails after the threads started too. Other processes on the machine may
    use /dev/shm meanwhile: only this process's names are checked."""
    if step == "trace":
        monkeypatch.setattr(engine_module.KernelTrace, "start", _fail)
    else:
        monkeypatch.setattr(engine_module, "NvmlSampler", _fail)
    semaphores = []  # the names of the semaphores made meanwhile (sem.<name> in /dev/shm)
    make_name = synchronize.SemLock._make_name
    monkeypatch.setattr(synchronize.SemLock, "_make_name",
                        staticmethod(lambda: semaphores.append(make_name()) or semaphores[-1]))
    children, threads, interval = set(multiprocessing.active_children()), set(threading.enumerate()), \
        sys.getswitchinterval()
    with pytest.raises(StartFailed, match="injected"):
        Engine(EngineConfig(synthesis="process", synthesis_workers=1, trace="kernels", switch_interval_ms=0.5,
                            timeline_path=tmp_path / "t.jsonl"))
    assert semaphores  # the pool had started
    assert set(multiprocessing.active_children()) <= children  # its worker was joined
    left = set(os.listdir("/dev/shm")) if os.path.isdir("/dev/shm") else set()
    assert not left & {f"sem.{name}" for name in semaphores}
    assert not [n for n in os.listdir(SHARED_DIR) if n.startswith(f"{SHARED_PREFIX}{os.getpid()}-")]
    assert set(threading.enumerate()) <= threads
    assert sys.getswitchinterval() == interval
    assert (tmp_path / "t.jsonl").exists()  # the timeline was closed (written out), not left open
