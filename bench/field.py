"""Field multiplication throughput on the GPU and on all CPU cores.

Each of ``threads`` threads loads (a, b) and replaces a by a*b (or a^2) ``chain`` times,
then stores a: chained products, so the rate is the dependent-latency-hidden throughput
a prover sees. Device time from CUDA events (median after warm-up). Every GPU result is
checked against the same chain computed on the CPU by the CPU backend, whose time is the
CPU figure. Usage: python3 -m bench.field [--threads-log 22] [--chain 64] [--names fr_mul,fq_mul] [--out FILE]

``--cpu``: no GPU; the CPU backend alone (numba's threads, all cores), median of --runs
after a warm-up: fr_mul_cpu, fq_mul_cpu (mont.py's mul on the CPU target: wide.py's
64-bit limbs) and, for comparison, the _sqr and the portable _cios variants, each with
its ns per product per core (the process's CPU seconds / products). Other load on the machine counts
against it: params.load_avg says how much there was.
    python3 -m bench.field --cpu [--threads-log 16] [--chain 64] [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import time
from functools import lru_cache

import numpy as np
from numba import cuda, get_num_threads, njit, prange, uint32

from bench import common
from numba_cuzk.field.fq2 import FQ2_LIMBS, fq2_mul, fq2_sqr
from numba_cuzk.field.mont import montgomery
from numba_cuzk.field.params import FQ, FR
from numba_cuzk.field.target import local_u32

# (record name, field, limbs, function factory); the first variant of each name is the
# one the library uses (PTX carry chains), the others are recorded for comparison.
VARIANTS = [
    ("fr_mul", "ptx", FR), ("fr_mul", "cios", FR), ("fr_sqr", "ptx", FR), ("fr_sqr", "cios", FR),
    ("fq_mul", "ptx", FQ), ("fq_mul", "cios", FQ), ("fq_sqr", "ptx", FQ), ("fq_sqr", "cios", FQ),
    ("fq2_mul", "ptx", None), ("fq2_sqr", "ptx", None),
]


def _function(name: str, variant: str, params):
    if params is None:
        return (fq2_mul if name == "fq2_mul" else fq2_sqr), FQ2_LIMBS
    ops = montgomery(params)
    op = name.split("_")[1]
    attr = op if variant == "ptx" else f"{op}_cios"
    return getattr(ops, attr), ops.limbs


@lru_cache(maxsize=None)
def _kernels(name: str, variant: str, params):
    f, n_limbs = _function(name, variant, params)
    square = name.endswith("sqr")

    def body(i, x, y, a, b, chain):
        for j in range(n_limbs):
            x[j] = a[j, i]
            y[j] = b[j, i]
        for _ in range(chain):
            if square:
                f(x, x)
            else:
                f(x, x, y)
        for j in range(n_limbs):
            a[j, i] = x[j]

    body_jit = njit(forceinline=True)(body)

    @cuda.jit
    def gpu(a, b, chain):
        i = cuda.grid(1)
        if i < a.shape[1]:
            body_jit(i, cuda.local.array(n_limbs, uint32), cuda.local.array(n_limbs, uint32), a, b, chain)

    @njit(parallel=True)
    def cpu(a, b, chain):
        for i in prange(a.shape[1]):
            body_jit(i, local_u32(n_limbs), local_u32(n_limbs), a, b, chain)

    return gpu, cpu


def _inputs(n_limbs: int, threads: int, params, rng) -> tuple[np.ndarray, np.ndarray]:
    """Random canonical Montgomery residues (limbs below p: top limb masked under p's)."""
    fields = params or FQ
    reps = n_limbs // fields.limbs
    top = fields.modulus_limbs[-1]
    a = rng.integers(0, 1 << 32, size=(n_limbs, threads), dtype=np.uint32)
    b = rng.integers(0, 1 << 32, size=(n_limbs, threads), dtype=np.uint32)
    for k in range(reps):
        row = (k + 1) * fields.limbs - 1
        a[row] %= top
        b[row] %= top
    return a, b


def run_variant(name: str, variant: str, params, threads: int, chain: int, block: int, rng, cpu_ref: dict):
    gpu, cpu = _kernels(name, variant, params)
    n_limbs = _function(name, variant, params)[1]
    key = (name, n_limbs, threads, chain)
    if key not in cpu_ref:  # inputs and the CPU backend's answer, shared by all variants
        a, b = _inputs(n_limbs, threads, params, rng)
        expect = a.copy()
        cpu(expect, b, chain)  # compile on a copy
        expect = a.copy()
        t0 = time.perf_counter()
        cpu(expect, b, chain)
        cpu_ref[key] = (a, b, expect, time.perf_counter() - t0)
    a, b, expect, cpu_seconds = cpu_ref[key]
    d_a, d_b = cuda.to_device(a), cuda.to_device(b)
    grid = (threads + block - 1) // block

    def launch():
        gpu[grid, block](d_a, d_b, chain)

    launch()  # compile, then check one chain against the CPU backend
    cuda.synchronize()
    gpu_result = d_a.copy_to_host()
    if not np.array_equal(gpu_result, expect):
        bad = int(np.flatnonzero((gpu_result != expect).any(axis=0))[0])
        raise AssertionError(f"{name}/{variant}: GPU result differs from the CPU backend at thread {bad}")
    d_a = cuda.to_device(a)  # re-run timing from the same inputs
    times = common.device_time_ms(launch, runs=7, warmup=2)
    ms = common.median(times)
    kernel = gpu.overloads[list(gpu.overloads)[0]]
    return {
        "gops": threads * chain / (ms * 1e-3) / 1e9,
        "ms": ms,
        "spread": (min(times), max(times)),
        "regs": kernel.regs_per_thread,
        "local_bytes": kernel.local_mem_per_thread,
        "cpu_gops": threads * chain / cpu_seconds / 1e9,
    }


CPU_VARIANTS = [("fr_mul", "ptx", FR), ("fr_mul", "cios", FR), ("fr_sqr", "ptx", FR),
                ("fq_mul", "ptx", FQ), ("fq_mul", "cios", FQ), ("fq_sqr", "ptx", FQ)]


def run_cpu(threads: int, chain: int, runs: int, rng) -> list[dict]:
    """CPU-only records: <name>_cpu (the library's function on the CPU target) and
    <name>_cpu_cios (mont.py's portable loops), G/s on all cores; every variant's chain is
    checked against the first one's answer for the same field and operation."""
    cpu_device, cores = common.cpu_name(), get_num_threads()
    records, expected = [], {}
    for name, variant, params in CPU_VARIANTS:
        cpu = _kernels(name, variant, params)[1]
        n_limbs = _function(name, variant, params)[1]
        a, b = _inputs(n_limbs, threads, params, np.random.default_rng(2026))
        result = a.copy()
        cpu(result, b, chain)  # compiles, and the answer every variant must give
        if name in expected and not np.array_equal(result, expected[name]):
            raise AssertionError(f"{name}/{variant}: differs from the first variant's result")
        expected.setdefault(name, result)
        seconds, cpu_seconds = [], []
        for _ in range(runs):
            x = a.copy()
            t0, c0 = time.perf_counter(), time.process_time()
            cpu(x, b, chain)
            seconds.append(time.perf_counter() - t0)
            cpu_seconds.append(time.process_time() - c0)
        s = common.median(seconds)
        products = threads * chain
        rec_name = f"{name}_cpu" + ("" if variant == "ptx" else f"_{variant}")
        ns_per_core = common.median(cpu_seconds) / products * 1e9  # CPU time: fair on a shared machine
        shape = {"threads": threads, "chain": chain, "runs": runs, "stat": "median", "numba_threads": cores,
                 "ns_per_product_per_core": round(ns_per_core, 2),
                 "ns_per_product_per_core_wall": round(cores * s / products * 1e9, 2), "min_max_s": [round(min(seconds), 4), round(max(seconds), 4)],
                 "variant": "wide (64-bit limbs)" if variant == "ptx" else "portable CIOS (32-bit limbs)",
                 "load_avg": os.getloadavg()[0]}
        records.append(common.record(rec_name, products / s / 1e9, "G/s", cpu_device, shape,
                                     timing=common.CALL_LATENCY))
        print(f"{rec_name:18s} {products / s / 1e9:8.4f} G/s  {ns_per_core:7.1f} ns per product per core", flush=True)
    return records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cpu", action="store_true", help="the CPU backend only (no GPU)")
    parser.add_argument("--runs", type=int, default=5, help="timed runs per variant (--cpu)")
    parser.add_argument("--threads-log", type=int, default=None, help="log2 of the threads (22; 16 with --cpu)")
    parser.add_argument("--chain", type=int, default=64)
    parser.add_argument("--block", type=int, default=256)
    parser.add_argument("--sweep-blocks", type=int, nargs="*", default=[], help="extra block sizes to time")
    parser.add_argument("--names", default="", help="record names to run (comma-separated, e.g. fr_mul,fq_mul; default all)")
    parser.add_argument("--peer", default=None,
                        help="sppark's figures from the same call (bench/peer/sppark.sh's JSON lines): fr_mul's and fq_mul's peer")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    names = set(args.names.split(",")) if args.names else None
    threads_log = args.threads_log if args.threads_log is not None else (16 if args.cpu else 22)
    threads, chain = 1 << threads_log, args.chain
    rng = np.random.default_rng(2026)
    if args.cpu:
        records = run_cpu(threads, chain, args.runs, rng)
        path = common.write(records, "field", args.out)
        print(common.markdown_table(records))
        print(f"wrote {path}")
        return
    device, cpu_device = common.gpu_name(), common.cpu_name()
    records, cpu_ref = [], {}
    for name, variant, params in VARIANTS:
        if names is not None and (name if variant == "ptx" else f"{name}_{variant}") not in names:
            continue
        r = run_variant(name, variant, params, threads, chain, args.block, rng, cpu_ref)
        shape = {"threads": threads, "chain": chain, "block": args.block, "runs": 7, "stat": "median",
                 "variant": variant, "regs": r["regs"], "local_bytes": r["local_bytes"],
                 "min_max_ms": [round(x, 3) for x in r["spread"]], "verified": "all threads vs CPU backend"}
        rec_name = name if variant == "ptx" else f"{name}_{variant}"
        peer = common.same_call_peer(args.peer, f"sppark_{rec_name}") or {
            "name": f"numba-cuzk CPU backend ({cpu_device})", "value": round(r["cpu_gops"], 4), "unit": "G/s"}
        records.append(common.record(rec_name, r["gops"], "G/s", device, shape, peer=peer,
                                     timing=common.DEVICE_THROUGHPUT))
        if variant == "ptx" and name in ("fr_mul", "fq_mul"):
            records.append(common.record(f"{name}_cpu", r["cpu_gops"], "G/s", cpu_device,
                                         {"threads": threads, "chain": chain, "runs": 1}, timing=common.CALL_LATENCY))
        print(f"{rec_name:16s} {r['gops']:8.2f} G/s  {r['ms']:8.3f} ms  regs {r['regs']}  local {r['local_bytes']}  "
              f"cpu {r['cpu_gops']:.3f} G/s", flush=True)
    for block in args.sweep_blocks:  # launch shape sensitivity of the main variants
        for name, params in (("fr_mul", FR), ("fq_mul", FQ)):
            r = run_variant(name, "ptx", params, threads, chain, block, rng, cpu_ref)
            print(f"{name} block {block}: {r['gops']:.2f} G/s", flush=True)
            records.append(common.record(f"{name}_block{block}", r["gops"], "G/s", device,
                                         {"threads": threads, "chain": chain, "block": block, "variant": "ptx"},
                                             timing=common.DEVICE_THROUGHPUT))
    path = common.write(records, "field", args.out)
    print(common.markdown_table(records))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
