"""What checking an untrusted key's points costs: curve/kernels.check (on the curve, in the
prime-order subgroup) per million points, on the GPU and on all CPU cores.

This is the check a Prover runs on its own device copy of a query it was given unchecked
(groth16/formats/points.check): no host conversion, no second upload. Inputs: 2^K points
of each curve (a table of 1024 distinct multiples of the generator, repeated), as a key
stores them (Montgomery affine). GPU: device time from CUDA events (median of 5 after 2
warm-ups); CPU backend: wall time of the same kernel on all cores (median of 3 after 1).
Each run's status array is poisoned first and must come back all OK. Records (bench/
results/curve/): point_check_g1_ms_per_m, point_check_g2_ms_per_m (GPU) and
point_check_g1_cpu_ms_per_m, point_check_g2_cpu_ms_per_m, with the points and the spread.

    python3 -m bench.point_check [--log 20] [--cpu-log 16] [--out FILE]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from bench import common
from numba_cuzk import backend
from numba_cuzk.curve import checks, kernels, layout
from numba_cuzk.curve.params import G1, G2
from numba_cuzk.curve.reference import Curve

TABLE = 1024
POISON = 0xA5


def _points(curve, log: int) -> np.ndarray:
    """(2L, 2^log) stored points: the first TABLE multiples of the generator, repeated."""
    ref = Curve(curve)
    table, acc = [], None
    for _ in range(TABLE):
        acc = ref.add(acc, curve.generator)
        table.append(acc)
    limbs = layout.points_to_limbs(table, curve)
    return np.ascontiguousarray(np.tile(limbs, (1, (1 << log) // TABLE)))


def _checked(status) -> None:
    host = status if isinstance(status, np.ndarray) else status.copy_to_host()
    if (host != checks.OK).any():
        raise RuntimeError(f"point check: {int((host != checks.OK).sum())} of {host.size} points not OK")


def gpu_ms(curve, log: int) -> list[float]:
    from numba import cuda

    points = cuda.to_device(_points(curve, log))
    status = cuda.to_device(np.full(1 << log, POISON, np.uint8))
    times = common.device_time_ms(lambda: kernels.check(status, points, curve), runs=5, warmup=2)
    _checked(status)
    return times


def cpu_ms(curve, log: int) -> list[float]:
    points = _points(curve, log)
    times = []
    for run in range(4):
        status = np.full(1 << log, POISON, np.uint8)
        start = time.perf_counter()
        kernels.check(status, points, curve)
        if run:  # the first loads (or compiles) the kernel
            times.append((time.perf_counter() - start) * 1e3)
        _checked(status)
    return times


def _record(name: str, times: list[float], log: int, device: str, timing: str) -> dict:
    per_m = [t * 1e6 / (1 << log) for t in times]
    return common.record(name, statistics.median(per_m), "ms", device, {
        "points": 1 << log, "runs": len(per_m), "stat": "median", "min": min(per_m), "max": max(per_m),
        "per": "million points"}, timing=timing)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log", type=int, default=20, help="log2 of the points per curve on the GPU")
    parser.add_argument("--cpu-log", type=int, default=16, help="log2 of the points per curve on the CPU (0: none)")
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    records = []
    for curve in (G1, G2):
        suffix = curve.name.lower()
        runs = []
        if backend.cuda_available():
            runs.append((f"point_check_{suffix}_ms_per_m", gpu_ms(curve, args.log), args.log, common.gpu_name(),
                         common.DEVICE_THROUGHPUT))
        if args.cpu_log:
            runs.append((f"point_check_{suffix}_cpu_ms_per_m", cpu_ms(curve, args.cpu_log), args.cpu_log,
                         common.cpu_name(), common.CALL_LATENCY))
        for name, times, log, device, timing in runs:
            records.append(_record(name, times, log, device, timing))
            p = records[-1]["params"]
            print(f"{name}: {records[-1]['value']:.1f} ms per million points ({p['min']:.1f}-{p['max']:.1f}, "
                  f"{p['points']} points)", flush=True)
    common.write(records, "curve", args.out)


if __name__ == "__main__":
    main()
