"""NTT device time on the GPU, against the arithmetic and memory floors measured in the
same run, and the CPU backend at 2^20.

For each size: forward NTT and coset NTT in place on one resident vector (CUDA events,
median of --runs after warm-up; tables built beforehand by ``prepare``), the upload of
that vector from pinned memory, and two floors:
- arithmetic: (n/2) log2 n Fr products at the Fr mul rate measured here (bench.field's
  chained-product kernel), the butterfly count of a radix-2 transform;
- memory: the bytes our passes move (per pass: 32 n read + 32 n written, + 32 n of
  pre-twiddles after the first pass, + 32 n of g^i for a coset) at the device-to-device
  copy bandwidth measured here.
Every size checks intt(ntt(x)) == x; one size (--check-log) compares the GPU's forward
and coset transforms with the CPU backend. Extras: 2^24 with 6 and 7 stages per pass and a
batch of 3 (the prover's a, b, c). Usage:
    python3 -m bench.ntt [--out FILE] [--sizes 16,20,22,24,26] [--runs 7]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from numba import config, cuda

from bench import common
from numba_cuzk.field.params import FR
from numba_cuzk.ntt import clear_cache, coset_ntt, domain, intt, ntt, prepare, transform

COSET_G = 7
SPPARK_MS = {20: 0.28, 22: 1.13, 24: 4.75, 26: 23.8}  # forward, natural order, this H200 (issue 4)
SPPARK_COSET_MS = {24: 5.36}
SIMULATOR = bool(config.ENABLE_CUDASIM)
NOMINAL_MUL_GOPS = 37.0  # used only in the simulator, where nothing can be timed


def random_limbs(shape: tuple, rng) -> np.ndarray:
    """Random canonical residues (read as Montgomery form): top limb below p's."""
    a = rng.integers(0, 1 << 32, size=shape, dtype=np.uint32)
    a[..., FR.limbs - 1, :] %= np.uint32(FR.modulus_limbs[-1])
    return a


def time_ms(launch, runs: int) -> list[float]:
    """Device ms per run (CUDA events); wall ms in the simulator, which has no event timing."""
    if not SIMULATOR:
        return common.device_time_ms(launch, runs=runs, warmup=2)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        launch()
        cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    return times


def mul_rate_gops(threads_log: int) -> float:
    """Fr products per second (G/s) of bench.field's chained-product kernel, checked on the CPU."""
    if SIMULATOR:
        return NOMINAL_MUL_GOPS
    from bench.field import run_variant

    r = run_variant("fr_mul", "ptx", FR, 1 << threads_log, 64, 256, np.random.default_rng(1), {})
    return r["gops"]


def copy_bandwidth_gbs(log_n: int, runs: int) -> float:
    """Device-to-device copy bandwidth (GB/s, bytes read + written) of a (8, 2^log_n) array."""
    src = cuda.device_array((FR.limbs, 1 << log_n), dtype=np.uint32)
    dst = cuda.device_array_like(src)
    ms = common.median(time_ms(lambda: dst.copy_to_device(src), runs))
    return 2 * src.nbytes / (ms * 1e-3) / 1e9


def pass_bytes(log_n: int, coset: bool, max_radix_log: int = domain.MAX_RADIX_LOG) -> int:
    n_bytes = 32 << log_n
    total = 0
    for p in domain.plan(log_n, max_radix_log):
        total += 2 * n_bytes + (0 if p.first else n_bytes)
    return total + (n_bytes if coset else 0)


def kernel_resources() -> dict:
    """Registers and local memory per thread of the compiled pass kernel (empty in the simulator)."""
    from numba_cuzk.ntt.kernels import gpu_pass

    overloads = list(getattr(gpu_pass, "overloads", {}).values())
    if SIMULATOR or not overloads:
        return {}
    return {"regs": overloads[0].regs_per_thread, "local_bytes": overloads[0].local_mem_per_thread}


def check_roundtrip(d: object, host: np.ndarray, label: str) -> None:
    ntt(d)
    intt(d)
    if not np.array_equal(d.copy_to_host(), host):
        raise AssertionError(f"{label}: intt(ntt(x)) != x on the GPU")


def check_against_cpu(log_n: int, rng) -> None:
    host = random_limbs((FR.limbs, 1 << log_n), rng)
    for name, f in (("ntt", lambda a: ntt(a)), ("coset_ntt", lambda a: coset_ntt(a, COSET_G))):
        d = cuda.to_device(host)
        f(d)
        cpu = host.copy()
        f(cpu)
        if not np.array_equal(d.copy_to_host(), cpu):
            raise AssertionError(f"{name} 2^{log_n}: GPU differs from the CPU backend")
    print(f"checked: GPU ntt and coset_ntt at 2^{log_n} equal the CPU backend", flush=True)


def bench_size(log_n: int, args, rng, rate: float, bandwidth: float, device: str) -> list[dict]:
    n = 1 << log_n
    host = random_limbs((FR.limbs, n), rng)
    pinned = cuda.pinned_array(host.shape, dtype=np.uint32)
    pinned[:] = host
    d = cuda.device_array(host.shape, dtype=np.uint32)
    upload = common.median(time_ms(lambda: d.copy_to_device(pinned), args.runs))
    t0 = time.perf_counter()
    prepare(log_n, g=COSET_G)
    prepare_ms = (time.perf_counter() - t0) * 1e3
    check_roundtrip(d, host, f"2^{log_n}")
    floor_mul = (n // 2) * log_n / (rate * 1e9) * 1e3
    radices = [p.log_r for p in domain.plan(log_n)]
    records = []
    for name, launch, coset in (
        (f"ntt_fr_log{log_n}", lambda: ntt(d), False),
        (f"coset_ntt_fr_log{log_n}", lambda: coset_ntt(d, COSET_G), True),
    ):
        times = time_ms(launch, args.runs)
        ms = common.median(times)
        floor_mem = pass_bytes(log_n, coset) / (bandwidth * 1e9) * 1e3
        anchor = (SPPARK_COSET_MS if coset else SPPARK_MS).get(log_n)
        params = {"runs": args.runs, "stat": "median", "min_max_ms": [round(min(times), 4), round(max(times), 4)],
                  "radix_logs": radices, "in_place": True, "upload_ms_pinned": round(upload, 4),
                  "prepare_ms": round(prepare_ms, 1), "mul_floor_ms": round(floor_mul, 4),
                  "x_mul_floor": round(ms / floor_mul, 3), "mem_floor_ms": round(floor_mem, 4),
                  "x_mem_floor": round(ms / floor_mem, 3), "fr_mul_gops": round(rate, 2),
                  "copy_gbs": round(bandwidth, 1), "verified": "intt(ntt(x)) == x",
                  "sppark_anchor_ms": anchor, **kernel_resources()}
        records.append(common.record(name, ms, "ms", device, params))
        print(f"{name:22s} {ms:9.3f} ms  x{ms / floor_mul:5.2f} mul floor  x{ms / floor_mem:5.2f} mem floor"
              f"  upload {upload:.3f} ms", flush=True)
    records.append(common.record(f"ntt_fr_log{log_n}_upload", upload + records[0]["value"], "ms", device,
                                 {"upload_ms_pinned": round(upload, 4), "stat": "median"}))
    return records


def bench_variants(log_n: int, args, rng, rate: float, device: str) -> list[dict]:
    """Stages per pass, and a batch of three vectors in the same launches."""
    n = 1 << log_n
    records = []
    d = cuda.to_device(random_limbs((FR.limbs, n), rng))
    for max_radix_log in (6, 7):
        clear_cache()
        transform.prepare(log_n, max_radix_log=max_radix_log)
        ms = common.median(time_ms(lambda d=d: transform.transform(d, inverse=False, max_radix_log=max_radix_log),
                                   args.runs))
        radices = [p.log_r for p in domain.plan(log_n, max_radix_log)]
        records.append(common.record(f"ntt_fr_log{log_n}_maxradix{max_radix_log}", ms, "ms", device,
                                     {"radix_logs": radices, "runs": args.runs, "stat": "median"}))
        print(f"ntt 2^{log_n} radices {radices}: {ms:.3f} ms", flush=True)
    del d
    clear_cache()
    batch = cuda.to_device(random_limbs((3, FR.limbs, n), rng))
    prepare(log_n)
    ms = common.median(time_ms(lambda: ntt(batch), args.runs))
    per = ms / 3
    records.append(common.record(f"ntt_fr_log{log_n}_batch3", ms, "ms", device,
                                 {"per_vector_ms": round(per, 4), "runs": args.runs, "stat": "median"}))
    print(f"ntt 2^{log_n} batch of 3: {ms:.3f} ms ({per:.3f} per vector)", flush=True)
    clear_cache()
    return records


def bench_cpu(log_n: int, rng) -> dict:
    host = random_limbs((FR.limbs, 1 << log_n), rng)
    ntt(host)  # compile and tables
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        ntt(host)
        times.append((time.perf_counter() - t0) * 1e3)
    ms = common.median(times)
    print(f"ntt_fr_log{log_n}_cpu {ms:9.3f} ms", flush=True)
    return common.record(f"ntt_fr_log{log_n}_cpu", ms, "ms", common.cpu_name(),
                         {"runs": 3, "stat": "median", "backend": "numba parallel CPU"})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="16,20,22,24,26", help="log2 sizes, comma-separated")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--check-log", type=int, default=20, help="size compared with the CPU backend")
    parser.add_argument("--cpu-log", type=int, default=20)
    parser.add_argument("--variants-log", type=int, default=24, help="size of the radix/batch extras (0: skip)")
    parser.add_argument("--mul-threads-log", type=int, default=22)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    rng = np.random.default_rng(2026)
    device = common.gpu_name()
    started = time.perf_counter()

    rate = mul_rate_gops(args.mul_threads_log)
    bandwidth = copy_bandwidth_gbs(min(max(sizes), 24), args.runs)
    print(f"Fr mul {rate:.2f} G/s{' (nominal: simulator)' if SIMULATOR else ''}, "
          f"d2d copy {bandwidth:.0f} GB/s", flush=True)
    check_against_cpu(args.check_log, rng)
    records = [common.record("ntt_bench_fr_mul", rate, "G/s", device, {"threads": 1 << args.mul_threads_log,
                                                                        "chain": 64, "role": "floor"}),
               common.record("ntt_bench_copy_bw", bandwidth, "GB/s", device, {"role": "floor"})]
    for log_n in sizes:
        records += bench_size(log_n, args, rng, rate, bandwidth, device)
        clear_cache()
    if args.variants_log:
        records += bench_variants(args.variants_log, args, rng, rate, device)
    records.append(bench_cpu(args.cpu_log, rng))
    path = common.write(records, "ntt", args.out)
    print(common.markdown_table(records))
    print(f"wrote {path} in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
