"""``numba-cuzk compile``: every kernel into the kernel cache, in parallel processes.

A kernel's cost is its compilation (a G2 point formula inlined at one call site is ~20 s
of NVVM and ptxas), and one process compiles one kernel at a time. So each heavy GPU
kernel gets a process of its own, which runs that kernel's production path at a tiny
size under kernel_cache.compile_only: the same call site, so the same argument types and
cache entry, compiled and not run:

    phase 1  check_gN, accumulate_gN, reduce_gN,     one process each (N = 1, 2)
             fixed_base_mul_gN, xyzz_to_affine_gN
             cpu_check_gN, cpu_msm_gN, cpu_setup_gN  the CPU backend's point kernels, run
    phase 2  gpu_prove, cpu_prove                    a tiny setup and proof, run: the light
                                                     kernels left, and a check that all work

Phase 2 runs once phase 1 is done, so that it finds the heavy kernels in the cache
instead of compiling them again. Without a GPU only the CPU tasks run.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from numba_cuzk import backend, kernel_cache

_TINY_LOG = 6  # the tiny proofs' domain: 2^6 constraints
_POINTS = 256  # points per tiny check / MSM: the bulk check's minimum (formats/points.py)


@dataclass(frozen=True)
class TaskResult:
    """One task's process: its wall time (s, import included) and kernel_cache.compile_stats."""

    name: str
    seconds: float
    compiled: int
    loaded: int


def _generator_points(curve, count: int) -> np.ndarray:
    from numba_cuzk.curve import layout

    return np.ascontiguousarray(np.repeat(layout.points_to_limbs([curve.generator], curve), count, axis=1))


def _curve(name: str):
    from numba_cuzk.curve.params import G1, G2

    return {"G1": G1, "G2": G2}[name]


def _check(curve_name: str, gpu: bool) -> None:
    """A key's point check (formats/points.check's kernel), on the GPU or the CPU."""
    from numba import cuda

    from numba_cuzk.curve import kernels

    curve = _curve(curve_name)
    points = _generator_points(curve, _POINTS)
    if gpu:
        kernels.check(cuda.device_array(_POINTS, dtype=np.uint8), cuda.to_device(points), curve)
    else:
        kernels.check(np.empty(_POINTS, dtype=np.uint8), points, curve)


def _msm(curve_name: str, gpu: bool) -> None:
    from numba import cuda

    from numba_cuzk.msm import host_bases, msm, upload_bases

    curve = _curve(curve_name)
    scalars = np.zeros((8, _POINTS), dtype=np.uint32)
    scalars[0] = np.arange(_POINTS)
    points = _generator_points(curve, _POINTS)
    if gpu:
        msm(upload_bases(points, curve), cuda.to_device(scalars), montgomery=True)
    else:
        msm(host_bases(points, curve), scalars, montgomery=True)


def _setup(curve_name: str, gpu: bool) -> None:
    from numba_cuzk.groth16.setup import _FixedBase

    scalars = np.zeros((8, _POINTS), dtype=np.uint32)
    scalars[0] = np.arange(1, _POINTS + 1)
    _FixedBase(gpu=gpu)(scalars, _curve(curve_name))


def _prove(gpu: bool) -> None:
    from numba_cuzk.circuits import build
    from numba_cuzk.groth16.prove import Prover
    from numba_cuzk.groth16.setup import setup

    r1cs, witness = build("mimc", _TINY_LOG)
    Prover(setup(r1cs, gpu=gpu), gpu=gpu).prove(witness)


def _only(kernel: str, fn: Callable, *args) -> None:
    """fn(*args) compiling ``kernel`` alone (kernel_cache.compile_only)."""
    with kernel_cache.compile_only({kernel}):
        fn(*args)


def _tasks(gpu: bool) -> list[list[tuple[str, Callable, tuple]]]:
    cpu = []
    for curve in ("G2", "G1"):  # G2 first: its kernels take longest
        suffix = curve.lower()
        cpu += [(f"cpu_check_{suffix}", _check, (curve, False)), (f"cpu_msm_{suffix}", _msm, (curve, False)),
                (f"cpu_setup_{suffix}", _setup, (curve, False))]
    last = [("cpu_prove", _prove, (False,))]
    if not gpu:
        return [cpu, last]
    heavy = []
    for curve in ("G2", "G1"):
        suffix = curve.lower()
        heavy += [(f"check_{suffix}", _only, (f"check_{suffix}", _check, curve, True)),
                  (f"accumulate_{suffix}", _only, (f"accumulate_{suffix}", _msm, curve, True)),
                  (f"reduce_{suffix}", _only, (f"reduce_{suffix}", _msm, curve, True)),
                  (f"fixed_base_mul_{suffix}", _only, (f"fixed_base_mul_{suffix}", _setup, curve, True)),
                  (f"xyzz_to_affine_{suffix}", _only, (f"xyzz_to_affine_{suffix}", _setup, curve, True))]
    return [heavy + cpu, last + [("gpu_prove", _prove, (True,))]]


KERNEL_MODULES = ("numba_cuzk.field.codec", "numba_cuzk.field.kernels", "numba_cuzk.curve.kernels",
                  "numba_cuzk.curve.fixed_base", "numba_cuzk.msm.kernels", "numba_cuzk.msm.cpu",
                  "numba_cuzk.ntt.kernels", "numba_cuzk.groth16.kernels")


def cache_report() -> dict:
    """kernel_cache.folder_report() plus coverage: for "cpu" and each visible GPU's
    "sm_MN", [kernels cached, kernels defined] (every kernel module imported, nothing
    compiled)."""
    import importlib

    for module in KERNEL_MODULES:
        importlib.import_module(module)
    targets = ["cpu"] + sorted({"sm_" + d["compute_capability"].replace(".", "") for d in backend.describe_devices()})
    return kernel_cache.folder_report() | {"coverage": {t: list(kernel_cache.coverage(t)) for t in targets}}


def _run_task(task: tuple[str, Callable, tuple]) -> TaskResult:
    name, fn, args = task
    start = time.perf_counter()
    fn(*args)
    stats = kernel_cache.compile_stats()
    return TaskResult(name, time.perf_counter() - start, stats["compiled"], stats["loaded"])


def task_names(gpu: bool | None = None) -> list[str]:
    gpu = backend.cuda_available() if gpu is None else gpu
    return [name for phase in _tasks(gpu) for name, _, _ in phase]


def compile_all(*, gpu: bool | None = None, processes: int | None = None,
                on_done: Callable[[TaskResult], None] | None = None) -> list[TaskResult]:
    """Fill the kernel cache for this machine (the visible GPU when ``gpu``, default: when
    there is one; the CPU backend always), ``processes`` at a time (default: one per
    task, at most the CPU count), each task in a fresh process. ``on_done`` hears of each
    task as it ends."""
    gpu = backend.cuda_available() if gpu is None else gpu
    results = []
    context = multiprocessing.get_context("spawn")  # a CUDA context does not survive fork
    for phase in _tasks(gpu):
        workers = processes or min(len(phase), os.cpu_count() or 1)
        with context.Pool(workers, maxtasksperchild=1) as pool:
            for result in pool.imap_unordered(_run_task, phase):
                results.append(result)
                if on_done is not None:
                    on_done(result)
    return results
