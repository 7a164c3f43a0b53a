"""`numba-cuzk compile`'s task graph and scheduler, and the first-run rule (no kernels
compiled here: tiny stand-in tasks)."""

from __future__ import annotations

import os
import time

import pytest

from numba_cuzk import backend, kernel_cache
from numba_cuzk.commands import compile as precompile
from tests.conftest import SIMULATOR


def test_tasks_wait_only_for_what_they_need():
    tasks = {t.name: t for t in precompile._tasks(gpu=True)}
    cpu = {n for n in tasks if n.startswith("cpu_") and n != "cpu_prove"}
    gpu = {n for n in tasks if not n.startswith("cpu_") and n != "gpu_prove"}
    assert set(tasks["cpu_prove"].after) == cpu
    assert set(tasks["gpu_prove"].after) == gpu
    assert all(not tasks[n].after for n in cpu | gpu)
    assert {"check_g2", "reduce_g2", "accumulate_g2", "sum_selected_g2", "gpu_ntt_1", "gpu_msm_1"} <= gpu
    names = list(tasks)
    assert names.index("check_g2") < names.index("cpu_check_g2") < names.index("check_g1") < names.index("gpu_ntt_1")


def test_gpu_only_tasks_leave_the_cpu_backend_out():
    names = precompile.task_names(gpu=True, cpu_backend=False)
    assert not [n for n in names if n.startswith("cpu_")] and names[-1] == "gpu_prove"
    assert precompile.task_names(gpu=False) == [t.name for t in precompile._tasks(gpu=False)]
    assert all(n.startswith("cpu_") for n in precompile.task_names(gpu=False))


def test_light_groups_cover_every_light_gpu_kernel_once():
    groups = precompile._light_groups()
    names = [n for g in groups.values() for n in g]
    assert len(names) == len(set(names)) and all(len(g) <= precompile._LIGHT_PER_TASK for g in groups.values())
    assert {"classify", "scan", "scatter", "gpu_pass_radix4", "gpu_pass_radix4_r8", "csr_matvec_rows",
            "mul_sub_fr"} <= set(names)
    assert not {"check_g2", "reduce_g1", "accumulate_g2"} & set(names)


def test_compile_all_starts_a_task_once_its_needs_have_ended(monkeypatch):
    tasks = [precompile.Task("slow", time.sleep, (0.6,)), precompile.Task("quick", time.sleep, (0.0,)),
             precompile.Task("after_slow", time.sleep, (0.0,), after=("slow",))]
    monkeypatch.setattr(precompile, "_tasks", lambda gpu, cpu_backend=True: list(tasks))
    ended = []
    precompile.compile_all(gpu=False, processes=2, on_done=lambda r: ended.append(r.name))
    assert ended.index("after_slow") > ended.index("slow")
    assert ended.index("quick") < ended.index("slow")


def _threads_seen() -> dict:
    """A task (in its own process): how many threads numba and arkworks may start there,
    as compile_stats' two counts."""
    import numba

    return {"compiled": numba.config.NUMBA_NUM_THREADS, "loaded": int(os.environ.get("RAYON_NUM_THREADS", "0"))}


def _busy(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_each_task_runs_one_thread_of_numba_and_arkworks(monkeypatch):
    monkeypatch.setenv("RAYON_NUM_THREADS", "7")
    monkeypatch.delenv("NUMBA_NUM_THREADS", raising=False)
    results = {r.name: r for r in precompile.run_tasks(
        [precompile.Task("threads", _threads_seen, ()), precompile.Task("busy", _busy, (0.3,)),
         precompile.Task("idle", time.sleep, (0.3,))], processes=2)}
    assert (results["threads"].compiled, results["threads"].loaded) == (1, 1)
    assert os.environ["RAYON_NUM_THREADS"] == "7" and "NUMBA_NUM_THREADS" not in os.environ  # this process's, as before
    assert results["busy"].cpu_seconds >= 0.3 and results["idle"].cpu_seconds < 0.25  # CPU time, not wall time


def test_the_first_run_on_a_gpu_machine_is_told_once(monkeypatch, tmp_path):
    folder = tmp_path / "cache" / "key"
    monkeypatch.setattr(kernel_cache, "cache_dir", lambda: folder)
    monkeypatch.setattr(backend, "cuda_available", lambda: True)
    monkeypatch.setattr(precompile, "device_target", lambda: "sm_90")
    with precompile.first_run_on_gpu() as first:
        assert first and folder.is_dir()
        with precompile.first_run_on_gpu() as second:
            assert not second  # another process is compiling: its kernels land in the cache
    with precompile.first_run_on_gpu() as first:
        assert first  # that compile ended without finishing (interrupted): compile again
        (folder / precompile.compiled_marker("sm_80")).touch()  # another GPU's kernels: not this one's
    with precompile.first_run_on_gpu() as first:
        assert first
        (folder / precompile.compiled_marker("sm_90")).touch()  # as compile_all or --fetch does once done
    with precompile.first_run_on_gpu() as first:
        assert not first
    monkeypatch.setattr(backend, "cuda_available", lambda: False)
    monkeypatch.setattr(kernel_cache, "cache_dir", lambda: tmp_path / "other")
    with precompile.first_run_on_gpu() as first:
        assert not first  # no GPU: the first proof compiles what it uses


def test_a_killed_compile_s_claim_is_taken_over(monkeypatch, tmp_path):
    import subprocess
    import sys

    folder = tmp_path / "key"
    folder.mkdir()
    monkeypatch.setattr(kernel_cache, "cache_dir", lambda: folder)
    monkeypatch.setattr(backend, "cuda_available", lambda: True)
    monkeypatch.setattr(precompile, "device_target", lambda: "sm_90")
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    (folder / ".gpu-compiling").write_text(gone.stdout.strip())  # a claimer that no longer runs
    with precompile.first_run_on_gpu() as first:
        assert first and (folder / ".gpu-compiling").read_text() == str(os.getpid())
    assert not (folder / ".gpu-compiling").exists()


@pytest.mark.skipif(not SIMULATOR, reason="records launches with simulated device arrays")
def test_every_gpu_kernel_a_command_launches_is_on_compile_s_paths():
    """The launches along gpu_paths() (recorded in the simulator, nothing run) are every
    GPU kernel but NO_COMMAND_LAUNCHES, and none of those: so `numba-cuzk compile` and a
    prebuilt archive (commands/ahead records along the same runs) hold every kernel a
    command launches, the split's, the fixed-radix NTT passes' and selfcheck's among them."""
    from numba.core.registry import CPUDispatcher

    from numba_cuzk.commands import ahead

    launched = set(ahead.record_signatures())
    gpu = {k.py_func.__qualname__ for k in kernel_cache._KERNELS if not isinstance(k, CPUDispatcher)}
    assert launched | precompile.NO_COMMAND_LAUNCHES == gpu, sorted(gpu - launched - precompile.NO_COMMAND_LAUNCHES)
    assert not launched & precompile.NO_COMMAND_LAUNCHES
    assert {"gpu_pass_radix4_r4", "gpu_pass_radix4_r6", "gpu_pass_radix4_r8", "sum_selected_g2", "mul_sub_fq",
            "batch_inverse_fq"} <= launched


@pytest.mark.skipif(not SIMULATOR, reason="stands in for the compile with simulated device arrays")
def test_each_heavy_task_reaches_its_kernel_and_ends(monkeypatch):
    """A heavy task's run under compile_only (its kernel's compile recorded instead of
    made; nothing else launched) reaches its kernel and ends: the garbage a proof's
    epilogue then refuses (the split's sums run along a proof) is no error of the task."""
    compiled = []

    def compile_named(self, *args):
        if self.dispatcher.py_func.__qualname__ in kernel_cache._compile_only:
            compiled.append(self.dispatcher.py_func.__qualname__)

    monkeypatch.setattr(kernel_cache.GpuKernel, "_compile", compile_named)
    for kind in precompile._HEAVY_GPU:
        for curve in ("G1", "G2"):
            name = f"{kind}_{curve.lower()}"
            precompile._only(frozenset({name}), *precompile._heavy_run(kind, curve))
            assert name in compiled, name
