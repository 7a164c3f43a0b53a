"""The CPU backend's MSM (msm/cpu.py, all cores) against py-arkworks-bls12381's multiexp.

Records (bench/results/msm/, ms, median of --runs after a warm-up):
msm_g1_logK_cpu, msm_g2_logK_cpu: host bases and random scalars to the affine point
(msm then to_point), peer arkworks' multiexp_unchecked on the same points and scalars
(scalars converted to arkworks objects before its clock starts; that conversion, which
a prover on numpy limbs would pay on top, is params.ark_scalar_conversion_ms). Each result is checked
against arkworks'. params: load_avg (other load on the machine counts against both),
cpu_s (this process's CPU seconds per MSM: fair on a shared machine).
    python3 -m bench.msm_cpu [--g1 14,16] [--g2 14] [--runs 3] [--out FILE]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from bench import common
from numba_cuzk.curve.params import G1, G2
from numba_cuzk.msm import host_bases, msm, to_point
from tests.msm import inputs


def _timed(fn, runs: int) -> tuple[float, float]:
    """(median wall ms, median CPU s) of fn() over runs, after one warm-up call."""
    fn()
    walls, cpus = [], []
    for _ in range(runs):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        walls.append((time.perf_counter() - t0) * 1e3)
        cpus.append(time.process_time() - c0)
    return common.median(walls), common.median(cpus)


def bench_size(curve, log_n: int, runs: int) -> dict:
    n = 1 << log_n
    points = inputs.ark_multiples(curve, n, 11)
    bases = host_bases(inputs.ark_points_to_limbs(points, curve), curve)
    scalars = inputs.random_scalar_limbs(n, np.random.default_rng(log_n))
    t0 = time.perf_counter()
    ark_scalars = inputs.ark_scalars(scalars)
    convert_ms = (time.perf_counter() - t0) * 1e3
    want = inputs.ark_to_reference(inputs.ark_msm(points, ark_scalars, curve), curve)
    if to_point(msm(bases, scalars)) != want:
        raise AssertionError(f"{curve.name} 2^{log_n}: CPU backend differs from arkworks")
    ours_ms, ours_cpu = _timed(lambda: to_point(msm(bases, scalars)), runs)
    ark_ms, ark_cpu = _timed(lambda: inputs.ark_msm(points, ark_scalars, curve), runs)
    params = {"n": n, "runs": runs, "stat": "median", "cpu_s": round(ours_cpu, 3), "load_avg": os.getloadavg()[0],
              "verified": "arkworks multiexp_unchecked", "ark_scalar_conversion_ms": round(convert_ms, 1)}
    peer = {"name": f"py-arkworks-bls12381 multiexp_unchecked (cpu_s {ark_cpu:.3f})", "value": round(ark_ms, 2),
            "unit": "ms"}
    rec = common.record(f"msm_{curve.name.lower()}_log{log_n}_cpu", ours_ms, "ms", common.cpu_name(), params, peer,
                        timing=common.CALL_LATENCY)
    print(f"{rec['name']}: {ours_ms:.0f} ms (cpu {ours_cpu:.2f} s), arkworks {ark_ms:.0f} ms (cpu {ark_cpu:.2f} s); "
          f"scalar conversion {convert_ms:.0f} ms; load {params['load_avg']:.1f}", flush=True)
    return rec


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--g1", default="14,16")
    parser.add_argument("--g2", default="14")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out")
    args = parser.parse_args()
    records = []
    for curve, sizes in ((G1, args.g1), (G2, args.g2)):
        records += [bench_size(curve, int(k), args.runs) for k in sizes.split(",") if k]
    print(f"wrote {common.write(records, 'msm', args.out)}")


if __name__ == "__main__":
    main()
