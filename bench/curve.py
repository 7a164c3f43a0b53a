"""G1/G2 point-operation throughput on the GPU: mixed addition (XYZZ + affine, the MSM
bucket step) and doubling (XYZZ), with the field-multiplication rate of the same run.

Each of ``threads`` threads loads an XYZZ accumulator and an affine point and applies the
operation ``chain`` times (acc += Q, or acc = 2 acc), then stores acc: dependent chains,
like bench/field.py. Device time from CUDA events (median of 7 after 2 warm-ups). Every
GPU result is compared with the same chains run by the CPU backend (same source, all
cores), and a few threads with the Python-int reference (P + chain*Q, 2^chain P).
Record names: g1_add_mixed, g1_double, g2_add_mixed, g2_double (G op/s), with
``fq_muls_per_op`` = fq_mul rate / op rate (the measured cost of one op in Fq products).

Usage: python3 -m bench.curve [--threads-log 20] [--chain 32] [--out FILE]
"""

from __future__ import annotations

import argparse
import random
import time
from functools import lru_cache

import numpy as np
from numba import config, cuda, njit, prange, uint32

from bench import common
from numba_cuzk.curve import layout
from numba_cuzk.curve.params import G1, G2
from numba_cuzk.curve.points import point_ops
from numba_cuzk.curve.reference import Curve
from numba_cuzk.field.params import FQ
from numba_cuzk.field.target import local_u32

TABLE = 1024  # distinct input points; thread i uses P = T[i % 1024], Q = T[(613 i + 17) % 1024]
COST = {"add_mixed": "madd-2008-s 8M+2S", "double": "dbl-2008-s-1 6M+3S"}
RUNS, WARMUP = 7, 2


@lru_cache(maxsize=None)
def _kernels(curve, op: str):
    P = point_ops(curve)
    L = P.limbs
    L2, L4 = 2 * L, 4 * L
    madd, dbl, load, store = P.xyzz_add_mixed, P.xyzz_dbl, P.load, P.store
    mixed = op == "add_mixed"

    def body(i, acc, q, accs, qs, chain):
        load(acc, accs, i, 4)
        load(q, qs, i, 2)
        for _ in range(chain):
            if mixed:
                madd(acc, acc, q)
            else:
                dbl(acc, acc)
        store(accs, i, acc, 4)

    body_jit = njit(forceinline=True)(body)

    @cuda.jit
    def gpu(accs, qs, chain):
        i = cuda.grid(1)
        if i < accs.shape[1]:
            body_jit(i, cuda.local.array(L4, uint32), cuda.local.array(L2, uint32), accs, qs, chain)

    @njit(parallel=True)
    def cpu(accs, qs, chain):
        for i in prange(accs.shape[1]):
            body_jit(i, local_u32(L4), local_u32(L2), accs, qs, chain)

    return gpu, cpu


def _table(ref: Curve, rng: random.Random) -> list:
    """S, 2S, ..., TABLE*S for a random S: distinct points, one affine addition each."""
    s = ref.random_point(rng)
    out, acc = [], None
    for _ in range(TABLE):
        acc = ref.add(acc, s)
        out.append(acc)
    return out


def _inputs(curve, ref: Curve, threads: int, rng: random.Random):
    table = _table(ref, rng)
    affine = layout.points_to_limbs(table, curve)
    xyzz = layout.points_to_limbs([ref.to_xyzz(p) for p in table], curve, "xyzz")
    i = np.arange(threads)
    p_idx, q_idx = i % TABLE, (613 * i + 17) % TABLE  # never equal: 612 i + 17 is odd
    return table, np.ascontiguousarray(xyzz[:, p_idx]), np.ascontiguousarray(affine[:, q_idx]), p_idx, q_idx


def _time_ms(launch) -> list[float]:
    if not config.ENABLE_CUDASIM:
        return common.device_time_ms(launch, runs=RUNS, warmup=WARMUP)
    times = []  # the simulator has no event timing: wall clock, for shaking out only
    for _ in range(2):
        t0 = time.perf_counter()
        launch()
        cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    return times


def _kernel_attrs(gpu) -> dict:
    try:
        kernel = gpu.overloads[list(gpu.overloads)[0]]
        return {"regs": kernel.regs_per_thread, "local_bytes": kernel.local_mem_per_thread}
    except Exception:  # the simulator has no compiled kernels
        return {}


def run_op(curve, ref: Curve, op: str, threads: int, chain: int, block: int, rng) -> dict:
    gpu, cpu = _kernels(curve, op)
    table, accs, qs, p_idx, q_idx = _inputs(curve, ref, threads, rng)
    expect = accs.copy()
    t0 = time.perf_counter()
    cpu(expect, qs, chain)
    cpu_seconds = time.perf_counter() - t0
    for t in sorted({0, 1, threads // 2, threads - 1}):  # the CPU backend vs the reference
        p, q = table[p_idx[t]], table[q_idx[t]]
        want = ref.add(p, ref.mul(q, chain)) if op == "add_mixed" else ref.mul(p, 1 << chain)
        got = ref.from_xyzz(layout.limbs_to_points(expect[:, t:t + 1].copy(), curve, "xyzz")[0])
        if got != want:
            raise AssertionError(f"{curve.name} {op}: CPU backend differs from the reference at thread {t}")
    d_accs, d_qs = cuda.to_device(accs), cuda.to_device(qs)
    grid = (threads + block - 1) // block

    def launch():
        gpu[grid, block](d_accs, d_qs, chain)

    launch()  # compile, then one chain checked against the CPU backend
    cuda.synchronize()
    result = d_accs.copy_to_host()
    if not np.array_equal(result, expect):
        bad = int(np.flatnonzero((result != expect).any(axis=0))[0])
        raise AssertionError(f"{curve.name} {op}: GPU result differs from the CPU backend at thread {bad}")
    d_accs = cuda.to_device(accs)
    times = _time_ms(launch)
    ms = common.median(times)
    return {"gops": threads * chain / (ms * 1e-3) / 1e9, "ms": ms, "spread": (min(times), max(times)),
            "cpu_gops": threads * chain / cpu_seconds / 1e9, **_kernel_attrs(gpu)}


def fq_mul_rate(threads: int, chain: int, block: int, rng) -> float:
    """G Fq products/s of bench/field.py's fq_mul kernel, measured now on the same device."""
    from bench import field

    if config.ENABLE_CUDASIM:
        return float("nan")
    return field.run_variant("fq_mul", "ptx", FQ, threads, chain, block, rng, {})["gops"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--threads-log", type=int, default=20)
    parser.add_argument("--chain", type=int, default=32)
    parser.add_argument("--block", type=int, default=256)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    threads, chain = 1 << args.threads_log, args.chain
    rng = random.Random(2026)
    device, cpu_device = common.gpu_name(), common.cpu_name()
    fq_rate = fq_mul_rate(threads, 64, args.block, np.random.default_rng(2026))
    print(f"fq_mul {fq_rate:.2f} G/s", flush=True)
    records = []
    for curve, ref in ((G1, Curve(G1)), (G2, Curve(G2))):
        for op in ("add_mixed", "double"):
            r = run_op(curve, ref, op, threads, chain, args.block, rng)
            name = f"{curve.name.lower()}_{op}"
            per_op = fq_rate / r["gops"] if r["gops"] > 0 else float("nan")
            params = {"threads": threads, "chain": chain, "block": args.block, "runs": RUNS, "stat": "median",
                      "formula": COST[op], "coords": "XYZZ (+ affine)", "fq_mul_gops": round(fq_rate, 3),
                      "fq_muls_per_op": round(per_op, 2), "regs": r.get("regs"), "local_bytes": r.get("local_bytes"),
                      "min_max_ms": [round(x, 3) for x in r["spread"]],
                      "verified": "all threads vs CPU backend; 4 threads vs Python reference"}
            peer = {"name": f"numba-cuzk CPU backend ({cpu_device})", "value": round(r["cpu_gops"], 5), "unit": "G/s"}
            records.append(common.record(name, r["gops"], "G/s", device, params, peer=peer,
                                         timing=common.DEVICE_THROUGHPUT))
            print(f"{name:14s} {r['gops']:8.4f} G/s  {r['ms']:9.3f} ms  {per_op:6.1f} fq_mul/op  "
                  f"regs {r.get('regs')}  local {r.get('local_bytes')}  cpu {r['cpu_gops']:.4f} G/s", flush=True)
    path = common.write(records, "curve", args.out)
    print(common.markdown_table(records))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
