"""``numba-cuzk selfcheck``: the field kernels against Python integers, on the CPU and,
when there is one, on the GPU; every check is timed twice (the first includes Numba's
compilation) and a broken codec or kernel is a failed check, never a crash.

    results = check_fields(count=1000, seed=0, targets=["cpu"])   # [CheckResult]
"""

from __future__ import annotations

import random
import time
import warnings
from dataclasses import dataclass

import numpy as np

from numba_cuzk.field import codec, kernels
from numba_cuzk.field.params import FQ, FR, FieldParams
from numba_cuzk.field.reference import fq, fr


@dataclass
class CheckResult:
    field: str
    target: str  # "cpu" (numpy arrays) or "gpu" (device arrays)
    check: str
    n: int
    first_ms: float | None  # first call: includes loading (or compiling) the kernels; None: not timed
    second_ms: float | None
    error: str  # "" when the check passed


def check_fields(count: int, seed: int, targets: list[str]) -> list[CheckResult]:
    """Fr then Fq: the codec's round trip, mul_sub and batch_inverse on every target
    ("cpu", "gpu"), over the edge values and ``count`` random elements of ``seed``."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*under-utilization")  # small grids are intended here
        return [r for params, ref in ((FR, fr), (FQ, fq)) for r in _check_field(params, ref, count, seed, targets)]


def _field_cases(params: FieldParams, count: int, seed: int) -> tuple[list[int], list[int], list[int]]:
    """Operands a, b, c: every pair of edge values (0, 1, p-1), then ``count`` random."""
    p = params.modulus
    edges = (0, 1, p - 1)
    rng = random.Random(f"{params.name}:{seed}")
    a = [x for x in edges for _ in edges] + [rng.randrange(p) for _ in range(count)]
    b = [y for _ in edges for y in edges] + [rng.randrange(p) for _ in range(count)]
    c = [edges[i % 3] for i in range(9)] + [rng.randrange(p) for _ in range(count)]
    return a, b, c


def _first_mismatch(got: list[int], want: list[int]) -> str:
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w:
            return f"element {i}: got {g:#x}, want {w:#x}"
    return "" if len(got) == len(want) else f"{len(got)} results for {len(want)} inputs"


def _check_field(params: FieldParams, ref, count: int, seed: int, targets: list[str]) -> list[CheckResult]:
    """mul_sub and batch_inverse of ``params`` against the Python-int reference."""
    from numba import cuda

    a, b, c = _field_cases(params, count, seed)
    try:
        mont = [codec.to_montgomery(codec.to_limbs(v, params), params) for v in (a, b, c)]
        round_trip = codec.from_limbs(codec.from_montgomery(mont[0], params), params)
        error = _first_mismatch(round_trip, a)
    except Exception as exc:  # report a broken codec as a failed check, not a crash
        error = f"{type(exc).__name__}: {exc}"
    results = [CheckResult(params.name, "cpu", "round trip", len(a), None, None, error)]
    if error:
        return results
    checks = {
        "mul_sub": (lambda out, x, y, z: kernels.mul_sub(out, x, y, z, params=params), mont,
                    [ref.sub(ref.mul(x, y), z) for x, y, z in zip(a, b, c)]),
        "batch_inverse": (lambda out, x: kernels.batch_inverse(out, x, params=params), mont[:1],
                          [ref.inverse(x) if x else 0 for x in a]),  # the kernels' 1/0 = 0
    }
    for target in targets:
        to_target = cuda.to_device if target == "gpu" else (lambda x: x)
        for name, (run, inputs, want) in checks.items():
            args = [to_target(x) for x in inputs]
            out = to_target(np.empty_like(inputs[0]))
            timings, error = [], ""
            try:
                for _ in range(2):
                    start = time.perf_counter()
                    run(out, *args)
                    if target == "gpu":
                        cuda.synchronize()
                    timings.append(1e3 * (time.perf_counter() - start))
                host = out.copy_to_host() if target == "gpu" else out
                error = _first_mismatch(codec.from_limbs(codec.from_montgomery(host, params), params), want)
            except Exception as exc:  # report a broken kernel as a failed check, not a crash
                error = f"{type(exc).__name__}: {exc}"
            timings += [None] * (2 - len(timings))
            results.append(CheckResult(params.name, target, name, len(a), *timings, error))
    return results
