"""``numba-cuzk compile``: every kernel into the kernel cache, in parallel processes.

A kernel's cost is its compilation (a G2 point formula inlined at one call site is ~20 s
of NVVM and ptxas), and one process compiles one kernel at a time. So the work is split
into tasks that each run the production path of one or two heavy kernels at a tiny size
(the same call sites, so the same argument types and cache entries), each in its own
spawned process:

    phase 1  decode_g1, decode_g2          a key's point check (curve/kernels.decode)
             msm_g1, msm_g2                Pippenger (accumulate_gN, reduce_gN, ...)
             setup_g1, setup_g2            fixed-base multiples (fixed_base_mul_gN, ...)
             cpu_prove, cpu_check          the CPU backend: a tiny setup and proof; a key check
    phase 2  gpu_prove                     a tiny setup and proof: the light kernels left

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


def _check(curve_name: str, gpu: bool) -> None:
    from numba import cuda

    from numba_cuzk.curve.params import G1, G2
    from numba_cuzk.groth16.formats.points import check

    curve = {"G1": G1, "G2": G2}[curve_name]
    points = _generator_points(curve, _POINTS)
    check(cuda.to_device(points) if gpu else points, curve, "compile")


def _msm(curve_name: str) -> None:
    from numba import cuda

    from numba_cuzk.curve.params import G1, G2
    from numba_cuzk.msm import msm, result_shape, upload_bases

    curve = {"G1": G1, "G2": G2}[curve_name]
    scalars = np.random.default_rng(1).integers(0, 2 ** 32, (8, _POINTS), dtype=np.uint32)
    scalars[7] &= 0x0FFFFFFF
    out = cuda.device_array(result_shape(_POINTS, curve), dtype=np.uint32)
    msm(upload_bases(_generator_points(curve, _POINTS), curve), cuda.to_device(scalars), montgomery=True, out=out)
    cuda.synchronize()


def _setup(curve_name: str) -> None:
    from numba_cuzk.curve.params import G1, G2
    from numba_cuzk.groth16.setup import _FixedBase

    curve = {"G1": G1, "G2": G2}[curve_name]
    scalars = np.zeros((8, _POINTS), dtype=np.uint32)
    scalars[0] = np.arange(1, _POINTS + 1)
    _FixedBase(gpu=True)(scalars, curve)


def _prove(gpu: bool) -> None:
    from numba_cuzk.groth16.circuits import build
    from numba_cuzk.groth16.prove import Prover
    from numba_cuzk.groth16.setup import setup

    r1cs, witness = build("mimc", _TINY_LOG)
    prover = Prover(setup(r1cs, gpu=gpu), gpu=gpu)
    prover.prove(witness)


def _tasks(gpu: bool) -> list[list[tuple[str, Callable, tuple]]]:
    cpu = [("cpu_prove", _prove, (False,)), ("cpu_check_g1", _check, ("G1", False)),
           ("cpu_check_g2", _check, ("G2", False))]
    if not gpu:
        return [cpu]
    heavy = [("decode_g2", _check, ("G2", True)), ("msm_g2", _msm, ("G2",)), ("setup_g2", _setup, ("G2",)),
             ("decode_g1", _check, ("G1", True)), ("msm_g1", _msm, ("G1",)), ("setup_g1", _setup, ("G1",))]
    return [heavy + cpu, [("gpu_prove", _prove, (True,))]]


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
